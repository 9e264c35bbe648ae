// The HNSW index that the first boot builds carries this version's build settings for the backend,
// and an index an older version built with other settings is rebuilt once at the next start.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { HNSW_BUILD } from '../../src/embeddings/dimension.js';
import { createLattice } from '../../src/modules.js';
import { createLogger } from '../../src/platform/logger.js';
import { createHarness, testConfig, type Harness } from '../helpers/harness.js';

const indexOptions = async (h: Harness) =>
  (await h.db.query<{ options: string[] | null }>(`SELECT reloptions AS options FROM pg_class WHERE relname = 'memories_embedding_hnsw'`)).rows;

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
