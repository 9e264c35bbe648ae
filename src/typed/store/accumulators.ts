// SQL for typed_accumulators: per subject and attribute running statistics, locked in key order.
import type { Queryable } from '../../platform/db.js';
import { iso } from '../../platform/sql.js';
import { comparePoints, EWMA_ALPHA, type AccumulatorState, type NumericPoint } from '../accumulator.js';
import type { Accumulator } from '../schemas.js';

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
  series_stale: boolean;
  updated_at: Date;
}

/**
 * A stored accumulator: its state, and whether its EWMA awaits a rebuild from the whole series
 * (late data was folded; see foldLate).
 */
export type StoredAccumulator = AccumulatorState & { stale: boolean };

function toState(row: AccumulatorRow): StoredAccumulator {
  return {
    stale: row.series_stale,
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

export function keyColumns(keys: readonly AccumulatorKey[]): [string[], string[], string[]] {
  return [keys.map((k) => k.subjectKind), keys.map((k) => k.subjectExternalId), keys.map((k) => k.attributeKey)];
}

/**
 * Creates missing accumulator rows, then locks all of them in key order (so two batches touching
 * the same keys queue up instead of deadlocking) and answers their current state. A row deleted
 * between the two (a hard delete of the subject committing meanwhile) is created again and locked.
 */
export async function lockAccumulators(db: Queryable, projectId: string, keys: readonly AccumulatorKey[]): Promise<Map<string, StoredAccumulator>> {
  const locked = new Map<string, StoredAccumulator>();
  let missing = [...keys].sort(compareKeys);
  for (let attempt = 1; missing.length > 0; attempt++) {
    if (attempt > LOCK_ATTEMPTS) throw new Error(`accumulator rows kept disappearing while being locked (${missing.length} of ${keys.length})`);
    const columns = keyColumns(missing);
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
    for (const r of rows) locked.set(keyOf({ subjectKind: r.subject_kind, subjectExternalId: r.subject_external_id, attributeKey: r.attribute_key }), toState(r));
    missing = missing.filter((k) => !locked.has(keyOf(k)));
  }
  return locked;
}

/** Tries at creating and locking rows that a concurrent delete keeps removing. */
const LOCK_ATTEMPTS = 5;

/**
 * Locks up to `limit` accumulators whose EWMA awaits a rebuild, skipping those another transaction
 * holds (an ingest folding into one): a rebuild never waits.
 */
export async function lockStale(db: Queryable, limit: number): Promise<{ projectId: string; key: AccumulatorKey; state: StoredAccumulator }[]> {
  const { rows } = await db.query<AccumulatorRow & { project_id: string }>(
    `SELECT * FROM typed_accumulators WHERE series_stale
     ORDER BY project_id, subject_kind COLLATE "C", subject_external_id COLLATE "C", attribute_key COLLATE "C"
     LIMIT $1 FOR UPDATE SKIP LOCKED`,
    [limit],
  );
  return rows.map((r) => ({ projectId: r.project_id, key: { subjectKind: r.subject_kind, subjectExternalId: r.subject_external_id, attributeKey: r.attribute_key }, state: toState(r) }));
}

export async function writeAccumulators(db: Queryable, projectId: string, states: ReadonlyMap<string, StoredAccumulator>): Promise<void> {
  if (states.size === 0) return;
  const entries = [...states.entries()].map(([key, state]) => ({ key: JSON.parse(key) as [string, string, string], state }));
  const col = <T>(f: (e: (typeof entries)[number]) => T) => entries.map(f);
  await db.query(
    `UPDATE typed_accumulators a SET
       count = u.count, sum = u.sum, sum_sq = u.sum_sq, min_val = u.min_val, max_val = u.max_val, last_val = u.last_val,
       last_observed_at = u.last_observed_at::timestamptz, last_id = u.last_id, cumulative = u.cumulative, ewma = u.ewma, ewma_var = u.ewma_var,
       series_stale = u.stale, updated_at = now()
     FROM unnest($2::text[], $3::text[], $4::text[], $5::bigint[], $6::float8[], $7::float8[], $8::float8[], $9::float8[], $10::float8[],
       $11::text[], $12::text[], $13::float8[], $14::float8[], $15::float8[], $16::boolean[])
       AS u(kind, ext, attr, count, sum, sum_sq, min_val, max_val, last_val, last_observed_at, last_id, cumulative, ewma, ewma_var, stale)
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
      col((e) => e.state.stale),
    ],
  );
}

/** A batch's points for one accumulator. */
export interface KeyedPoints {
  key: AccumulatorKey;
  points: readonly NumericPoint[];
}

/** Only ASCII ids: the series order compares ids by UTF-16 code unit here and by byte in SQL (COLLATE "C"). */
const ASCII = /^[\x00-\x7f]*$/;

/**
 * Folds a batch into its accumulators in one call (typed_fold, migration 0017), which creates and
 * locks the rows in key order and computes exactly what foldPoints and foldLate compute. Answers
 * false, having written nothing, where the two could differ (an overflow or underflow, an id outside
 * ASCII, a row deleted meanwhile): the caller then folds the batch itself, with the rows locked.
 */
export async function foldInDatabase(db: Queryable, projectId: string, groups: readonly KeyedPoints[]): Promise<boolean> {
  if (groups.some((g) => g.points.some((p) => !ASCII.test(p.id)))) return false;
  const sorted = [...groups].sort((a, b) => compareKeys(a.key, b.key));
  const offsets: number[] = [];
  const values: number[] = [];
  const seriesValues: number[] = [];
  const first: NumericPoint[] = [];
  const last: NumericPoint[] = [];
  for (const { points } of sorted) {
    const series = [...points].sort(comparePoints);
    offsets.push(values.length);
    for (const p of points) values.push(p.value);
    for (const p of series) seriesValues.push(p.value);
    first.push(series[0]!);
    last.push(series.at(-1)!);
  }
  const at = (p: NumericPoint) => new Date(p.observedAt).toISOString();
  const { rows } = await db.query<{ folded: boolean }>(
    `SELECT typed_fold($1, $2::text[], $3::text[], $4::text[], $5::int[], $6::int[], $7::float8[], $8::float8[],
       $9::timestamptz[], $10::text[], $11::timestamptz[], $12::text[], $13::float8[], $14::float8) AS folded`,
    [
      projectId,
      ...keyColumns(sorted.map((g) => g.key)),
      offsets,
      sorted.map((g) => g.points.length),
      values,
      seriesValues,
      first.map(at),
      first.map((p) => p.id),
      last.map(at),
      last.map((p) => p.id),
      last.map((p) => p.value),
      EWMA_ALPHA,
    ],
  );
  return rows[0]!.folded;
}

export async function getAccumulator(db: Queryable, projectId: string, key: AccumulatorKey): Promise<(StoredAccumulator & { updated: string }) | undefined> {
  const { rows } = await db.query<AccumulatorRow>(
    'SELECT * FROM typed_accumulators WHERE project_id = $1 AND subject_kind = $2 AND subject_external_id = $3 AND attribute_key = $4',
    [projectId, key.subjectKind, key.subjectExternalId, key.attributeKey],
  );
  return rows[0] && { ...toState(rows[0]), updated: iso(rows[0].updated_at)! };
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
