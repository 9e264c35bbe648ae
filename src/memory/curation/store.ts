// SQL for curation passes: dedup (near-duplicates) and consolidation (importance decay).
import pgvector from 'pgvector';
import type { Db, Queryable } from '../../platform/db.js';

export interface DedupCandidate {
  id: string;
  content: string;
  vector: Float32Array;
  scope: string;
  subjectKey: string;
  status: string;
  importance: number;
  confidence: number;
  touchedAt: number;
}

/** The newest `limit` live, embedded memories of a project (optionally of one subject). */
export async function loadDedupCandidates(
  db: Queryable,
  projectId: string,
  limit: number,
  subject?: { kind: string; externalId: string },
): Promise<DedupCandidate[]> {
  const result = await db.query<{
    id: string;
    content: string;
    embedding: string;
    scope: string;
    subject_key: string;
    status: string;
    importance: number;
    confidence: number;
    touched_at: Date;
  }>(
    `SELECT id, content, embedding::text AS embedding, scope, coalesce(subject_kind, '') || '/' || coalesce(subject_external_id, '') AS subject_key,
            status, importance, confidence, greatest(valid_from, coalesce(last_accessed_at, valid_from)) AS touched_at
       FROM memories
      WHERE project_id = $1 AND status IN ('pending', 'confirmed') AND embedding IS NOT NULL
        AND ($3::text IS NULL OR (subject_kind = $3 AND subject_external_id = $4))
      ORDER BY created_at DESC, id DESC
      LIMIT $2`,
    [projectId, limit, subject?.kind ?? null, subject?.externalId ?? null],
  );
  return result.rows.map((r) => ({
    id: r.id,
    content: r.content,
    vector: Float32Array.from(pgvector.fromSql(r.embedding) as number[]),
    scope: r.scope,
    subjectKey: r.subject_key,
    status: r.status,
    importance: r.importance,
    confidence: r.confidence,
    touchedAt: new Date(r.touched_at).getTime(),
  }));
}

/**
 * Marks duplicates superseded by the memory kept in their group. Their validTo is left alone:
 * a duplicate was as true as its twin, so point-in-time reads still see it.
 */
export async function markDuplicates(db: Queryable, projectId: string, pairs: readonly { id: string; keptId: string }[]): Promise<number> {
  if (pairs.length === 0) return 0;
  const result = await db.query(
    `UPDATE memories m SET status = 'superseded', superseded_by = v.kept_id, superseded_at = now(), updated_at = now()
       FROM unnest($2::text[], $3::text[]) AS v(id, kept_id)
      WHERE m.project_id = $1 AND m.id = v.id AND m.status IN ('pending', 'confirmed')`,
    [projectId, pairs.map((p) => p.id), pairs.map((p) => p.keptId)],
  );
  return result.rowCount;
}

/**
 * Merges a group into `keptId` in one transaction: its provenance (source_memory_ids) gains the
 * others and their own sources, its importance and confidence become the group's highest, and the
 * others are superseded by it. Members no longer live are left out. Answers how many were superseded.
 */
export async function mergeCluster(db: Db, projectId: string, keptId: string, mergedIds: readonly string[]): Promise<number> {
  return db.transaction(async (tx) => {
    const { rows } = await tx.query<{ id: string }>(
      `SELECT id FROM memories WHERE project_id = $1 AND id = ANY($2::text[]) AND status IN ('pending', 'confirmed') ORDER BY id FOR UPDATE`,
      [projectId, [keptId, ...mergedIds]],
    );
    const live = new Set(rows.map((r) => r.id));
    const merged = mergedIds.filter((id) => live.has(id));
    if (!live.has(keptId) || merged.length === 0) return 0;
    await tx.query(
      `UPDATE memories k
          SET source_memory_ids = (SELECT coalesce(array_agg(DISTINCT s), '{}') FROM (
                                     SELECT unnest(k.source_memory_ids) AS s
                                     UNION SELECT unnest($3::text[])
                                     UNION SELECT unnest(m.source_memory_ids) FROM memories m WHERE m.project_id = $1 AND m.id = ANY($3::text[])) u
                                   WHERE s <> k.id),
              importance = greatest(k.importance, (SELECT max(m.importance) FROM memories m WHERE m.project_id = $1 AND m.id = ANY($3::text[]))),
              confidence = greatest(k.confidence, (SELECT max(m.confidence) FROM memories m WHERE m.project_id = $1 AND m.id = ANY($3::text[]))),
              updated_at = now()
        WHERE k.project_id = $1 AND k.id = $2`,
      [projectId, keptId, merged],
    );
    return markDuplicates(tx, projectId, merged.map((id) => ({ id, keptId })));
  });
}

/**
 * Decays the importance of live memories idle (neither true-from nor recalled) since `idleSince`,
 * by `factor`, never below `floor`; those that reach the floor are flagged `stale` for review.
 */
export async function decayIdle(
  db: Queryable,
  projectId: string,
  idleSince: Date,
  factor: number,
  floor: number,
  subject?: { kind: string; externalId: string },
): Promise<{ decayed: number; flaggedStale: number }> {
  const result = await db.query<{ stale: boolean }>(
    `UPDATE memories SET importance = greatest($4::real, importance * $3::real),
            review_reason = CASE WHEN importance * $3::real <= $4::real AND review_reason IS NULL THEN 'stale' ELSE review_reason END
      WHERE project_id = $1 AND status IN ('pending', 'confirmed') AND importance > $4::real
        AND greatest(valid_from, coalesce(last_accessed_at, valid_from)) < $2::timestamptz
        AND ($5::text IS NULL OR (subject_kind = $5 AND subject_external_id = $6))
      RETURNING review_reason = 'stale' AS stale`,
    [projectId, idleSince.toISOString(), factor, floor, subject?.kind ?? null, subject?.externalId ?? null],
  );
  return { decayed: result.rowCount, flaggedStale: result.rows.filter((r) => r.stale).length };
}
