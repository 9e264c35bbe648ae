// SQL for the event log. occurredAt comes from one clock of microseconds (migration 0015) that no
// transaction holds past the call, so appends of a project never wait on each other; a poller
// pages only below the event horizon, the instant before which every event has committed, so
// paging by the last occurredAt never misses one that commits later with an earlier time.
import { FAST_INSERT_MIN_ROWS, fastUnlessConflict, type Queryable } from '../platform/db.js';
import { newId } from '../platform/ids.js';
import { Conditions } from '../platform/sql.js';
import { SUBJECT_WHERE, type SubjectTable } from '../platform/subject-data.js';
import type { LoggedEvent, NewEvent, Severity } from './schemas.js';

/** timestamptz as ISO 8601 with microseconds, in UTC. */
export const ISO_MICROS = (column: string) => `to_char(${column} AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.US"Z"')`;

interface EventRow {
  id: string;
  event_type: string;
  subject_kind: string | null;
  subject_external_id: string | null;
  severity: Severity;
  payload: Record<string, unknown>;
  source_memory_ids: string[];
  source_pattern_id: string | null;
  emitted_by_pack: string | null;
  dedupe_key: string;
  occurred_at: string;
}

const COLUMNS = `id, event_type, subject_kind, subject_external_id, severity, payload, source_memory_ids, source_pattern_id, emitted_by_pack, dedupe_key,
  ${ISO_MICROS('occurred_at')} AS occurred_at`;

function toEvent(row: EventRow): LoggedEvent {
  return {
    id: row.id,
    eventType: row.event_type,
    subject: row.subject_kind === null || row.subject_external_id === null ? null : { kind: row.subject_kind, externalId: row.subject_external_id },
    severity: row.severity,
    payload: row.payload,
    sourceMemoryIds: row.source_memory_ids,
    sourcePatternId: row.source_pattern_id,
    emittedByPack: row.emitted_by_pack,
    dedupeKey: row.dedupe_key,
    occurredAt: row.occurred_at,
  };
}

/**
 * Appends events in order, one microsecond apart from the clock; an event whose dedupeKey exists
 * is skipped. Answers the appended events. Call it late in a transaction: until it commits, the
 * project's pollers read only the events older than its start (the event horizon). The rows travel as one JSON parameter (cheaper to encode
 * than ten arrays) and only ids and times come back.
 *
 * `keysAreNew` (inside a transaction only): the caller's dedupe keys cannot exist yet (they name
 * rows it has just inserted), so the insert skips ON CONFLICT, which costs about a third of it;
 * should one exist after all, the insert is rolled back to a savepoint and redone with it.
 */
export async function appendEvents(db: Queryable, projectId: string, events: readonly NewEvent[], options: { keysAreNew?: boolean } = {}): Promise<LoggedEvent[]> {
  if (events.length === 0) return [];
  const safe = () => insertEvents(db, projectId, events, true);
  return options.keysAreNew && events.length >= FAST_INSERT_MIN_ROWS ? fastUnlessConflict(db, () => insertEvents(db, projectId, events, false), safe) : safe();
}

async function insertEvents(db: Queryable, projectId: string, events: readonly NewEvent[], skipExisting: boolean): Promise<LoggedEvent[]> {
  // Absent keys read as NULL in jsonb_to_recordset: empty and null fields are left out of the text.
  const rows = events.map((e, n) => ({
    n,
    id: newId('evt'),
    event_type: e.eventType,
    subject_kind: e.subject?.kind,
    subject_external_id: e.subject?.externalId,
    severity: e.severity,
    payload: e.payload,
    source_memory_ids: e.sourceMemoryIds.length > 0 ? e.sourceMemoryIds : undefined,
    source_pattern_id: e.sourcePatternId ?? undefined,
    emitted_by_pack: e.emittedByPack ?? undefined,
    dedupe_key: e.dedupeKey,
  }));
  const { rows: appended } = await db.query<{ id: string; occurred_at: string }>(
    `WITH clock AS MATERIALIZED (SELECT event_clock_take($1, $2::int) AS first_at)
     INSERT INTO events (id, project_id, event_type, subject_kind, subject_external_id, severity, payload, source_memory_ids,
       source_pattern_id, emitted_by_pack, dedupe_key, occurred_at)
     SELECT e.id, $1, e.event_type, e.subject_kind, e.subject_external_id, e.severity, e.payload, coalesce(e.source_memory_ids, '{}'),
       e.source_pattern_id, e.emitted_by_pack, e.dedupe_key, clock.first_at + e.n * interval '1 microsecond'
     FROM clock, jsonb_to_recordset($3::jsonb) AS e(n int, id text, event_type text, subject_kind text, subject_external_id text, severity text,
       payload jsonb, source_memory_ids text[], source_pattern_id text, emitted_by_pack text, dedupe_key text)
     ${skipExisting ? 'ON CONFLICT DO NOTHING' : ''}
     RETURNING id, ${ISO_MICROS('occurred_at')} AS occurred_at`,
    [projectId, events.length, JSON.stringify(rows)],
  );
  const times = new Map(appended.map((r) => [r.id, r.occurred_at]));
  return rows.flatMap((row, i) => {
    const occurredAt = times.get(row.id);
    if (occurredAt === undefined) return [];
    const event = events[i]!;
    return [{ id: row.id, ...event, occurredAt }];
  });
}

export async function findByDedupeKey(db: Queryable, projectId: string, dedupeKey: string): Promise<LoggedEvent | undefined> {
  const { rows } = await db.query<EventRow>(`SELECT ${COLUMNS} FROM events WHERE project_id = $1 AND dedupe_key = $2`, [projectId, dedupeKey]);
  return rows[0] && toEvent(rows[0]);
}

export async function getEvents(db: Queryable, projectId: string, ids: readonly string[]): Promise<LoggedEvent[]> {
  if (ids.length === 0) return [];
  const { rows } = await db.query<EventRow>(`SELECT ${COLUMNS} FROM events WHERE project_id = $1 AND id = ANY($2::text[])`, [projectId, ids]);
  return rows.map(toEvent);
}

export interface EventPage {
  since?: string;
  limit: number;
  eventTypes?: string[];
  subjectKind?: string;
  subjectExternalId?: string;
}

/**
 * Oldest first, strictly after `since`, and only below the event horizon: a page never holds an
 * event while an earlier one of the project may still commit. The horizon is read in a statement
 * before the page's, so the page's snapshot sees every writer that had left by then.
 */
export async function listEvents(db: Queryable, projectId: string, page: EventPage): Promise<LoggedEvent[]> {
  const { rows: [horizon] } = await db.query<{ at: string }>('SELECT event_horizon($1)::text AS at', [projectId]);
  const where = new Conditions([projectId])
    .add('project_id = $1')
    .add('occurred_at > ?::timestamptz', page.since)
    .add('occurred_at < ?::timestamptz', horizon!.at)
    .add('event_type = ANY(?::text[])', page.eventTypes)
    .add('subject_kind = ?', page.subjectKind)
    .add('subject_external_id = ?', page.subjectExternalId);
  const { rows } = await db.query<EventRow>(
    `SELECT ${COLUMNS} FROM events WHERE ${where.sql} ORDER BY events.occurred_at LIMIT ${where.param(page.limit)}`,
    where.params,
  );
  return rows.map(toEvent);
}

/** The events naming a subject (data-subject rights). */
export const SUBJECT_EVENTS: SubjectTable = {
  from: 'events',
  where: SUBJECT_WHERE,
  key: 'id',
  columns: 'id, event_type, subject_kind, subject_external_id, severity, payload, source_memory_ids, source_pattern_id, emitted_by_pack, dedupe_key, occurred_at',
};
