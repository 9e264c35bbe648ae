// SQL for one subject's typed data (data-subject rights): its observations, its running
// statistics, and its rows still waiting in a queued batch.
import type { Queryable } from '../../platform/db.js';
import { SUBJECT_WHERE, type SubjectTable } from '../../platform/subject-data.js';

const SUBJECT = SUBJECT_WHERE;
/** A queued batch holding at least one row of the subject (a containment test the planner can check cheaply). */
const BATCH_HOLDS_SUBJECT = `project_id = $1 AND observations @> jsonb_build_array(jsonb_build_object('subjectKind', $2::text, 'subjectExternalId', $3::text))`;
const ROW_IS_SUBJECT = `e->>'subjectKind' = $2 AND e->>'subjectExternalId' = $3`;

export const SUBJECT_OBSERVATIONS: SubjectTable = {
  from: 'typed_observations',
  where: SUBJECT,
  key: 'id',
  columns: 'id, attribute_key, subject_kind, subject_external_id, value_numeric, value_text, value_bool, value_ts, observed_at, source, trust, status, quarantine_reason, raw, created_at',
};

/** The subject's running statistics, one row per attribute. */
export const SUBJECT_ACCUMULATORS: SubjectTable = {
  from: 'typed_accumulators',
  where: SUBJECT,
  key: 'attribute_key',
  columns: 'attribute_key, subject_kind, subject_external_id, count, sum, sum_sq, min_val, max_val, last_val, last_observed_at, cumulative, ewma, ewma_var, updated_at',
};

/** The subject's observations not yet folded into its accumulators (copies of observations: erased, not exported). */
export const SUBJECT_UNFOLDED: SubjectTable = {
  from: 'typed_unfolded',
  where: SUBJECT,
  key: 'batch_id',
  columns: 'batch_id, attribute_key, subject_kind, subject_external_id, observation_ids, observed_ats, vals',
};

/** Ids of queued batches (accepted by enqueue, not yet ingested) holding rows of the subject, a page at a time. */
export async function subjectQueuedBatchIds(db: Queryable, projectId: string, kind: string, externalId: string, after: string | null, limit: number): Promise<string[]> {
  const { rows } = await db.query<{ id: string }>(
    `SELECT id FROM typed_ingest_batches WHERE ${BATCH_HOLDS_SUBJECT} AND ($4::text IS NULL OR id > $4) ORDER BY id LIMIT $5`,
    [projectId, kind, externalId, after, limit],
  );
  return rows.map((r) => r.id);
}

/** The subject's rows in those batches, with their batch. */
export async function subjectQueuedRows(db: Queryable, projectId: string, kind: string, externalId: string, batchIds: readonly string[]): Promise<Record<string, unknown>[]> {
  const { rows } = await db.query(
    `SELECT b.id AS batch_id, b.created_at AS queued_at, e AS observation
       FROM typed_ingest_batches b, jsonb_array_elements(b.observations) e
      WHERE b.project_id = $1 AND b.id = ANY($4::text[]) AND ${ROW_IS_SUBJECT} ORDER BY b.id`,
    [projectId, kind, externalId, batchIds],
  );
  return rows;
}

/**
 * Removes the subject's rows from queued batches; a batch left empty is deleted. The batches are
 * locked, filtered here and written back by id (no function of the rows in the UPDATE, which Citus
 * refuses there).
 */
export async function eraseQueuedRows(tx: Queryable, projectId: string, kind: string, externalId: string): Promise<number> {
  const { rows } = await tx.query<{ id: string; observations: Record<string, unknown>[] }>(
    `SELECT id, observations FROM typed_ingest_batches WHERE ${BATCH_HOLDS_SUBJECT} ORDER BY id FOR UPDATE`,
    [projectId, kind, externalId],
  );
  let removed = 0;
  const kept = rows.map((batch) => {
    const left = batch.observations.filter((o) => !(String(o?.subjectKind) === kind && String(o?.subjectExternalId) === externalId));
    removed += batch.observations.length - left.length;
    return { id: batch.id, observations: JSON.stringify(left), count: left.length };
  });
  if (kept.length > 0) {
    await tx.query(
      `UPDATE typed_ingest_batches b SET observations = v.observations, row_count = v.count
         FROM unnest($2::text[], $3::jsonb[], $4::int[]) AS v(id, observations, count)
        WHERE b.project_id = $1 AND b.id = v.id`,
      [projectId, kept.map((k) => k.id), kept.map((k) => k.observations), kept.map((k) => k.count)],
    );
  }
  await tx.query('DELETE FROM typed_ingest_batches WHERE project_id = $1 AND row_count = 0', [projectId]);
  return removed;
}
