// SQL for typed attributes, observations, accumulators and queued ingest batches.
import { fastUnlessConflict, type Queryable } from '../platform/db.js';
import { Conditions, iso } from '../platform/sql.js';
import type { AccumulatorState } from './accumulator.js';
import type { Accumulator, Attribute, AttributeBody, DataType, Observation, ObservationInput, ObservationStatus } from './schemas.js';
import type { AttributeRule, CheckedRow } from './validate.js';


interface AttributeRow {
  id: string;
  project_id: string;
  attribute_key: string;
  data_type: DataType;
  unit: string | null;
  min_valid: number | null;
  max_valid: number | null;
  required: boolean;
  metadata: unknown;
  created_at: Date;
  updated_at: Date;
  created?: boolean;
}

function toAttribute(row: AttributeRow): Attribute {
  return {
    id: row.id,
    projectId: row.project_id,
    attributeKey: row.attribute_key,
    dataType: row.data_type,
    unit: row.unit,
    minValid: row.min_valid,
    maxValid: row.max_valid,
    required: row.required,
    metadata: row.metadata ?? null,
    metadataJson: row.metadata === null || row.metadata === undefined ? null : JSON.stringify(row.metadata),
    created: iso(row.created_at)!,
    updated: iso(row.updated_at)!,
  };
}

/** Creates the definition, or replaces every field of the existing one with the same key. */
export async function upsertAttribute(db: Queryable, id: string, projectId: string, body: AttributeBody): Promise<{ attribute: Attribute; created: boolean }> {
  const { rows } = await db.query<AttributeRow>(
    `INSERT INTO typed_attributes (id, project_id, attribute_key, data_type, unit, min_valid, max_valid, required, metadata)
     VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9::jsonb)
     ON CONFLICT (project_id, attribute_key) DO UPDATE SET
       data_type = EXCLUDED.data_type, unit = EXCLUDED.unit, min_valid = EXCLUDED.min_valid, max_valid = EXCLUDED.max_valid,
       required = EXCLUDED.required, metadata = EXCLUDED.metadata, updated_at = now()
     RETURNING *, (xmax = 0) AS created`,
    [
      id,
      projectId,
      body.attributeKey,
      body.dataType,
      body.unit ?? null,
      body.minValid ?? null,
      body.maxValid ?? null,
      body.required ?? false,
      body.metadata === undefined ? null : JSON.stringify(body.metadata),
    ],
  );
  const row = rows[0]!;
  return { attribute: toAttribute(row), created: row.created === true };
}

export async function getAttribute(db: Queryable, projectId: string, attributeKey: string): Promise<Attribute | undefined> {
  const { rows } = await db.query<AttributeRow>('SELECT * FROM typed_attributes WHERE project_id = $1 AND attribute_key = $2', [projectId, attributeKey]);
  return rows[0] && toAttribute(rows[0]);
}

export async function listAttributes(db: Queryable, projectId: string, query: { attributeKey?: string; limit: number; offset: number }): Promise<Attribute[]> {
  const where = new Conditions([projectId]).add('project_id = $1').add('attribute_key = ?', query.attributeKey);
  const { rows } = await db.query<AttributeRow>(
    `SELECT * FROM typed_attributes WHERE ${where.sql} ORDER BY attribute_key LIMIT ${where.param(query.limit)} OFFSET ${where.param(query.offset)}`,
    where.params,
  );
  return rows.map(toAttribute);
}

export async function hasObservations(db: Queryable, projectId: string, attributeKey: string): Promise<boolean> {
  const { rows } = await db.query('SELECT 1 FROM typed_observations WHERE project_id = $1 AND attribute_key = $2 AND status = $3 LIMIT 1', [projectId, attributeKey, 'accepted']);
  return rows.length > 0;
}

export async function loadRules(db: Queryable, projectId: string, keys: readonly string[]): Promise<Map<string, AttributeRule & { unit: string | null }>> {
  if (keys.length === 0) return new Map();
  const { rows } = await db.query<AttributeRow>('SELECT * FROM typed_attributes WHERE project_id = $1 AND attribute_key = ANY($2::text[])', [projectId, keys]);
  return new Map(rows.map((r) => [r.attribute_key, { dataType: r.data_type, minValid: r.min_valid, maxValid: r.max_valid, unit: r.unit }]));
}

/**
 * Inserts the rows; an existing (or same-batch) row with the same id or dedupe hash makes a row
 * skip. Rows go in dedupe-hash order, so two batches holding the same rows wait for each other
 * instead of deadlocking. Answers `id|hash` of each inserted row.
 */
export async function insertObservations(db: Queryable, projectId: string, rows: readonly CheckedRow[], options: { optimistic?: boolean } = {}): Promise<Set<string>> {
  if (rows.length === 0) return new Set();
  const safe = () => insertRows(db, projectId, rows, true);
  // Most batches repeat nothing: try without ON CONFLICT (far cheaper in bulk), redo with it on a clash.
  return options.optimistic ? fastUnlessConflict(db, () => insertRows(db, projectId, rows, false), safe) : safe();
}

async function insertRows(db: Queryable, projectId: string, rows: readonly CheckedRow[], skipExisting: boolean): Promise<Set<string>> {
  // Absent keys read as NULL in jsonb_to_recordset, so nulls are left out: a smaller text to build and parse.
  const payload = rows.map((r) => ({
    id: r.id,
    attribute_key: r.attributeKey ?? undefined,
    subject_kind: r.subjectKind ?? undefined,
    subject_external_id: r.subjectExternalId ?? undefined,
    value_numeric: r.valueNumeric ?? undefined,
    value_text: r.valueText ?? undefined,
    value_bool: r.valueBool ?? undefined,
    value_ts: r.valueTs ?? undefined,
    observed_at: r.observedAt ?? undefined,
    source: r.source ?? undefined,
    trust: r.trust,
    status: r.status,
    reason: r.reason ?? undefined,
    raw: r.raw ?? undefined,
    dedupe_hash: r.dedupeHash,
  }));
  const { rows: inserted } = await db.query<{ id: string; dedupe_hash: string }>(
    `INSERT INTO typed_observations (project_id, id, attribute_key, subject_kind, subject_external_id, value_numeric, value_text, value_bool,
       value_ts, observed_at, source, trust, status, quarantine_reason, raw, dedupe_hash)
     SELECT $1, r.id, r.attribute_key, r.subject_kind, r.subject_external_id, r.value_numeric, r.value_text, r.value_bool,
       r.value_ts, r.observed_at, r.source, r.trust, r.status, r.reason, r.raw, r.dedupe_hash
     FROM jsonb_to_recordset($2::jsonb) AS r(id text, attribute_key text, subject_kind text, subject_external_id text, value_numeric float8,
       value_text text, value_bool boolean, value_ts timestamptz, observed_at timestamptz, source text, trust float8, status text, reason text,
       raw jsonb, dedupe_hash text)
     ORDER BY r.dedupe_hash COLLATE "C"
     ${skipExisting ? 'ON CONFLICT DO NOTHING' : ''}
     RETURNING id, dedupe_hash`,
    [projectId, JSON.stringify(payload)],
  );
  return new Set(inserted.map((r) => insertedKey(r.id, r.dedupe_hash)));
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

export interface AccumulatorKey {
  subjectKind: string;
  subjectExternalId: string;
  attributeKey: string;
}

export const keyOf = (k: AccumulatorKey) => JSON.stringify([k.subjectKind, k.subjectExternalId, k.attributeKey]);

const compareText = (a: string, b: string) => (a < b ? -1 : a > b ? 1 : 0);
/** Column by column, in code-unit order: the order of `COLLATE "C"` for the texts we see. */
function compareKeys(a: AccumulatorKey, b: AccumulatorKey): number {
  return compareText(a.subjectKind, b.subjectKind) || compareText(a.subjectExternalId, b.subjectExternalId) || compareText(a.attributeKey, b.attributeKey);
}

interface AccumulatorRow {
  subject_kind: string;
  subject_external_id: string;
  attribute_key: string;
  count: string | number;
  sum: number;
  sum_sq: number;
  min_val: number | null;
  max_val: number | null;
  last_val: number | null;
  last_observed_at: Date | null;
  last_id: string | null;
  cumulative: number;
  ewma: number | null;
  ewma_var: number | null;
  updated_at: Date;
}

function toState(row: AccumulatorRow): AccumulatorState {
  return {
    count: Number(row.count),
    sum: row.sum,
    sumSq: row.sum_sq,
    min: row.min_val,
    max: row.max_val,
    last: row.last_val,
    lastObservedAt: row.last_observed_at === null ? null : new Date(row.last_observed_at).getTime(),
    lastId: row.last_id,
    cumulative: row.cumulative,
    ewma: row.ewma,
    ewmaVar: row.ewma_var,
  };
}

function keyColumns(keys: readonly AccumulatorKey[]): [string[], string[], string[]] {
  return [keys.map((k) => k.subjectKind), keys.map((k) => k.subjectExternalId), keys.map((k) => k.attributeKey)];
}

/**
 * Creates missing accumulator rows, then locks all of them in key order (so two batches touching
 * the same keys queue up instead of deadlocking) and answers their current state.
 */
export async function lockAccumulators(db: Queryable, projectId: string, keys: readonly AccumulatorKey[]): Promise<Map<string, AccumulatorState>> {
  const sorted = [...keys].sort(compareKeys);
  const columns = keyColumns(sorted);
  await db.query(
    `INSERT INTO typed_accumulators (project_id, subject_kind, subject_external_id, attribute_key)
     SELECT $1, k.kind, k.ext, k.attr FROM unnest($2::text[], $3::text[], $4::text[]) WITH ORDINALITY AS k(kind, ext, attr, n)
     ORDER BY k.n
     ON CONFLICT DO NOTHING`,
    [projectId, ...columns],
  );
  const { rows } = await db.query<AccumulatorRow>(
    `SELECT a.* FROM typed_accumulators a
     JOIN unnest($2::text[], $3::text[], $4::text[]) AS k(kind, ext, attr)
       ON a.subject_kind = k.kind AND a.subject_external_id = k.ext AND a.attribute_key = k.attr
     WHERE a.project_id = $1
     ORDER BY a.subject_kind COLLATE "C", a.subject_external_id COLLATE "C", a.attribute_key COLLATE "C"
     FOR UPDATE OF a`,
    [projectId, ...columns],
  );
  return new Map(rows.map((r) => [keyOf({ subjectKind: r.subject_kind, subjectExternalId: r.subject_external_id, attributeKey: r.attribute_key }), toState(r)]));
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

export async function writeAccumulators(db: Queryable, projectId: string, states: ReadonlyMap<string, AccumulatorState>): Promise<void> {
  if (states.size === 0) return;
  const entries = [...states.entries()].map(([key, state]) => ({ key: JSON.parse(key) as [string, string, string], state }));
  const col = <T>(f: (e: (typeof entries)[number]) => T) => entries.map(f);
  await db.query(
    `UPDATE typed_accumulators a SET
       count = u.count, sum = u.sum, sum_sq = u.sum_sq, min_val = u.min_val, max_val = u.max_val, last_val = u.last_val,
       last_observed_at = u.last_observed_at::timestamptz, last_id = u.last_id, cumulative = u.cumulative, ewma = u.ewma, ewma_var = u.ewma_var,
       updated_at = now()
     FROM unnest($2::text[], $3::text[], $4::text[], $5::bigint[], $6::float8[], $7::float8[], $8::float8[], $9::float8[], $10::float8[],
       $11::text[], $12::text[], $13::float8[], $14::float8[], $15::float8[])
       AS u(kind, ext, attr, count, sum, sum_sq, min_val, max_val, last_val, last_observed_at, last_id, cumulative, ewma, ewma_var)
     WHERE a.project_id = $1 AND a.subject_kind = u.kind AND a.subject_external_id = u.ext AND a.attribute_key = u.attr`,
    [
      projectId,
      col((e) => e.key[0]),
      col((e) => e.key[1]),
      col((e) => e.key[2]),
      col((e) => e.state.count),
      col((e) => e.state.sum),
      col((e) => e.state.sumSq),
      col((e) => e.state.min),
      col((e) => e.state.max),
      col((e) => e.state.last),
      col((e) => (e.state.lastObservedAt === null ? null : new Date(e.state.lastObservedAt).toISOString())),
      col((e) => e.state.lastId),
      col((e) => e.state.cumulative),
      col((e) => e.state.ewma),
      col((e) => e.state.ewmaVar),
    ],
  );
}

export async function getAccumulator(db: Queryable, projectId: string, key: AccumulatorKey): Promise<(AccumulatorState & { updated: string }) | undefined> {
  const { rows } = await db.query<AccumulatorRow>(
    'SELECT * FROM typed_accumulators WHERE project_id = $1 AND subject_kind = $2 AND subject_external_id = $3 AND attribute_key = $4',
    [projectId, key.subjectKind, key.subjectExternalId, key.attributeKey],
  );
  return rows[0] && { ...toState(rows[0]), updated: iso(rows[0].updated_at)! };
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

export async function insertIngestBatch(db: Queryable, id: string, projectId: string, observations: readonly ObservationInput[]): Promise<void> {
  await db.query('INSERT INTO typed_ingest_batches (id, project_id, observations, row_count) VALUES ($1, $2, $3::jsonb, $4)', [
    id,
    projectId,
    JSON.stringify(observations),
    observations.length,
  ]);
}

/** Locks and answers a queued batch; undefined when it was already ingested (or is being ingested). */
export async function claimIngestBatch(db: Queryable, id: string): Promise<{ projectId: string; observations: ObservationInput[] } | undefined> {
  const { rows } = await db.query<{ project_id: string; observations: ObservationInput[] }>(
    'SELECT project_id, observations FROM typed_ingest_batches WHERE id = $1 FOR UPDATE SKIP LOCKED',
    [id],
  );
  return rows[0] && { projectId: rows[0].project_id, observations: rows[0].observations };
}

export async function deleteIngestBatch(db: Queryable, id: string): Promise<void> {
  await db.query('DELETE FROM typed_ingest_batches WHERE id = $1', [id]);
}

/** Queued batches older than `olderThanMs`: re-enqueued at start, in case their job was lost. */
export async function pendingIngestBatches(db: Queryable, olderThanMs: number): Promise<{ id: string; projectId: string }[]> {
  const { rows } = await db.query<{ id: string; project_id: string }>(
    `SELECT id, project_id FROM typed_ingest_batches WHERE created_at <= now() - ($1::float8 * interval '1 millisecond') ORDER BY created_at LIMIT 10000`,
    [olderThanMs],
  );
  return rows.map((r) => ({ id: r.id, projectId: r.project_id }));
}

export function toAccumulator(key: AccumulatorKey, state: AccumulatorState, derived: { mean: number | null; variance: number | null; stddev: number | null }, updated: string | null): Accumulator {
  return {
    ...key,
    count: state.count,
    sum: state.sum,
    sumSq: state.sumSq,
    min: state.min,
    max: state.max,
    last: state.last,
    minVal: state.min,
    maxVal: state.max,
    lastVal: state.last,
    lastObservedAt: state.lastObservedAt === null ? null : new Date(state.lastObservedAt).toISOString(),
    cumulative: state.cumulative,
    ...derived,
    ewma: state.ewma,
    ewmaVar: state.ewmaVar,
    updated,
  };
}
