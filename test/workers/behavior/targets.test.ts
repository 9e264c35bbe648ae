// Declared-target kernels (workers/behavior/targets.ts): worked examples with known answers, and
// the properties every answer keeps (probabilities and intervals in [0, 1], intervals holding the
// point, P(at least one) non-decreasing in the horizon, abstention on thin data).
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { anomaly, ewmaLevel, isAbstention, nextEvent, occurrenceFromRate, wilson, type Occurrence } from '../../../workers/behavior/targets.js';

const DAY = 86_400_000;

describe('wilson', () => {
  it('matches the textbook interval for 8 of 10 (0.490 to 0.943)', () => {
    const { lower, upper } = wilson(8, 10);
    expect(lower).toBeCloseTo(0.4902, 4);
    expect(upper).toBeCloseTo(0.9433, 4);
  });

  it('stays in [0, 1], holds the observed share, and narrows as n grows', () => {
    fc.assert(
      fc.property(fc.integer({ min: 1, max: 5000 }), fc.double({ min: 0, max: 1, noNaN: true }), (n, share) => {
        const hits = Math.round(share * n);
        const { lower, upper } = wilson(hits, n);
        expect(0 <= lower && lower <= hits / n && hits / n <= upper && upper <= 1).toBe(true);
        const wider = wilson(hits, n);
        const narrower = wilson(hits * 4, n * 4);
        expect(narrower.upper - narrower.lower).toBeLessThanOrEqual(wider.upper - wider.lower + 1e-12);
      }),
    );
  });
});

describe('occurrenceFromRate (Gamma-Poisson)', () => {
  it('computes the posterior predictive of a worked example', () => {
    // 4 events in 99 days, prior Gamma(0.5, 1): posterior Gamma(4.5, 100); 30 days: 1 - (100/130)^4.5.
    const answer = occurrenceFromRate(4, 99, 30) as Occurrence;
    expect(answer.probability).toBeCloseTo(1 - Math.pow(100 / 130, 4.5), 12);
    expect(answer.probability).toBeCloseTo(0.6929, 4);
    expect(answer.expected).toBeCloseTo((4.5 / 100) * 30, 12);
  });

  it('abstains without history', () => {
    expect(occurrenceFromRate(0, 0, 30)).toEqual({ abstain: true, reason: 'insufficient_signal: no observed history' });
  });

  it('keeps P and its interval in [0, 1], the point inside, P non-decreasing in the horizon, and lower after a longer silence', () => {
    fc.assert(
      fc.property(
        fc.integer({ min: 0, max: 500 }),
        fc.double({ min: 0.5, max: 3650, noNaN: true }),
        fc.double({ min: 0.1, max: 365, noNaN: true }),
        fc.double({ min: 0.1, max: 365, noNaN: true }),
        fc.double({ min: 0.1, max: 1000, noNaN: true }),
        (count, exposure, h1, h2, silence) => {
          const [short, long] = h1 < h2 ? [h1, h2] : [h2, h1];
          const a = occurrenceFromRate(count, exposure, short) as Occurrence;
          const b = occurrenceFromRate(count, exposure, long) as Occurrence;
          for (const o of [a, b]) expect(0 <= o.lower && o.lower <= o.probability && o.probability <= o.upper && o.upper <= 1).toBe(true);
          expect(b.probability).toBeGreaterThanOrEqual(a.probability - 1e-12);
          expect((occurrenceFromRate(count, exposure + silence, short) as Occurrence).probability).toBeLessThanOrEqual(a.probability + 1e-12);
        },
      ),
    );
  });
});

describe('ewmaLevel', () => {
  it('seeds with the first value and updates with alpha 0.3 (worked example)', () => {
    // level 10 -> 10 + 0.3 x 10 = 13; variance 0.7 x (0 + 0.3 x 100) = 21.
    const level = ewmaLevel(Float64Array.of(10, 20));
    expect(level).toMatchObject({ value: 13, observationCount: 2 });
    if (isAbstention(level)) throw new Error('abstained');
    expect(level.upper - level.value).toBeCloseTo(1.959963984540054 * Math.sqrt(21), 12);
  });

  it('abstains on fewer than 2 readings, and keeps the level within the readings and inside its interval', () => {
    expect(isAbstention(ewmaLevel(Float64Array.of(5)))).toBe(true);
    fc.assert(
      fc.property(fc.array(fc.double({ min: -1e6, max: 1e6, noNaN: true }), { minLength: 2, maxLength: 100 }), (xs) => {
        const level = ewmaLevel(Float64Array.from(xs));
        if (isAbstention(level)) throw new Error('abstained');
        expect(level.value).toBeGreaterThanOrEqual(Math.min(...xs) - 1e-6);
        expect(level.value).toBeLessThanOrEqual(Math.max(...xs) + 1e-6);
        expect(level.lower <= level.value && level.value <= level.upper).toBe(true);
      }),
    );
  });
});

describe('nextEvent', () => {
  it('expects the next event a median gap after the last, and marks it overdue past the gaps\' 95% quantile', () => {
    const start = Date.UTC(2026, 0, 1);
    const weekly = Float64Array.from([0, 7, 14, 21, 28].map((d) => start + d * DAY));
    const soon = nextEvent(weekly, start + 30 * DAY);
    expect(soon).toMatchObject({ expectedAt: start + 35 * DAY, lower: start + 35 * DAY, upper: start + 35 * DAY, overdue: false, medianGapDays: 7 });
    if (isAbstention(soon)) throw new Error('abstained');
    expect(soon.daysUntil).toBeCloseTo(5, 12);
    expect(nextEvent(weekly, start + 40 * DAY)).toMatchObject({ overdue: true });
    expect(isAbstention(nextEvent(Float64Array.of(start, start + DAY), start))).toBe(true);
  });

  it('keeps lower <= expected <= upper, whatever the gaps', () => {
    fc.assert(
      fc.property(fc.array(fc.integer({ min: 0, max: 1e7 }), { minLength: 3, maxLength: 50 }), (ts) => {
        const next = nextEvent(Float64Array.from(ts.map((t) => t * 60_000)), 0);
        if (isAbstention(next)) throw new Error('abstained');
        expect(next.lower <= next.expectedAt && next.expectedAt <= next.upper).toBe(true);
      }),
    );
  });
});

describe('anomaly', () => {
  it('scores the latest reading against the baseline before it (worked example)', () => {
    // Baseline 10, 12, 11, 9, 13: mean 11, sample sd sqrt(10 / 4); the reading 30 is 19 / 1.581 = 12.0 sd away.
    const result = anomaly(Float64Array.of(10, 12, 11, 9, 13, 30));
    if (isAbstention(result)) throw new Error('abstained');
    const sd = Math.sqrt(10 / 4);
    expect(result.anomalyScore).toBeCloseTo(19 / sd, 12);
    expect(result).toMatchObject({ value: 30, anomalous: true });
    expect(result.valueLower).toBeCloseTo(11 - 3 * sd, 12);
    expect(result.valueUpper).toBeCloseTo(11 + 3 * sd, 12);
    const ordinary = anomaly(Float64Array.of(10, 12, 11, 9, 13, 12));
    expect(ordinary).toMatchObject({ anomalous: false });
  });

  it('abstains under 5 readings and on a baseline that does not vary', () => {
    expect(anomaly(Float64Array.of(1, 2, 3, 4))).toMatchObject({ abstain: true });
    expect(anomaly(Float64Array.of(5, 5, 5, 5, 9))).toEqual({ abstain: true, reason: 'insufficient_signal: the baseline does not vary' });
  });

  it('calls a reading anomalous exactly when it falls outside the normal range', () => {
    fc.assert(
      fc.property(fc.array(fc.double({ min: -1000, max: 1000, noNaN: true }), { minLength: 5, maxLength: 60 }), (xs) => {
        const result = anomaly(Float64Array.from(xs));
        if (isAbstention(result)) return;
        const outside = result.value < result.valueLower || result.value > result.valueUpper;
        const onEdge = Math.abs(result.anomalyScore - 3) < 1e-9;
        if (!onEdge) expect(result.anomalous).toBe(outside);
      }),
    );
  });
});
