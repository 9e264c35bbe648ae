// BG/NBD (workers/behavior/bgnbd.ts): the published worked example, the likelihood against a recount
// in its other published form, the properties every probability must keep, and a fit that recovers
// the published CDNOW estimates from data simulated with them.
import betaln from '@stdlib/math-base-special-betaln';
import gammaln from '@stdlib/math-base-special-gammaln';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { mulberry32 } from '../../helpers/random.js';
import {
  expectedEvents,
  expectedEventsUnconditional,
  fitBgnbd,
  forecastOccurrence,
  logLikelihood,
  probabilityAlive,
  probabilityAtLeastOne,
  totalLogLikelihood,
  type BgnbdParams,
  type Histories,
} from '../../../workers/behavior/bgnbd.js';

/** Fader, Hardie and Lee (2005), Table 1: the estimates on CDNOW's 2,357 customers (weeks). */
const CDNOW: BgnbdParams = { r: 0.243, alpha: 4.414, a: 0.793, b: 2.426 };

const params = fc.record({
  r: fc.double({ min: 0.05, max: 5, noNaN: true }),
  alpha: fc.double({ min: 0.1, max: 50, noNaN: true }),
  a: fc.double({ min: 0.05, max: 5, noNaN: true }),
  b: fc.double({ min: 0.05, max: 10, noNaN: true }),
});
/** A history: x repeat events, the last at tx, observed until T >= tx (tx = 0 when x = 0). */
const history = fc
  .record({ x: fc.integer({ min: 0, max: 60 }), T: fc.double({ min: 0.5, max: 200, noNaN: true }), share: fc.double({ min: 0, max: 1, noNaN: true }) })
  .map(({ x, T, share }) => ({ x, T, tx: x === 0 ? 0 : share * T }));

describe('BG/NBD', () => {
  it('reproduces the published worked example: E[X(39)] = 1.226 for x = 2, tx = 30.43, T = 38.86', () => {
    // FHL 2005, section 5, with the CDNOW estimates.
    expect(expectedEvents(CDNOW, 2, 30.43, 38.86, 39)).toBeCloseTo(1.226, 3);
  });

  it('computes the likelihood as its beta-function form does (FHL 2005, equation 6)', () => {
    fc.assert(
      fc.property(params, history, ({ r, alpha, a, b }, { x, tx, T }) => {
        const rate = gammaln(r + x) - gammaln(r) + r * Math.log(alpha);
        const alive = Math.exp(betaln(a, b + x) - betaln(a, b) + rate - (r + x) * Math.log(alpha + T));
        const stopped = x > 0 ? Math.exp(betaln(a + 1, b + x - 1) - betaln(a, b) + rate - (r + x) * Math.log(alpha + tx)) : 0;
        const expected = Math.log(alive + stopped);
        if (!Number.isFinite(expected)) return; // the recount underflows where the log-sum form does not
        expect(logLikelihood({ r, alpha, a, b }, x, tx, T)).toBeCloseTo(expected, 6);
      }),
    );
  });

  it('keeps probabilities in [0, 1], P(at least one) below P(alive) and non-decreasing in the horizon', () => {
    fc.assert(
      fc.property(params, history, fc.double({ min: 0, max: 400, noNaN: true }), fc.double({ min: 0, max: 400, noNaN: true }), (p, { x, tx, T }, t1, t2) => {
        const [short, long] = t1 < t2 ? [t1, t2] : [t2, t1];
        const alive = probabilityAlive(p, x, tx, T);
        const atShort = probabilityAtLeastOne(p, x, tx, T, short);
        const atLong = probabilityAtLeastOne(p, x, tx, T, long);
        for (const q of [alive, atShort, atLong]) expect(q >= 0 && q <= 1).toBe(true);
        expect(atLong).toBeGreaterThanOrEqual(atShort - 1e-12);
        expect(atLong).toBeLessThanOrEqual(alive + 1e-12);
        expect(probabilityAtLeastOne(p, x, tx, T, 0)).toBe(0);
      }),
    );
  });

  it('forecasts with intervals in [0, 1] (counts at least 0) that hold the point, the probability non-decreasing in the horizon', () => {
    fc.assert(
      fc.property(params, history, fc.double({ min: 0.5, max: 400, noNaN: true }), fc.double({ min: 0.5, max: 400, noNaN: true }), (p, { x, tx, T }, t1, t2) => {
        const [short, long] = t1 < t2 ? [t1, t2] : [t2, t1];
        const a = forecastOccurrence(p, x, tx, T, short);
        const b = forecastOccurrence(p, x, tx, T, long);
        for (const f of [a, b]) {
          expect(0 <= f.lower && f.lower <= f.probability && f.probability <= f.upper && f.upper <= 1).toBe(true);
          expect(0 <= f.expectedLower && f.expectedLower <= f.expected && f.expected <= f.expectedUpper).toBe(true);
          expect(Number.isFinite(f.expectedUpper)).toBe(true);
        }
        expect(b.probability).toBeGreaterThanOrEqual(a.probability - 1e-12);
      }),
    );
  });

  it('counts a subject with no repeat event as alive, and a long silence as a sign it has stopped', () => {
    fc.assert(
      fc.property(params, history, fc.double({ min: 0.1, max: 100, noNaN: true }), (p, { x, tx, T }, more) => {
        expect(probabilityAlive(p, 0, 0, T)).toBe(1);
        // The same history observed for longer without an event: less likely alive, never more.
        if (x > 0) expect(probabilityAlive(p, x, tx, T + more)).toBeLessThanOrEqual(probabilityAlive(p, x, tx, T) + 1e-12);
      }),
    );
  });

  it('expects a non-negative number of events, growing with the horizon', () => {
    fc.assert(
      fc.property(
        params.filter((p) => p.a > 1.05),
        history,
        fc.double({ min: 0.1, max: 200, noNaN: true }),
        fc.double({ min: 0.1, max: 200, noNaN: true }),
        (p, { x, tx, T }, t1, t2) => {
          const [short, long] = t1 < t2 ? [t1, t2] : [t2, t1];
          const a = expectedEvents(p, x, tx, T, short);
          const b = expectedEvents(p, x, tx, T, long);
          expect(a).toBeGreaterThanOrEqual(0);
          expect(b).toBeGreaterThanOrEqual(a - 1e-9 * (1 + a));
          expect(expectedEventsUnconditional(p, long)).toBeGreaterThanOrEqual(expectedEventsUnconditional(p, short) - 1e-9);
        },
      ),
      { numRuns: 200 },
    );
  });

  it('recovers the CDNOW estimates within 10% from 8,000 subjects simulated with them', () => {
    const h = simulate(CDNOW, 8000, 20261124);
    const fit = fitBgnbd(h);
    expect(fit.converged).toBe(true);
    for (const key of ['r', 'alpha', 'a', 'b'] as const) expect(Math.abs(fit[key] / CDNOW[key] - 1), key).toBeLessThan(0.1);
    // The estimate fits the data at least as well as the truth does.
    expect(fit.logLikelihood).toBeGreaterThanOrEqual(-1e-6 + totalLogLikelihood(CDNOW, h));
  });
});

/** Subjects drawn from the model itself, each observed for 27 to 39 weeks as in CDNOW's calibration window. */
function simulate({ r, alpha, a, b }: BgnbdParams, n: number, seed: number): Histories {
  const random = mulberry32(seed);
  const h: Histories = { x: new Float64Array(n), tx: new Float64Array(n), T: new Float64Array(n) };
  for (let i = 0; i < n; i++) {
    const lambda = gamma(r, random) / alpha;
    const ga = gamma(a, random);
    const p = ga / (ga + gamma(b, random));
    const T = 27 + 12 * random();
    let t = 0;
    let x = 0;
    let tx = 0;
    for (;;) {
      t += -Math.log(1 - random()) / lambda;
      if (t > T) break;
      x++;
      tx = t;
      if (random() < p) break;
    }
    h.x[i] = x;
    h.tx[i] = tx;
    h.T[i] = T;
  }
  return h;
}

/** Gamma(shape, 1) by Marsaglia and Tsang (2000); shapes below 1 boosted by U^(1/shape). */
function gamma(shape: number, random: () => number): number {
  if (shape < 1) return gamma(shape + 1, random) * Math.pow(random(), 1 / shape);
  const d = shape - 1 / 3;
  const c = 1 / Math.sqrt(9 * d);
  for (;;) {
    let x: number;
    let v: number;
    do {
      x = Math.sqrt(-2 * Math.log(1 - random())) * Math.cos(2 * Math.PI * random());
      v = 1 + c * x;
    } while (v <= 0);
    v = v * v * v;
    const u = random();
    if (u < 1 - 0.0331 * x ** 4 || Math.log(u) < 0.5 * x * x + d * (1 - v + Math.log(v))) return d * v;
  }
}
