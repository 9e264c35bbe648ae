// What a contact's context reads (GET /lattice/contacts/{contactId}/context): the subjects with
// the contact's externalId, their event log, their activity and other memories, and the latest
// typed readings that fill the contact card, each as it stood at an instant.
import type { Subject } from '../../platform/common-schemas.js';
import type { Queryable } from '../../platform/db.js';
import { iso } from '../../platform/sql.js';
import { ACTIVITY_MEMORY } from '../activity/store.js';

/** At most this many subjects (kinds) share one contact id in a context. */
const MAX_SUBJECTS = 20;

/** The subjects whose externalId is the contact id (of `kind` only, when given), by kind. */
export async function contactSubjects(db: Queryable, projectId: string, contactId: string, kind: string | undefined): Promise<Subject[]> {
  const own = (table: string) => `SELECT subject_kind, subject_external_id FROM ${table} WHERE project_id = $1 AND subject_external_id = $2 AND subject_kind IS NOT NULL AND ($3::text IS NULL OR subject_kind = $3)`;
  const { rows } = await db.query<{ subject_kind: string }>(
    `SELECT DISTINCT s.subject_kind FROM (${own('memory_read')} UNION ${own('event_read')} UNION ${own('typed_observation_read')}) s ORDER BY 1 LIMIT ${MAX_SUBJECTS}`,
    [projectId, contactId, kind ?? null],
  );
  return rows.map((r) => ({ kind: r.subject_kind, externalId: contactId }));
}

const subjectIn = (alias: string) => `(${alias}.subject_kind, ${alias}.subject_external_id) IN (SELECT * FROM unnest($2::text[], $3::text[]))`;
const subjectParams = (subjects: readonly Subject[]) => [subjects.map((s) => s.kind), subjects.map((s) => s.externalId)];
/** A live memory as it stood at $4. */
const LIVE_AT = `m.status IN ('pending', 'confirmed') AND m.valid_from <= $4::timestamptz AND (m.valid_to IS NULL OR m.valid_to > $4::timestamptz) AND m.created_at <= $4::timestamptz`;

export interface ContactEvent {
  id: string;
  eventType: string;
  title: string;
  occurredAt: string;
  data?: Record<string, unknown>;
}

/** The newest events of the log and activity memories of these subjects up to `at`, newest first, at most `limit`. */
export async function recentEvents(db: Queryable, projectId: string, subjects: readonly Subject[], at: Date, limit: number): Promise<ContactEvent[]> {
  const params = [projectId, ...subjectParams(subjects), at.toISOString(), limit];
  const [logged, remembered] = await Promise.all([
    db.query<{ id: string; event_type: string; payload: Record<string, unknown>; occurred_at: Date }>(
      `SELECT e.id, e.event_type, e.payload, e.occurred_at FROM event_read e
        WHERE e.project_id = $1 AND ${subjectIn('e')} AND e.occurred_at <= $4::timestamptz
        ORDER BY e.occurred_at DESC, e.id DESC LIMIT $5`,
      params,
    ),
    db.query<{ id: string; content: string; category: string | null; metadata: Record<string, unknown> | null; valid_from: Date }>(
      `SELECT m.id, m.content, m.category, m.metadata, m.valid_from FROM memory_read m
        WHERE m.project_id = $1 AND ${subjectIn('m')} AND ${ACTIVITY_MEMORY} AND ${LIVE_AT}
        ORDER BY m.valid_from DESC, m.id DESC LIMIT $5`,
      params,
    ),
  ]);
  const events: ContactEvent[] = [
    ...logged.rows.map((e) => {
      const title = typeof e.payload.title === 'string' ? e.payload.title : typeof e.payload.name === 'string' ? e.payload.name : e.event_type;
      return { id: e.id, eventType: e.event_type, title, occurredAt: iso(e.occurred_at), data: e.payload };
    }),
    ...remembered.rows.map((m) => {
      const eventType = typeof m.metadata?.eventType === 'string' ? m.metadata.eventType : (m.category ?? 'event');
      return { id: m.id, eventType, title: m.content.length > 200 ? `${m.content.slice(0, 199)}…` : m.content, occurredAt: iso(m.valid_from), ...(m.metadata ? { data: m.metadata } : {}) };
    }),
  ];
  return events.sort((a, b) => (a.occurredAt < b.occurredAt ? 1 : a.occurredAt > b.occurredAt ? -1 : a.id < b.id ? 1 : -1)).slice(0, limit);
}

export interface ContactMemory {
  id: string;
  content: string;
  importance: number;
  scope: string;
  type: string;
  created: string;
}

/** The newest memories of these subjects at `at` that are neither activity nor mined patterns, at most `limit`. */
export async function recentMemories(db: Queryable, projectId: string, subjects: readonly Subject[], at: Date, limit: number): Promise<ContactMemory[]> {
  const { rows } = await db.query<{ id: string; content: string; importance: number; scope: string; type: string; created_at: Date }>(
    `SELECT m.id, m.content, m.importance, m.scope, m.type, m.created_at FROM memory_read m
      WHERE m.project_id = $1 AND ${subjectIn('m')} AND (${ACTIVITY_MEMORY}) IS NOT TRUE AND m.type <> 'behavior_pattern' AND ${LIVE_AT}
      ORDER BY m.created_at DESC, m.id DESC LIMIT $5`,
    [projectId, ...subjectParams(subjects), at.toISOString(), limit],
  );
  return rows.map((r) => ({ id: r.id, content: r.content, importance: Number(r.importance), scope: r.scope, type: r.type, created: iso(r.created_at) }));
}

/** The latest accepted reading up to `at` of each of these attributes of these subjects, as text. */
export async function latestReadings(db: Queryable, projectId: string, subjects: readonly Subject[], keys: readonly string[], at: Date): Promise<Map<string, string>> {
  const { rows } = await db.query<{ attribute_key: string; value: string | null }>(
    `SELECT DISTINCT ON (o.attribute_key) o.attribute_key, coalesce(o.value_text, o.value_numeric::text, o.value_bool::text) AS value
       FROM typed_observation_read o
      WHERE o.project_id = $1 AND ${subjectIn('o')} AND o.status = 'accepted' AND o.attribute_key = ANY($5::text[]) AND o.observed_at <= $4::timestamptz
      ORDER BY o.attribute_key, o.observed_at DESC, o.id DESC`,
    [projectId, ...subjectParams(subjects), at.toISOString(), keys],
  );
  return new Map(rows.flatMap((r) => (r.value === null ? [] : [[r.attribute_key, r.value]])));
}
