// The financial pack: indicators and portfolio risk from the financial memories the clients write,
// directional calls whose reported confidence is their structure times the strategy's realised
// reliability, the scoring of due calls against realised closes, and the calibration report that
// shows whether calls rated ~70% came true ~70% of the time. Informational only: every answer
// carries the disclaimer.
import type { MemoryApi } from '../memory/index.js';
import { clampTo, type Subject } from '../platform/common-schemas.js';
import type { Db } from '../platform/db.js';
import { newId } from '../platform/ids.js';
import * as ind from './indicators.js';
import { normaliseTicker, readMarket, subjectKey, type Bar, type FinancialMemory, type Holding, type Market } from './market.js';
import type { Indicators } from './schemas.js';
import { call, isHit, STRATEGY } from './signals.js';
import * as store from './store.js';

export const FINANCIAL_DISCLAIMER =
  'Informational only, not investment advice. Indicators and calls are computed from the data recorded in this project; past performance does not predict future results.';
/** The index computed betas are measured against, when its closes are recorded (as ticker SPY). */
export const BENCHMARK = 'SPY';
export const PREDICT = { horizonDays: { default: 30, min: 1, max: 365 } } as const;
export const CALIBRATION = { bucketCount: { default: 5, min: 1, max: 20 } } as const;
/** Reliability shrinks the realised hit rate toward the calls' own mean confidence with this weight (pseudo-calls). */
export const RELIABILITY_PRIOR = 10;
/** Due calls one reconcile scores at most; the next one takes the rest. */
export const RECONCILE_BATCH = 5_000;
const Z95 = 1.6448536269514722;
const DAY = 86_400_000;
const PAGE = 1_000;

const round = (x: number | null, digits = 6): number | null => (x === null ? null : Number(x.toFixed(digits)));

export interface Reliability {
  multiplier: number;
  resolved: number;
}

/** realised hit rate, shrunk toward the mean structural confidence, over that mean; 1 when untested. */
export function reliability(resolved: readonly { structural: number; hit: boolean }[]): Reliability {
  if (resolved.length === 0) return { multiplier: 1, resolved: 0 };
  const meanStructural = ind.mean(resolved.map((r) => r.structural));
  const hits = resolved.filter((r) => r.hit).length;
  const rate = (hits + RELIABILITY_PRIOR * meanStructural) / (resolved.length + RELIABILITY_PRIOR);
  return { multiplier: rate / meanStructural, resolved: resolved.length };
}

export function calibrationBuckets(resolved: readonly { reported: number; hit: boolean }[], count: number) {
  const buckets = Array.from({ length: count }, (_, i) => ({ lower: i / count, upper: (i + 1) / count, predictions: 0, hits: 0, misses: 0, realizedHitRate: 0, hasData: false }));
  for (const r of resolved) {
    const b = buckets[Math.min(count - 1, Math.max(0, Math.floor(r.reported * count)))]!;
    b.predictions++;
    if (r.hit) b.hits++;
    else b.misses++;
  }
  for (const b of buckets) {
    b.hasData = b.predictions > 0;
    b.realizedHitRate = b.hasData ? b.hits / b.predictions : 0;
  }
  return buckets;
}

export class FinancialPack {
  constructor(
    private readonly db: Db,
    private readonly memory: Pick<MemoryApi, 'list'>,
  ) {}

  private async market(projectId: string): Promise<Market> {
    const memories: FinancialMemory[] = [];
    for (let offset = 0; ; offset += PAGE) {
      const page = await this.memory.list(projectId, { category: 'financial', limit: PAGE, offset });
      memories.push(...page.map((m) => ({ id: m.id, metadata: m.metadata, subject: m.subject, validFrom: m.validFrom, created: m.created })));
      if (page.length < PAGE) return readMarket(memories);
    }
  }

  private indicators(market: Market, ticker: string): Indicators {
    const bars = market.prices.get(ticker) ?? [];
    const closes = bars.map((b) => b.close);
    const last = bars[bars.length - 1]!;
    const { macd, signal, histogram } = ind.macd(closes);
    const band = ind.bollinger(closes);
    const benchmark = market.prices.get(BENCHMARK);
    const computed = benchmark ? ind.beta(byDay(bars), byDay(benchmark)) : null;
    const reported = market.fundamentals.get(ticker)?.beta ?? null;
    return {
      ticker,
      lastClose: last.close,
      asOf: new Date(last.at).toISOString(),
      sma20: round(ind.sma(closes, 20)),
      sma50: round(ind.sma(closes, 50)),
      sma200: round(ind.sma(closes, 200)),
      ema12: round(ind.ema(closes, 12)),
      ema26: round(ind.ema(closes, 26)),
      rsi14: round(ind.rsi(closes)),
      macd: round(macd),
      macdSignal: round(signal),
      macdHistogram: round(histogram),
      bollingerUpper: round(band?.upper ?? null),
      bollingerMid: round(band?.mid ?? null),
      bollingerLower: round(band?.lower ?? null),
      bollingerPctB: round(band?.pctB ?? null),
      annualizedVolatility: round(ind.annualizedVolatility(closes)),
      trailingReturn: round(ind.trailingReturn(closes)),
      maxDrawdown: round(ind.maxDrawdown(closes)),
      sharpe: round(ind.sharpe(closes)),
      beta: round(computed ?? reported),
      betaSource: computed !== null ? 'computed' : reported !== null ? 'reported' : 'none',
      sampleSize: bars.length,
      sourceMemoryIds: bars.slice(-200).map((b) => b.memoryId),
    };
  }

  async profile(projectId: string, subject: Subject, now = new Date()) {
    const market = await this.market(projectId);
    const tickerMode = subject.kind === 'ticker';
    const held = tickerMode ? new Map<string, Holding>() : (market.holdings.get(subjectKey(subject)) ?? new Map<string, Holding>());
    const tickers = tickerMode ? [normaliseTicker(subject.externalId)] : [...held.keys()].sort();
    const priced = tickers.filter((t) => market.prices.has(t));
    const indicators = priced.map((t) => this.indicators(market, t));
    const fundamentals = tickers.flatMap((t) => {
      const f = market.fundamentals.get(t);
      return f
        ? [{ ticker: t, peRatio: f.peRatio, marketCap: f.marketCap, dividendYield: f.dividendYield, eps: f.eps, debtToEquity: f.debtToEquity, beta: f.beta, asOf: new Date(f.at).toISOString(), sourceMemoryId: f.memoryId }]
        : [];
    });

    // Cash without a recorded price counts at 1 per unit; any other holding without closes is unpriced.
    const lastClose = (h: Holding) => market.prices.get(h.ticker)?.at(-1)?.close ?? (h.assetClass === 'cash' ? 1 : null);
    const valued = [...held.values()].flatMap((h) => {
      const close = lastClose(h);
      return close === null ? [] : [{ h, close, value: h.shares * close }];
    });
    const totalValue = valued.reduce((s, p) => s + p.value, 0);
    const positions = valued.map(({ h, close, value }) => ({
      ticker: h.ticker,
      shares: h.shares,
      costBasis: h.costBasis,
      lastClose: close,
      marketValue: value,
      weight: totalValue > 0 ? value / totalValue : 0,
      unrealizedPnl: h.costBasis === null ? null : (close - h.costBasis) * h.shares,
      assetClass: h.assetClass,
      sourceMemoryId: h.memoryId,
    }));
    const unpricedHoldings = [...held.values()].filter((h) => lastClose(h) === null).map((h) => h.ticker);
    return {
      subject,
      indicators,
      fundamentals,
      positions,
      portfolioRisk: tickerMode || totalValue <= 0 ? null : this.risk(market, positions, indicators, totalValue),
      unpricedHoldings,
      ...(tickerMode && priced.length === 0 ? { abstentionReason: `no closes recorded for ${tickers[0]}` } : {}),
      ignoredMemories: market.ignored.slice(0, 20),
      disclaimer: FINANCIAL_DISCLAIMER,
      generatedAt: now.toISOString(),
    };
  }

  private risk(
    market: Market,
    positions: readonly { ticker: string; weight: number; assetClass: string; marketValue: number }[],
    indicators: readonly { ticker: string; beta: number | null; annualizedVolatility: number | null }[],
    totalValue: number,
  ) {
    const byTicker = new Map(indicators.map((i) => [i.ticker, i]));
    const weighted = (pick: (i: { beta: number | null; annualizedVolatility: number | null }) => number | null) => {
      const covered = positions.flatMap((p) => {
        const i = byTicker.get(p.ticker);
        const v = i ? pick(i) : p.assetClass === 'cash' ? 0 : null;
        return v === null ? [] : [{ w: p.weight, v }];
      });
      const w = covered.reduce((s, c) => s + c.w, 0);
      return w === 0 ? { value: null, coverage: 0 } : { value: covered.reduce((s, c) => s + c.w * c.v, 0) / w, coverage: w };
    };
    const beta = weighted((i) => i.beta);
    const volatility = weighted((i) => i.annualizedVolatility);
    const { dailySd, method } = portfolioDailySd(market, positions);
    const allocations = new Map<string, number>();
    for (const p of positions) allocations.set(p.assetClass, (allocations.get(p.assetClass) ?? 0) + p.marketValue);
    return {
      totalValue,
      weightedBeta: round(beta.value),
      betaCoverage: round(beta.coverage),
      weightedAnnualizedVolatility: round(volatility.value),
      valueAtRisk95_1d: dailySd === null ? null : round(Z95 * dailySd * totalValue, 2),
      concentrationHhi: round(positions.reduce((s, p) => s + p.weight ** 2, 0))!,
      allocations: [...allocations].map(([assetClass, value]) => ({ assetClass, value, weight: value / totalValue })).sort((a, b) => b.value - a.value),
      varMethod: method,
    };
  }

  async predict(projectId: string, subject: Subject, options: { horizonDays?: number; persist?: boolean }, now = new Date()) {
    const horizonDays = Math.round(clampTo(options.horizonDays, PREDICT.horizonDays));
    const persist = options.persist ?? true;
    const [market, resolved] = await Promise.all([this.market(projectId), store.resolvedCalls(this.db, projectId, STRATEGY)]);
    const { multiplier, resolved: resolvedSample } = reliability(resolved);
    const tickers =
      subject.kind === 'ticker'
        ? [normaliseTicker(subject.externalId)]
        : [...(market.holdings.get(subjectKey(subject))?.values() ?? [])].filter((h) => h.assetClass !== 'cash').map((h) => h.ticker).sort();
    const abstentions: { ticker: string; reason: string }[] = [];
    const signals = [];
    const rows: store.StoredCall[] = [];
    for (const ticker of tickers) {
      const made = call(market.prices.get(ticker) ?? [], market.news.filter((n) => n.tickers.includes(ticker)), horizonDays);
      if ('abstain' in made) {
        abstentions.push({ ticker, reason: made.abstain });
        continue;
      }
      const reportedConfidence = Math.min(1, Math.max(0, made.structuralConfidence * multiplier));
      const dueAt = new Date(made.basis.at + horizonDays * DAY);
      const predictionId = persist ? newId('fpr') : null;
      signals.push({
        ticker,
        strategy: STRATEGY,
        direction: made.direction,
        score: round(made.score)!,
        structuralConfidence: round(made.structuralConfidence)!,
        reportedConfidence: round(reportedConfidence)!,
        expectedReturn: round(made.expectedReturn)!,
        horizonDays,
        basisClose: made.basis.close,
        basisAt: new Date(made.basis.at).toISOString(),
        dueAt: dueAt.toISOString(),
        holdBand: round(made.holdBand)!,
        rationale: made.rationale,
        newsUsed: made.newsUsed,
        predictionId,
        sourceMemoryIds: made.sourceMemoryIds,
      });
      if (predictionId)
        rows.push({
          projectId, id: predictionId, subjectKind: subject.kind, subjectExternalId: subject.externalId, ticker, strategy: STRATEGY, direction: made.direction,
          score: made.score, structuralConfidence: made.structuralConfidence, reportedConfidence, expectedReturn: made.expectedReturn, holdBand: made.holdBand,
          horizonDays, basisClose: made.basis.close, basisAt: new Date(made.basis.at), dueAt, rationale: made.rationale, sourceMemoryIds: made.sourceMemoryIds, madeAt: now,
        });
    }
    await store.insertCalls(this.db, rows);
    return { signals, abstentions, strategy: STRATEGY, strategyReliability: round(multiplier)!, resolvedSample, disclaimer: FINANCIAL_DISCLAIMER, generatedAt: now.toISOString() };
  }

  async reconcile(projectId: string, now = new Date()) {
    const due = await store.dueCalls(this.db, projectId, now, RECONCILE_BATCH + 1);
    const capped = due.length > RECONCILE_BATCH;
    const market = due.length === 0 ? null : await this.market(projectId);
    let scored = 0;
    let hits = 0;
    for (const c of due.slice(0, RECONCILE_BATCH)) {
      // The first close on or after the horizon; none yet and the call waits.
      const realized = market!.prices.get(c.ticker)?.find((b) => b.at >= c.dueAt.getTime());
      if (!realized) continue;
      const hit = isHit(c.direction, c.basisClose, realized.close, c.holdBand);
      if (await store.resolveCall(this.db, projectId, c.id, { realizedClose: realized.close, realizedReturn: realized.close / c.basisClose - 1, hit, at: now })) {
        scored++;
        if (hit) hits++;
      }
    }
    return { scored, hits, misses: scored - hits, stillPending: await store.pendingCount(this.db, projectId), capped, generatedAt: now.toISOString() };
  }

  async calibration(projectId: string, options: { bucketCount?: number; strategy?: string }, now = new Date()) {
    const count = Math.round(clampTo(options.bucketCount, CALIBRATION.bucketCount));
    const resolved = await store.resolvedCalls(this.db, projectId, options.strategy);
    // The reliability of the strategy asked for; unfiltered, of the strategy calls are made with now.
    const own = options.strategy !== undefined ? resolved : resolved.filter((r) => r.strategy === STRATEGY);
    const hits = resolved.filter((r) => r.hit).length;
    return {
      buckets: calibrationBuckets(resolved, count),
      strategy: options.strategy ?? 'all',
      strategyReliability: round(reliability(own).multiplier)!,
      totalResolved: resolved.length,
      hitRate: resolved.length === 0 ? null : round(hits / resolved.length),
      meanReportedConfidence: resolved.length === 0 ? null : round(ind.mean(resolved.map((r) => r.reported))),
      brierScore: resolved.length === 0 ? null : round(ind.mean(resolved.map((r) => (r.reported - (r.hit ? 1 : 0)) ** 2))),
      generatedAt: now.toISOString(),
    };
  }
}

const byDay = (bars: readonly Bar[]) => new Map(bars.map((b) => [b.day, b.close]));

/**
 * The portfolio's daily standard deviation: from the covariance of its positions' returns on the
 * days they share, when there are enough of them; otherwise the weighted sum of their own deviations
 * (perfect correlation, an upper bound). Cash moves by nothing.
 */
export function portfolioDailySd(market: Market, positions: readonly { ticker: string; weight: number; assetClass: string }[]): { dailySd: number | null; method: string } {
  const risky = positions.filter((p) => p.assetClass !== 'cash' && p.weight > 0);
  if (risky.length === 0) return { dailySd: 0, method: 'parametric-normal: cash only' };
  const series = risky.map((p) => byDay(market.prices.get(p.ticker) ?? []));
  const days = [...series[0]!.keys()].filter((d) => series.every((s) => s.has(d))).sort().slice(-(ind.TRADING_DAYS + 1));
  if (days.length - 1 >= ind.MIN_RETURNS) {
    const returns = series.map((s) => days.slice(1).map((d, i) => s.get(d)! / s.get(days[i]!)! - 1));
    const means = returns.map(ind.mean);
    const n = days.length - 1;
    let variance = 0;
    for (let i = 0; i < risky.length; i++)
      for (let j = 0; j < risky.length; j++) {
        let cov = 0;
        for (let t = 0; t < n; t++) cov += (returns[i]![t]! - means[i]!) * (returns[j]![t]! - means[j]!);
        variance += risky[i]!.weight * risky[j]!.weight * (cov / (n - 1));
      }
    return { dailySd: Math.sqrt(Math.max(0, variance)), method: `parametric-normal-covariance: 1-day 95% VaR from the positions' covariance over ${n} shared days` };
  }
  const own = risky.map((p) => ind.dailyVolatility((market.prices.get(p.ticker) ?? []).map((b) => b.close)));
  if (own.some((v) => v === null)) return { dailySd: null, method: `not computed: a position has under ${ind.MIN_RETURNS} daily returns` };
  return {
    dailySd: risky.reduce((s, p, i) => s + p.weight * own[i]!, 0),
    method: 'parametric-normal-undiversified: positions share too few days for a covariance, so correlation is taken as 1 (an upper bound)',
  };
}
