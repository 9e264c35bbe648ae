// Ranking: the fusion of cosine and BM25 into relevance (properties and a worked example), and the
// blend of relevance with recency and importance.
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { explainScore, fuse, RANKING, scoreParts, totalScore, type FusionInput, type RankInput } from '../../../src/memory/search/ranking.js';
import { candidatesPerList } from '../../../src/memory/search/search.js';

const input = fc.record({
  relevance: fc.double({ min: 0, max: 1, noNaN: true }),
  cosine: fc.option(fc.double({ min: -1, max: 1, noNaN: true }), { nil: null }),
  lexical: fc.double({ min: 0, max: 1, noNaN: true }),
  ageDays: fc.double({ min: 0, max: 3650, noNaN: true }),
  importance: fc.double({ min: 0, max: 10, noNaN: true }),
  graph: fc.double({ min: 0, max: 1, noNaN: true }),
}) as fc.Arbitrary<RankInput>;

/**
 * Candidates with distinct ids, cosines in [0, 0.7] (or none), hubness in [0.4, 0.6] (or unknown)
 * and BM25 scores in [0, 20]: a corrected cosine stays under 1, where relevance would clamp.
 */
const candidates = fc.uniqueArray(
  fc.record({
    id: fc.string({ minLength: 1, maxLength: 6 }),
    cosine: fc.option(fc.double({ min: 0, max: 0.7, noNaN: true }), { nil: null }),
    hubness: fc.option(fc.double({ min: 0.4, max: 0.6, noNaN: true }), { nil: null }),
    bm25: fc.oneof(fc.constant(0), fc.double({ min: 0, max: 20, noNaN: true })),
  }),
  { minLength: 1, maxLength: 12, selector: (c) => c.id },
);

/** The candidates' mean hubness, over those with a cosine and a hubness, as fuse takes it. */
const meanHubness = (cs: readonly FusionInput[]) => {
  const known = cs.flatMap((c) => (c.cosine !== null && c.hubness != null ? [c.hubness] : []));
  return known.length === 0 ? 0 : known.reduce((a, b) => a + b, 0) / known.length;
};
/** The cosine less the hubness above the mean: what relevance weighs. */
const corrected = (c: FusionInput, mean: number) => (c.cosine ?? 0) - (c.cosine !== null && c.hubness != null ? RANKING.hubnessWeight * (c.hubness - mean) : 0);

/**
 * Ids by relevance, ties (within 1e-9: a mean taken over one more value can move a relevance by an
 * ulp) broken by id.
 */
const order = (fused: ReturnType<typeof fuse>, ids: readonly string[]) => {
  const key = (id: string) => Math.round(fused.get(id)!.relevance * 1e9);
  return [...ids].sort((a, b) => key(b) - key(a) || (a < b ? -1 : 1));
};

describe('fusion', () => {
  it('puts a memory first by both corrected cosine and BM25 first', () => {
    fc.assert(
      fc.property(candidates, (cs) => {
        // Its hubness unknown: it leaves the mean as it is, and its cosine is taken as it is.
        const mean = meanHubness(cs);
        const best: FusionInput = { id: '~best', cosine: Math.max(0, ...cs.map((c) => corrected(c, mean))) + 0.01, hubness: null, bm25: Math.max(0, ...cs.map((c) => c.bm25)) + 0.01 };
        const fused = fuse([...cs, best]);
        for (const c of cs) expect(fused.get('~best')!.relevance).toBeGreaterThan(fused.get(c.id)!.relevance);
      }),
    );
  });

  it('never changes the order of the others when an irrelevant memory is added', () => {
    fc.assert(
      fc.property(candidates, fc.double({ min: 0, max: 1, noNaN: true }), (cs, fraction) => {
        const ids = cs.map((c) => c.id);
        const before = order(fuse(cs), ids);
        // Worse than everyone on both counts, in a typical neighbourhood (its hubness the mean).
        const mean = meanHubness(cs);
        const worst: FusionInput = {
          id: '~worst',
          cosine: Math.max(0, Math.min(...cs.map((c) => corrected(c, mean))) * fraction),
          hubness: mean,
          bm25: Math.min(...cs.map((c) => c.bm25)) * fraction,
        };
        const after = fuse([...cs, worst]);
        expect(order(after, ids)).toEqual(before);
        for (const id of ids) expect(after.get(id)!.relevance).toBeCloseTo(fuse(cs).get(id)!.relevance, 12);
      }),
    );
  });

  it('keeps relevance and the normalised BM25 in [0, 1], and ranks the lists', () => {
    fc.assert(
      fc.property(candidates, (cs) => {
        const fused = fuse(cs);
        for (const c of cs) {
          const f = fused.get(c.id)!;
          expect(f.relevance >= 0 && f.relevance <= 1).toBe(true);
          expect(f.lexical >= 0 && f.lexical <= 1).toBe(true);
          expect(f.vectorRank === null).toBe(c.cosine === null);
          expect(f.textRank === null).toBe(c.bm25 === 0);
        }
      }),
    );
  });

  it('blends 0.75 cosine and 0.25 BM25 over the best BM25 (worked example)', () => {
    const fused = fuse([
      { id: 'a', cosine: 0.6, bm25: 2 },
      { id: 'b', cosine: 0.8, bm25: 0.5 },
      { id: 'c', cosine: null, bm25: 1 },
    ]);
    // a: 0.75 x 0.6 + 0.25 x 1 = 0.7; b: 0.75 x 0.8 + 0.25 x 0.25 = 0.6625; c: 0.25 x 0.5 = 0.125
    expect(fused.get('a')).toEqual({ relevance: expect.closeTo(0.7, 12), hubness: 0, vectorRank: 2, textRank: 1, lexical: 1, context: 0 });
    expect(fused.get('b')).toEqual({ relevance: expect.closeTo(0.6625, 12), hubness: 0, vectorRank: 1, textRank: 3, lexical: 0.25, context: 0 });
    expect(fused.get('c')).toEqual({ relevance: expect.closeTo(0.125, 12), hubness: 0, vectorRank: null, textRank: 2, lexical: 0.5, context: 0 });
  });

  it('counts what a memory\'s neighbours add to its BM25 in its words, and shows that part (worked example)', () => {
    const fused = fuse([
      { id: 'question', cosine: 0.5, bm25: 2 },
      { id: 'answer', cosine: 0.6, bm25: 0, context: 0.6 },
      { id: 'other', cosine: 0.55, bm25: 1, context: 1 },
    ]);
    // The best words: question's 2. answer: lexical 0.6 / 2 = 0.3, all of it context; other: (1 + 1) / 2 = 1, half of it context.
    expect(fused.get('answer')).toMatchObject({ lexical: expect.closeTo(0.3, 12), context: expect.closeTo(0.3, 12), textRank: 3 });
    expect(fused.get('answer')!.relevance).toBeCloseTo(0.75 * 0.6 + 0.25 * 0.3, 12);
    expect(fused.get('other')).toMatchObject({ lexical: 1, context: 0.5 });
    expect(fused.get('question')).toMatchObject({ lexical: 1, context: 0 });
  });

  it('takes off the cosine the hubness above the candidates\' mean (worked example)', () => {
    const fused = fuse([
      { id: 'a', cosine: 0.6, hubness: 0.5, bm25: 0 },
      { id: 'hub', cosine: 0.65, hubness: 0.8, bm25: 0 },
      { id: 'c', cosine: null, hubness: null, bm25: 1 },
    ]);
    // Mean hubness 0.65 (a and hub; c has no embedding). a: 0.75 x (0.6 + 0.15) = 0.5625;
    // hub: 0.75 x (0.65 - 0.15) = 0.375, below a although nearer the query; c: 0.25 x 1.
    expect(fused.get('a')).toEqual({ relevance: expect.closeTo(0.5625, 12), hubness: expect.closeTo(-0.15, 12), vectorRank: 2, textRank: null, lexical: 0, context: 0 });
    expect(fused.get('hub')).toEqual({ relevance: expect.closeTo(0.375, 12), hubness: expect.closeTo(0.15, 12), vectorRank: 1, textRank: null, lexical: 0, context: 0 });
    expect(fused.get('c')).toEqual({ relevance: expect.closeTo(0.25, 12), hubness: 0, vectorRank: null, textRank: 1, lexical: 1, context: 0 });
  });

  it('ranks, of two memories equal on cosine and BM25, the less hub-like higher', () => {
    fc.assert(
      fc.property(candidates, fc.double({ min: 0, max: 0.7, noNaN: true }), fc.double({ min: 0, max: 20, noNaN: true }), fc.double({ min: 0.4, max: 0.6, noNaN: true }), fc.double({ min: 0.001, max: 0.1, noNaN: true }), (cs, cosine, bm25, hubness, gap) => {
        const fused = fuse([...cs, { id: '~near', cosine, hubness, bm25 }, { id: '~hub', cosine, hubness: hubness + gap, bm25 }]);
        expect(fused.get('~near')!.relevance).toBeGreaterThanOrEqual(fused.get('~hub')!.relevance);
        expect(fused.get('~hub')!.hubness - fused.get('~near')!.hubness).toBeCloseTo(gap * RANKING.hubnessWeight, 9);
      }),
    );
  });
});

describe('the score', () => {
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

  it('never ranks a less relevant memory above a more relevant one when all else is equal', () => {
    fc.assert(
      fc.property(input, fc.double({ min: 0, max: 1, noNaN: true }), fc.double({ min: 0, max: 1, noNaN: true }), (i, a, b) => {
        const [lo, hi] = a < b ? [a, b] : [b, a];
        expect(totalScore(scoreParts({ ...i, relevance: hi }))).toBeGreaterThanOrEqual(totalScore(scoreParts({ ...i, relevance: lo })));
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

  it('lets an old, relevant memory win over a fresh, irrelevant one', () => {
    const fused = fuse([
      { id: 'old', cosine: 0.55, bm25: 3.2 },
      { id: 'fresh', cosine: 0.2, bm25: 0 },
    ]);
    const score = (id: string, ageDays: number) => totalScore(scoreParts({ ...fused.get(id)!, cosine: null, ageDays, importance: 5 }));
    expect(score('old', 5 * 365)).toBeGreaterThan(score('fresh', 0));
    // Even an unimportant old one against a fresh one of the highest importance.
    expect(totalScore(scoreParts({ ...fused.get('old')!, cosine: null, ageDays: 5 * 365, importance: 0 }))).toBeGreaterThan(
      totalScore(scoreParts({ ...fused.get('fresh')!, cosine: null, ageDays: 0, importance: 10 })),
    );
  });

  it('halves recency every 30 days (worked example)', () => {
    const at = (ageDays: number) => scoreParts({ relevance: 0, cosine: 0, lexical: 0, ageDays, importance: 0 }).recency;
    expect(at(0)).toBe(1);
    expect(at(30)).toBeCloseTo(0.5, 12);
    expect(at(60)).toBeCloseTo(0.25, 12);
  });

  it('scores a worked example exactly and explains it', () => {
    // 0.85 x 0.72 + 0.025 x 1 + 0.1 x 0.8 = 0.717
    const parts = scoreParts({ relevance: 0.72, cosine: 0.6, lexical: 1, ageDays: 0, importance: 8 });
    expect(totalScore(parts)).toBeCloseTo(0.717, 12);
    expect(explainScore(parts, totalScore(parts), { vectorRank: 2, textRank: 1 })).toBe(
      'score 0.717 = 0.85 x relevance 0.720 (0.75 x cosine 0.600 #2 + 0.25 x words 1.000 #1) + 0.025 x recency 1.000 + 0.1 x importance 0.800',
    );
    // With a hubness correction: relevance 0.75 x (0.6 + 0.08) + 0.25 x 1 = 0.76; 0.85 x 0.76 + 0.025 + 0.08 = 0.751.
    const corrected = scoreParts({ relevance: 0.76, cosine: 0.6, hubness: -0.08, lexical: 1, ageDays: 0, importance: 8 });
    expect(explainScore(corrected, totalScore(corrected), { vectorRank: 2, textRank: 1 })).toBe(
      'score 0.751 = 0.85 x relevance 0.760 (0.75 x (cosine 0.600 #2 + hubness 0.080) + 0.25 x words 1.000 #1) + 0.025 x recency 1.000 + 0.1 x importance 0.800',
    );
  });

  it('explains a memory without an embedding, or without a query word', () => {
    const parts = scoreParts({ relevance: 0.15, cosine: null, lexical: 0.5, ageDays: 0, importance: 0 });
    expect(parts.semantic).toBeNull();
    expect(explainScore(parts, totalScore(parts), { vectorRank: null, textRank: 2 })).toMatch(/0\.75 x no embedding yet \+ 0\.25 x words 0\.500 #2/);
    expect(explainScore(parts, totalScore(parts), { vectorRank: 1, textRank: null })).toMatch(/0\.25 x no query word/);
  });
});

describe('candidatesPerList', () => {
  it('takes at least 50 from each list, five times the page beyond that, and at most 200', () => {
    expect(candidatesPerList(10)).toBe(50);
    expect(candidatesPerList(1)).toBe(50);
    expect(candidatesPerList(12)).toBe(60);
    expect(candidatesPerList(10, 20)).toBe(150);
    expect(candidatesPerList(50)).toBe(200);
    expect(candidatesPerList(100, 100)).toBe(200);
  });
});
