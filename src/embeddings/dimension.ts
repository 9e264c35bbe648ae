// Fixes the embedding column's dimension for the deployment. Migrations create `embedding vector`
// without one, since it is a setting; the first boot types the column as vector(N) and builds the
// HNSW index, and every later boot checks that the setting still matches what is stored, and that
// the index has this version's build settings (rebuilding it once when they changed).
import type { Db, Queryable } from '../platform/db.js';

export class EmbeddingDimensionMismatch extends Error {
  constructor(configured: number, stored: number) {
    super(
      `EMBEDDING_DIMENSIONS is ${configured} but the database stores ${stored}-dimension embeddings. ` +
        `Set EMBEDDING_DIMENSIONS=${stored} (and the matching provider), or re-embed into a new database.`,
    );
    this.name = 'EmbeddingDimensionMismatch';
  }
}

const LOCK = 0x6c61747469636532n; // "lattice2"
const HNSW_MAX_DIMENSIONS = 2000;
const HNSW_INDEX = 'memories_embedding_hnsw';

/**
 * HNSW build settings (pgvector: `m` links per node, `ef_construction` the candidate list while
 * linking). On Postgres the graph is built with a long candidate list: at 100k memories the default
 * (16, 64) let the vector candidates hold 66% of the exact top 10, 800 holds 94 to 95% (bench/memory.ts),
 * for about 6 ms instead of 0.8 ms of database time per embedded row. A larger `m` bought nothing
 * there. PGlite, the embedded default for small deployments, scans projects exactly up to
 * SEARCH_EXACT_SCAN_MAX_ROWS and keeps pgvector's defaults, since it links every row in WASM.
 */
export const HNSW_BUILD = {
  pg: { m: 16, efConstruction: 800 },
  pglite: { m: 16, efConstruction: 64 },
} as const;

/**
 * The embedding stays in the row (storage MAIN, pg_attribute's 'm'). A 512-dimension vector is
 * 2,056 bytes, just over the 2,032 at which Postgres moves a value to the TOAST table by default, so
 * every exact distance (the re-ranking of HNSW neighbours, the cosine of each candidate) read the
 * vector through the TOAST index and two chunks: about four page reads a row instead of one. MAIN
 * keeps it inline unless a row would not fit a page at all. Rows stored before this setting keep their
 * TOASTed vectors until rewritten (`VACUUM FULL memories`).
 */
const EMBEDDING_STORAGE = 'm';

const hnswOptions = (db: Db) => HNSW_BUILD[db.kind];

export async function ensureEmbeddingDimension(db: Db, dimensions: number): Promise<void> {
  await db.withAdvisoryLock(LOCK, async (session) => {
    const result = await session.query<{ typmod: number; storage: string }>(
      `SELECT a.atttypmod AS typmod, a.attstorage AS storage FROM pg_attribute a
        WHERE a.attrelid = 'memories'::regclass AND a.attname = 'embedding' AND NOT a.attisdropped`,
    );
    const typmod = result.rows[0]?.typmod ?? -1;
    if (typmod > 0 && typmod !== dimensions) throw new EmbeddingDimensionMismatch(dimensions, typmod);
    await session.transaction(async (tx) => {
      if (typmod !== dimensions) await tx.exec(`ALTER TABLE memories ALTER COLUMN embedding TYPE vector(${Math.trunc(dimensions)})`);
      // A type change resets the column's storage to the type's (EXTENDED), so this follows it.
      if (typmod !== dimensions || result.rows[0]?.storage !== EMBEDDING_STORAGE) {
        await tx.exec(`ALTER TABLE memories ALTER COLUMN embedding SET STORAGE MAIN`);
      }
      // pgvector's HNSW indexes vectors of up to 2,000 dimensions; wider ones are scanned exactly.
      if (dimensions <= HNSW_MAX_DIMENSIONS) await ensureHnswIndex(tx, hnswOptions(db));
    });
  });
}

/** Builds the HNSW index, or rebuilds it when it was built with other settings (an older version's). */
async function ensureHnswIndex(tx: Queryable, options: { m: number; efConstruction: number }): Promise<void> {
  const wanted = [`m=${options.m}`, `ef_construction=${options.efConstruction}`];
  const { rows } = await tx.query<{ options: string[] | null }>(`SELECT reloptions AS options FROM pg_class WHERE relname = $1 AND relkind = 'i'`, [HNSW_INDEX]);
  const current = rows[0];
  if (current && wanted.every((o) => current.options?.includes(o))) return;
  if (current) await tx.exec(`DROP INDEX ${HNSW_INDEX}`);
  await tx.exec(`CREATE INDEX ${HNSW_INDEX} ON memories USING hnsw (embedding vector_cosine_ops) WITH (m = ${options.m}, ef_construction = ${options.efConstruction})`);
}
