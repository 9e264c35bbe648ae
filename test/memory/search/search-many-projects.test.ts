// The filtered-ANN trap (DESIGN.md): pgvector filters after the HNSW scan, so a small project in a
// shared table could get back far fewer than k hits. A project search must return min(k, matching).
// The sizes are chosen so that the trap shows: with hnsw.iterative_scan off, project `mid` (about 1%
// of the table, above the exact-scan limit) gets fewer than 10 hits from the 400 candidates that
// ef_search yields, and this test fails.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { insertMemories, writeEmbeddings } from '../../../src/memory/store.js';
import { newId } from '../../../src/platform/ids.js';
import { createHarness, type Harness } from '../../helpers/harness.js';

/** Deterministic unit vectors (an LCG), so runs are repeatable. */
function vectors(count: number, seed: number, dimensions = 512): Float32Array[] {
  let state = seed >>> 0;
  const next = () => ((state = (Math.imul(state, 1664525) + 1013904223) >>> 0) / 2 ** 32) * 2 - 1;
  return Array.from({ length: count }, () => {
    const v = Float32Array.from({ length: dimensions }, next);
    const norm = Math.hypot(...v);
    return v.map((x) => x / norm);
  });
}

async function seed(h: Harness, projectId: string, count: number, seedValue: number): Promise<void> {
  const rows = Array.from({ length: count }, (_, i) => ({ id: newId('mem'), projectId, content: `synthetic memory ${i} of ${projectId}` }));
  await insertMemories(h.db, rows);
  const vs = vectors(count, seedValue);
  await writeEmbeddings(h.db, projectId, 'synthetic', rows.map((r, i) => ({ id: r.id, vector: vs[i]! })));
}

describe('search with 50 projects in one table', () => {
  let h: Harness;
  const sizes = new Map<string, number>();

  beforeAll(async () => {
    // Exact scan up to 20 embedded rows, HNSW with iterative scan above: both paths get exercised.
    h = await createHarness({ env: { SEARCH_EXACT_SCAN_MAX_ROWS: '20' } });
    const plan: [string, number][] = [['big', 2500], ['mid', 25]];
    for (let i = 1; i <= 48; i++) plan.push([`small-${i}`, i % 16]);
    for (const [name, count] of plan) {
      const { projectId } = await h.project({ id: `ann-${name}` });
      if (count > 0) await seed(h, projectId, count, count * 7919 + name.length);
      sizes.set(projectId, count);
    }
    // The job puts the projects past the exact-scan limit (big, mid) in the HNSW graph.
    const { admitted } = await h.apis.memory.maintainVectorIndexes();
    expect(admitted.map((a) => a.projectId).sort()).toEqual(['ann-big', 'ann-mid']);
    // Statistics as a live table has them, so the planner weighs the HNSW index as it would in production.
    await h.db.exec('ANALYZE memories');
  });
  afterAll(() => h?.close());

  it('returns min(k, matching) for every project, never fewer, and only its own memories', async () => {
    for (const [projectId, count] of sizes) {
      const hits = (await h.call('POST', projectId, '/admin/memory/search', { body: { query: 'anything at all', limit: 10 } })).json();
      expect(hits.length, `${projectId} holds ${count}`).toBe(Math.min(10, count));
      expect(hits.every((x: { content: string }) => x.content.endsWith(`of ${projectId}`))).toBe(true);
    }
  });

  it('finds nearly the exact top 10 through HNSW for a project above the exact-scan limit', async () => {
    const projectId = 'ann-mid';
    const query = await h.apis.embeddings.embedQuery('anything at all');
    const exact = await h.db.query<{ content: string }>(
      `SELECT content FROM memories WHERE project_id = $1 ORDER BY (embedding <=> $2::vector) + 0 LIMIT 10`,
      [projectId, `[${Array.from(query).join(',')}]`],
    );
    const hits = (await h.call('POST', projectId, '/admin/memory/search', { body: { query: 'anything at all', limit: 10 } })).json();
    const found = new Set(hits.map((x: { content: string }) => x.content));
    const overlap = exact.rows.filter((r) => found.has(r.content)).length;
    expect(overlap).toBeGreaterThanOrEqual(8);
  });
});
