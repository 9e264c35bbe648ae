// SQL for the IVFFlat indexes over the largest projects (project-index.ts decides which and when):
// the registry, the projects' sizes, and building and dropping the partial indexes.
import type { Db, Queryable } from '../../platform/db.js';
import { ivfColumn } from './vector-index.js';

export interface ProjectIndex {
  projectId: string;
  indexName: string;
  dimensions: number;
  lists: number;
  rowsAtBuild: number;
}

/** The name every such index starts with; anything so named that the registry does not list is dropped. */
export const IVF_PREFIX = 'memories_ivf_';

export async function registeredIndexes(db: Queryable, projectId?: string): Promise<ProjectIndex[]> {
  const { rows } = await db.query<{ project_id: string; index_name: string; dimensions: number; lists: number; rows_at_build: string }>(
    `SELECT project_id, index_name, dimensions, lists, rows_at_build FROM project_vector_indexes
      WHERE $1::text IS NULL OR project_id = $1 ORDER BY project_id`,
    [projectId ?? null],
  );
  return rows.map((r) => ({ projectId: r.project_id, indexName: r.index_name, dimensions: r.dimensions, lists: r.lists, rowsAtBuild: Number(r.rows_at_build) }));
}

export async function register(db: Queryable, index: ProjectIndex): Promise<void> {
  await db.query(
    `INSERT INTO project_vector_indexes (project_id, index_name, dimensions, lists, rows_at_build) VALUES ($1, $2, $3, $4, $5)
     ON CONFLICT (project_id) DO UPDATE SET index_name = EXCLUDED.index_name, dimensions = EXCLUDED.dimensions,
       lists = EXCLUDED.lists, rows_at_build = EXCLUDED.rows_at_build, built_at = EXCLUDED.built_at`,
    [index.projectId, index.indexName, index.dimensions, index.lists, index.rowsAtBuild],
  );
}

export async function unregister(db: Queryable, projectId: string): Promise<void> {
  await db.query(`DELETE FROM project_vector_indexes WHERE project_id = $1`, [projectId]);
}

/**
 * Embedded memories per project, for the projects holding at least `minRows` memories by the word
 * statistics the writes keep (memory_corpus, a cheap upper bound) and for `also`.
 */
export async function embeddedCounts(db: Queryable, minRows: number, also: readonly string[]): Promise<Map<string, number>> {
  const { rows } = await db.query<{ project_id: string }>(
    `SELECT project_id FROM memory_corpus GROUP BY project_id HAVING sum(documents) >= $1 UNION SELECT unnest($2::text[]) ORDER BY 1`,
    [minRows, [...also]],
  );
  return countEachEmbedded(db, rows.map((r) => r.project_id));
}

/**
 * Embedded memories per project, for the projects not yet ready in the HNSW graph that hold more
 * than `minRows` memories by the word statistics.
 */
export async function unadmittedCounts(db: Queryable, minRows: number): Promise<Map<string, number>> {
  const { rows } = await db.query<{ project_id: string }>(
    `SELECT c.project_id FROM memory_corpus c
      WHERE NOT EXISTS (SELECT 1 FROM vector_indexed_projects v WHERE v.project_id = c.project_id AND v.ready)
      GROUP BY c.project_id HAVING sum(c.documents) > $1
      ORDER BY 1`,
    [minRows],
  );
  return countEachEmbedded(db, rows.map((r) => r.project_id));
}

/** Each project's embedded memories, counted on its own rows, one statement a project. */
async function countEachEmbedded(db: Queryable, projectIds: readonly string[]): Promise<Map<string, number>> {
  const counts = new Map<string, number>();
  for (const projectId of projectIds) {
    const { rows } = await db.query<{ n: string }>(`SELECT count(embedding) AS n FROM memories WHERE project_id = $1`, [projectId]);
    counts.set(projectId, Number(rows[0]!.n));
  }
  return counts;
}

/** The indexes on memories named as this module names them, valid or left invalid by a failed build. */
export async function ivfIndexNames(db: Queryable): Promise<string[]> {
  const { rows } = await db.query<{ name: string }>(
    `SELECT c.relname AS name FROM pg_index i JOIN pg_class c ON c.oid = i.indexrelid
      WHERE i.indrelid = 'memories'::regclass AND starts_with(c.relname, $1) ORDER BY 1`,
    [IVF_PREFIX],
  );
  return rows.map((r) => r.name);
}

const literal = (text: string) => `'${text.replace(/'/g, "''")}'`;
const identifier = (name: string) => `"${name.replace(/"/g, '""')}"`;

/**
 * Builds the partial index without blocking writes (CONCURRENTLY, so outside a transaction, on the
 * session's one connection: the setting must apply to it; the caller's session runs with no
 * statement timeout). IVFFlat's k-means holds a sample of 50 rows per list in maintenance_work_mem.
 * A build that fails leaves an invalid index behind, which is dropped before the error goes on.
 */
export async function buildIndex(session: Db, index: Omit<ProjectIndex, 'rowsAtBuild'>, memoryMb: number): Promise<void> {
  await session.exec(`SET maintenance_work_mem = '${Math.trunc(memoryMb)}MB'`);
  try {
    await session.exec(
      `CREATE INDEX CONCURRENTLY ${identifier(index.indexName)} ON memories USING ivfflat (${ivfColumn(index.dimensions)})
         WITH (lists = ${Math.trunc(index.lists)}) WHERE project_id = ${literal(index.projectId)}`,
    );
  } catch (error) {
    await dropIndex(session, index.indexName);
    throw error;
  } finally {
    await session.exec(`RESET maintenance_work_mem`);
  }
}

export async function dropIndex(db: Queryable, name: string): Promise<void> {
  await db.exec(`DROP INDEX CONCURRENTLY IF EXISTS ${identifier(name)}`);
}

/** The literal form of a project's condition: a partial index's predicate is proved from a constant, not a parameter. */
export const projectLiteral = literal;

/** Admits a project: from its commit on, every embedding written for it is marked as it is written. */
async function admitToHnsw(db: Queryable, projectId: string): Promise<void> {
  await db.query(`INSERT INTO vector_indexed_projects (project_id) VALUES ($1) ON CONFLICT (project_id) DO NOTHING`, [projectId]);
}

/**
 * Marks up to `limit` of the project's unmarked rows, embedded or not, linking the embedded ones
 * into the graph; answers how many. A row whose embedding is being written waits for that writer
 * and is marked after it, so no row written by one that began before the admission stays out.
 */
async function markForHnsw(db: Queryable, projectId: string, limit: number): Promise<number> {
  const result = await db.query(
    `UPDATE memories m SET vector_indexed = true
      WHERE m.project_id = $1 AND m.id IN (SELECT id FROM memories WHERE project_id = $1 AND NOT vector_indexed LIMIT $2)
        AND NOT m.vector_indexed`,
    [projectId, limit],
  );
  return result.rowCount;
}

async function markHnswReady(db: Queryable, projectId: string): Promise<void> {
  await db.query(`UPDATE vector_indexed_projects SET ready = true, ready_at = now() WHERE project_id = $1`, [projectId]);
}

/**
 * Puts a project in the HNSW graph: admits it, marks all its rows `batch` per statement (each
 * commits on its own, on a connection outside a transaction), and makes it ready.
 */
export async function admitProject(db: Queryable, projectId: string, batch: number): Promise<void> {
  await admitToHnsw(db, projectId);
  while ((await markForHnsw(db, projectId, batch)) > 0);
  await markHnswReady(db, projectId);
}

/** How a project's vectors are searched, as the registries say: its own IVFFlat index, the HNSW graph (ready), or neither. */
export async function vectorPathState(db: Queryable, projectId: string): Promise<{ ivf: boolean; hnsw: boolean }> {
  const { rows } = await db.query<{ ivf: boolean; hnsw: boolean }>(
    `SELECT EXISTS (SELECT 1 FROM project_vector_indexes WHERE project_id = $1) AS ivf,
            EXISTS (SELECT 1 FROM vector_indexed_projects WHERE project_id = $1 AND ready) AS hnsw`,
    [projectId],
  );
  return rows[0]!;
}
