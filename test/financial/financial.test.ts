// The financial pack through the API, fed the way the public clients feed it (their financial.ts:
// POST /admin/memory with category financial and metadata price / fundamental / holding / newsEvent):
// a ticker's indicators, a portfolio's positions and risk, calls that abstain on thin data, the
// feedback loop (calls scored against later closes, reliability and calibration moving with them),
// the entitlement, the pack switch, permissions, validation, isolation and the subject's rights.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createHarness, type Harness } from '../helpers/harness.js';

const DAY = 86_400_000;
const START = Date.parse('2025-03-03T21:00:00Z');
const portfolio = { kind: 'portfolio', externalId: 'acct-123' };
const at = (i: number) => new Date(START + i * DAY).toISOString();
/** A deterministic path: a drift and a wiggle, from `from`. */
const path = (n: number, drift: number, from: number, phase = 0) =>
  Array.from({ length: n }, (_, i) => from * Math.exp(drift * i + Math.sin(i * 0.9 + phase) * 0.01));

describe('financial pack', () => {
  let h: Harness;
  let a: { projectId: string; apiKey: string };

  // The clients' writers, body for body.
  const price = (projectId: string, ticker: string, close: number, asOf: string) =>
    h.call('POST', projectId, '/admin/memory', {
      body: { content: `${ticker} close ${close} @ ${asOf}`, type: 'fact', scope: 'project', category: 'financial', source: 'sdk:financial', metadata: { price: { ticker, close, asOf } } },
    });
  const prices = async (projectId: string, ticker: string, closes: readonly number[], first = 0) => {
    for (const [i, close] of closes.entries()) {
      const res = await price(projectId, ticker, Number(close.toFixed(4)), at(first + i));
      expect(res.statusCode, res.body).toBe(201);
    }
  };
  const holding = (projectId: string, subject: { kind: string; externalId: string }, h2: Record<string, unknown>) =>
    h.call('POST', projectId, '/admin/memory', {
      body: { content: `Holding ${String(h2.shares)} ${String(h2.ticker)}`, type: 'fact', scope: 'project', category: 'financial', source: 'sdk:financial', metadata: { subject, holding: h2 } },
    });
  const post = (path: string, body: unknown, projectId = a.projectId, apiKey?: string) => h.call('POST', projectId, path, { body, ...(apiKey ? { apiKey } : {}) });

  beforeAll(async () => {
    h = await createHarness();
    a = await h.project({ plan: 'growth' });
    // 60 closes of a rising AAPL, a flat-ish SPY, 20 closes of MSFT (too few for a call).
    await prices(a.projectId, 'AAPL', path(60, 0.004, 150));
    await prices(a.projectId, 'SPY', path(60, 0.001, 500, 1));
    await prices(a.projectId, 'MSFT', path(20, -0.002, 400), 40);
    await post('/admin/memory', { content: 'Fundamentals AAPL', type: 'fact', scope: 'project', category: 'financial', source: 'sdk:financial', metadata: { fundamental: { ticker: 'AAPL', peRatio: 29.5, eps: 6.1, beta: 1.2, asOf: at(55) } } });
    await post('/admin/memory', { content: 'News [AAPL]: Apple beats earnings', type: 'fact', scope: 'project', category: 'financial', source: 'sdk:financial', metadata: { newsEvent: { ticker: 'AAPL', headline: 'Apple beats earnings', publishedAt: at(58) } } });
    expect((await holding(a.projectId, portfolio, { ticker: 'AAPL', shares: 100, costBasis: 150 })).statusCode).toBe(201);
    await holding(a.projectId, portfolio, { ticker: 'MSFT', shares: 20 });
    await holding(a.projectId, portfolio, { ticker: 'USD', shares: 5000, assetClass: 'cash' });
    await holding(a.projectId, portfolio, { ticker: 'PRIVCO', shares: 10 });
    // Someone else's position: never in acct-123's answers.
    await holding(a.projectId, { kind: 'portfolio', externalId: 'acct-999' }, { ticker: 'AAPL', shares: 1 });
  });
  afterAll(async () => h?.close());

  it("profiles a ticker: its indicators, beta against SPY, the vendor's fundamentals; no positions", async () => {
    const res = await post('/lattice/financial/profile', { subject: { kind: 'ticker', externalId: 'aapl' } });
    expect(res.statusCode, res.body).toBe(200);
    const body = res.json();
    expect(body.disclaimer).toMatch(/not investment advice/);
    expect(body.positions).toEqual([]);
    expect(body.portfolioRisk).toBeNull();
    const [aapl] = body.indicators;
    expect(aapl).toMatchObject({ ticker: 'AAPL', sampleSize: 60, betaSource: 'computed', sma200: null, asOf: at(59) });
    for (const k of ['sma20', 'sma50', 'ema12', 'ema26', 'rsi14', 'macd', 'macdSignal', 'bollingerPctB', 'annualizedVolatility', 'sharpe', 'beta']) expect(aapl[k], k).toEqual(expect.any(Number));
    // A steady rise: the short average above the long one, a positive MACD and trailing return.
    expect(aapl.sma20).toBeGreaterThan(aapl.sma50);
    expect(aapl.macd).toBeGreaterThan(0);
    expect(aapl.trailingReturn).toBeCloseTo(path(60, 0.004, 150)[59]! / path(60, 0.004, 150)[0]! - 1, 3);
    expect(aapl.sourceMemoryIds).toHaveLength(60);
    expect(body.fundamentals).toEqual([expect.objectContaining({ ticker: 'AAPL', peRatio: 29.5, eps: 6.1, beta: 1.2, sourceMemoryId: expect.stringMatching(/^mem_/) })]);

    const unknown = (await post('/lattice/financial/profile', { subject: { kind: 'ticker', externalId: 'NOPE' } })).json();
    expect(unknown.indicators).toEqual([]);
    expect(unknown.abstentionReason).toContain('NOPE');
  });

  it("profiles a portfolio: its own positions valued at the last close, cash at 1, the unpriced named, and the risk rollup", async () => {
    const body = (await post('/lattice/financial/profile', { subject: portfolio })).json();
    const aaplClose = Number(path(60, 0.004, 150)[59]!.toFixed(4));
    const msftClose = Number(path(20, -0.002, 400)[19]!.toFixed(4));
    const byTicker = Object.fromEntries(body.positions.map((p: { ticker: string }) => [p.ticker, p]));
    expect(Object.keys(byTicker).sort()).toEqual(['AAPL', 'MSFT', 'USD']);
    expect(byTicker.AAPL).toMatchObject({ shares: 100, lastClose: aaplClose, marketValue: 100 * aaplClose, assetClass: 'equity' });
    expect(byTicker.AAPL.unrealizedPnl).toBeCloseTo((aaplClose - 150) * 100, 6);
    expect(byTicker.MSFT.unrealizedPnl).toBeNull();
    expect(byTicker.USD).toMatchObject({ lastClose: 1, marketValue: 5000, assetClass: 'cash' });
    expect(body.unpricedHoldings).toEqual(['PRIVCO']);
    const total = 100 * aaplClose + 20 * msftClose + 5000;
    const risk = body.portfolioRisk;
    expect(risk.totalValue).toBeCloseTo(total, 6);
    expect(body.positions.reduce((s: number, p: { weight: number }) => s + p.weight, 0)).toBeCloseTo(1, 9);
    expect(risk.concentrationHhi).toBeCloseTo(body.positions.reduce((s: number, p: { weight: number }) => s + p.weight ** 2, 0), 6);
    expect(risk.allocations.map((x: { assetClass: string }) => x.assetClass)).toEqual(['equity', 'cash']);
    // AAPL and MSFT share 20 days: 19 returns, too few for a covariance; MSFT has no 20 returns of its own either.
    expect(risk.valueAtRisk95_1d).toBeNull();
    expect(risk.varMethod).toMatch(/not computed/);
    expect(risk.weightedBeta).toEqual(expect.any(Number));
    // acct-999's single AAPL share is not here.
    expect(byTicker.AAPL.shares).toBe(100);
  });

  it('calls a ticker with enough history, abstains with the reason on thin data, and records the calls', async () => {
    const res = await post('/lattice/financial/predict', { subject: portfolio, horizonDays: 10 });
    expect(res.statusCode, res.body).toBe(200);
    const body = res.json();
    expect(body).toMatchObject({ strategy: 'technical-blend-v1', strategyReliability: 1, resolvedSample: 0 });
    expect(body.abstentions).toEqual(
      expect.arrayContaining([
        { ticker: 'MSFT', reason: '20 daily closes; a call needs 34' },
        { ticker: 'PRIVCO', reason: '0 daily closes; a call needs 34' },
      ]),
    );
    expect(body.signals).toHaveLength(1);
    const [signal] = body.signals;
    expect(signal).toMatchObject({ ticker: 'AAPL', horizonDays: 10, newsUsed: true, predictionId: expect.stringMatching(/^fpr_/), basisAt: at(59), dueAt: at(69) });
    expect(['buy', 'sell', 'hold']).toContain(signal.direction);
    // Untested: reported = structural.
    expect(signal.reportedConfidence).toBe(signal.structuralConfidence);
    expect(signal.rationale.join(' ')).toContain('RSI14');
    // Without persist, no id and nothing recorded.
    const dry = (await post('/lattice/financial/predict', { subject: { kind: 'ticker', externalId: 'AAPL' }, persist: false })).json();
    expect(dry.signals[0].predictionId).toBeNull();
    expect((await post('/lattice/financial/reconcile', {})).json()).toMatchObject({ scored: 0, stillPending: 1 });
  });

  it('scores due calls against the first later close, once; reliability and calibration follow the record', async () => {
    const p = await h.project({ plan: 'growth' });
    const aapl = path(60, 0.004, 150);
    await prices(p.projectId, 'AAPL', aapl);
    const first = (await post('/lattice/financial/predict', { subject: { kind: 'ticker', externalId: 'AAPL' }, horizonDays: 5 }, p.projectId)).json();
    const call = first.signals[0];
    // Due at day 64, no close after day 59 yet: the call waits.
    expect((await post('/lattice/financial/reconcile', {}, p.projectId)).json()).toMatchObject({ scored: 0, hits: 0, misses: 0, stillPending: 1, capped: false });
    // The price falls hard from day 60 (none on day 64 itself: the first close after it, day 66, decides).
    for (const day of [60, 61, 62, 63, 66]) expect((await price(p.projectId, 'AAPL', Number((aapl[59]! * (1 - 0.03 * (day - 59))).toFixed(4)), at(day))).statusCode).toBe(201);
    const scored = (await post('/lattice/financial/reconcile', {}, p.projectId)).json();
    const expectHit = call.direction === 'sell';
    expect(scored).toMatchObject({ scored: 1, hits: expectHit ? 1 : 0, misses: expectHit ? 0 : 1, stillPending: 0 });
    // Idempotent.
    expect((await post('/lattice/financial/reconcile', {}, p.projectId)).json()).toMatchObject({ scored: 0, stillPending: 0 });

    const calibration = (await post('/lattice/financial/calibration', {}, p.projectId)).json();
    expect(calibration).toMatchObject({ strategy: 'all', totalResolved: 1, hitRate: expectHit ? 1 : 0 });
    expect(calibration.buckets).toHaveLength(5);
    const band = calibration.buckets.find((b: { hasData: boolean }) => b.hasData);
    expect(band).toMatchObject({ predictions: 1, hits: expectHit ? 1 : 0 });
    expect(call.reportedConfidence).toBeGreaterThanOrEqual(band.lower);
    expect(calibration.brierScore).toBeCloseTo((call.reportedConfidence - (expectHit ? 1 : 0)) ** 2, 5);
    // One scored call at confidence s, hit h: reliability (h + 10 s) / 11 / s.
    const s = call.structuralConfidence;
    const multiplier = ((expectHit ? 1 : 0) + 10 * s) / 11 / s;
    expect(calibration.strategyReliability).toBeCloseTo(multiplier, 4);
    const next = (await post('/lattice/financial/predict', { subject: { kind: 'ticker', externalId: 'AAPL' } }, p.projectId)).json();
    expect(next).toMatchObject({ resolvedSample: 1 });
    expect(next.strategyReliability).toBeCloseTo(multiplier, 4);
    expect(next.signals[0].reportedConfidence).toBeCloseTo(next.signals[0].structuralConfidence * next.strategyReliability, 5);
    // Narrowed to another strategy: nothing.
    const other = (await post('/lattice/financial/calibration', { bucketCount: 2, strategy: 'none-such' }, p.projectId)).json();
    expect(other).toMatchObject({ strategy: 'none-such', totalResolved: 0, hitRate: null, strategyReliability: 1 });
    expect(other.buckets).toHaveLength(2);
  });

  it('validates its bodies', async () => {
    for (const [route, body] of [
      ['/lattice/financial/profile', {}],
      ['/lattice/financial/profile', { subject: { kind: 'ticker' } }],
      ['/lattice/financial/predict', { subject: portfolio, horizonDays: 'soon' }],
      ['/lattice/financial/predict', { subject: portfolio, persist: 'yes' }],
      ['/lattice/financial/calibration', { bucketCount: 'five' }],
      ['/lattice/financial/calibration', { extra: 1 }],
      ['/lattice/financial/reconcile', { extra: 1 }],
    ] as const) {
      const res = await post(route, body);
      expect(res.statusCode, `${route} ${JSON.stringify(body)}`).toBe(400);
      expect(res.json()).toMatchObject({ code: 'VALIDATION_ERROR' });
    }
    // The clients' empty bodies, and a JSON content type with no body at all.
    expect((await h.call('POST', a.projectId, '/lattice/financial/reconcile', { body: '', headers: { 'content-type': 'application/json' } })).statusCode).toBe(200);
    expect((await h.call('POST', a.projectId, '/lattice/financial/calibration', { body: '', headers: { 'content-type': 'application/json' } })).statusCode).toBe(200);
    // Out of range is clamped, as documented.
    const clamped = (await post('/lattice/financial/predict', { subject: { kind: 'ticker', externalId: 'AAPL' }, horizonDays: 10_000, persist: false })).json();
    expect(clamped.signals[0].horizonDays).toBe(365);
  });

  it('needs the financial entitlement, WRITE_MEMORY to record or score calls, and the pack on', async () => {
    const free = await h.project({ plan: 'free' });
    const refused = await post('/lattice/financial/profile', { subject: portfolio }, free.projectId);
    expect(refused.statusCode).toBe(403);
    expect(refused.json()).toMatchObject({ code: 'FEATURE_DISABLED' });

    const reader = await h.key(a.projectId, ['READ_MEMORY']);
    expect((await post('/lattice/financial/profile', { subject: portfolio }, a.projectId, reader)).statusCode).toBe(200);
    expect((await post('/lattice/financial/calibration', {}, a.projectId, reader)).statusCode).toBe(200);
    expect((await post('/lattice/financial/predict', { subject: portfolio }, a.projectId, reader)).statusCode).toBe(403);
    expect((await post('/lattice/financial/reconcile', {}, a.projectId, reader)).statusCode).toBe(403);

    const p = await h.project({ plan: 'growth' });
    expect((await post('/memory-compliance-packs', { packId: '@thinkfleet/pack-financial', enabled: false }, p.projectId)).statusCode).toBe(200);
    const off = await post('/lattice/financial/predict', { subject: portfolio }, p.projectId);
    expect(off.statusCode).toBe(403);
    expect(off.json()).toMatchObject({ code: 'FEATURE_DISABLED', params: { pack: 'financial' } });

    const packs = (await h.call('GET', a.projectId, '/memory-compliance/packs')).json();
    expect(packs).toEqual(expect.arrayContaining([expect.objectContaining({ id: 'financial', version: '1.0.0', ownsClasses: ['financial'], regulatoryTags: expect.any(Array), entitlement: 'financial' })]));
  });

  it("answers 404 when the deployment does not load the pack", async () => {
    const bare = await createHarness({ env: { LATTICE_PACKS: 'healthcare' } });
    try {
      const p = await bare.project();
      const res = await bare.call('POST', p.projectId, '/lattice/financial/profile', { body: { subject: portfolio } });
      expect(res.statusCode).toBe(404);
      expect(res.json().message).toContain('LATTICE_PACKS');
      expect((await bare.call('GET', p.projectId, '/memory-compliance/packs')).json().map((x: { id: string }) => x.id)).toEqual(['healthcare']);
    } finally {
      await bare.close();
    }
  });

  it("keeps each project's market data, holdings and calls to itself", async () => {
    const b = await h.project({ plan: 'growth' });
    const profile = (await post('/lattice/financial/profile', { subject: { kind: 'ticker', externalId: 'AAPL' } }, b.projectId)).json();
    expect(profile.indicators).toEqual([]);
    expect((await post('/lattice/financial/profile', { subject: portfolio }, b.projectId)).json().positions).toEqual([]);
    expect((await post('/lattice/financial/predict', { subject: { kind: 'ticker', externalId: 'AAPL' } }, b.projectId)).json().signals).toEqual([]);
    expect((await post('/lattice/financial/reconcile', {}, b.projectId)).json()).toMatchObject({ scored: 0, stillPending: 0 });
    expect((await post('/lattice/financial/calibration', {}, b.projectId)).json().totalResolved).toBe(0);
    // A's key on B's path: as if B did not exist.
    expect((await h.call('POST', b.projectId, '/lattice/financial/profile', { apiKey: a.apiKey, body: { subject: portfolio } })).statusCode).toBe(404);
  });

  it("exports a portfolio's recorded calls with the subject's data, and erases them with it", async () => {
    const p = await h.project({ plan: 'growth' });
    await prices(p.projectId, 'AAPL', path(40, 0.002, 100));
    await holding(p.projectId, portfolio, { ticker: 'AAPL', shares: 3 });
    expect((await post('/lattice/financial/predict', { subject: portfolio }, p.projectId)).json().signals).toHaveLength(1);
    const exported = (await post('/memory-compliance/export', { subject: portfolio }, p.projectId)).json();
    expect(exported.counts.financialPredictions).toBe(1);
    expect(exported.export.financial_predictions[0]).toMatchObject({ ticker: 'AAPL', subject_external_id: 'acct-123' });
    const erased = await post('/memory-compliance/hard-delete', { subject: portfolio, reason: 'erasure request' }, p.projectId);
    expect(erased.statusCode, erased.body).toBe(200);
    expect((await post('/memory-compliance/export', { subject: portfolio }, p.projectId)).json().counts.financialPredictions).toBe(0);
    // The holding went with the subject's memories; the market data stayed.
    expect((await post('/lattice/financial/profile', { subject: portfolio }, p.projectId)).json().positions).toEqual([]);
    expect((await post('/lattice/financial/profile', { subject: { kind: 'ticker', externalId: 'AAPL' } }, p.projectId)).json().indicators).toHaveLength(1);
  });
});
