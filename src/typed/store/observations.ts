// SQL for typed_observations: accepted and quarantined rows, inserted in bulk and listed.
import { FAST_INSERT_MIN_ROWS, fastUnlessConflict, type Queryable } from '../../platform/db.js';
import { Conditions, iso } from '../../platform/sql.js';
import type { Observation, ObservationStatus } from '../schemas.js';
import type { CheckedRow } from '../validate.js';
import { keyColumns, keyOf, type AccumulatorKey } from './accumulators.js';

export async function hasObservations(db: Queryable, projectId: string, attributeKey: string): Promise<boolean> {
  const { rows } = await db.query('SELECT 1 FROM typed_observations WHERE project_id = $1 AND attribute_key = $2 AND status = $3 LIMIT 1', [projectId, attributeKey, 'accepted']);
  return rows.length > 0;
}

/**
 * Inserts the rows; an existing (or same-batch) row with the same id or dedupe hash makes a row
 * skip. Rows go in dedupe-hash order, so two batches holding the same rows wait for each other
 * instead of deadlocking. Answers `id|hash` of each inserted row.
 */
export async function insertObservations(db: Queryable, projectId: string, rows: readonly CheckedRow[], options: { optimistic?: boolean } = {}): Promise<Set<string>> {
  if (rows.length === 0) return new Set();
  const safe = async () => {
    const { rows: inserted } = await db.query<{ id: string; dedupe_hash: string }>(`${insertStatement} ON CONFLICT DO NOTHING RETURNING id, dedupe_hash`, columnsOf(projectId, rows));
    return new Set(inserted.map((r) => insertedKey(r.id, r.dedupe_hash)));
  };
  // Most batches repeat nothing: try without ON CONFLICT (far cheaper in bulk), redo with it on a
  // clash. Without ON CONFLICT a statement that succeeds inserted every row, so nothing comes back.
  const fast = async () => {
    await db.query(insertStatement, columnsOf(projectId, rows));
    return new Set(rows.map((r) => insertedKey(r.id, r.dedupeHash)));
  };
  return options.optimistic && rows.length >= FAST_INSERT_MIN_ROWS ? fastUnlessConflict(db, fast, safe) : safe();
}

// One array a column (node-postgres writes each as an array literal): cheaper for Postgres to read
// than a JSON document of the rows.
const insertStatement = `INSERT INTO typed_observations (project_id, id, attribute_key, subject_kind, subject_external_id, value_numeric, value_text, value_bool,
       value_ts, observed_at, source, trust, status, quarantine_reason, raw, dedupe_hash)
     SELECT $1, r.id, r.attribute_key, r.subject_kind, r.subject_external_id, r.value_numeric, r.value_text, r.value_bool,
       r.value_ts, r.observed_at, r.source, r.trust, r.status, r.reason, r.raw::jsonb, r.dedupe_hash
     FROM unnest($2::text[], $3::text[], $4::text[], $5::text[], $6::float8[], $7::text[], $8::boolean[], $9::timestamptz[], $10::timestamptz[],
       $11::text[], $12::float8[], $13::text[], $14::text[], $15::text[], $16::text[])
       AS r(id, attribute_key, subject_kind, subject_external_id, value_numeric, value_text, value_bool, value_ts, observed_at, source, trust, status, reason, raw, dedupe_hash)
     ORDER BY r.dedupe_hash COLLATE "C"`;

/**
 * The statement's parameters: the project, then one array a column, built in one pass. A column
 * null in every row goes as NULL rather than an array of NULLs (a shorter text to write and parse):
 * unnest of several arrays pads the missing values with NULL.
 */
function columnsOf(projectId: string, rows: readonly CheckedRow[]): unknown[] {
  const n = rows.length;
  const columns = Array.from({ length: 15 }, () => new Array<unknown>(n));
  for (let i = 0; i < n; i++) {
    const r = rows[i]!;
    columns[0]![i] = r.id;
    columns[1]![i] = r.attributeKey;
    columns[2]![i] = r.subjectKind;
    columns[3]![i] = r.subjectExternalId;
    columns[4]![i] = r.valueNumeric;
    columns[5]![i] = r.valueText;
    columns[6]![i] = r.valueBool;
    columns[7]![i] = r.valueTs;
    columns[8]![i] = r.observedAt;
    columns[9]![i] = r.source;
    columns[10]![i] = r.trust;
    columns[11]![i] = r.status;
    columns[12]![i] = r.reason;
    columns[13]![i] = r.raw === null ? null : JSON.stringify(r.raw);
    columns[14]![i] = r.dedupeHash;
  }
  return [projectId, ...columns.map((column) => (column.every((value) => value === null) ? null : column))];
}

export const insertedKey = (id: string, dedupeHash: string) => `${id}|${dedupeHash}`;

/** Which of these dedupe hashes are stored. */
export async function existingHashes(db: Queryable, projectId: string, hashes: readonly string[]): Promise<Set<string>> {
  if (hashes.length === 0) return new Set();
  const { rows } = await db.query<{ dedupe_hash: string }>(
    'SELECT dedupe_hash FROM typed_observations WHERE project_id = $1 AND dedupe_hash = ANY($2::text[])',
    [projectId, hashes],
  );
  return new Set(rows.map((r) => r.dedupe_hash));
}

interface ObservationRow {
  project_id: string;
  id: string;
  attribute_key: string | null;
  subject_kind: string | null;
  subject_external_id: string | null;
  value_numeric: number | null;
  value_text: string | null;
  value_bool: boolean | null;
  value_ts: Date | null;
  observed_at: Date | null;
  source: string | null;
  trust: number;
  status: ObservationStatus;
  quarantine_reason: string | null;
  raw: unknown;
  created_at: Date;
}

function toObservation(row: ObservationRow): Observation {
  return {
    id: row.id,
    projectId: row.project_id,
    attributeKey: row.attribute_key,
    subjectKind: row.subject_kind,
    subjectExternalId: row.subject_external_id,
    valueNumeric: row.value_numeric,
    valueText: row.value_text,
    valueBool: row.value_bool,
    valueTs: iso(row.value_ts),
    observedAt: iso(row.observed_at),
    source: row.source,
    trust: row.trust,
    qualityScore: row.trust,
    status: row.status,
    quarantineReason: row.quarantine_reason,
    raw: row.raw ?? null,
    created: iso(row.created_at)!,
  };
}

export interface ObservationFilter {
  subjectKind?: string;
  subjectExternalId?: string;
  attributeKey?: string;
  since?: string;
  until?: string;
  minValue?: number;
  maxValue?: number;
  status?: ObservationStatus;
  limit: number;
  offset: number;
}

/** Newest observed first (rows without a time, all quarantined, last). */
export async function listObservations(db: Queryable, projectId: string, filter: ObservationFilter): Promise<Observation[]> {
  const where = new Conditions([projectId])
    .add('project_id = $1')
    .add('subject_kind = ?', filter.subjectKind)
    .add('subject_external_id = ?', filter.subjectExternalId)
    .add('attribute_key = ?', filter.attributeKey)
    .add('observed_at >= ?::timestamptz', filter.since)
    .add('observed_at < ?::timestamptz', filter.until)
    .add('value_numeric >= ?', filter.minValue)
    .add('value_numeric <= ?', filter.maxValue)
    .add('status = ?', filter.status);
  const { rows } = await db.query<ObservationRow>(
    `SELECT * FROM typed_observations WHERE ${where.sql}
     ORDER BY observed_at DESC NULLS LAST, id DESC LIMIT ${where.param(filter.limit)} OFFSET ${where.param(filter.offset)}`,
    where.params,
  );
  return rows.map(toObservation);
}

/** Every accepted numeric point of these keys, for rebuilding the EWMA after late data. */
export async function loadSeries(
  db: Queryable,
  projectId: string,
  keys: readonly AccumulatorKey[],
): Promise<Map<string, { id: string; value: number; observedAt: number }[]>> {
  const { rows } = await db.query<{ subject_kind: string; subject_external_id: string; attribute_key: string; id: string; value_numeric: number; observed_at: Date }>(
    `SELECT o.subject_kind, o.subject_external_id, o.attribute_key, o.id, o.value_numeric, o.observed_at
     FROM typed_observations o
     JOIN unnest($2::text[], $3::text[], $4::text[]) AS k(kind, ext, attr)
       ON o.subject_kind = k.kind AND o.subject_external_id = k.ext AND o.attribute_key = k.attr
     WHERE o.project_id = $1 AND o.status = 'accepted' AND o.value_numeric IS NOT NULL`,
    [projectId, ...keyColumns(keys)],
  );
  const series = new Map<string, { id: string; value: number; observedAt: number }[]>();
  for (const r of rows) {
    const key = keyOf({ subjectKind: r.subject_kind, subjectExternalId: r.subject_external_id, attributeKey: r.attribute_key });
    const list = series.get(key) ?? [];
    list.push({ id: r.id, value: r.value_numeric, observedAt: new Date(r.observed_at).getTime() });
    series.set(key, list);
  }
  return series;
}

/** The observations of the project among `ids` (any status): what a decision may cite. */
export async function existingObservationIds(db: Queryable, projectId: string, ids: readonly string[]): Promise<Set<string>> {
  if (ids.length === 0) return new Set();
  const { rows } = await db.query<{ id: string }>('SELECT id FROM typed_observations WHERE project_id = $1 AND id = ANY($2::text[])', [projectId, [...new Set(ids)]]);
  return new Set(rows.map((r) => r.id));
}

/** What a typed.observation event is built from: an accepted numeric observation. */
export interface EventSource {
  id: string;
  attributeKey: string;
  subjectKind: string;
  subjectExternalId: string;
  value: number;
  /** ISO 8601, millisecond precision. */
  observedAt: string;
  source: string | null;
}

/** The accepted numeric observations among `ids`, in the order of `ids`. */
export async function eventSources(db: Queryable, projectId: string, ids: readonly string[]): Promise<EventSource[]> {
  if (ids.length === 0) return [];
  const { rows } = await db.query<{ id: string; attribute_key: string; subject_kind: string; subject_external_id: string; value_numeric: number; observed_at: Date; source: string | null }>(
    `SELECT id, attribute_key, subject_kind, subject_external_id, value_numeric, observed_at, source FROM typed_observations
      WHERE project_id = $1 AND id = ANY($2::text[]) AND status = 'accepted' AND value_numeric IS NOT NULL`,
    [projectId, ids],
  );
  const order = new Map(ids.map((id, i) => [id, i]));
  return rows
    .sort((a, b) => order.get(a.id)! - order.get(b.id)!)
    .map((r) => ({
      id: r.id,
      attributeKey: r.attribute_key,
      subjectKind: r.subject_kind,
      subjectExternalId: r.subject_external_id,
      value: Number(r.value_numeric),
      observedAt: r.observed_at.toISOString(),
      source: r.source,
    }));
}
