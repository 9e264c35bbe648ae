// Nelder-Mead (workers/behavior/nelder-mead.ts): known minima, and the domain kept by non-finite values.
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { minimize } from '../../../workers/behavior/nelder-mead.js';

describe('minimize (Nelder-Mead)', () => {
  it('finds the minimum of Rosenbrock\'s valley from the classic start (-1.2, 1)', () => {
    const found = minimize(([x, y]) => (1 - x!) ** 2 + 100 * (y! - x! * x!) ** 2, [-1.2, 1]);
    expect(found.converged).toBe(true);
    expect(found.x[0]).toBeCloseTo(1, 4);
    expect(found.x[1]).toBeCloseTo(1, 4);
    expect(found.value).toBeLessThan(1e-8);
  });

  it('finds the centre of any shifted, scaled quadratic bowl in 1 to 4 dimensions', () => {
    fc.assert(
      fc.property(
        fc.array(fc.record({ centre: fc.double({ min: -20, max: 20, noNaN: true }), weight: fc.double({ min: 0.1, max: 10, noNaN: true }) }), { minLength: 1, maxLength: 4 }),
        (dims) => {
          const f = (x: readonly number[]) => dims.reduce((s, d, i) => s + d.weight * (x[i]! - d.centre) ** 2, 0);
          const found = minimize(f, dims.map(() => 0), { step: 1 });
          dims.forEach((d, i) => expect(found.x[i]).toBeCloseTo(d.centre, 3));
        },
      ),
      { numRuns: 50 },
    );
  });

  it('stays inside the domain where the function answers a number (NaN or Infinity outside)', () => {
    // The minimum of (x - 3)^2 over x >= 5 is at the edge, 5.
    const found = minimize(([x]) => (x! >= 5 ? (x! - 3) ** 2 : Number.NaN), [8]);
    expect(found.x[0]).toBeGreaterThanOrEqual(5);
    expect(found.x[0]).toBeCloseTo(5, 3);
  });
});
