// Technical indicators over a ticker's daily closes, oldest first. Pure functions; each answers
// null when the series is too short for it, never a number computed from too little.
// Conventions (the usual ones, written down because vendors differ):
// - EMA(n) is seeded with the SMA of the first n closes, then alpha = 2 / (n + 1).
// - RSI(14) is Wilder's: the first averages are plain means of the first 14 changes, then
//   avg = (avg * 13 + x) / 14. No losses gives 100 (50 when nothing moved).
// - MACD = EMA12 - EMA26; its signal is the EMA9 of the MACD line; histogram = MACD - signal.
// - Bollinger(20, 2): SMA20 plus and minus two population standard deviations; %B places the
//   last close in the band (0 at the lower, 1 at the upper).
// - Returns are simple daily returns. Volatility and Sharpe use the last year (252 returns) at most,
//   annualised by sqrt(252), with a risk-free rate of 0; they need MIN_RETURNS returns.
// - Max drawdown is the worst fall from a running peak over the whole series (a negative fraction).

export const TRADING_DAYS = 252;
/** Volatility, Sharpe and beta need this many returns (about a month of trading). */
export const MIN_RETURNS = 20;

export const mean = (xs: readonly number[]): number => xs.reduce((s, x) => s + x, 0) / xs.length;

/** Sample standard deviation (n - 1); null under two values. */
export function sampleSd(xs: readonly number[]): number | null {
  if (xs.length < 2) return null;
  const m = mean(xs);
  return Math.sqrt(xs.reduce((s, x) => s + (x - m) ** 2, 0) / (xs.length - 1));
}

export function sma(closes: readonly number[], n: number): number | null {
  return closes.length < n ? null : mean(closes.slice(-n));
}

/** The EMA(n) at every index from n - 1 on (index i of the answer is close n - 1 + i). */
export function emaSeries(values: readonly number[], n: number): number[] {
  if (values.length < n) return [];
  const alpha = 2 / (n + 1);
  const out = [mean(values.slice(0, n))];
  for (let i = n; i < values.length; i++) out.push(alpha * values[i]! + (1 - alpha) * out[out.length - 1]!);
  return out;
}

export function ema(closes: readonly number[], n: number): number | null {
  const series = emaSeries(closes, n);
  return series.length === 0 ? null : series[series.length - 1]!;
}

export function rsi(closes: readonly number[], n = 14): number | null {
  if (closes.length < n + 1) return null;
  let gain = 0;
  let loss = 0;
  for (let i = 1; i <= n; i++) {
    const change = closes[i]! - closes[i - 1]!;
    if (change > 0) gain += change;
    else loss -= change;
  }
  gain /= n;
  loss /= n;
  for (let i = n + 1; i < closes.length; i++) {
    const change = closes[i]! - closes[i - 1]!;
    gain = (gain * (n - 1) + Math.max(change, 0)) / n;
    loss = (loss * (n - 1) + Math.max(-change, 0)) / n;
  }
  if (loss === 0) return gain === 0 ? 50 : 100;
  return 100 - 100 / (1 + gain / loss);
}

export function macd(closes: readonly number[]): { macd: number | null; signal: number | null; histogram: number | null } {
  const slow = emaSeries(closes, 26);
  if (slow.length === 0) return { macd: null, signal: null, histogram: null };
  const fast = emaSeries(closes, 12).slice(26 - 12);
  const line = slow.map((s, i) => fast[i]! - s);
  const signal = ema(line, 9);
  const last = line[line.length - 1]!;
  return { macd: last, signal, histogram: signal === null ? null : last - signal };
}

export function bollinger(closes: readonly number[], n = 20, k = 2): { upper: number; mid: number; lower: number; pctB: number | null } | null {
  if (closes.length < n) return null;
  const window = closes.slice(-n);
  const mid = mean(window);
  const sd = Math.sqrt(window.reduce((s, x) => s + (x - mid) ** 2, 0) / n);
  const upper = mid + k * sd;
  const lower = mid - k * sd;
  return { upper, mid, lower, pctB: upper === lower ? null : (closes[closes.length - 1]! - lower) / (upper - lower) };
}

export function dailyReturns(closes: readonly number[]): number[] {
  const out: number[] = [];
  for (let i = 1; i < closes.length; i++) out.push(closes[i]! / closes[i - 1]! - 1);
  return out;
}

/** The daily standard deviation of the last year's returns; null under MIN_RETURNS returns. */
export function dailyVolatility(closes: readonly number[]): number | null {
  const returns = dailyReturns(closes).slice(-TRADING_DAYS);
  return returns.length < MIN_RETURNS ? null : sampleSd(returns);
}

export function annualizedVolatility(closes: readonly number[]): number | null {
  const daily = dailyVolatility(closes);
  return daily === null ? null : daily * Math.sqrt(TRADING_DAYS);
}

export function sharpe(closes: readonly number[]): number | null {
  const returns = dailyReturns(closes).slice(-TRADING_DAYS);
  if (returns.length < MIN_RETURNS) return null;
  const sd = sampleSd(returns)!;
  return sd === 0 ? null : (mean(returns) / sd) * Math.sqrt(TRADING_DAYS);
}

/** The return over the last year of closes (or all of them when there are fewer). */
export function trailingReturn(closes: readonly number[]): number | null {
  if (closes.length < 2) return null;
  const from = closes[Math.max(0, closes.length - 1 - TRADING_DAYS)]!;
  return closes[closes.length - 1]! / from - 1;
}

export function maxDrawdown(closes: readonly number[]): number | null {
  if (closes.length < 2) return null;
  let peak = closes[0]!;
  let worst = 0;
  for (const c of closes) {
    peak = Math.max(peak, c);
    worst = Math.min(worst, c / peak - 1);
  }
  return worst;
}

/**
 * Beta of an asset against a benchmark from returns on the same days: cov / var of the benchmark,
 * over the last year of shared days; null under MIN_RETURNS pairs or a benchmark that never moved.
 */
export function beta(asset: ReadonlyMap<string, number>, benchmark: ReadonlyMap<string, number>): number | null {
  const days = [...asset.keys()].filter((d) => benchmark.has(d)).sort();
  const a: number[] = [];
  const b: number[] = [];
  for (let i = 1; i < days.length; i++) {
    a.push(asset.get(days[i]!)! / asset.get(days[i - 1]!)! - 1);
    b.push(benchmark.get(days[i]!)! / benchmark.get(days[i - 1]!)! - 1);
  }
  const n = Math.min(a.length, TRADING_DAYS);
  if (n < MIN_RETURNS) return null;
  const xa = a.slice(-n);
  const xb = b.slice(-n);
  const ma = mean(xa);
  const mb = mean(xb);
  let cov = 0;
  let varB = 0;
  for (let i = 0; i < n; i++) {
    cov += (xa[i]! - ma) * (xb[i]! - mb);
    varB += (xb[i]! - mb) ** 2;
  }
  return varB === 0 ? null : cov / varB;
}
