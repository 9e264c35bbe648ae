// Hubness among the search's candidates (ranking.ts): the SQL's value checked against a recount
// from the vectors, and the reason it exists: a memory close to the query and to many others (a hub)
// no longer outranks one nearly as close to the query that stands apart.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { RANKING } from '../../../src/memory/search/ranking.js';
import { searchCandidates } from '../../../src/memory/search/store.js';
import { insertMemories, writeEmbeddings } from '../../../src/memory/store.js';
import { newId } from '../../../src/platform/ids.js';
import { createHarness, type Harness } from '../../helpers/harness.js';

/** A deterministic generator of numbers in [-1, 1) (an LCG), so runs are repeatable. */
function lcg(seed: number): () => number {
  let state = seed >>> 0;
  return () => ((state = (Math.imul(state, 1664525) + 1013904223) >>> 0) / 2 ** 32) * 2 - 1;
}
const unit = (v: Float32Array) => {
  const norm = Math.hypot(...v);
  return v.map((x) => x / norm);
};
const dot = (a: Float32Array, b: Float32Array) => a.reduce((sum, x, i) => sum + x * b[i]!, 0);
/** `base` plus `noise` times a random direction, made unit length. */
function near(base: Float32Array, noise: number, next: () => number): Float32Array {
  return unit(Float32Array.from(base, (x) => x + noise * next()));
}

async function seed(h: Harness, projectId: string, vectors: readonly Float32Array[], content: (i: number) => string): Promise<string[]> {
  const rows = vectors.map((_, i) => ({ id: newId('mem'), projectId, content: content(i) }));
  await insertMemories(h.db, rows);
  await writeEmbeddings(h.db, projectId, 'synthetic', rows.map((r, i) => ({ id: r.id, vector: vectors[i]! })));
  return rows.map((r) => r.id);
}

describe('hubness among the candidates', () => {
  let h: Harness;
  beforeAll(async () => {
    h = await createHarness();
  });
  afterAll(() => h?.close());

  it('is each candidate\'s mean inner product with its nearest fellow candidates (a recount)', async () => {
    const { projectId } = await h.project({ id: 'hub-recount' });
    const next = lcg(17);
    const centre = unit(Float32Array.from({ length: 512 }, next));
    // Two clusters and some loners: hubness differs from one memory to the next.
    const vectors = Array.from({ length: 24 }, (_, i) => near(centre, i < 10 ? 0.05 : i < 18 ? 0.1 : 0.5, next));
    const ids = await seed(h, projectId, vectors, (i) => `synthetic memory ${i}`);
    const query = near(centre, 0.2, next);

    const candidates = await searchCandidates(h.db, { projectId, filter: {}, vector: query, k: 40, exact: true });
    expect(candidates).toHaveLength(24);
    for (const c of candidates) {
      const i = ids.indexOf(c.memory.id);
      const others = vectors.filter((_, j) => j !== i).map((v) => dot(vectors[i]!, v)).sort((a, b) => b - a);
      const nearest = others.slice(0, RANKING.hubNeighbours);
      expect(c.hubness).toBeCloseTo(nearest.reduce((a, b) => a + b, 0) / nearest.length, 5);
      expect(c.cosine).toBeCloseTo(dot(vectors[i]!, query), 5);
    }
  });

  it('is unknown without an embedding, and without a query vector', async () => {
    const { projectId } = await h.project({ id: 'hub-unknown' });
    const next = lcg(29);
    const vectors = Array.from({ length: 3 }, () => unit(Float32Array.from({ length: 512 }, next)));
    await seed(h, projectId, vectors, (i) => `plain harbour note ${i}`);
    await insertMemories(h.db, [{ id: newId('mem'), projectId, content: 'plain harbour note, not embedded' }]);
    const lexical = { terms: [{ lexeme: 'harbour', idf: 1 }], match: "'harbour'", avgLength: 20 };

    const withVector = await searchCandidates(h.db, { projectId, filter: {}, vector: vectors[0], lexical, k: 40, exact: true });
    expect(withVector).toHaveLength(4);
    for (const c of withVector) expect(c.hubness === null).toBe(c.cosine === null);

    const wordsOnly = await searchCandidates(h.db, { projectId, filter: {}, lexical, k: 40, exact: true });
    expect(wordsOnly).toHaveLength(4);
    for (const c of wordsOnly) expect(c.hubness).toBeNull();
  });

  it('ranks a memory that stands apart above a hub that is a little nearer the query', async () => {
    const { projectId } = await h.project({ id: 'hub-ranking' });
    const query = 'which colour do they like';
    const q = await h.apis.embeddings.embedQuery(query);
    const next = lcg(41);
    // A cluster of 15 near-identical memories about 0.7 from the query; its centre is the hub.
    const centre = unit(Float32Array.from(q, (x) => x + 1.1 * next() / Math.sqrt(512 / 3)));
    const cluster = Array.from({ length: 15 }, () => near(centre, 0.02, next));
    const hub = near(centre, 0.005, next);
    // The answer: about as near the query as the hub (a little less), far from everything else.
    let answer = near(q, 0.06, next);
    for (let s = 0.06; dot(answer, q) >= dot(hub, q); s += 0.005) answer = near(q, s, next);
    const [hubId] = await seed(h, projectId, [hub], () => 'Routine sync notes from Tuesday');
    const [answerId] = await seed(h, projectId, [answer], () => 'Favourite shade: teal');
    await seed(h, projectId, cluster, (i) => `Routine sync notes number ${i}`);
    expect(dot(hub, q)).toBeGreaterThan(dot(answer, q));

    const hits = (await h.call('POST', projectId, '/admin/memory/search', { body: { query, limit: 20 } })).json() as {
      id: string;
      scoreParts: { semantic: number; hubness: number; vectorRank: number };
      explanation: string;
    }[];
    const rank = (id: string) => hits.findIndex((x) => x.id === id);
    const byId = (id: string) => hits[rank(id)]!;
    expect(byId(hubId!).scoreParts.vectorRank).toBe(1);
    expect(rank(answerId!)).toBe(0);
    expect(rank(hubId!)).toBeGreaterThan(0);
    expect(byId(hubId!).scoreParts.hubness).toBeGreaterThan(0);
    expect(byId(answerId!).scoreParts.hubness).toBeLessThan(0);
    expect(byId(hubId!).explanation).toMatch(/cosine [0-9.]+ #1 - hubness [0-9.]+\)/);
  });
});
