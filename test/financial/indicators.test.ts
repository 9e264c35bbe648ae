// The financial pack's numbers on their own: worked examples with answers computed by hand, and
// properties that must hold for any series (fast-check).
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import * as ind from '../../src/financial/indicators.js';
import { readMarket, type FinancialMemory } from '../../src/financial/market.js';
import { headlineSentiment } from '../../src/financial/sentiment.js';
import { calibrationBuckets, portfolioDailySd, reliability } from '../../src/financial/service.js';
import { call, isHit, MIN_BARS } from '../../src/financial/signals.js';

const DAY = 86_400_000;
const T0 = Date.parse('2025-01-01T21:00:00Z');
/** Closes as one memory each, a day apart. */
const priceMemories = (ticker: string, closes: readonly number[], start = T0): FinancialMemory[] =>
  closes.map((close, i) => ({
    id: `mem_${ticker}_${i}`,
    metadata: { price: { ticker, close, asOf: new Date(start + i * DAY).toISOString() } },
    subject: null,
    validFrom: new Date(start + i * DAY).toISOString(),
    created: new Date(start + i * DAY).toISOString(),
  }));
const bars = (closes: readonly number[]) => readMarket(priceMemories('X', closes)).prices.get('X')!;
/** A walk with the given daily returns from 100. */
const walk = (returns: readonly number[]) => returns.reduce<number[]>((acc, r) => [...acc, acc[acc.length - 1]! * (1 + r)], [100]);

const closesArb = fc.array(fc.double({ min: 1, max: 1000, noNaN: true }), { minLength: 40, maxLength: 120 });

describe('indicators: worked examples', () => {
  it('SMA and EMA (seeded with the SMA, alpha 2 / (n + 1))', () => {
    expect(ind.sma([1, 2, 3, 4, 5], 3)).toBe(4);
    expect(ind.sma([1, 2], 3)).toBeNull();
    // Seed mean(1, 2, 3) = 2; alpha 0.5: 4 -> 3, 5 -> 4.
    expect(ind.emaSeries([1, 2, 3, 4, 5], 3)).toEqual([2, 3, 4]);
    expect(ind.ema([1, 2, 3, 4, 5], 3)).toBe(4);
  });

  it("Wilder's RSI", () => {
    // Changes +1, -1, +2 with n 2: first averages 0.5 and 0.5; then gain (0.5 + 2) / 2 = 1.25, loss 0.25; RS 5.
    expect(ind.rsi([10, 11, 10, 12], 2)).toBeCloseTo(100 - 100 / 6, 12);
    expect(ind.rsi(Array.from({ length: 20 }, (_, i) => 10 + i))).toBe(100);
    expect(ind.rsi(Array(20).fill(10))).toBe(50);
    expect(ind.rsi(Array.from({ length: 14 }, (_, i) => 10 + i))).toBeNull();
  });

  it('MACD is zero on a flat series and needs 34 closes for its signal', () => {
    expect(ind.macd(Array(34).fill(7))).toEqual({ macd: 0, signal: 0, histogram: 0 });
    expect(ind.macd(Array(33).fill(7)).signal).toBeNull();
    expect(ind.macd(Array(25).fill(7)).macd).toBeNull();
    // Rising prices: the fast average is above the slow one.
    expect(ind.macd(Array.from({ length: 40 }, (_, i) => 100 + i)).macd!).toBeGreaterThan(0);
  });

  it('Bollinger bands and %B', () => {
    const flat = ind.bollinger(Array(20).fill(5))!;
    expect(flat).toEqual({ upper: 5, mid: 5, lower: 5, pctB: null });
    // 18 closes of 10 and two of 20: mean 11, population sd 3; bands 5 and 17; the last close 20 -> %B (20 - 5) / 12.
    const b = ind.bollinger([...Array(18).fill(10), 20, 20])!;
    expect(b.mid).toBeCloseTo(11, 12);
    expect(b.upper).toBeCloseTo(17, 12);
    expect(b.lower).toBeCloseTo(5, 12);
    expect(b.pctB).toBeCloseTo(1.25, 12);
  });

  it('drawdown, trailing return, volatility, Sharpe', () => {
    expect(ind.maxDrawdown([100, 120, 90, 130, 65])).toBeCloseTo(-0.5, 12);
    expect(ind.maxDrawdown([1, 2, 3])).toBe(0);
    expect(ind.trailingReturn([100, 110, 121])).toBeCloseTo(0.21, 12);
    // Returns alternating +1% and -1%: sample sd of 20 values is 0.01 * sqrt(20 / 19).
    const alternating = walk(Array.from({ length: 20 }, (_, i) => (i % 2 ? -0.01 : 0.01)));
    expect(ind.annualizedVolatility(alternating)).toBeCloseTo(0.01 * Math.sqrt(20 / 19) * Math.sqrt(252), 10);
    expect(ind.annualizedVolatility(alternating.slice(0, 20))).toBeNull();
    expect(ind.sharpe(alternating)).toBeCloseTo(0, 10);
  });

  it('beta is cov / var of the benchmark on shared days', () => {
    const r = Array.from({ length: 30 }, (_, i) => Math.sin(i) / 100);
    const market = new Map(walk(r).map((c, i) => [`d${String(i).padStart(3, '0')}`, c]));
    const doubled = new Map(walk(r.map((x) => 2 * x)).map((c, i) => [`d${String(i).padStart(3, '0')}`, c]));
    expect(ind.beta(doubled, market)).toBeCloseTo(2, 10);
    expect(ind.beta(market, market)).toBeCloseTo(1, 12);
    // Too few shared days.
    const short = new Map([...market].slice(0, 15));
    expect(ind.beta(short, market)).toBeNull();
  });
});

describe('indicators: properties', () => {
  it('averages and bands of a constant series are the constant; RSI stays in [0, 100]; drawdown in [-1, 0]', () => {
    fc.assert(
      fc.property(fc.double({ min: 0.01, max: 1e4, noNaN: true }), fc.integer({ min: 34, max: 80 }), (c, n) => {
        const flat = Array(n).fill(c);
        expect(ind.sma(flat, 20)).toBeCloseTo(c, 8);
        expect(ind.ema(flat, 26)).toBeCloseTo(c, 8);
        expect(ind.macd(flat).histogram).toBeCloseTo(0, 8);
      }),
    );
    fc.assert(
      fc.property(closesArb, (closes) => {
        const r = ind.rsi(closes)!;
        expect(r).toBeGreaterThanOrEqual(0);
        expect(r).toBeLessThanOrEqual(100);
        const d = ind.maxDrawdown(closes)!;
        expect(d).toBeGreaterThanOrEqual(-1);
        expect(d).toBeLessThanOrEqual(0);
        const b = ind.bollinger(closes)!;
        expect(b.lower).toBeLessThanOrEqual(b.mid + 1e-9);
        expect(b.mid).toBeLessThanOrEqual(b.upper + 1e-9);
      }),
    );
  });

  it('returns-based figures do not change when every price is scaled (a split, a currency)', () => {
    fc.assert(
      fc.property(closesArb, fc.double({ min: 0.01, max: 100, noNaN: true }), (closes, k) => {
        const scaled = closes.map((c) => c * k);
        expect(ind.annualizedVolatility(scaled)).toBeCloseTo(ind.annualizedVolatility(closes)!, 8);
        expect(ind.maxDrawdown(scaled)).toBeCloseTo(ind.maxDrawdown(closes)!, 8);
        expect(ind.rsi(scaled)).toBeCloseTo(ind.rsi(closes)!, 6);
      }),
    );
  });
});

describe('reading the clients\' financial memories', () => {
  it('keeps one close per ticker and day (the latest written), the latest fundamentals, restated holdings, and reports what it could not read', () => {
    const m = (id: string, metadata: Record<string, unknown>, at: string, subject: FinancialMemory['subject'] = null): FinancialMemory => ({ id, metadata, subject, validFrom: at, created: at });
    const folio = { kind: 'portfolio', externalId: 'acct-1' };
    const market = readMarket([
      m('p1', { price: { ticker: 'aapl', close: 100, asOf: '2025-01-02T20:00:00Z' } }, '2025-01-02T20:00:00Z'),
      m('p2', { price: { ticker: 'AAPL', close: 101, asOf: '2025-01-02T21:00:00Z' } }, '2025-01-02T21:00:00Z'),
      m('p3', { price: { ticker: 'AAPL', close: 99, asOf: '2025-01-01T21:00:00Z' } }, '2025-01-03T00:00:00Z'),
      m('f1', { fundamental: { ticker: 'AAPL', peRatio: 30, asOf: '2025-01-01' } }, '2025-01-05T00:00:00Z'),
      m('f2', { fundamental: { ticker: 'AAPL', peRatio: 28, asOf: '2025-02-01' } }, '2025-01-04T00:00:00Z'),
      m('h1', { subject: folio, holding: { ticker: 'AAPL', shares: 10 } }, '2025-01-01T00:00:00Z', folio),
      m('h2', { subject: folio, holding: { ticker: 'AAPL', shares: 15, costBasis: 90 } }, '2025-01-02T00:00:00Z', folio),
      m('h3', { subject: folio, holding: { ticker: 'MSFT', shares: 5 } }, '2025-01-01T00:00:00Z', folio),
      m('h4', { subject: folio, holding: { ticker: 'MSFT', shares: 0 } }, '2025-01-03T00:00:00Z', folio),
      m('n1', { newsEvent: { tickers: ['AAPL', 'msft'], headline: 'Apple beats estimates' } }, '2025-01-02T00:00:00Z'),
      m('bad', { price: { ticker: 'AAPL', close: -3 } }, '2025-01-02T00:00:00Z'),
      m('other', { note: 'x' }, '2025-01-02T00:00:00Z'),
    ]);
    expect(market.prices.get('AAPL')!.map((b) => [b.day, b.close])).toEqual([
      ['2025-01-01', 99],
      ['2025-01-02', 101],
    ]);
    expect(market.fundamentals.get('AAPL')).toMatchObject({ peRatio: 28, memoryId: 'f2' });
    expect([...market.holdings.get('portfolio\0acct-1')!.values()]).toEqual([expect.objectContaining({ ticker: 'AAPL', shares: 15, costBasis: 90, assetClass: 'equity' })]);
    expect(market.news[0]).toMatchObject({ tickers: ['AAPL', 'MSFT'], sentiment: 1, scored: false });
    expect(market.ignored.map((i) => i.memoryId)).toEqual(['bad', 'other']);
  });

  it('scores headlines with the lexicon, negation included', () => {
    expect(headlineSentiment('Apple beats earnings, raises guidance')).toBe(1);
    expect(headlineSentiment('Shares plunge after the company misses estimates')).toBe(-1);
    expect(headlineSentiment('Regulator does not approve the merger')).toBe(-1);
    expect(headlineSentiment('Record revenue but a lawsuit looms')).toBe(0);
    expect(headlineSentiment('The annual meeting is on Tuesday')).toBe(0);
  });
});

describe('calls, reliability and calibration', () => {
  it('abstains under MIN_BARS closes, and calls a steady rise a buy and a steady fall a sell', () => {
    expect(call(bars(Array(MIN_BARS - 1).fill(10)), [], 30)).toEqual({ abstain: `${MIN_BARS - 1} daily closes; a call needs ${MIN_BARS}` });
    const noise = (i: number) => (i % 2 ? 0.004 : -0.004);
    const up = call(bars(walk(Array.from({ length: 60 }, (_, i) => 0.006 + noise(i)))), [], 30);
    const down = call(bars(walk(Array.from({ length: 60 }, (_, i) => -0.006 + noise(i)))), [], 30);
    if ('abstain' in up || 'abstain' in down) throw new Error('expected calls');
    expect(up.direction).toBe('buy');
    expect(up.expectedReturn).toBeGreaterThan(0);
    expect(down.direction).toBe('sell');
    for (const c of [up, down]) {
      expect(c.structuralConfidence).toBeGreaterThanOrEqual(0.5);
      expect(c.structuralConfidence).toBeLessThanOrEqual(0.75);
      expect(c.sourceMemoryIds).toHaveLength(MIN_BARS);
    }
  });

  it('decides hits by direction, a hold within its band', () => {
    expect(isHit('buy', 100, 101, 0.05)).toBe(true);
    expect(isHit('buy', 100, 100, 0.05)).toBe(false);
    expect(isHit('sell', 100, 99, 0.05)).toBe(true);
    expect(isHit('hold', 100, 104, 0.05)).toBe(true);
    expect(isHit('hold', 100, 94, 0.05)).toBe(false);
  });

  it('reliability: 1 untested; the hit rate shrunk by ten pseudo-calls, over the mean confidence', () => {
    expect(reliability([])).toEqual({ multiplier: 1, resolved: 0 });
    // Ten calls at 0.6, three hits: (3 + 10 x 0.6) / 20 = 0.45; 0.45 / 0.6 = 0.75.
    const ten = Array.from({ length: 10 }, (_, i) => ({ structural: 0.6, hit: i < 3 }));
    expect(reliability(ten).multiplier).toBeCloseTo(0.75, 12);
    fc.assert(
      fc.property(fc.array(fc.record({ structural: fc.double({ min: 0.5, max: 0.75, noNaN: true }), hit: fc.boolean() }), { minLength: 1, maxLength: 200 }), (calls) => {
        const { multiplier } = reliability(calls);
        const meanS = calls.reduce((s, c) => s + c.structural, 0) / calls.length;
        const rate = calls.filter((c) => c.hit).length / calls.length;
        // The reported mean lies between the calls' own confidence and the realised rate.
        expect(multiplier * meanS).toBeGreaterThanOrEqual(Math.min(meanS, rate) - 1e-12);
        expect(multiplier * meanS).toBeLessThanOrEqual(Math.max(meanS, rate) + 1e-12);
      }),
    );
  });

  it('buckets every scored call once, a confidence of 1 in the last band', () => {
    const buckets = calibrationBuckets(
      [
        { reported: 0, hit: false },
        { reported: 0.55, hit: true },
        { reported: 0.58, hit: false },
        { reported: 1, hit: true },
      ],
      5,
    );
    expect(buckets.map((b) => b.predictions)).toEqual([1, 0, 2, 0, 1]);
    expect(buckets[2]).toMatchObject({ lower: 0.4, upper: 0.6, hits: 1, misses: 1, realizedHitRate: 0.5, hasData: true });
    expect(buckets[1]).toMatchObject({ hasData: false, realizedHitRate: 0 });
    fc.assert(
      fc.property(fc.array(fc.record({ reported: fc.double({ min: 0, max: 1, noNaN: true }), hit: fc.boolean() })), fc.integer({ min: 1, max: 20 }), (calls, n) => {
        expect(calibrationBuckets(calls, n).reduce((s, b) => s + b.predictions, 0)).toBe(calls.length);
      }),
    );
  });

  it("a portfolio's VaR deviation: from the covariance on shared days, else summed (correlation 1)", () => {
    const r = Array.from({ length: 40 }, (_, i) => Math.sin(i * 1.7) / 50);
    const market = readMarket([...priceMemories('A', walk(r)), ...priceMemories('B', walk(r.map((x) => -x)))]);
    const half = [
      { ticker: 'A', weight: 0.5, assetClass: 'equity' },
      { ticker: 'B', weight: 0.5, assetClass: 'equity' },
    ];
    // Opposite returns cancel: a hedged book barely moves.
    const hedged = portfolioDailySd(market, half);
    expect(hedged.method).toMatch(/covariance/);
    expect(hedged.dailySd!).toBeLessThan(1e-3);
    const one = portfolioDailySd(market, [{ ticker: 'A', weight: 1, assetClass: 'equity' }]);
    expect(one.dailySd).toBeCloseTo(ind.dailyVolatility(walk(r))!, 10);
    // No shared days: the weighted sum of the positions' own deviations.
    const apart = readMarket([...priceMemories('A', walk(r)), ...priceMemories('B', walk(r), T0 + 100 * DAY)]);
    const summed = portfolioDailySd(apart, half);
    expect(summed.method).toMatch(/undiversified/);
    expect(summed.dailySd).toBeCloseTo(ind.dailyVolatility(walk(r))!, 10);
  });
});
