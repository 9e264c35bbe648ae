// SQL for the audit log (compliance_audit): rows written in batches, the tombstone of a hard
// delete, the listing, and the pruning of old rows.
import type { Queryable } from '../platform/db.js';
import { storableText } from '../platform/input-guard.js';
import { Conditions, iso } from '../platform/sql.js';
import type { AuditRow } from './schemas.js';
import { appendTo } from '../platform/collections.js';

export interface NewAuditRow {
  id: string;
  projectId: string;
  at: Date;
  keyId: string | null;
  keyName: string | null;
  eventType: string;
  subjectKind: string | null;
  subjectRef: string | null;
  query: string | null;
  memoryIds: readonly string[];
  resultCount: number;
  metadata: Record<string, unknown>;
}

/**
 * Text Postgres can hold: no NUL character (text and jsonb refuse it) and no lone surrogate (jsonb
 * refuses it); a caller's bytes are recorded as near as the database allows, never refused.
 */
const storable = (_key: string, value: unknown) => (typeof value === 'string' ? storableText(value) : value);

/** Many rows in one statement (the log's group commit). */
export async function insertAuditRows(db: Queryable, rows: readonly NewAuditRow[]): Promise<void> {
  await db.query(
    `INSERT INTO compliance_audit (project_id, id, created_at, key_id, key_name, event_type, subject_kind, subject_ref, query, memory_ids, result_count, metadata)
     SELECT r.project_id, r.id, r.created_at, r.key_id, r.key_name, r.event_type, r.subject_kind, r.subject_ref, r.query,
            coalesce(ARRAY(SELECT jsonb_array_elements_text(r.memory_ids)), '{}'), r.result_count, r.metadata
       FROM jsonb_to_recordset($1::jsonb) AS r(project_id text, id text, created_at timestamptz, key_id text, key_name text, event_type text, subject_kind text,
                                              subject_ref text, query text, memory_ids jsonb, result_count integer, metadata jsonb)`,
    [
      JSON.stringify(
        rows.map((r) => ({
          project_id: r.projectId,
          id: r.id,
          created_at: r.at.toISOString(),
          key_id: r.keyId,
          key_name: r.keyName,
          event_type: r.eventType,
          subject_kind: r.subjectKind,
          subject_ref: r.subjectRef,
          query: r.query,
          memory_ids: r.memoryIds,
          result_count: r.resultCount,
          metadata: r.metadata,
        })),
        storable,
      ),
    ],
  );
}

/** A call's outcome, for its row. */
export interface AuditOutcomeRow {
  id: string;
  projectId: string;
  resultCount: number;
  memoryIds: readonly string[];
  metadata: Record<string, unknown>;
}

/**
 * Many outcomes, one statement per project: each row gets its counts and loses its `incomplete`
 * mark. Per project, so that each statement stays on the project's rows (one shard on Citus).
 */
export async function completeAuditRows(db: Queryable, rows: readonly AuditOutcomeRow[]): Promise<void> {
  const byProject = new Map<string, AuditOutcomeRow[]>();
  for (const row of rows) appendTo(byProject, row.projectId, row);
  for (const [projectId, outcomes] of byProject) {
    await db.query(
      `UPDATE compliance_audit a
          SET result_count = r.result_count,
              memory_ids = coalesce(ARRAY(SELECT jsonb_array_elements_text(r.memory_ids)), '{}'),
              metadata = (a.metadata - 'incomplete') || r.metadata
         FROM jsonb_to_recordset($2::jsonb) AS r(id text, result_count integer, memory_ids jsonb, metadata jsonb)
        WHERE a.project_id = $1 AND a.id = r.id`,
      [projectId, JSON.stringify(outcomes.map((r) => ({ id: r.id, result_count: r.resultCount, memory_ids: r.memoryIds, metadata: r.metadata })), storable)],
    );
  }
}

/** After a hard delete: the subject's earlier rows keep who, when and what kind of call, not the query text. */
export async function redactSubjectQueries(tx: Queryable, projectId: string, subjectRef: string): Promise<number> {
  const { rowCount } = await tx.query(
    `UPDATE compliance_audit SET query = NULL, metadata = metadata || '{"queryRedacted": true}'::jsonb
      WHERE project_id = $1 AND subject_ref = $2 AND query IS NOT NULL`,
    [projectId, subjectRef],
  );
  return rowCount;
}

export interface AuditFilter {
  subjectKind?: string;
  subjectRef?: string;
  actor?: string;
  eventTypes?: readonly string[];
  since?: string;
  before?: string;
  limit: number;
}

interface AuditDbRow {
  id: string;
  created_at: Date | string;
  key_id: string | null;
  key_name: string | null;
  event_type: string;
  subject_kind: string | null;
  subject_ref: string | null;
  query: string | null;
  memory_ids: string[];
  result_count: number;
  metadata: Record<string, unknown>;
}

export async function listAudit(db: Queryable, projectId: string, filter: AuditFilter): Promise<AuditRow[]> {
  const c = new Conditions();
  c.add('project_id = ?', projectId);
  if (filter.subjectRef !== undefined) c.add('subject_ref = ?', filter.subjectRef);
  else if (filter.subjectKind !== undefined) c.add('subject_kind = ?', filter.subjectKind);
  if (filter.actor !== undefined) c.add('(key_id = ? OR key_name = ?)', filter.actor);
  if (filter.eventTypes !== undefined) c.add('event_type = ANY(?::text[])', filter.eventTypes);
  if (filter.since !== undefined) c.add('created_at > ?::timestamptz', filter.since);
  else if (filter.before !== undefined) c.add('id < ?', filter.before);
  const order = filter.since !== undefined ? 'created_at, id' : 'id DESC';
  const { rows } = await db.query<AuditDbRow>(
    `SELECT id, created_at, key_id, key_name, event_type, subject_kind, subject_ref, query, memory_ids, result_count, metadata
       FROM compliance_audit WHERE ${c.sql} ORDER BY ${order} LIMIT ${c.param(filter.limit)}`,
    c.params,
  );
  return rows.map((r) => ({
    id: r.id,
    created: iso(r.created_at),
    actor: r.key_id,
    actorName: r.key_name,
    eventType: r.event_type,
    subjectKind: r.subject_kind,
    subjectRef: r.subject_ref,
    query: r.query,
    memoryIds: r.memory_ids.length === 0 ? null : r.memory_ids.join(','),
    resultCount: r.result_count,
    metadata: r.metadata,
  }));
}

/** Rows older than the retention, except tombstones (the record that an erasure happened is kept). */
export async function pruneAudit(db: Queryable, olderThanDays: number): Promise<number> {
  const { rowCount } = await db.query(
    `DELETE FROM compliance_audit WHERE created_at < now() - ($1::int * interval '1 day') AND event_type <> 'subject.hard_delete'`,
    [olderThanDays],
  );
  return rowCount;
}
