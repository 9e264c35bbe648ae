import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { explainScore, RANKING, scoreParts, totalScore, type RankInput } from '../../../src/memory/search/ranking.js';

const input = fc.record({
  cosine: fc.option(fc.double({ min: -1, max: 1, noNaN: true }), { nil: null }),
  lexical: fc.double({ min: 0, max: 0.999, noNaN: true }),
  ageDays: fc.double({ min: 0, max: 3650, noNaN: true }),
  importance: fc.double({ min: 0, max: 10, noNaN: true }),
  graph: fc.double({ min: 0, max: 1, noNaN: true }),
}) as fc.Arbitrary<RankInput>;

describe('ranking', () => {
  it('keeps every part and the score in range', () => {
    fc.assert(
      fc.property(input, (i) => {
        const parts = scoreParts(i);
        for (const v of [parts.lexical, parts.relevance, parts.recency, parts.importance]) expect(v >= 0 && v <= 1).toBe(true);
        expect(parts.graph).toBeLessThanOrEqual(RANKING.maxGraphBonus);
        const score = totalScore(parts);
        expect(score >= 0 && score <= 1 + RANKING.maxGraphBonus + 1e-12).toBe(true);
      }),
    );
  });

  it('never ranks a less similar memory above a more similar one when all else is equal', () => {
    fc.assert(
      fc.property(input, fc.double({ min: 0, max: 1, noNaN: true }), fc.double({ min: 0, max: 1, noNaN: true }), (i, a, b) => {
        const [lo, hi] = a < b ? [a, b] : [b, a];
        expect(totalScore(scoreParts({ ...i, cosine: hi }))).toBeGreaterThanOrEqual(totalScore(scoreParts({ ...i, cosine: lo })));
      }),
    );
  });

  it('prefers newer and more important memories when relevance is equal', () => {
    fc.assert(
      fc.property(input, fc.double({ min: 0, max: 100, noNaN: true }), (i, extraDays) => {
        expect(totalScore(scoreParts(i))).toBeGreaterThanOrEqual(totalScore(scoreParts({ ...i, ageDays: i.ageDays + extraDays })));
        expect(totalScore(scoreParts({ ...i, importance: Math.min(10, i.importance + 1) }))).toBeGreaterThanOrEqual(totalScore(scoreParts(i)));
      }),
    );
  });

  it('halves recency every 30 days (worked example)', () => {
    expect(scoreParts({ cosine: 0, lexical: 0, ageDays: 0, importance: 0 }).recency).toBe(1);
    expect(scoreParts({ cosine: 0, lexical: 0, ageDays: 30, importance: 0 }).recency).toBeCloseTo(0.5, 12);
    expect(scoreParts({ cosine: 0, lexical: 0, ageDays: 60, importance: 0 }).recency).toBeCloseTo(0.25, 12);
  });

  it('scores a worked example exactly and explains it', () => {
    // relevance = 0.8 x 0.6 + 0.2 x 0.5 = 0.58; score = 0.75 x 0.58 + 0.1 x 0.5 + 0.15 x 0.8 = 0.605
    const parts = scoreParts({ cosine: 0.6, lexical: 0.5, ageDays: 30, importance: 8 });
    expect(parts.relevance).toBeCloseTo(0.58, 12);
    expect(totalScore(parts)).toBeCloseTo(0.605, 12);
    expect(explainScore(parts, totalScore(parts))).toBe(
      'score 0.605 = 0.75 x relevance 0.580 (semantic 0.600, full text 0.500) + 0.1 x recency 0.500 + 0.15 x importance 0.800',
    );
  });

  it('falls back to full text alone for a memory without an embedding', () => {
    const parts = scoreParts({ cosine: null, lexical: 0.4, ageDays: 0, importance: 0 });
    expect(parts.semantic).toBeNull();
    expect(parts.relevance).toBeCloseTo(0.4, 12);
    expect(explainScore(parts, totalScore(parts))).toMatch(/no embedding yet/);
  });
});
