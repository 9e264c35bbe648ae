// A subject's activity, the one reader every behaviour model uses: its events (the event log,
// less the engine's own), its activity memories (type event, or any memory with
// metadata.eventType) and its accepted typed observations, bounded by a lookback, each read on an
// index that starts with (project, subject). An activity's type is the event type, the memory's
// metadata.eventType (else its category), or the observation's attribute key.
import { ENGINE_EVENT_TYPES } from '../../events/schemas.js';
import type { Subject } from '../../platform/common-schemas.js';
import type { Queryable } from '../../platform/db.js';

/**
 * The predicate of the events_activity index (migrations/0022), repeated verbatim so the planner uses
 * it: the event types the engine appends itself are not the subject's activity.
 */
const ACTIVITY_EVENT = `e.subject_kind IS NOT NULL AND e.event_type NOT IN (${Object.values(ENGINE_EVENT_TYPES).map((t) => `'${t}'`).join(', ')})`;

/** The predicate of migrations/0007's memories_activity index, repeated verbatim so the planner uses it. */
export const ACTIVITY_MEMORY = `m.subject_kind IS NOT NULL AND (m.type = 'event' OR m.metadata ? 'eventType') AND m.type NOT IN ('behavior_pattern', 'decision', 'outcome', 'estimate', 'insight')`;

export type ActivitySource = 'memory' | 'event' | 'observation';

export interface Activity {
  id: string;
  source: ActivitySource;
  /** The event type, a memory's metadata.eventType, or the attribute key; null for a memory without one. */
  eventType: string | null;
  /** A memory's category. */
  category: string | null;
  /** A memory's text (for matching a target type by substring); null for events and observations. */
  content: string | null;
  /** ms since the epoch. */
  at: number;
  /** A typed observation's numeric value (a reading). */
  value: number | null;
  /**
   * A monetary amount: metadata/payload amount, value or price of a memory or event, or the value of
   * an observation whose attribute's unit is a currency code (three capital letters, e.g. USD).
   */
  amount: number | null;
  /** The entity the activity names (metadata/payload `entity`, `product` or `item`; a categorical observation's value). */
  entity: string | null;
}

export interface SubjectActivity {
  subject: Subject;
  activities: Activity[];
}

/** A JSON object's first numeric field among amount, value, price, as SQL over `col`. */
const amountOf = (col: string) =>
  `coalesce(CASE WHEN jsonb_typeof(${col}->'amount') = 'number' THEN (${col}->>'amount')::float8 END,
            CASE WHEN jsonb_typeof(${col}->'value') = 'number' THEN (${col}->>'value')::float8 END,
            CASE WHEN jsonb_typeof(${col}->'price') = 'number' THEN (${col}->>'price')::float8 END)`;
const entityOf = (col: string) => `coalesce(${col}->>'entity', ${col}->>'product', ${col}->>'item')`;

interface ActivityRow {
  subject_kind: string;
  subject_external_id: string;
  id: string;
  source: ActivitySource;
  event_type: string | null;
  category: string | null;
  content: string | null;
  /** Epoch milliseconds (with the microseconds as a fraction). */
  at: number;
  value: number | null;
  amount: number | null;
  entity: string | null;
}

/** An observation's value counts as money when its attribute's unit is a currency code. */
const OBSERVATION_AMOUNT = `CASE WHEN ta.unit ~ '^[A-Z]{3}$' THEN o.value_numeric END`;

/**
 * Every activity of the project, or of the subjects in the relation `s(kind, ext)`, with observed
 * time in [$since, $until): one row shape for the three sources (the columns of ActivityRow).
 * `$1` is the project.
 */
function activityUnion(scope: 'project' | 'subjects', since: string, until: string): string {
  // The subjects' rows by their (project, subject, ...) indexes, or the project's.
  const from = (table: string, a: string) =>
    scope === 'subjects' ? `s JOIN ${table} ${a} ON ${a}.project_id = $1 AND ${a}.subject_kind = s.kind AND ${a}.subject_external_id = s.ext` : table + ' ' + a;
  const project = (a: string) => (scope === 'project' ? `${a}.project_id = $1 AND ` : '');
  return `SELECT m.subject_kind, m.subject_external_id, m.id, 'memory' AS source, m.metadata->>'eventType' AS event_type, m.category, m.content,
                 m.valid_from AS at, NULL::float8 AS value, ${amountOf('m.metadata')} AS amount, ${entityOf('m.metadata')} AS entity
            FROM ${from('memory_read', 'm')}
           WHERE ${project('m')}${ACTIVITY_MEMORY} AND m.status IN ('pending', 'confirmed') AND m.valid_from >= ${since} AND m.valid_from < ${until}
          UNION ALL
          SELECT e.subject_kind, e.subject_external_id, e.id, 'event', e.event_type, NULL, NULL, e.occurred_at,
                 NULL, ${amountOf('e.payload')}, ${entityOf('e.payload')}
            FROM ${from('event_read', 'e')}
           WHERE ${project('e')}${ACTIVITY_EVENT} AND e.occurred_at >= ${since} AND e.occurred_at < ${until}
          UNION ALL
          SELECT o.subject_kind, o.subject_external_id, o.id, 'observation', o.attribute_key, NULL, NULL, o.observed_at,
                 o.value_numeric, ${OBSERVATION_AMOUNT}, o.value_text
            FROM ${from('typed_observation_read', 'o')}
            LEFT JOIN typed_attribute_read ta ON ta.project_id = o.project_id AND ta.attribute_key = o.attribute_key
           WHERE ${project('o')}o.subject_kind IS NOT NULL AND o.status = 'accepted' AND o.observed_at >= ${since} AND o.observed_at < ${until}`;
}

/**
 * The activity of many subjects since `since` (inclusive) up to `until` (exclusive), oldest first
 * per subject; subjects with none come back with an empty list, in the order asked.
 */
export async function readActivity(db: Queryable, projectId: string, subjects: readonly Subject[], since: Date, until: Date): Promise<SubjectActivity[]> {
  if (subjects.length === 0) return [];
  // Times come as epoch milliseconds: parsing a timestamptz into a Date was a quarter of the event
  // loop's time for a read of many activities.
  const { rows } = await db.query<ActivityRow>(
    `WITH s AS MATERIALIZED (SELECT DISTINCT kind, ext FROM unnest($2::text[], $3::text[]) AS s(kind, ext))
     SELECT a.subject_kind, a.subject_external_id, a.id, a.source, a.event_type, a.category, a.content,
            (extract(epoch FROM a.at) * 1000)::float8 AS at, a.value, a.amount, a.entity
       FROM (${activityUnion('subjects', '$4', '$5')}) a`,
    [projectId, subjects.map((s) => s.kind), subjects.map((s) => s.externalId), since, until],
  );
  const bySubject = new Map<string, Activity[]>();
  for (const r of rows) {
    const key = `${r.subject_kind}\0${r.subject_external_id}`;
    let list = bySubject.get(key);
    if (!list) bySubject.set(key, (list = []));
    list.push({
      id: r.id,
      source: r.source,
      eventType: r.event_type,
      category: r.category,
      content: r.content,
      at: Math.floor(r.at),
      value: r.value === null ? null : Number(r.value),
      amount: r.amount === null ? null : Number(r.amount),
      entity: r.entity,
    });
  }
  return subjects.map((subject) => {
    const activities = bySubject.get(`${subject.kind}\0${subject.externalId}`) ?? [];
    activities.sort((a, b) => a.at - b.at || (a.id < b.id ? -1 : 1));
    return { subject, activities };
  });
}

/** Activities closer than this to the one before them continue its occurrence (a burst, a session). */
export const SAME_OCCURRENCE_MS = 3_600_000;

/**
 * The activities (oldest first) that start an occurrence: more than an hour after the activity
 * before them. The project-wide summary (summariseProject) counts by the same rule in SQL.
 */
export function occurrenceStarts(activities: readonly Activity[]): Activity[] {
  return activities.filter((a, i) => i === 0 || a.at - activities[i - 1]!.at >= SAME_OCCURRENCE_MS);
}

/**
 * Whether an activity is of the target type (WIRE.md): its own type (event type, metadata.eventType,
 * attribute key) when it has one, else its category, else a case-insensitive substring of its text.
 * An empty target matches every activity.
 */
export function matchesType(activity: Activity, target: string | undefined): boolean {
  if (target === undefined || target === '') return true;
  const wanted = target.toLowerCase();
  if (activity.eventType !== null) return activity.eventType.toLowerCase() === wanted;
  if (activity.category !== null) return activity.category.toLowerCase() === wanted;
  return activity.content?.toLowerCase().includes(wanted) ?? false;
}

/** The SQL twin of matchesType over the union's columns, for project-wide aggregates. */
function typeMatchSql(param: string): string {
  return `(${param}::text IS NULL OR ${param} = '' OR
           CASE WHEN event_type IS NOT NULL THEN lower(event_type) = lower(${param})
                WHEN category IS NOT NULL THEN lower(category) = lower(${param})
                ELSE strpos(lower(content), lower(${param})) > 0 END)`;
}

export interface SubjectSummary {
  subject: Subject;
  /** Distinct occurrences (activities within an hour of the previous one count once) of the type. */
  count: number;
  first: number;
  last: number;
  /** Summed monetary amounts (null when no activity carried one). */
  monetary: number | null;
}

/**
 * Every subject's activity of one type since `since`, summarised (count, first, last, summed amount)
 * in the database: the project-wide input of BG/NBD and of RFM quintiles. Activities within an
 * hour of the subject's previous one are one occurrence (occurrenceStarts is the same rule).
 */
export async function summariseProject(db: Queryable, projectId: string, eventType: string | undefined, since: Date, until: Date): Promise<SubjectSummary[]> {
  const { rows } = await db.query<{ subject_kind: string; subject_external_id: string; n: string; first: Date; last: Date; monetary: number | null }>(
    `WITH a AS (${activityUnion('project', '$3', '$4')}
     ), t AS (
       SELECT subject_kind, subject_external_id, at, amount,
              at - lag(at) OVER (PARTITION BY subject_kind, subject_external_id ORDER BY at) AS gap
         FROM a WHERE ${typeMatchSql('$2')}
     )
     SELECT subject_kind, subject_external_id,
            count(*) FILTER (WHERE gap IS NULL OR gap >= interval '1 hour') AS n,
            min(at) AS first, max(at) AS last, sum(amount) AS monetary
       FROM t GROUP BY subject_kind, subject_external_id`,
    [projectId, eventType ?? null, since, until],
  );
  return rows.map((r) => ({
    subject: { kind: r.subject_kind, externalId: r.subject_external_id },
    count: Number(r.n),
    first: new Date(r.first).getTime(),
    last: new Date(r.last).getTime(),
    monetary: r.monetary === null ? null : Number(r.monetary),
  }));
}

/** Subjects with any activity since `since`: the subjects a whole-project mining reads. */
export async function subjectsWithActivity(db: Queryable, projectId: string, since: Date): Promise<Subject[]> {
  const { rows } = await db.query<{ subject_kind: string; subject_external_id: string }>(
    `SELECT DISTINCT subject_kind, subject_external_id FROM (${activityUnion('project', '$2', "'infinity'")}) a ORDER BY 1, 2`,
    [projectId, since],
  );
  return rows.map((r) => ({ kind: r.subject_kind, externalId: r.subject_external_id }));
}
