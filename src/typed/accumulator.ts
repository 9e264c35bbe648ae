// Running statistics of one subject's numeric attribute. Pure: state in, state out.
//
// Order-free moments (count, sum, sum of squares, min, max, cumulative) fold in any order. `last`
// and the EWMA are defined over the observations sorted by (observedAt, id): folding a batch whose
// points all come after the stored `last` continues the EWMA; a batch holding an older point folds
// its moments and `last` at once (`foldLate`) and leaves the EWMA to be rebuilt from the whole
// series (`withSeries`) before it is read, so late data never corrupts it.

/** EWMA smoothing factor: the weight of the newest value. */
export const EWMA_ALPHA = 0.3;

export interface NumericPoint {
  id: string;
  value: number;
  /** Milliseconds since the epoch. */
  observedAt: number;
}

export interface AccumulatorState {
  count: number;
  sum: number;
  sumSq: number;
  min: number | null;
  max: number | null;
  last: number | null;
  lastObservedAt: number | null;
  lastId: string | null;
  /** The running total of the values (equal to sum; kept for clients that read it). */
  cumulative: number;
  ewma: number | null;
  ewmaVar: number | null;
}

export const EMPTY_ACCUMULATOR: AccumulatorState = Object.freeze({
  count: 0,
  sum: 0,
  sumSq: 0,
  min: null,
  max: null,
  last: null,
  lastObservedAt: null,
  lastId: null,
  cumulative: 0,
  ewma: null,
  ewmaVar: null,
});

/** The canonical series order: observedAt, then id. */
export function comparePoints(a: { observedAt: number; id: string }, b: { observedAt: number; id: string }): number {
  if (a.observedAt !== b.observedAt) return a.observedAt - b.observedAt;
  return a.id < b.id ? -1 : a.id > b.id ? 1 : 0;
}

/** True when every point sorts strictly after the state's last point, so the EWMA can continue. */
export function continuesSeries(state: AccumulatorState, points: readonly NumericPoint[]): boolean {
  if (state.lastObservedAt === null || state.lastId === null) return true;
  const last = { observedAt: state.lastObservedAt, id: state.lastId };
  return points.every((p) => comparePoints(p, last) > 0);
}

/** One EWMA step (West/Finch incremental form); the first value seeds ewma = x, variance 0. */
export function ewmaStep(ewma: number | null, variance: number | null, x: number, alpha = EWMA_ALPHA): { ewma: number; variance: number } {
  if (ewma === null) return { ewma: x, variance: 0 };
  const diff = x - ewma;
  const increment = alpha * diff;
  return { ewma: ewma + increment, variance: (1 - alpha) * ((variance ?? 0) + diff * increment) };
}

/** Folds the order-free moments of `points` into `state` (last and EWMA untouched). */
function foldMoments(state: AccumulatorState, points: readonly NumericPoint[]): AccumulatorState {
  let { count, sum, sumSq, min, max, cumulative } = state;
  for (const { value } of points) {
    count += 1;
    sum += value;
    sumSq += value * value;
    cumulative += value;
    min = min === null || value < min ? value : min;
    max = max === null || value > max ? value : max;
  }
  return { ...state, count, sum, sumSq, min, max, cumulative };
}

/** Runs `last` and the EWMA over `sorted` (already in series order) starting from `state`. */
function foldSeries(state: AccumulatorState, sorted: readonly NumericPoint[]): AccumulatorState {
  let { ewma, ewmaVar } = state;
  for (const point of sorted) {
    const step = ewmaStep(ewma, ewmaVar, point.value);
    ewma = step.ewma;
    ewmaVar = step.variance;
  }
  const last = sorted.at(-1);
  if (!last) return state;
  return { ...state, ewma, ewmaVar, last: last.value, lastObservedAt: last.observedAt, lastId: last.id };
}

/**
 * Folds new points into the state when they all come after its last point. Returns undefined when
 * one does not: the caller must rebuild with `fromSeries` over the whole stored series.
 */
export function foldPoints(state: AccumulatorState, points: readonly NumericPoint[]): AccumulatorState | undefined {
  if (points.length === 0) return state;
  if (!continuesSeries(state, points)) return undefined;
  const sorted = [...points].sort(comparePoints);
  return foldSeries(foldMoments(state, points), sorted);
}

/**
 * Folds points that do not all come after the state's last (late data) without reading the series:
 * the moments exactly, and `last` as the newest of the stored last and the points. The EWMA depends
 * on the order of the whole series: it is left as it was, and must be rebuilt with `withSeries`
 * over the whole series before it is read.
 */
export function foldLate(state: AccumulatorState, points: readonly NumericPoint[]): AccumulatorState {
  const moments = foldMoments(state, points);
  const newest = [...points].sort(comparePoints).at(-1);
  const stored = state.lastObservedAt === null || state.lastId === null ? undefined : { observedAt: state.lastObservedAt, id: state.lastId };
  if (newest === undefined || (stored !== undefined && comparePoints(newest, stored) <= 0)) return moments;
  return { ...moments, last: newest.value, lastObservedAt: newest.observedAt, lastId: newest.id };
}

/**
 * Folds one batch into a stored state and says whether its EWMA awaits a rebuild: points that all
 * continue the series continue the EWMA (the mark stays as it was); late ones fold their moments
 * and `last` (foldLate) and mark it.
 */
export function foldBatch(state: AccumulatorState & { stale: boolean }, points: readonly NumericPoint[]): AccumulatorState & { stale: boolean } {
  const folded = foldPoints(state, points);
  return folded ? { ...folded, stale: state.stale } : { ...foldLate(state, points), stale: true };
}

/** The state computed from scratch over a whole series, in any order. */
export function fromSeries(points: readonly NumericPoint[]): AccumulatorState {
  const sorted = [...points].sort(comparePoints);
  return foldSeries(foldMoments(EMPTY_ACCUMULATOR, sorted), sorted);
}

/** Rebuilds only last and the EWMA over a series, keeping the moments already folded. */
export function withSeries(moments: AccumulatorState, points: readonly NumericPoint[]): AccumulatorState {
  const sorted = [...points].sort(comparePoints);
  return foldSeries({ ...moments, ewma: null, ewmaVar: null, last: null, lastObservedAt: null, lastId: null }, sorted);
}

export interface DerivedStatistics {
  mean: number | null;
  /** Population variance. */
  variance: number | null;
  stddev: number | null;
}

/** mean = sum / n; the population variance from the stored moments, never below zero. */
export function derive(state: Pick<AccumulatorState, 'count' | 'sum' | 'sumSq'>): DerivedStatistics {
  if (state.count === 0) return { mean: null, variance: null, stddev: null };
  const mean = state.sum / state.count;
  const variance = Math.max(0, state.sumSq / state.count - mean * mean);
  // Moments that overflowed (values near the double limit) have no meaningful spread.
  if (!Number.isFinite(mean)) return { mean: null, variance: null, stddev: null };
  if (!Number.isFinite(variance)) return { mean, variance: null, stddev: null };
  return { mean, variance, stddev: Math.sqrt(variance) };
}
