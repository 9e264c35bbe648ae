// Only the projects past SEARCH_EXACT_SCAN_MAX_ROWS are in the HNSW graph (migration 0016,
// memory/search/project-index.ts): the index is partial on vector_indexed; the job admits a project
// past the threshold, marks every row of it, and makes it ready; an embedding written for an admitted
// project is marked as it is written; a small project's rows stay out; search scans a project
// exactly until it is ready and walks the graph after. On Postgres, a writer that began before the
// admission and commits while the job waits on its row still leaves the row marked.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ADMISSION_LOCK } from '../../../src/memory/search/project-index.js';
import { scansExactly } from '../../../src/memory/search/search.js';
import { insertMemories, writeEmbeddings } from '../../../src/memory/store.js';
import { newId } from '../../../src/platform/ids.js';
import { backend, createHarness, type Harness } from '../../helpers/harness.js';
import { onEveryNode, shardName } from '../../helpers/citus.js';
import { mulberry32 } from '../../helpers/random.js';

const EXACT_MAX = 30;
const DIMENSIONS = 512;

function unit(random: () => number): Float32Array {
  const v = Float32Array.from({ length: DIMENSIONS }, () => random() - 0.5);
  const norm = Math.hypot(...v);
  return v.map((x) => x / norm);
}

/** `count` embedded memories in the project; answers their ids. */
async function load(h: Harness, projectId: string, count: number, seed: number, embed = true): Promise<string[]> {
  const random = mulberry32(seed);
  const rows = Array.from({ length: count }, (_, i) => ({ id: newId('mem'), projectId, content: `note ${i} of ${projectId} (${seed})` }));
  await insertMemories(h.db, rows);
  if (embed) await writeEmbeddings(h.db, projectId, 'synthetic', rows.map((r) => ({ id: r.id, vector: unit(random) })));
  return rows.map((r) => r.id);
}

async function marks(h: Harness, projectId: string): Promise<{ marked: number; total: number }> {
  const { rows } = await h.db.query<{ marked: number; total: number }>(
    `SELECT count(*) FILTER (WHERE vector_indexed)::int AS marked, count(*)::int AS total FROM memories WHERE project_id = $1`,
    [projectId],
  );
  return rows[0]!;
}

async function admission(h: Harness, projectId: string): Promise<boolean | undefined> {
  const { rows } = await h.db.query<{ ready: boolean }>(`SELECT ready FROM vector_indexed_projects WHERE project_id = $1`, [projectId]);
  return rows[0]?.ready;
}

/** Scans of the HNSW index so far (Postgres's statistics). */
async function hnswScans(h: Harness): Promise<number> {
  return onEveryNode(h.db, `SELECT coalesce(sum(idx_scan), 0) AS n FROM pg_stat_user_indexes WHERE indexrelname ~ '^${shardName('memories_embedding_hnsw')}$'`);
}

describe('which vector path a search takes', () => {
  const at = (embeddedRows: number, collectionSize: number | undefined, indexReady: boolean) =>
    scansExactly({ embeddedRows, collectionSize, exactScanMaxRows: 10_000, indexReady });
  it('scans a small project, or a project not yet in its index, exactly; walks the index of a large one', () => {
    expect(at(10_000, undefined, true)).toBe(true);
    expect(at(50_000, undefined, false)).toBe(true);
    expect(at(50_000, undefined, true)).toBe(false);
  });
  it('scans exactly a small collection (a subject) of a large, indexed project, and walks the index for a large one', () => {
    expect(at(50_000, 1_400, true)).toBe(true);
    expect(at(50_000, 10_000, true)).toBe(true);
    expect(at(50_000, 10_001, true)).toBe(false);
  });
});

describe('the HNSW graph holds the projects past the exact-scan threshold only', () => {
  let h: Harness;
  let large: string;
  let small: string;

  beforeAll(async () => {
    h = await createHarness({ consumers: false, env: { SEARCH_EXACT_SCAN_MAX_ROWS: String(EXACT_MAX) } });
    large = (await h.project()).projectId;
    small = (await h.project()).projectId;
    await load(h, large, 80, 1);
    await load(h, large, 5, 2, false); // not embedded yet: marked all the same
    await load(h, small, EXACT_MAX, 3);
  }, 60_000);
  afterAll(async () => h?.close());

  it('builds the index partial on vector_indexed', async () => {
    const { rows } = await h.db.query<{ definition: string }>(`SELECT pg_get_indexdef('memories_embedding_hnsw'::regclass) AS definition`);
    expect(rows[0]!.definition).toMatch(/ WHERE vector_indexed$/);
  });

  it('searches a project past the threshold exactly until it is admitted, and finds the same hits', async () => {
    expect(await marks(h, large)).toEqual({ marked: 0, total: 85 });
    expect(await admission(h, large)).toBeUndefined();
    const before = backend === 'pg' ? await hnswScans(h) : 0;
    const response = await h.call('POST', large, '/admin/memory/search', { body: { query: 'note of something', limit: 10 } });
    expect(response.statusCode, response.body).toBe(200);
    expect(response.json<unknown[]>()).toHaveLength(10);
    if (backend === 'pg') expect(await hnswScans(h)).toBe(before);
  });

  it('admits the project past the threshold, marks every row of it, embedded or not, and leaves the small one out', async () => {
    const graphReady = async (projectId: string) => (await h.call('GET', projectId, '/admin/memory/stats')).json().embedding.graphReady;
    expect(await graphReady(large)).toBe(false);
    const changes = await h.apis.memory.maintainVectorIndexes();
    expect(changes.admitted).toEqual([{ projectId: large, rows: 80 }]);
    expect(await admission(h, large)).toBe(true);
    expect(await marks(h, large)).toEqual({ marked: 85, total: 85 });
    expect(await admission(h, small)).toBeUndefined();
    expect(await marks(h, small)).toEqual({ marked: 0, total: EXACT_MAX });
    // The project's stats say so.
    expect(await graphReady(large)).toBe(true);
    expect(await graphReady(small)).toBe(false);
    // A second run has nothing to do.
    expect((await h.apis.memory.maintainVectorIndexes()).admitted).toEqual([]);
  }, 60_000);

  it('admits through the memory.hnsw-admission job, scheduled every minute, which counts only the projects not yet ready', async () => {
    const memory = h.lattice.modules.find((m) => m.name === 'memory')!;
    expect(memory.schedules).toContainEqual(expect.objectContaining({ id: 'memory.hnsw-admission', job: 'memory.hnsw-admission', everyMs: 60_000 }));
    const third = (await h.project()).projectId;
    await load(h, third, EXACT_MAX + 1, 9);
    const job = memory.jobs!['memory.hnsw-admission']!;
    // The large project is ready already: only the new one past the threshold is counted and admitted.
    expect(await job({}, {} as never)).toEqual({ admitted: [{ projectId: third, rows: EXACT_MAX + 1 }] });
    expect(await admission(h, third)).toBe(true);
    expect(await marks(h, third)).toEqual({ marked: EXACT_MAX + 1, total: EXACT_MAX + 1 });
    expect(await job({}, {} as never)).toEqual({ admitted: [] });
  }, 60_000);

  it('marks an embedding written for an admitted project as it is written, and none of a project not admitted', async () => {
    const [later] = await load(h, large, 1, 4);
    const [other] = await load(h, small, 1, 5);
    const { rows } = await h.db.query<{ id: string; vector_indexed: boolean }>(`SELECT id, vector_indexed FROM memories WHERE id = ANY($1::text[]) ORDER BY id`, [[later, other]]);
    expect(Object.fromEntries(rows.map((r) => [r.id, r.vector_indexed]))).toEqual({ [later!]: true, [other!]: false });
  });

  it('walks the graph for the admitted project and answers its own memories only', async () => {
    const before = backend === 'pg' ? await hnswScans(h) : 0;
    const response = await h.call('POST', large, '/admin/memory/search', { body: { query: 'note of something', limit: 10 } });
    expect(response.statusCode, response.body).toBe(200);
    const hits = response.json<{ content: string }[]>();
    expect(hits).toHaveLength(10);
    expect(hits.every((hit) => hit.content.includes(`of ${large} `))).toBe(true);
    if (backend === 'pg') {
      // A backend publishes its counters as it goes idle, but at most once a second: one that
      // published within the last second waits seconds more (ten on Postgres 15).
      let after = await hnswScans(h);
      for (const deadline = Date.now() + 60_000; after === before && Date.now() < deadline; ) {
        await new Promise((resolve) => setTimeout(resolve, 250));
        after = await hnswScans(h);
      }
      expect(after).toBeGreaterThan(before);
    }
  }, 120_000);
});

describe.skipIf(backend !== 'pg')('admission while a writer holds a row (Postgres)', () => {
  let h: Harness;
  beforeAll(async () => {
    h = await createHarness({ consumers: false, env: { SEARCH_EXACT_SCAN_MAX_ROWS: String(EXACT_MAX) } });
  });
  afterAll(async () => h?.close());

  it('skips its turn, answering at once, while another run holds the admission lock; admits on the next turn', async () => {
    const { projectId } = await h.project();
    await load(h, projectId, 40, 9);
    let release!: () => void;
    const held = new Promise<void>((resolve) => (release = resolve));
    let locked!: () => void;
    const holding = new Promise<void>((resolve) => (locked = resolve));
    // Another process's run, still marking a large project.
    const other = h.db.withAdvisoryLock(ADMISSION_LOCK, async () => {
      locked();
      await held;
    });
    await holding;
    try {
      expect(await h.apis.memory.maintainVectorIndexes()).toMatchObject({ admitted: [] });
      expect(await admission(h, projectId)).toBeUndefined();
    } finally {
      release();
      await other;
    }
    expect((await h.apis.memory.maintainVectorIndexes()).admitted).toEqual([{ projectId, rows: 40 }]);
    expect(await admission(h, projectId)).toBe(true);
  }, 60_000);

  it('marks a row whose embedding a writer that began before the admission commits while the job waits on it', async () => {
    const { projectId } = await h.project();
    await load(h, projectId, 40, 6);
    const [pending] = await load(h, projectId, 1, 7, false);
    let release!: () => void;
    const held = new Promise<void>((resolve) => (release = resolve));
    let wrote!: () => void;
    const written = new Promise<void>((resolve) => (wrote = resolve));
    // The writer embeds the row before the project is admitted, so it writes vector_indexed = false, and holds the row.
    const writer = h.db.transaction(async (tx) => {
      expect(await writeEmbeddings(tx, projectId, 'synthetic', [{ id: pending!, vector: unit(mulberry32(8)) }])).toBe(1);
      wrote();
      await held;
    });
    await written;
    const job = h.apis.memory.maintainVectorIndexes();
    // Released once the job is waiting on the writer's row lock, as bounded polls of the server's state (no clock).
    let waiting = false;
    for (let poll = 0; poll < 2000 && !waiting; poll++) {
      const n = await onEveryNode(
        h.db,
        `SELECT count(*) FROM pg_stat_activity WHERE datname = current_database() AND wait_event_type = 'Lock' AND query ~ '^UPDATE ${shardName('memories')} m SET vector_indexed'`,
      );
      waiting = n > 0;
    }
    expect(waiting).toBe(true);
    release();
    await writer;
    expect((await job).admitted).toEqual([{ projectId, rows: 40 }]);
    expect(await marks(h, projectId)).toEqual({ marked: 41, total: 41 });
    expect(await admission(h, projectId)).toBe(true);
  }, 60_000);
});
