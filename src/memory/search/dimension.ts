// Fixes the embedding column's dimension for the deployment. Migrations create `embedding vector`
// without one, since it is a setting; the first boot types the column as vector(N) and builds the
// HNSW index, and every later boot checks that the setting still matches what is stored, and that
// the index has this version's build settings (rebuilding it once when they changed).
import { citusDistributed } from '../../platform/citus.js';
import type { Db, Queryable } from '../../platform/db.js';
import { HNSW_BUILD, HNSW_MAX_DIMENSIONS, HNSW_PREDICATE, hnswColumn } from './vector-index.js';

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
const HNSW_INDEX = 'memories_embedding_hnsw';

/**
 * The embedding stays in the row (storage MAIN, pg_attribute's 'm'). A 512-dimension vector is
 * 2,056 bytes, just over the 2,032 at which Postgres moves a value to the TOAST table by default, so
 * every exact distance (the re-ranking of HNSW neighbours, the cosine of each candidate) read the
 * vector through the TOAST index and two chunks: about four page reads a row instead of one. MAIN
 * keeps it inline unless a row would not fit a page at all. Rows stored before this setting keep their
 * TOASTed vectors until rewritten (`VACUUM FULL memories`).
 */
const EMBEDDING_STORAGE = 'm';

/**
 * Types the embedding column and builds its HNSW index (or rebuilds one built with other settings, an
 * older version's). `buildMemoryMb` is maintenance_work_mem for a build on Postgres.
 */
export async function ensureEmbeddingDimension(db: Db, dimensions: number, buildMemoryMb?: number): Promise<void> {
  await db.withAdvisoryLock(LOCK, async (session) => {
    const result = await session.query<{ typmod: number; storage: string }>(
      `SELECT a.atttypmod AS typmod, a.attstorage AS storage FROM pg_attribute a
        WHERE a.attrelid = 'memories'::regclass AND a.attname = 'embedding' AND NOT a.attisdropped`,
    );
    const typmod = result.rows[0]?.typmod ?? -1;
    if (typmod > 0 && typmod !== dimensions) throw new EmbeddingDimensionMismatch(dimensions, typmod);
    const distributed = await citusDistributed(session);
    await session.transaction(async (tx) => {
      if (typmod !== dimensions) await tx.exec(`ALTER TABLE memories ALTER COLUMN embedding TYPE vector(${Math.trunc(dimensions)})`);
      // A type change resets the column's storage to the type's (EXTENDED), so this follows it.
      if (!distributed && (typmod !== dimensions || result.rows[0]?.storage !== EMBEDDING_STORAGE)) {
        await tx.exec(`ALTER TABLE memories ALTER COLUMN embedding SET STORAGE MAIN`);
      }
      if (dimensions <= HNSW_MAX_DIMENSIONS[HNSW_BUILD[db.kind].precision]) {
        await ensureHnswIndex(tx, db.kind, dimensions, buildMemoryMb);
      }
    });
    // After the commit: the shards' commands run on connections of their own.
    if (distributed) await mainStorageOnShards(session);
  });
}

/**
 * On Citus, which refuses a storage change on a distributed table, the storage is set on each shard
 * (the tables that hold the rows), where it is not MAIN already. A shard made later (a rebalance
 * that splits one) starts from the distributed table's EXTENDED until the next boot sets it.
 */
async function mainStorageOnShards(tx: Queryable): Promise<void> {
  const { rows } = await tx.query<{ result: string }>(
    `SELECT result FROM run_command_on_shards('memories', $$SELECT attstorage FROM pg_attribute WHERE attrelid = '%s'::regclass AND attname = 'embedding'$$)`,
  );
  if (rows.every((r) => r.result === EMBEDDING_STORAGE)) return;
  await tx.query(`SELECT run_command_on_shards('memories', $$ALTER TABLE %s ALTER COLUMN embedding SET STORAGE MAIN$$)`);
}

/**
 * Builds the HNSW index with the backend's settings, partial on the rows of the projects that search
 * through it (HNSW_PREDICATE), or rebuilds it when it was built with others or over another
 * expression or rows (an older version's). `memoryMb`: maintenance_work_mem on Postgres, where
 * the graph built in memory is many times faster than one that spills.
 */
async function ensureHnswIndex(tx: Queryable, kind: Db['kind'], dimensions: number, memoryMb: number | undefined): Promise<void> {
  const { m, efConstruction } = HNSW_BUILD[kind];
  const wanted = [`m=${m}`, `ef_construction=${efConstruction}`];
  const column = hnswColumn(kind, dimensions);
  const { rows } = await tx.query<{ options: string[] | null; definition: string }>(
    `SELECT c.reloptions AS options, pg_get_indexdef(c.oid) AS definition FROM pg_class c WHERE c.relname = $1 AND c.relkind = 'i'`,
    [HNSW_INDEX],
  );
  const current = rows[0];
  const predicate = ` WHERE ${HNSW_PREDICATE}`;
  if (current && wanted.every((o) => current.options?.includes(o)) && current.definition.includes(column.printed) && current.definition.endsWith(predicate)) return;
  if (current) await tx.exec(`DROP INDEX ${HNSW_INDEX}`);
  // A build over a large table takes minutes (about 25 at a million memories on two cores): no
  // statement timeout, and the memory to build the graph without spilling.
  if (kind === 'pg') {
    await tx.exec(`SET LOCAL statement_timeout = 0`);
    if (memoryMb) await tx.exec(`SET LOCAL maintenance_work_mem = '${Math.trunc(memoryMb)}MB'`);
  }
  await tx.exec(`CREATE INDEX ${HNSW_INDEX} ON memories USING hnsw (${column.sql}) WITH (m = ${m}, ef_construction = ${efConstruction})${predicate}`);
}
