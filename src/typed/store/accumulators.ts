// SQL for typed_accumulators: per subject and attribute running statistics. Ingests create the rows
// (typed/store/unfolded.ts) and never lock them; folds and rebuilds lock them, skipping rows another holds.
import type { Queryable } from '../../platform/db.js';
import type { AccumulatorState } from '../accumulator.js';
import type { Accumulator } from '../schemas.js';

export interface AccumulatorKey {
  subjectKind: string;
  subjectExternalId: string;
  attributeKey: string;
}

export const keyOf = (k: AccumulatorKey) => JSON.stringify([k.subjectKind, k.subjectExternalId, k.attributeKey]);

export interface AccumulatorRow {
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

export function toState(row: AccumulatorRow): StoredAccumulator {
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
 * Locks the accumulator rows of `keys` that no other transaction holds, and answers their state.
 * Rows another fold or a rebuild holds are skipped, never waited for: their points wait for the
 * next fold. Every key with points waiting has its row: the ingest that appended them created it,
 * and an erasure or a project's deletion takes both.
 */
export async function lockFree(db: Queryable, projectId: string, keys: readonly AccumulatorKey[]): Promise<Map<string, StoredAccumulator>> {
  const { rows } = await db.query<AccumulatorRow>(
    `SELECT a.* FROM typed_accumulators a
     JOIN unnest($2::text[], $3::text[], $4::text[]) AS k(kind, ext, attr)
       ON a.subject_kind = k.kind AND a.subject_external_id = k.ext AND a.attribute_key = k.attr
     WHERE a.project_id = $1
     FOR UPDATE OF a SKIP LOCKED`,
    [projectId, ...keyColumns(keys)],
  );
  return new Map(rows.map((r) => [keyOf({ subjectKind: r.subject_kind, subjectExternalId: r.subject_external_id, attributeKey: r.attribute_key }), toState(r)]));
}

/** Up to `limit` projects with accumulators whose EWMA awaits a rebuild. */
export async function staleProjects(db: Queryable, limit: number): Promise<string[]> {
  const { rows } = await db.query<{ project_id: string }>(`SELECT DISTINCT project_id FROM typed_accumulators WHERE series_stale ORDER BY 1 LIMIT $1`, [limit]);
  return rows.map((r) => r.project_id);
}

/**
 * Locks up to `limit` of the project's accumulators whose EWMA awaits a rebuild, skipping those
 * another transaction holds (a fold): a rebuild never waits.
 */
export async function lockStale(db: Queryable, projectId: string, limit: number): Promise<{ key: AccumulatorKey; state: StoredAccumulator }[]> {
  const { rows } = await db.query<AccumulatorRow>(
    `SELECT * FROM typed_accumulators WHERE project_id = $1 AND series_stale
     ORDER BY subject_kind COLLATE "C", subject_external_id COLLATE "C", attribute_key COLLATE "C"
     LIMIT $2 FOR UPDATE SKIP LOCKED`,
    [projectId, limit],
  );
  return rows.map((r) => ({ key: { subjectKind: r.subject_kind, subjectExternalId: r.subject_external_id, attributeKey: r.attribute_key }, state: toState(r) }));
}

export async function writeAccumulators(db: Queryable, projectId: string, states: ReadonlyMap<string, StoredAccumulator>): Promise<void> {
  if (states.size === 0) return;
  const entries = [...states.entries()].map(([key, state]) => ({ key: JSON.parse(key) as [string, string, string], state }));
  const col = <T>(f: (e: (typeof entries)[number]) => T) => entries.map(f);
  await db.query(
    `UPDATE typed_accumulators a SET
       count = u.count, sum = u.sum, sum_sq = u.sum_sq, min_val = u.min_val, max_val = u.max_val, last_val = u.last_val,
       last_observed_at = u.last_observed_at, last_id = u.last_id, cumulative = u.cumulative, ewma = u.ewma, ewma_var = u.ewma_var,
       series_stale = u.stale, updated_at = now()
     FROM unnest($2::text[], $3::text[], $4::text[], $5::bigint[], $6::float8[], $7::float8[], $8::float8[], $9::float8[], $10::float8[],
       $11::timestamptz[], $12::text[], $13::float8[], $14::float8[], $15::float8[], $16::boolean[])
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
