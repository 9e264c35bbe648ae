// The Beta-Binomial update of a cited ref's confidence: properties, and worked examples with known
// answers; with the learning loop's credit and attribution rules.
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { attribute, countedWeight, credit } from '../../../src/learning/service.js';
import { claimPrior, patternPrior, posteriorConfidence, PATTERN_PRIOR_STRENGTH } from '../../../workers/behavior/confidence.js';

const prior = fc.record({ confidence: fc.double({ min: 0, max: 1, noNaN: true }), strength: fc.double({ min: 0.5, max: 50, noNaN: true }) });
const count = fc.double({ min: 0, max: 1e4, noNaN: true });

describe('posteriorConfidence', () => {
  it('stays in [0, 1], between the prior mean and the observed rate', () => {
    fc.assert(
      fc.property(prior, count, count, (p, hits, misses) => {
        const post = posteriorConfidence(p, hits, misses);
        expect(post).toBeGreaterThanOrEqual(0);
        expect(post).toBeLessThanOrEqual(1);
        if (hits + misses > 0) {
          const rate = hits / (hits + misses);
          expect(post).toBeGreaterThanOrEqual(Math.min(p.confidence, rate) - 1e-12);
          expect(post).toBeLessThanOrEqual(Math.max(p.confidence, rate) + 1e-12);
        } else {
          expect(post).toBeCloseTo(p.confidence, 12);
        }
      }),
    );
  });

  it('rises with a hit, falls with a miss', () => {
    fc.assert(
      fc.property(prior, count, count, fc.double({ min: 0.01, max: 10, noNaN: true }), (p, hits, misses, w) => {
        const now = posteriorConfidence(p, hits, misses);
        expect(posteriorConfidence(p, hits + w, misses)).toBeGreaterThanOrEqual(now - 1e-12);
        expect(posteriorConfidence(p, hits, misses + w)).toBeLessThanOrEqual(now + 1e-12);
      }),
    );
  });

  it('converges to the observed rate: within strength / (strength + n) of it', () => {
    fc.assert(
      fc.property(prior, fc.integer({ min: 1, max: 100_000 }), fc.double({ min: 0, max: 1, noNaN: true }), (p, n, rate) => {
        const post = posteriorConfidence(p, rate * n, (1 - rate) * n);
        expect(Math.abs(post - rate)).toBeLessThanOrEqual(p.strength / (p.strength + n) + 1e-12);
      }),
    );
  });

  it('gives the worked answers', () => {
    // Beta(9, 1) after 2 successes: Beta(11, 1), mean 11/12.
    expect(posteriorConfidence({ confidence: 0.9, strength: 10 }, 2, 0)).toBeCloseTo(11 / 12, 15);
    // Beta(1.2, 0.8) after a success and a partial: Beta(2.7, 1.3), mean 2.7/4.
    expect(posteriorConfidence({ confidence: 0.6, strength: 2 }, 1.5, 0.5)).toBeCloseTo(0.675, 15);
    // The uniform prior after 3 of 4: Laplace's rule of succession, 4/6.
    expect(posteriorConfidence(claimPrior(0.5), 3, 1)).toBeCloseTo(4 / 6, 15);
  });
});

describe('priors', () => {
  it("takes a pattern's mined confidence, weighted by its evidence up to the cap", () => {
    expect(patternPrior(8, 0)).toEqual({ confidence: 0.9, strength: 10 });
    expect(patternPrior(3, 1)).toEqual({ confidence: 4 / 6, strength: 6 });
    expect(patternPrior(200, 20)).toEqual({ confidence: 201 / 222, strength: PATTERN_PRIOR_STRENGTH });
    fc.assert(
      fc.property(fc.nat(10_000), fc.nat(10_000), (hits, misses) => {
        const p = patternPrior(hits, misses);
        expect(p.strength).toBeLessThanOrEqual(PATTERN_PRIOR_STRENGTH);
        expect(p.strength).toBeGreaterThanOrEqual(2);
        // With no outcome yet, the confidence is the mined one.
        expect(posteriorConfidence(p, 0, 0)).toBeCloseTo((hits + 1) / (hits + misses + 2), 12);
      }),
    );
  });

  it("takes a claim's probability, clamped to [0, 1], worth 2 pseudo-outcomes", () => {
    expect(claimPrior(0.3)).toEqual({ confidence: 0.3, strength: 2 });
    expect(claimPrior(1.4).confidence).toBe(1);
    expect(claimPrior(-0.1).confidence).toBe(0);
  });
});

describe('credit and attribution', () => {
  it('credits a success to hits, a failure to misses, a partial half to each, by weight', () => {
    expect(credit('success', 2)).toEqual({ hits: 2, misses: 0 });
    expect(credit('failure', 1)).toEqual({ hits: 0, misses: 1 });
    expect(credit('partial', 3)).toEqual({ hits: 1.5, misses: 1.5 });
    expect([countedWeight(undefined), countedWeight(0), countedWeight(0.25)]).toEqual([1, 1, 0.25]);
    fc.assert(
      fc.property(fc.constantFrom('success', 'failure', 'partial' as const), fc.double({ min: 0.001, max: 1000, noNaN: true }), (result, w) => {
        const c = credit(result, w);
        expect(c.hits + c.misses).toBeCloseTo(w, 9);
      }),
    );
  });

  it('attributes an outcome realized after a decision acted on, within the window when there is one', () => {
    expect(attribute('executed', 1000, 1000, undefined)).toEqual({ attributed: true, note: null });
    expect(attribute('proposed', 1000, 5_000_000, undefined).attributed).toBe(true);
    expect(attribute('executed', 1000, 61_000, 60)).toEqual({ attributed: true, note: null });
    expect(attribute('executed', 1000, 61_001, 60).attributed).toBe(false);
    expect(attribute('executed', 1000, 999, undefined)).toEqual({ attributed: false, note: 'realized before the decision occurred' });
    expect(attribute('skipped', 1000, 2000, undefined)).toEqual({ attributed: false, note: 'the decision was skipped: nothing was acted on' });
  });
});
