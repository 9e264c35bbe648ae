// SQL for graph_extractions and graph_settings: the mark extraction leaves on each memory it read
// (content hash, method, counts) and whether a project opted in. It answers which live memories wait
// for extraction (never marked, or changed since), a project's backlog, and which opted-in projects
// have memories waiting; it reads memories (memory's table) for their content. Plain SQL; every
// statement is scoped by project.
import type { Queryable } from '../../platform/db.js';

export async function markExtracted(db: Queryable, projectId: string, memoryId: string, mark: { contentHash: string; method: 'heuristic' | 'caller'; entities: number; edges: number }): Promise<void> {
  await db.query(
    `INSERT INTO graph_extractions (project_id, memory_id, content_hash, method, entity_count, edge_count) VALUES ($1, $2, $3, $4, $5, $6)
     ON CONFLICT (project_id, memory_id) DO UPDATE SET content_hash = excluded.content_hash, method = excluded.method,
       entity_count = excluded.entity_count, edge_count = excluded.edge_count, extracted_at = excluded.extracted_at`,
    [projectId, memoryId, mark.contentHash, mark.method, mark.entities, mark.edges],
  );
}

export async function extractionMark(db: Queryable, projectId: string, memoryId: string): Promise<{ content_hash: string; method: string } | undefined> {
  const { rows } = await db.query<{ content_hash: string; method: string }>(
    `SELECT content_hash, method FROM graph_extractions WHERE project_id = $1 AND memory_id = $2`,
    [projectId, memoryId],
  );
  return rows[0];
}

export interface PendingMemory {
  id: string;
  content: string;
  type: string;
  scope: string;
  subject_kind: string | null;
  subject_external_id: string | null;
  valid_from: Date;
  content_hash: string;
}

/** Memories the engine writes itself (mined patterns, estimates, decisions, outcomes, consent) name nothing worth extracting. */
const NOT_EXTRACTED = `'behavior_pattern', 'estimate', 'decision', 'outcome', 'consent'`;
/** Live memories extraction covers, and among them those not extracted, or changed since (x: their graph_extractions row). */
const EXTRACTABLE = `m.status IN ('pending', 'confirmed') AND m.type NOT IN (${NOT_EXTRACTED})`;
const NOT_CURRENT = `(x.memory_id IS NULL OR x.content_hash <> md5(m.content))`;
const UNEXTRACTED = `${EXTRACTABLE} AND ${NOT_CURRENT}`;
const WITH_MARKS = `FROM memory_read m LEFT JOIN graph_extractions x ON x.project_id = m.project_id AND x.memory_id = m.id`;
const PENDING = `${WITH_MARKS}
  WHERE m.project_id = $1 AND ${UNEXTRACTED}`;

/** Live memories not yet extracted, or changed since: oldest first. */
export async function pendingMemories(db: Queryable, projectId: string, limit: number, minLength = 0): Promise<PendingMemory[]> {
  const { rows } = await db.query<PendingMemory>(
    `SELECT m.id, m.content, m.type, m.scope, m.subject_kind, m.subject_external_id, m.valid_from, md5(m.content) AS content_hash
       ${PENDING} AND char_length(m.content) >= $3 ORDER BY m.created_at, m.id LIMIT $2`,
    [projectId, limit, minLength],
  );
  return rows;
}

export async function countPending(db: Queryable, projectId: string): Promise<number> {
  const { rows } = await db.query<{ n: string }>(`SELECT count(*) AS n ${PENDING}`, [projectId]);
  return Number(rows[0]!.n);
}

export async function memoryForExtraction(db: Queryable, projectId: string, memoryId: string): Promise<PendingMemory | undefined> {
  const { rows } = await db.query<PendingMemory>(
    `SELECT id, content, type, scope, subject_kind, subject_external_id, valid_from, md5(content) AS content_hash FROM memory_read WHERE project_id = $1 AND id = $2`,
    [projectId, memoryId],
  );
  return rows[0];
}

export async function extractionEnabled(db: Queryable, projectId: string): Promise<boolean> {
  const { rows } = await db.query<{ extraction_enabled: boolean }>(`SELECT extraction_enabled FROM graph_settings WHERE project_id = $1`, [projectId]);
  return rows[0]?.extraction_enabled ?? false;
}

export async function setExtraction(db: Queryable, projectId: string, enabled: boolean): Promise<void> {
  await db.query(
    `INSERT INTO graph_settings (project_id, extraction_enabled) VALUES ($1, $2)
     ON CONFLICT (project_id) DO UPDATE SET extraction_enabled = excluded.extraction_enabled, updated_at = excluded.updated_at`,
    [projectId, enabled],
  );
}

/** Projects that opted in and have memories waiting. */
export async function projectsWithPending(db: Queryable): Promise<string[]> {
  const { rows } = await db.query<{ project_id: string }>(
    `SELECT s.project_id FROM graph_settings s
      WHERE s.extraction_enabled AND EXISTS (
        SELECT 1 FROM memory_read m LEFT JOIN graph_extractions x ON x.project_id = m.project_id AND x.memory_id = m.id
         WHERE m.project_id = s.project_id AND ${UNEXTRACTED})
      ORDER BY s.project_id`,
  );
  return rows.map((r) => r.project_id);
}

/**
 * The extraction backlog of a project that opted in (undefined for one that did not): the live
 * memories extraction covers, those pending as the backfill counts its `remaining`, and the last
 * change of the oldest pending one.
 */
export async function extractionBacklog(db: Queryable, projectId: string): Promise<{ total: number; pending: number; oldestPendingAt: Date | null } | undefined> {
  if (!(await extractionEnabled(db, projectId))) return undefined;
  const { rows } = await db.query<{ total: string; pending: string; oldest: Date | null }>(
    `SELECT count(*) AS total, count(*) FILTER (WHERE ${NOT_CURRENT}) AS pending, min(m.updated_at) FILTER (WHERE ${NOT_CURRENT}) AS oldest
       ${WITH_MARKS} WHERE m.project_id = $1 AND ${EXTRACTABLE}`,
    [projectId],
  );
  const r = rows[0]!;
  return { total: Number(r.total), pending: Number(r.pending), oldestPendingAt: r.oldest };
}
