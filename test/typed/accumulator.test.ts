// Unit tests of the running statistics (src/typed/accumulator.ts): worked examples computed by hand,
// and properties that hold for any series folded in any chunks and any order.
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import {
  comparePoints,
  continuesSeries,
  derive,
  EMPTY_ACCUMULATOR,
  EWMA_ALPHA,
  ewmaStep,
  foldLate,
  foldPoints,
  fromSeries,
  withSeries,
  type AccumulatorState,
  type NumericPoint,
} from '../../src/typed/accumulator.js';

const T0 = Date.parse('2026-01-01T00:00:00Z');
const point = (id: string, value: number, minutes: number): NumericPoint => ({ id, value, observedAt: T0 + minutes * 60_000 });

/**
 * Folds chunks one after another exactly as TypedService does: a chunk that continues the series
 * folds at once; a late one folds its moments and last (foldLate) and leaves the EWMA stale; the
 * EWMA is rebuilt over the series seen so far where `rebuilds[i]` says the rebuild job ran after
 * chunk i, and at the end, as a read of a stale accumulator does.
 */
function foldChunks(chunks: readonly NumericPoint[][], rebuilds: readonly boolean[] = []): AccumulatorState {
  let state: AccumulatorState = EMPTY_ACCUMULATOR;
  let stale = false;
  const seen: NumericPoint[] = [];
  chunks.forEach((chunk, i) => {
    seen.push(...chunk);
    const folded = foldPoints(state, chunk);
    if (folded) {
      state = folded;
    } else {
      state = foldLate(state, chunk);
      stale = true;
    }
    if (stale && rebuilds[i]) {
      state = withSeries(state, seen);
      stale = false;
    }
  });
  return stale ? withSeries(state, seen) : state;
}

/** |a - b| within 1e-9 relative to `scale` (the magnitude the rounding errors are relative to). */
function expectClose(actual: number | null, expected: number | null, scale: number, label: string): void {
  if (expected === null) {
    expect(actual, label).toBeNull();
    return;
  }
  expect(actual, label).not.toBeNull();
  const bound = 1e-9 * Math.max(1, Math.abs(expected), scale);
  expect(Math.abs(actual! - expected), `${label}: ${actual} vs ${expected}`).toBeLessThanOrEqual(bound);
}

/** Values without -0 (min/max of 0 and -0 would depend on order, and toBe tells them apart). */
const noNegativeZero = (v: number) => (Object.is(v, -0) ? 0 : v);

/** A series with distinct ids and observedAt from a small range, so ties are common. */
function seriesOf(value: fc.Arbitrary<number>, maxLength = 40): fc.Arbitrary<NumericPoint[]> {
  return fc
    .uniqueArray(fc.tuple(fc.stringMatching(/^[a-z0-9]{1,6}$/), value, fc.integer({ min: 0, max: 15 })), {
      minLength: 1,
      maxLength,
      selector: ([id]) => id,
    })
    .map((rows) => rows.map(([id, v, minute]) => point(id, v, minute)));
}

/** A permutation of the points cut into 1..n non-empty chunks. */
function chunked(points: NumericPoint[]): fc.Arbitrary<NumericPoint[][]> {
  return fc.tuple(fc.shuffledSubarray(points, { minLength: points.length, maxLength: points.length }), fc.array(fc.nat(), { maxLength: 6 })).map(([shuffled, cuts]) => {
    const positions = [...new Set(cuts.map((c) => (c % shuffled.length) + 1))].filter((c) => c < shuffled.length).sort((a, b) => a - b);
    const chunks: NumericPoint[][] = [];
    let start = 0;
    for (const end of [...positions, shuffled.length]) {
      chunks.push(shuffled.slice(start, end));
      start = end;
    }
    return chunks;
  });
}

const anyDouble = fc.double({ min: -1e6, max: 1e6, noNaN: true, noDefaultInfinity: true }).map(noNegativeZero);
/** Multiples of 1/4: sums and sums of squares of these are exact in binary floating point. */
const dyadic = fc.integer({ min: -400_000, max: 400_000 }).map((k) => noNegativeZero(k / 4));

describe('EWMA (alpha 0.3)', () => {
  it('uses alpha 0.3', () => {
    expect(EWMA_ALPHA).toBe(0.3);
  });

  it('seeds with the first value and variance 0', () => {
    expect(ewmaStep(null, null, 42)).toEqual({ ewma: 42, variance: 0 });
    const state = fromSeries([point('a', 42, 0)]);
    expect(state).toMatchObject({ count: 1, ewma: 42, ewmaVar: 0, last: 42, min: 42, max: 42 });
  });

  it('steps [10, 20] to ewma 13 and ewmaVar 21', () => {
    // diff = 20 - 10 = 10, increment = 0.3 * 10 = 3, ewma = 13; var = 0.7 * (0 + 10 * 3) = 21
    const state = fromSeries([point('a', 10, 0), point('b', 20, 1)]);
    expect(state.ewma).toBeCloseTo(13, 12);
    expect(state.ewmaVar).toBeCloseTo(21, 12);
  });

  it('computes a four-value worked example [10, 20, 16, 10]', () => {
    // 10:  ewma 10, var 0
    // 20:  diff 10,   incr 3,     ewma 13,    var 0.7 * (0 + 10 * 3)           = 21
    // 16:  diff 3,    incr 0.9,   ewma 13.9,  var 0.7 * (21 + 3 * 0.9)         = 16.59
    // 10:  diff -3.9, incr -1.17, ewma 12.73, var 0.7 * (16.59 + -3.9 * -1.17) = 14.8071
    const state = fromSeries([point('a', 10, 0), point('b', 20, 1), point('c', 16, 2), point('d', 10, 3)]);
    expect(state.ewma).toBeCloseTo(12.73, 12);
    expect(state.ewmaVar).toBeCloseTo(14.8071, 12);
    expect(state).toMatchObject({ count: 4, sum: 56, sumSq: 856, min: 10, max: 20, last: 10, lastId: 'd', cumulative: 56 });
  });

  it('runs in observedAt order whatever order the points come in', () => {
    const inOrder = fromSeries([point('a', 10, 0), point('b', 20, 1), point('c', 16, 2), point('d', 10, 3)]);
    const shuffled = fromSeries([point('c', 16, 2), point('d', 10, 3), point('a', 10, 0), point('b', 20, 1)]);
    expect(shuffled).toEqual(inOrder);
  });

  it('breaks observedAt ties by id', () => {
    // Same instant: 'a' (5) comes before 'b' (15), so last is 15 and ewma = 5 + 0.3 * 10 = 8.
    const state = fromSeries([point('b', 15, 0), point('a', 5, 0)]);
    expect(state).toMatchObject({ last: 15, lastId: 'b' });
    expect(state.ewma).toBeCloseTo(8, 12);
  });
});

describe('derive', () => {
  it('answers nulls for an empty accumulator', () => {
    expect(derive(EMPTY_ACCUMULATOR)).toEqual({ mean: null, variance: null, stddev: null });
  });

  it('computes mean, population variance and stddev: [10, 20, 16, 10]', () => {
    // n 4, sum 56, mean 14; sumSq 100 + 400 + 256 + 100 = 856; 856 / 4 - 14^2 = 214 - 196 = 18
    // (deviations -4, 6, 2, -4: squares 16 + 36 + 4 + 16 = 72, / 4 = 18); stddev sqrt(18)
    const derived = derive({ count: 4, sum: 56, sumSq: 856 });
    expect(derived.mean).toBe(14);
    expect(derived.variance).toBeCloseTo(18, 12);
    expect(derived.stddev).toBeCloseTo(Math.sqrt(18), 12);
  });

  it('is population (not sample) variance: [2, 4] has variance 1', () => {
    expect(derive(fromSeries([point('a', 2, 0), point('b', 4, 1)]))).toEqual({ mean: 3, variance: 1, stddev: 1 });
  });

  it('clamps rounding below zero to 0 for a constant series', () => {
    // 0.1 is not exact in binary: sumSq / n - mean^2 can come out a hair below zero.
    const state = fromSeries(Array.from({ length: 7 }, (_, i) => point(`p${i}`, 0.1, i)));
    expect(derive(state).variance).toBeGreaterThanOrEqual(0);
    expect(derive(state).variance).toBeCloseTo(0, 12);
  });
});

describe('continuing a series', () => {
  const base = fromSeries([point('m', 1, 5)]);

  it('continues with points strictly after the last (observedAt, id)', () => {
    expect(continuesSeries(base, [point('a', 2, 6)])).toBe(true);
    expect(continuesSeries(base, [point('z', 2, 5)])).toBe(true); // same instant, larger id
    expect(foldPoints(base, [point('z', 2, 5), point('a', 3, 6)])).toEqual(fromSeries([point('m', 1, 5), point('z', 2, 5), point('a', 3, 6)]));
  });

  it('refuses (undefined) when a point is older or ties with a smaller id', () => {
    expect(foldPoints(base, [point('a', 2, 4)])).toBeUndefined();
    expect(foldPoints(base, [point('a', 2, 5)])).toBeUndefined();
    expect(foldPoints(base, [point('x', 2, 9), point('a', 2, 4)])).toBeUndefined();
  });

  it('keeps the state for an empty batch and continues anything from empty', () => {
    expect(foldPoints(base, [])).toBe(base);
    expect(continuesSeries(EMPTY_ACCUMULATOR, [point('a', 1, -1000)])).toBe(true);
  });

  it('orders by observedAt, then id', () => {
    expect(comparePoints({ observedAt: 1, id: 'z' }, { observedAt: 2, id: 'a' })).toBeLessThan(0);
    expect(comparePoints({ observedAt: 2, id: 'a' }, { observedAt: 2, id: 'b' })).toBeLessThan(0);
    expect(comparePoints({ observedAt: 2, id: 'b' }, { observedAt: 2, id: 'b' })).toBe(0);
  });

  it('rebuilds the EWMA after late data: [t2=50] then [t1=10] equals [10, 50] in order', () => {
    const folded = foldChunks([[point('b', 50, 2)], [point('a', 10, 1)]]);
    // 10 -> 10 + 0.3 * 40 = 22; var 0.7 * (0 + 40 * 12) = 336
    expect(folded.ewma).toBeCloseTo(22, 12);
    expect(folded.ewmaVar).toBeCloseTo(336, 12);
    expect(folded).toMatchObject({ count: 2, sum: 60, last: 50, lastId: 'b', min: 10, max: 50 });
  });
});

describe('properties', () => {
  it('folding any chunks in any order, late ones rebuilt whenever, equals the state from scratch (any doubles, within 1e-9)', () => {
    fc.assert(
      fc.property(
        seriesOf(anyDouble).chain((points) => fc.tuple(fc.constant(points), chunked(points), fc.array(fc.boolean(), { maxLength: 8 }))),
        ([points, chunks, rebuilds]) => {
          const folded = foldChunks(chunks, rebuilds);
          const scratch = fromSeries(points);
          const absSum = points.reduce((s, p) => s + Math.abs(p.value), 0);
          const maxAbs = Math.max(...points.map((p) => Math.abs(p.value)));
          expect(folded.count).toBe(scratch.count);
          expect(folded.min).toBe(scratch.min);
          expect(folded.max).toBe(scratch.max);
          expect(folded.last).toBe(scratch.last);
          expect(folded.lastObservedAt).toBe(scratch.lastObservedAt);
          expect(folded.lastId).toBe(scratch.lastId);
          expectClose(folded.sum, scratch.sum, absSum, 'sum');
          expectClose(folded.cumulative, scratch.cumulative, absSum, 'cumulative');
          expectClose(folded.sumSq, scratch.sumSq, scratch.sumSq, 'sumSq');
          expectClose(folded.ewma, scratch.ewma, maxAbs, 'ewma');
          expectClose(folded.ewmaVar, scratch.ewmaVar, maxAbs * maxAbs, 'ewmaVar');
        },
      ),
      { numRuns: 300 },
    );
  });

  it('folding any chunks in any order equals the state from scratch exactly for values whose sums are exact', () => {
    fc.assert(
      fc.property(
        seriesOf(dyadic).chain((points) => fc.tuple(fc.constant(points), chunked(points), fc.array(fc.boolean(), { maxLength: 8 }))),
        ([points, chunks, rebuilds]) => {
          const folded = foldChunks(chunks, rebuilds);
          const scratch = fromSeries(points);
          // Sums of quarters are exact in any order; the EWMA runs the same steps in the same order.
          expect(folded).toEqual(scratch);
        },
      ),
      { numRuns: 200 },
    );
  });

  it('never answers a negative variance or ewmaVar', () => {
    // Large, nearly equal values are where sumSq / n - mean^2 cancels catastrophically.
    const nearlyEqual = fc.tuple(fc.double({ min: -1e9, max: 1e9, noNaN: true }), fc.array(fc.double({ min: -1e-3, max: 1e-3, noNaN: true }), { minLength: 1, maxLength: 30 }));
    fc.assert(
      fc.property(fc.oneof(seriesOf(anyDouble), nearlyEqual.map(([base, noise]) => noise.map((n, i) => point(`p${i}`, base + n, i)))), (points) => {
        const state = fromSeries(points);
        const { variance, stddev } = derive(state);
        expect(variance).toBeGreaterThanOrEqual(0);
        expect(stddev).toBeGreaterThanOrEqual(0);
        expect(state.ewmaVar).toBeGreaterThanOrEqual(0);
      }),
      { numRuns: 300 },
    );
  });

  it('derives the two-pass mean and population variance for moderate values', () => {
    fc.assert(
      fc.property(seriesOf(fc.double({ min: -1000, max: 1000, noNaN: true }).map(noNegativeZero)), (points) => {
        const n = points.length;
        const mean = points.reduce((s, p) => s + p.value, 0) / n;
        const variance = points.reduce((s, p) => s + (p.value - mean) ** 2, 0) / n;
        const derived = derive(fromSeries(points));
        expectClose(derived.mean, mean, 1000, 'mean');
        // sumSq / n - mean^2 loses digits relative to the squares (up to 1e6), hence that scale.
        expectClose(derived.variance, variance, 1e6, 'variance');
      }),
      { numRuns: 200 },
    );
  });

  it('takes last from the point with the greatest (observedAt, id)', () => {
    fc.assert(
      fc.property(
        seriesOf(anyDouble).chain((points) => fc.tuple(fc.constant(points), chunked(points))),
        ([points, chunks]) => {
          const latest = points.reduce((a, b) => (b.observedAt > a.observedAt || (b.observedAt === a.observedAt && b.id > a.id) ? b : a));
          for (const state of [fromSeries(points), foldChunks(chunks)]) {
            expect(state.last).toBe(latest.value);
            expect(state.lastId).toBe(latest.id);
            expect(state.lastObservedAt).toBe(latest.observedAt);
          }
        },
      ),
      { numRuns: 200 },
    );
  });
});

describe('late data', () => {
  it('folds the moments and last of a late batch at once, and leaves the EWMA for the rebuild', () => {
    // Stored: 10 at minute 0, 20 at minute 2 (ewma 13). Late batch: 16 at minute 1, 30 at minute 3.
    const stored = fromSeries([point('a', 10, 0), point('c', 20, 2)]);
    const late = [point('b', 16, 1), point('d', 30, 3)];
    const folded = foldLate(stored, late);
    expect(folded).toMatchObject({ count: 4, sum: 76, min: 10, max: 30, last: 30, lastId: 'd', ewma: stored.ewma, ewmaVar: stored.ewmaVar });
    // In series order 10, 16, 20, 30: ewma 10 -> 11.8 -> 14.26 -> 18.982
    expect(withSeries(folded, [point('a', 10, 0), point('c', 20, 2), ...late]).ewma).toBeCloseTo(18.982, 12);
  });

  it('keeps the stored last when every late point is older', () => {
    const stored = fromSeries([point('a', 10, 0), point('c', 20, 2)]);
    expect(foldLate(stored, [point('b', 99, 1)])).toMatchObject({ count: 3, last: 20, lastId: 'c', max: 99 });
  });
});
