// The directional call on one ticker (strategy STRATEGY): a blend of sub-signals, each in [-1, 1]
// with bullish positive, read off the closes up to the latest bar and the news of the week before it.
//   trend:     the last close against SMA50 (SMA20 when there is no SMA50); 5% above is +1.
//   momentum:  the MACD line (EMA12 - EMA26) in units of the price's standard deviation over the
//              slow average's 26 days (close x daily volatility x sqrt 26).
//   reversion: RSI14 past 70 leans bearish, under 30 bullish, in proportion to the distance.
//   news:      the mean sentiment of the ticker's headlines in the 7 days up to the bar.
// score = the weighted mean (weights below, news only when there is news). buy at score >= 0.2,
// sell at <= -0.2, hold between.
// structuralConfidence: how much the sub-signals agree with the call, between 0.5 (a coin) and 0.75.
// A buy or sell: 0.5 + 0.25 x |score| x agreement, agreement = the weight of the sub-signals on the
// call's side over the weight of those that lean at all. A hold: 0.5 + 0.25 x (1 - |score| / 0.2).
// The reported confidence is that times the strategy's reliability (service.ts), so it is the
// realised hit rate, not this structure, that decides how sure a call may sound.
// A call is a hit when, at its horizon, the close moved its way: up for a buy, down for a sell, and
// for a hold by less than half of one horizon's standard deviation (holdBand).
// Fewer than MIN_BARS closes: no call (abstention, with the reason).
import { bollinger, dailyVolatility, macd, rsi, sma, TRADING_DAYS } from './indicators.js';
import type { Bar, News } from './market.js';

export const STRATEGY = 'technical-blend-v1';
/** MACD's signal line needs 26 + 9 - 1 closes. */
export const MIN_BARS = 34;
const NEWS_WINDOW_MS = 7 * 86_400_000;
const WEIGHTS = { trend: 0.35, momentum: 0.35, reversion: 0.3, news: 0.2 } as const;
const CALL_AT = 0.2;

export type Direction = 'buy' | 'sell' | 'hold';

export interface Call {
  direction: Direction;
  score: number;
  structuralConfidence: number;
  /** One horizon's standard deviation of the return. */
  horizonSd: number;
  expectedReturn: number;
  holdBand: number;
  basis: Bar;
  rationale: string[];
  newsUsed: boolean;
  sourceMemoryIds: string[];
}

const clamp1 = (x: number) => Math.max(-1, Math.min(1, x));
const pct = (x: number) => `${(x * 100).toFixed(1)}%`;

/** The calendar horizon in trading days (252 of 365). */
export const tradingDays = (horizonDays: number) => (horizonDays * TRADING_DAYS) / 365;

export function call(bars: readonly Bar[], news: readonly News[], horizonDays: number): Call | { abstain: string } {
  if (bars.length < MIN_BARS) return { abstain: `${bars.length} daily closes; a call needs ${MIN_BARS}` };
  const closes = bars.map((b) => b.close);
  const basis = bars[bars.length - 1]!;
  const close = basis.close;
  const daily = dailyVolatility(closes)!;
  const rationale: string[] = [];
  const parts: { name: keyof typeof WEIGHTS; value: number }[] = [];

  const sma50 = sma(closes, 50);
  const anchor = sma50 ?? sma(closes, 20)!;
  const trend = clamp1((close / anchor - 1) / 0.05);
  parts.push({ name: 'trend', value: trend });
  rationale.push(`close ${close} is ${pct(close / anchor - 1)} ${close >= anchor ? 'above' : 'below'} its ${sma50 === null ? '20' : '50'}-day average`);

  const line = macd(closes);
  const momentum = daily === 0 ? 0 : clamp1(line.macd! / (close * daily * Math.sqrt(26)));
  parts.push({ name: 'momentum', value: momentum });
  rationale.push(`MACD ${line.macd!.toFixed(3)}, histogram ${line.histogram!.toFixed(3)} (${momentum >= 0 ? 'upward' : 'downward'} momentum)`);

  const strength = rsi(closes)!;
  const reversion = strength > 70 ? -(strength - 70) / 30 : strength < 30 ? (30 - strength) / 30 : 0;
  parts.push({ name: 'reversion', value: reversion });
  rationale.push(`RSI14 ${strength.toFixed(1)}${strength > 70 ? ' (overbought)' : strength < 30 ? ' (oversold)' : ''}`);
  const band = bollinger(closes);
  if (band?.pctB != null) rationale.push(`Bollinger %B ${band.pctB.toFixed(2)}`);

  const recent = news.filter((n) => n.at <= basis.at && n.at > basis.at - NEWS_WINDOW_MS);
  if (recent.length > 0) {
    const sentiment = recent.reduce((s, n) => s + n.sentiment, 0) / recent.length;
    parts.push({ name: 'news', value: clamp1(sentiment) });
    rationale.push(`${recent.length} headline${recent.length === 1 ? '' : 's'} in the week, mean sentiment ${sentiment.toFixed(2)}`);
  }

  const weight = parts.reduce((s, p) => s + WEIGHTS[p.name], 0);
  const score = parts.reduce((s, p) => s + WEIGHTS[p.name] * p.value, 0) / weight;
  const direction: Direction = score >= CALL_AT ? 'buy' : score <= -CALL_AT ? 'sell' : 'hold';
  const leaning = parts.filter((p) => p.value !== 0);
  const agreeing = leaning.filter((p) => Math.sign(p.value) === Math.sign(score));
  const agreement = leaning.length === 0 ? 0 : agreeing.reduce((s, p) => s + WEIGHTS[p.name], 0) / leaning.reduce((s, p) => s + WEIGHTS[p.name], 0);
  const structuralConfidence = direction === 'hold' ? 0.5 + 0.25 * (1 - Math.abs(score) / CALL_AT) : 0.5 + 0.25 * Math.abs(score) * agreement;
  const horizonSd = daily * Math.sqrt(tradingDays(horizonDays));
  rationale.push(`score ${score.toFixed(2)}: ${direction}`);
  return {
    direction,
    score,
    structuralConfidence,
    horizonSd,
    expectedReturn: score * horizonSd,
    holdBand: horizonSd / 2,
    basis,
    rationale,
    newsUsed: recent.length > 0,
    sourceMemoryIds: [...bars.slice(-MIN_BARS).map((b) => b.memoryId), ...recent.map((n) => n.memoryId)],
  };
}

/** Whether a call came true, from its basis close and the realised close at its horizon. */
export function isHit(direction: Direction, basisClose: number, realizedClose: number, holdBand: number): boolean {
  const r = realizedClose / basisClose - 1;
  return direction === 'buy' ? r > 0 : direction === 'sell' ? r < 0 : Math.abs(r) <= holdBand;
}
