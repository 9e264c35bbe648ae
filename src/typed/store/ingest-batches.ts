// SQL for typed_ingest_batches: queued batches, durable until a job ingests them.
import type { Queryable } from '../../platform/db.js';
import type { ObservationInput } from '../schemas.js';

export async function insertIngestBatch(db: Queryable, id: string, projectId: string, observations: readonly ObservationInput[]): Promise<void> {
  await db.query('INSERT INTO typed_ingest_batches (id, project_id, observations, row_count) VALUES ($1, $2, $3::jsonb, $4)', [
    id,
    projectId,
    JSON.stringify(observations),
    observations.length,
  ]);
}

/** Locks and answers a queued batch; undefined when it was already ingested (or is being ingested). */
export async function claimIngestBatch(db: Queryable, projectId: string, id: string): Promise<ObservationInput[] | undefined> {
  const { rows } = await db.query<{ observations: ObservationInput[] }>(
    'SELECT observations FROM typed_ingest_batches WHERE project_id = $1 AND id = $2 FOR UPDATE SKIP LOCKED',
    [projectId, id],
  );
  return rows[0]?.observations;
}

export async function deleteIngestBatch(db: Queryable, projectId: string, id: string): Promise<void> {
  await db.query('DELETE FROM typed_ingest_batches WHERE project_id = $1 AND id = $2', [projectId, id]);
}

/** Queued batches older than `olderThanMs`: re-enqueued at start, in case their job was lost. */
export async function pendingIngestBatches(db: Queryable, olderThanMs: number): Promise<{ id: string; projectId: string }[]> {
  const { rows } = await db.query<{ id: string; project_id: string }>(
    `SELECT id, project_id FROM typed_ingest_batches WHERE created_at <= now() - ($1::float8 * interval '1 millisecond') ORDER BY created_at LIMIT 10000`,
    [olderThanMs],
  );
  return rows.map((r) => ({ id: r.id, projectId: r.project_id }));
}

/** The project's queued batches: how many, the rows they hold, and when the oldest was accepted. */
export async function queuedBacklog(db: Queryable, projectId: string): Promise<{ batches: number; rows: number; oldestPendingAt: Date | null }> {
  const { rows } = await db.query<{ batches: number; rows: number; oldestPendingAt: Date | null }>(
    `SELECT count(*)::int AS batches, COALESCE(sum(row_count), 0)::int AS rows, min(created_at) AS "oldestPendingAt"
       FROM typed_ingest_batches WHERE project_id = $1`,
    [projectId],
  );
  return rows[0]!;
}
