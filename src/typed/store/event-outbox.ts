// SQL for typed_event_outbox (migration 0028): per ingest, the observations whose typed.observation
// events the typed.events job still has to append (the ingest writes the row with its points:
// unfolded.appendUnfolded).
import type { Queryable } from '../../platform/db.js';

/** Locks and answers an outbox row's observation ids; undefined when it is done (or another job holds it). */
export async function claimOutbox(db: Queryable, projectId: string, id: string): Promise<string[] | undefined> {
  const { rows } = await db.query<{ observation_ids: string[] }>(
    'SELECT observation_ids FROM typed_event_outbox WHERE project_id = $1 AND id = $2 FOR UPDATE SKIP LOCKED',
    [projectId, id],
  );
  return rows[0]?.observation_ids;
}

export async function deleteOutbox(db: Queryable, projectId: string, id: string): Promise<void> {
  await db.query('DELETE FROM typed_event_outbox WHERE project_id = $1 AND id = $2', [projectId, id]);
}

/** Outbox rows older than `olderThanMs` (of any project), oldest first: their job may have been lost. */
export async function pendingOutbox(db: Queryable, olderThanMs: number, limit = 10_000): Promise<{ id: string; projectId: string }[]> {
  const { rows } = await db.query<{ id: string; project_id: string }>(
    `SELECT id, project_id FROM typed_event_outbox WHERE created_at <= now() - ($1::float8 * interval '1 millisecond') ORDER BY created_at LIMIT $2`,
    [olderThanMs, limit],
  );
  return rows.map((r) => ({ id: r.id, projectId: r.project_id }));
}

/** The project's outbox rows still to do, as the project page's backlog. */
export async function outboxBacklog(db: Queryable, projectId: string): Promise<{ events: number; oldestPendingAt: Date | null }> {
  const { rows } = await db.query<{ events: number; oldestPendingAt: Date | null }>(
    `SELECT COALESCE(sum(cardinality(observation_ids)), 0)::int AS events, min(created_at) AS "oldestPendingAt" FROM typed_event_outbox WHERE project_id = $1`,
    [projectId],
  );
  return rows[0]!;
}

/**
 * A project's typed.events jobs and a hard delete of one of its subjects never overlap: each job
 * holds this lock shared for its transaction, the erase holds it exclusively. So a job either
 * appends its events before the erase looks for the subject's events, or reads the observations
 * after the erase removed them (and appends none for them).
 */
const ERASE_LOCK = `hashtextextended('typed-events:' || $1, 0)`;

export async function shareEraseLock(tx: Queryable, projectId: string): Promise<void> {
  await tx.query(`SELECT pg_advisory_xact_lock_shared(${ERASE_LOCK})`, [projectId]);
}

export async function takeEraseLock(tx: Queryable, projectId: string): Promise<void> {
  await tx.query(`SELECT pg_advisory_xact_lock(${ERASE_LOCK})`, [projectId]);
}
