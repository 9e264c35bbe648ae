// The HNSW index that the first boot builds carries this version's build settings for the backend,
// at the backend's precision (half on Postgres, full on PGlite), and an index an older version built
// with other settings or at the other precision is rebuilt once at the next start.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { HNSW_BUILD, hnswColumn } from '../../src/memory/search/vector-index.js';
import { createLattice } from '../../src/modules.js';
import { createLogger } from '../../src/platform/logger.js';
import { newId } from '../../src/platform/ids.js';
import { insertMemories, writeEmbeddings } from '../../src/memory/store.js';
import { createHarness, testConfig, type Harness } from '../helpers/harness.js';

const indexOptions = async (h: Harness) =>
  (await h.db.query<{ options: string[] | null }>(`SELECT reloptions AS options FROM pg_class WHERE relname = 'memories_embedding_hnsw'`)).rows;

const embeddingStorage = async (h: Harness) =>
  (await h.db.query<{ storage: string }>(`SELECT attstorage AS storage FROM pg_attribute WHERE attrelid = 'memories'::regclass AND attname = 'embedding'`)).rows[0]?.storage;

describe('the embedding column', () => {
  let h: Harness;
  beforeAll(async () => {
    h = await createHarness();
  });
  afterAll(async () => {
    await h?.close();
  });

  it('keeps vectors in the row rather than in the TOAST table, also after a boot finds it changed', async () => {
    expect(await embeddingStorage(h)).toBe('m');
    await h.db.exec('ALTER TABLE memories ALTER COLUMN embedding SET STORAGE EXTENDED');
    const again = await createLattice(testConfig(h.database), { log: createLogger('silent'), db: h.db });
    await again.close();
    expect(await embeddingStorage(h)).toBe('m');
    const p = await h.project();
    const rows = Array.from({ length: 20 }, (_, i) => ({ id: newId('mem'), projectId: p.projectId, content: `Keeps vector ${i} inline` }));
    await insertMemories(h.db, rows);
    const dims = h.config.embeddingDimensions;
    await writeEmbeddings(h.db, p.projectId, 'test', rows.map((r, i) => ({ id: r.id, vector: Float32Array.from({ length: dims }, (_, j) => Math.sin(i + j)) })));
    const { rows: sizes } = await h.db.query<{ toast: string; inline: string }>(
      `SELECT pg_relation_size(c.reltoastrelid) AS toast,
              (SELECT min(pg_column_size(m.embedding)) FROM memories m WHERE m.project_id = $1) AS inline
         FROM pg_class c WHERE c.relname = 'memories'`,
      [p.projectId],
    );
    // Stored uncompressed in the row: the full 4 bytes a dimension, and nothing in the TOAST table.
    expect(Number(sizes[0]!.inline)).toBeGreaterThanOrEqual(4 * dims);
    expect(Number(sizes[0]!.toast)).toBe(0);
  });
});

describe('the HNSW index build settings', () => {
  let h: Harness;
  beforeAll(async () => {
    h = await createHarness();
  });
  afterAll(async () => {
    await h?.close();
  });

  it("are the backend's at first boot", async () => {
    const { m, efConstruction } = HNSW_BUILD[h.db.kind];
    expect(await indexOptions(h)).toEqual([{ options: [`m=${m}`, `ef_construction=${efConstruction}`] }]);
  });

  it("index the vectors at the backend's precision, and an index at the other one with the same settings is rebuilt", async () => {
    const definition = async () =>
      (await h.db.query<{ def: string }>(`SELECT pg_get_indexdef('memories_embedding_hnsw'::regclass) AS def`)).rows[0]!.def;
    const dims = h.config.embeddingDimensions;
    const { m, efConstruction, precision } = HNSW_BUILD[h.db.kind];
    const half = { column: `(embedding::halfvec(${dims})) halfvec_cosine_ops`, printed: `::halfvec(${dims})) halfvec_cosine_ops` };
    const full = { column: 'embedding vector_cosine_ops', printed: '(embedding vector_cosine_ops)' };
    const [wanted, other] = precision === 'half' ? [half, full] : [full, half];
    expect(await definition()).toContain(wanted.printed);
    await h.db.exec(
      `DROP INDEX memories_embedding_hnsw; CREATE INDEX memories_embedding_hnsw ON memories USING hnsw (${other.column}) WITH (m = ${m}, ef_construction = ${efConstruction})`,
    );
    expect(await definition()).toContain(other.printed);
    const again = await createLattice(testConfig(h.database), { log: createLogger('silent'), db: h.db });
    await again.close();
    expect(await definition()).toContain(wanted.printed);
    expect(await indexOptions(h)).toEqual([{ options: [`m=${m}`, `ef_construction=${efConstruction}`] }]);
  });

  it('hold only the rows marked vector_indexed: an older index over every row with the same settings is rebuilt partial', async () => {
    const definition = async () =>
      (await h.db.query<{ def: string }>(`SELECT pg_get_indexdef('memories_embedding_hnsw'::regclass) AS def`)).rows[0]!.def;
    expect(await definition()).toMatch(/ WHERE vector_indexed$/);
    const column = hnswColumn(h.db.kind, h.config.embeddingDimensions).sql;
    const { m, efConstruction } = HNSW_BUILD[h.db.kind];
    await h.db.exec(
      `DROP INDEX memories_embedding_hnsw; CREATE INDEX memories_embedding_hnsw ON memories USING hnsw (${column}) WITH (m = ${m}, ef_construction = ${efConstruction})`,
    );
    expect(await definition()).not.toContain('WHERE');
    const again = await createLattice(testConfig(h.database), { log: createLogger('silent'), db: h.db });
    await again.close();
    expect(await definition()).toMatch(/ WHERE vector_indexed$/);
  });

  it('are restored when an older index was built with others, keeping the vectors', async () => {
    await h.db.exec('DROP INDEX memories_embedding_hnsw; CREATE INDEX memories_embedding_hnsw ON memories USING hnsw (embedding vector_cosine_ops) WITH (m = 8)');
    expect(await indexOptions(h)).toEqual([{ options: ['m=8'] }]);
    const again = await createLattice(testConfig(h.database), { log: createLogger('silent'), db: h.db });
    await again.close();
    const { m, efConstruction } = HNSW_BUILD[h.db.kind];
    expect(await indexOptions(h)).toEqual([{ options: [`m=${m}`, `ef_construction=${efConstruction}`] }]);
    const { rows } = await h.db.query<{ n: string }>(`SELECT count(*) AS n FROM pg_indexes WHERE tablename = 'memories' AND indexdef LIKE '%USING hnsw%'`);
    expect(Number(rows[0]!.n)).toBe(1);
  });
});
