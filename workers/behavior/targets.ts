// Declared-target predictions for one subject, the numeric cores: a subject's own event rate with a
// Gamma posterior (event_occurrence when too few subjects exist for BG/NBD), the EWMA level of a
// typed attribute (numeric), the next occurrence from inter-arrival times (event_time), the z-score
// of the latest reading (anomaly), and the Wilson interval for projected patterns. Pure; every
// answer either carries its interval or abstains with a reason, never a "no" for "unknown".
import gammaQuantile from '@stdlib/stats-base-dists-gamma-quantile';
import { quantile } from './stats.js';

const DAY_MS = 86_400_000;
const Z95 = 1.959963984540054;

export type Abstention = { abstain: true; reason: string };

/** The 95% Wilson score interval of a proportion (Wilson, JASA 22, 1927). */
export function wilson(hits: number, n: number, z = Z95): { lower: number; upper: number } {
  if (n <= 0) return { lower: 0, upper: 1 };
  const p = hits / n;
  const z2 = z * z;
  const centre = (p + z2 / (2 * n)) / (1 + z2 / n);
  const half = (z / (1 + z2 / n)) * Math.sqrt((p * (1 - p)) / n + z2 / (4 * n * n));
  // The interval holds p exactly; float error alone can put a bound a hair inside it at p = 0 or 1.
  return { lower: Math.max(0, Math.min(p, centre - half)), upper: Math.min(1, Math.max(p, centre + half)) };
}

export interface Occurrence {
  probability: number;
  lower: number;
  upper: number;
  /** The expected number of events within the horizon. */
  expected: number;
}

/**
 * P(at least one event within the horizon) from the subject's own rate: events as a Poisson process
 * whose rate has a Gamma(shape, rate) prior (default Gamma(0.5, 1 day), Jeffreys-like for a count),
 * updated by `count` events over `exposureDays`. The probability is the posterior predictive
 * 1 - (b / (b + h))^a (a negative-binomial zero count); the interval maps the rate's 2.5% and 97.5%
 * posterior quantiles through 1 - exp(-lambda h), widened to hold the point where the skew of a thin
 * posterior puts the mean outside them.
 */
export function occurrenceFromRate(
  count: number,
  exposureDays: number,
  horizonDays: number,
  prior: { shape: number; rate: number } = { shape: 0.5, rate: 1 },
): Occurrence | Abstention {
  if (!(exposureDays > 0)) return { abstain: true, reason: 'insufficient_signal: no observed history' };
  const a = prior.shape + count;
  const b = prior.rate + exposureDays;
  const probability = 1 - Math.exp(a * (Math.log(b) - Math.log(b + horizonDays)));
  const at = (lambda: number) => 1 - Math.exp(-lambda * horizonDays);
  const lower = Math.min(probability, at(gammaQuantile(0.025, a, b)));
  const upper = Math.max(probability, at(gammaQuantile(0.975, a, b)));
  return { probability, lower, upper, expected: (a / b) * horizonDays };
}

export interface Level {
  value: number;
  lower: number;
  upper: number;
  observationCount: number;
}

/**
 * The EWMA level of a series (alpha 0.3 as the typed accumulators keep it: the first value seeds the
 * level, variance 0) with an interval of 1.96 EW standard deviations, the variance updated
 * incrementally as in Finch, "Incremental calculation of weighted mean and variance" (2009).
 */
export function ewmaLevel(values: Float64Array, alpha = 0.3): Level | Abstention {
  if (values.length < 2) return { abstain: true, reason: `insufficient_signal: ${values.length} reading(s), at least 2 needed` };
  let level = values[0]!;
  let variance = 0;
  for (let i = 1; i < values.length; i++) {
    const diff = values[i]! - level;
    level += alpha * diff;
    variance = (1 - alpha) * (variance + alpha * diff * diff);
  }
  const half = Z95 * Math.sqrt(variance);
  return { value: level, lower: level - half, upper: level + half, observationCount: values.length };
}

export interface NextEvent {
  expectedAt: number;
  lower: number;
  upper: number;
  daysUntil: number;
  overdue: boolean;
  medianGapDays: number;
}

/**
 * The next event from the subject's inter-arrival times: expected at the last event plus the median
 * gap, within the gaps' 5% and 95% quantiles; overdue once `now` is past the upper bound.
 */
export function nextEvent(times: Float64Array, now: number): NextEvent | Abstention {
  const sorted = Array.from(times).sort((a, b) => a - b);
  if (sorted.length < 3) return { abstain: true, reason: `insufficient_signal: ${sorted.length} event(s), at least 3 needed` };
  const gaps = sorted.slice(1).map((t, i) => t - sorted[i]!).sort((a, b) => a - b);
  const last = sorted.at(-1)!;
  const median = quantile(gaps, 0.5);
  const expectedAt = last + median;
  const upper = last + quantile(gaps, 0.95);
  return { expectedAt, lower: last + quantile(gaps, 0.05), upper, daysUntil: (expectedAt - now) / DAY_MS, overdue: now > upper, medianGapDays: median / DAY_MS };
}

export interface Anomaly {
  value: number;
  anomalyScore: number;
  anomalous: boolean;
  valueLower: number;
  valueUpper: number;
  baselineMean: number;
  baselineSd: number;
}

export const ANOMALY = { minReadings: 5, threshold: 3 } as const;

/**
 * The latest reading against the baseline of those before it: anomalyScore = |z|; anomalous at
 * |z| >= 3; the normal range is the baseline's mean +- 3 sample standard deviations. A flat baseline
 * (standard deviation 0) makes any different reading infinitely surprising: that is abstained on.
 */
export function anomaly(values: Float64Array): Anomaly | Abstention {
  const n = values.length;
  if (n < ANOMALY.minReadings) return { abstain: true, reason: `insufficient_signal: ${n} reading(s), at least ${ANOMALY.minReadings} needed` };
  const baseline = values.subarray(0, n - 1);
  const mean = baseline.reduce((s, x) => s + x, 0) / baseline.length;
  const sd = Math.sqrt(baseline.reduce((s, x) => s + (x - mean) ** 2, 0) / (baseline.length - 1));
  const value = values[n - 1]!;
  if (!(sd > 0)) return { abstain: true, reason: 'insufficient_signal: the baseline does not vary' };
  const score = Math.abs(value - mean) / sd;
  return {
    value,
    anomalyScore: score,
    anomalous: score >= ANOMALY.threshold,
    valueLower: mean - ANOMALY.threshold * sd,
    valueUpper: mean + ANOMALY.threshold * sd,
    baselineMean: mean,
    baselineSd: sd,
  };
}

export const isAbstention = (x: object): x is Abstention => 'abstain' in x;
