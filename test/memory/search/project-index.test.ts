// A large project's IVFFlat index of its own (memory/search/project-index.ts): the job builds it
// past SEARCH_IVF_MIN_ROWS, the service's own search walks it (the index's scan counter moves),
// the project's results stay its own and honour filters, a doubled project gets a new index in place
// of the old, a shrunken or deleted one loses it, and a leftover is dropped. Postgres only: on
// PGlite the job builds nothing and search keeps its paths.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { newId } from '../../../src/platform/ids.js';
import { insertMemories, writeEmbeddings } from '../../../src/memory/store.js';
import { backend, createHarness, type Harness } from '../../helpers/harness.js';
import { onEveryNode, shardName } from '../../helpers/citus.js';
import { mulberry32 } from '../../helpers/random.js';

const MIN_ROWS = 2000;
const DIMENSIONS = 512;

function unit(values: number[]): Float32Array {
  const norm = Math.hypot(...values);
  return Float32Array.from(values, (v) => v / norm);
}

/** `count` memories around 20 topics, a tenth of them of type 'rule'; answers their ids and vectors. */
async function load(h: Harness, projectId: string, count: number, seed: number): Promise<{ id: string; vector: Float32Array; type: string }[]> {
  const random = mulberry32(seed);
  const topics = Array.from({ length: 20 }, () => unit(Array.from({ length: DIMENSIONS }, () => random() - 0.5)));
  const rows = Array.from({ length: count }, (_, i) => {
    const topic = topics[i % topics.length]!;
    return {
      id: newId('mem'),
      type: i % 10 === 0 ? 'rule' : 'fact',
      vector: unit(Array.from(topic, (v) => v + (random() - 0.5) * 0.05)),
    };
  });
  for (let start = 0; start < rows.length; start += 500) {
    const batch = rows.slice(start, start + 500);
    const inserted = await insertMemories(h.db, batch.map((r, i) => ({ id: r.id, projectId, content: `memory ${start + i} of topic ${(start + i) % 20} (load ${seed})`, type: r.type as 'fact' })));
    expect(inserted).toHaveLength(batch.length);
    expect(await writeEmbeddings(h.db, projectId, 'synthetic-512', batch)).toBe(batch.length);
  }
  return rows;
}

async function ivfIndexes(h: Harness): Promise<{ name: string; definition: string; valid: boolean }[]> {
  const { rows } = await h.db.query<{ name: string; definition: string; valid: boolean }>(
    `SELECT c.relname AS name, pg_get_indexdef(c.oid) AS definition, i.indisvalid AS valid
       FROM pg_index i JOIN pg_class c ON c.oid = i.indexrelid JOIN pg_am a ON a.oid = c.relam
      WHERE i.indrelid = 'memories'::regclass AND a.amname = 'ivfflat' ORDER BY 1`,
  );
  return rows;
}

async function scans(h: Harness, index: string): Promise<number> {
  return onEveryNode(h.db, `SELECT coalesce(sum(idx_scan), 0) AS n FROM pg_stat_user_indexes WHERE indexrelname ~ '^${shardName(index)}$'`);
}

describe.skipIf(backend !== 'pg')('IVFFlat indexes of the largest projects (Postgres)', () => {
  let h: Harness;
  let big: { projectId: string; apiKey: string };
  let small: { projectId: string; apiKey: string };
  let bigRows: { id: string; vector: Float32Array; type: string }[];

  beforeAll(async () => {
    h = await createHarness({ consumers: false, env: { SEARCH_IVF_MIN_ROWS: String(MIN_ROWS), SEARCH_EXACT_SCAN_MAX_ROWS: '100' } });
    big = await h.project();
    small = await h.project();
    bigRows = await load(h, big.projectId, 2400, 1);
    await load(h, small.projectId, 300, 2);
    await h.db.exec('ANALYZE memories');
  }, 120_000);
  afterAll(async () => h?.close());

  it('builds an index over the project past the threshold only, valid, partial on its id, and lists it', async () => {
    const changes = await h.apis.memory.maintainVectorIndexes();
    expect(changes.built).toEqual([{ projectId: big.projectId, indexName: expect.stringMatching(/^memories_ivf_[0-9a-f]{12}_/), lists: 10, rows: 2400 }]);
    expect(changes.dropped).toEqual([]);
    // Both are past SEARCH_EXACT_SCAN_MAX_ROWS (100): both were put in the HNSW graph first.
    expect([...changes.admitted].sort((a, b) => a.projectId.localeCompare(b.projectId))).toEqual(
      [{ projectId: big.projectId, rows: 2400 }, { projectId: small.projectId, rows: 300 }].sort((a, b) => a.projectId.localeCompare(b.projectId)),
    );
    const [index] = await ivfIndexes(h);
    expect(index).toMatchObject({ name: changes.built[0]!.indexName, valid: true });
    expect(index!.definition).toContain(`WHERE (project_id = '${big.projectId}'::text)`);
    expect(index!.definition).toContain('halfvec(512)) halfvec_ip_ops');
    const { rows } = await h.db.query(`SELECT project_id, index_name, dimensions, lists, rows_at_build::int AS rows FROM project_vector_indexes`);
    expect(rows).toEqual([{ project_id: big.projectId, index_name: index!.name, dimensions: 512, lists: 10, rows: 2400 }]);
    // Nothing changed: a second run builds and drops nothing.
    expect(await h.apis.memory.maintainVectorIndexes()).toEqual({ admitted: [], built: [], dropped: [] });
  }, 60_000);

  it("walks the project's index in the service's own search, and answers the project's memories only", async () => {
    const [index] = await ivfIndexes(h);
    const before = await scans(h, index!.name);
    const response = await h.call('POST', big.projectId, '/memory/search', { body: { query: 'memory 7 of topic 7', limit: 10 } });
    expect(response.statusCode, response.body).toBe(200);
    const hits = response.json<{ id: string }[]>();
    const own = new Set(bigRows.map((r) => r.id));
    expect(hits.length).toBe(10);
    expect(hits.every((hit) => own.has(hit.id))).toBe(true);
    // A backend publishes its counters as it goes idle, but at most once a second: one that
    // published within the last second waits seconds more (ten on Postgres 15).
    let after = await scans(h, index!.name);
    for (const deadline = Date.now() + 60_000; after === before && Date.now() < deadline; ) {
      await new Promise((resolve) => setTimeout(resolve, 250));
      after = await scans(h, index!.name);
    }
    expect(after).toBeGreaterThan(before);
  }, 120_000);

  it('keeps min(k, matching) under a filter that a tenth of the rows pass (iterative scan)', async () => {
    const response = await h.call('POST', big.projectId, '/memory/search', { body: { query: 'memory of topic 3', limit: 25, type: 'rule' } });
    expect(response.statusCode, response.body).toBe(200);
    const hits = response.json<{ id: string; type: string }[]>();
    expect(hits.length).toBe(25);
    expect(hits.every((hit) => hit.type === 'rule')).toBe(true);
  });

  it("leaves the smaller project on the shared index, and each key sees only its project's memories", async () => {
    const response = await h.call('POST', small.projectId, '/memory/search', { body: { query: 'memory of topic 3', limit: 10 } });
    expect(response.statusCode, response.body).toBe(200);
    const hits = response.json<{ id: string }[]>();
    expect(hits.length).toBe(10);
    const own = new Set(bigRows.map((r) => r.id));
    expect(hits.some((hit) => own.has(hit.id))).toBe(false);
    const crossed = await h.call('POST', big.projectId, '/memory/search', { apiKey: small.apiKey, body: { query: 'memory', limit: 10 } });
    expect(crossed.statusCode).toBe(404);
  });

  it('builds a new index when the project has doubled, then drops the old one', async () => {
    const [old] = await ivfIndexes(h);
    bigRows.push(...(await load(h, big.projectId, 2400, 3)));
    const changes = await h.apis.memory.maintainVectorIndexes();
    expect(changes.built).toEqual([{ projectId: big.projectId, indexName: expect.not.stringMatching(old!.name), lists: 10, rows: 4800 }]);
    expect(changes.dropped).toEqual([old!.name]);
    expect((await ivfIndexes(h)).map((i) => i.name)).toEqual([changes.built[0]!.indexName]);
  }, 60_000);

  it('drops an index no row lists (a build that died), and the index of a project fallen below half the threshold', async () => {
    await h.db.exec(`CREATE INDEX memories_ivf_leftover ON memories USING ivfflat ((embedding::halfvec(512)) halfvec_ip_ops) WITH (lists = 10) WHERE project_id = '${small.projectId}'`);
    const [current] = (await ivfIndexes(h)).filter((i) => i.name !== 'memories_ivf_leftover');
    await h.db.query(`DELETE FROM memories WHERE project_id = $1 AND id <> ALL($2::text[])`, [big.projectId, bigRows.slice(0, MIN_ROWS / 2 - 1).map((r) => r.id)]);
    const changes = await h.apis.memory.maintainVectorIndexes();
    expect(changes.built).toEqual([]);
    expect([...changes.dropped].sort()).toEqual([current!.name, 'memories_ivf_leftover'].sort());
    expect(await ivfIndexes(h)).toEqual([]);
    expect((await h.db.query(`SELECT * FROM project_vector_indexes`)).rows).toEqual([]);
    // And the project is still searched, on the shared index.
    const response = await h.call('POST', big.projectId, '/memory/search', { body: { query: 'memory of topic 3', limit: 10 } });
    expect(response.statusCode).toBe(200);
    expect(response.json<unknown[]>().length).toBe(10);
  }, 60_000);

  it("drops a deleted project's index: the registry row goes with the project, and the index is then unlisted", async () => {
    const doomed = await h.project();
    await load(h, doomed.projectId, MIN_ROWS, 4);
    expect((await h.apis.memory.maintainVectorIndexes()).built.map((b) => b.projectId)).toEqual([doomed.projectId]);
    const [index] = await ivfIndexes(h);
    await h.db.query('DELETE FROM projects WHERE id = $1', [doomed.projectId]);
    expect(await h.apis.memory.maintainVectorIndexes()).toEqual({ admitted: [], built: [], dropped: [index!.name] });
    expect(await ivfIndexes(h)).toEqual([]);
  }, 60_000);
});

describe.skipIf(backend !== 'pglite')('IVFFlat indexes of the largest projects (PGlite)', () => {
  let h: Harness;
  beforeAll(async () => {
    h = await createHarness({ consumers: false, env: { SEARCH_IVF_MIN_ROWS: '100' } });
  });
  afterAll(async () => h?.close());

  it('builds none: the embedded default keeps its exact scan and HNSW', async () => {
    const { projectId } = await h.project();
    await load(h, projectId, 150, 5);
    expect(await h.apis.memory.maintainVectorIndexes()).toEqual({ admitted: [], built: [], dropped: [] });
    expect((await h.db.query(`SELECT * FROM project_vector_indexes`)).rows).toEqual([]);
    const response = await h.call('POST', projectId, '/memory/search', { body: { query: 'memory of topic 3', limit: 5 } });
    expect(response.statusCode, response.body).toBe(200);
    expect(response.json<unknown[]>().length).toBe(5);
  }, 60_000);
});
