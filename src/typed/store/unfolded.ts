// SQL for typed_unfolded: accepted numeric observations not yet folded into their accumulators
// (migration 0017), one row per key and ingest holding its points as parallel arrays. Ingests
// append; the typed.fold job takes them, a batch of keys at a time; reads fold what is left on top
// of the stored accumulator.
import type { Queryable } from '../../platform/db.js';
import { newId } from '../../platform/ids.js';
import type { NumericPoint } from '../accumulator.js';
import { iso } from '../../platform/sql.js';
import { keyColumns, keyOf, toState, type AccumulatorKey, type AccumulatorRow, type StoredAccumulator } from './accumulators.js';
import { appendTo } from '../../platform/collections.js';

export interface UnfoldedRow extends AccumulatorKey {
  observationId: string;
  value: number;
  /** ISO 8601, millisecond precision. */
  observedAt: string;
}

interface Row {
  subject_kind: string;
  subject_external_id: string;
  attribute_key: string;
  observation_ids: string[];
  observed_ats: Date[];
  vals: number[];
}

const COLUMNS = 'subject_kind, subject_external_id, attribute_key, observation_ids, observed_ats, vals';

const pointsOf = (r: Row): NumericPoint[] =>
  r.observation_ids.map((id, i) => ({ id, value: Number(r.vals[i]), observedAt: new Date(r.observed_ats[i]!).getTime() }));

/**
 * Appends the rows, grouped into one row per key for this call (each names an observation just
 * stored), and creates the accumulator rows of new keys, in key order (two ingests creating the same
 * new rows wait for each other in one order). An existing accumulator row is not locked, so an
 * ingest never waits for the fold that holds it. With `eventOutboxId`, the same statement writes the
 * event outbox row (typed_event_outbox) naming these observations, in order: their typed.observation
 * events are due. One statement: round trips of the ingest's transaction fewer, and the ids are
 * sent once.
 */
export async function appendUnfolded(db: Queryable, projectId: string, rows: readonly UnfoldedRow[], options: { eventOutboxId?: string } = {}): Promise<void> {
  if (rows.length === 0) return;
  await db.query(
    `WITH u AS MATERIALIZED (
       SELECT * FROM unnest($3::text[], $4::text[], $5::text[], $6::text[], $7::timestamptz[], $8::float8[]) WITH ORDINALITY AS u(kind, ext, attr, id, at, value, n)
     ), created AS (
       INSERT INTO typed_accumulators (project_id, subject_kind, subject_external_id, attribute_key)
       SELECT $1, k.kind, k.ext, k.attr FROM (SELECT DISTINCT kind, ext, attr FROM u) k
        ORDER BY k.kind COLLATE "C", k.ext COLLATE "C", k.attr COLLATE "C"
       ON CONFLICT DO NOTHING
     ), outbox AS (
       INSERT INTO typed_event_outbox (project_id, id, observation_ids)
       SELECT $1, $9::text, array_agg(u.id ORDER BY u.n) FROM u HAVING $9::text IS NOT NULL
     )
     INSERT INTO typed_unfolded (project_id, subject_kind, subject_external_id, attribute_key, batch_id, observation_ids, observed_ats, vals)
     SELECT $1, u.kind, u.ext, u.attr, $2, array_agg(u.id ORDER BY u.n), array_agg(u.at ORDER BY u.n), array_agg(u.value ORDER BY u.n)
       FROM u GROUP BY u.kind, u.ext, u.attr`,
    [
      projectId,
      newId('tub'),
      ...keyColumns(rows),
      rows.map((r) => r.observationId),
      rows.map((r) => r.observedAt),
      rows.map((r) => r.value),
      options.eventOutboxId ?? null,
    ],
  );
}

/**
 * A key's stored accumulator and the points still waiting for it, read in one statement, so in one
 * snapshot: a fold committing between two reads would have a point counted twice or not at all.
 */
export async function accumulatorAndWaiting(
  db: Queryable,
  projectId: string,
  key: AccumulatorKey,
): Promise<{ stored: (StoredAccumulator & { updated: string }) | undefined; waiting: NumericPoint[] }> {
  const { rows } = await db.query<AccumulatorRow & { waiting: { ids: string[]; ats: string[]; vals: number[] }[] }>(
    `SELECT a.*, (SELECT coalesce(json_agg(json_build_object('ids', u.observation_ids, 'ats', u.observed_ats, 'vals', u.vals)), '[]')
                    FROM typed_unfolded u
                   WHERE u.project_id = a.project_id AND u.subject_kind = a.subject_kind
                     AND u.subject_external_id = a.subject_external_id AND u.attribute_key = a.attribute_key) AS waiting
       FROM typed_accumulators a
      WHERE a.project_id = $1 AND a.subject_kind = $2 AND a.subject_external_id = $3 AND a.attribute_key = $4`,
    [projectId, key.subjectKind, key.subjectExternalId, key.attributeKey],
  );
  const row = rows[0];
  if (!row) return { stored: undefined, waiting: [] };
  const waiting = row.waiting.flatMap((w) => w.ids.map((id, i) => ({ id, value: w.vals[i]!, observedAt: Date.parse(w.ats[i]!) })));
  return { stored: { ...toState(row), updated: iso(row.updated_at)! }, waiting };
}

/** The keys with points waiting, up to `limit`, in key order (any project). */
export async function dueKeys(db: Queryable, limit: number): Promise<{ projectId: string; key: AccumulatorKey }[]> {
  const { rows } = await db.query<{ project_id: string; subject_kind: string; subject_external_id: string; attribute_key: string }>(
    `SELECT DISTINCT project_id, subject_kind, subject_external_id, attribute_key FROM typed_unfolded
      ORDER BY project_id, subject_kind, subject_external_id, attribute_key LIMIT $1`,
    [limit],
  );
  return rows.map((r) => ({ projectId: r.project_id, key: { subjectKind: r.subject_kind, subjectExternalId: r.subject_external_id, attributeKey: r.attribute_key } }));
}

/**
 * Takes (deletes and answers) every point waiting for the keys, by key. The caller holds the keys'
 * accumulator rows, so no other fold takes them meanwhile; points appended after this statement
 * began stay for the next fold.
 */
export async function takeUnfolded(db: Queryable, projectId: string, keys: readonly AccumulatorKey[]): Promise<Map<string, NumericPoint[]>> {
  const taken = new Map<string, NumericPoint[]>();
  if (keys.length === 0) return taken;
  const { rows } = await db.query<Row>(
    `DELETE FROM typed_unfolded u USING unnest($2::text[], $3::text[], $4::text[]) AS k(kind, ext, attr)
      WHERE u.project_id = $1 AND u.subject_kind = k.kind AND u.subject_external_id = k.ext AND u.attribute_key = k.attr
     RETURNING u.subject_kind, u.subject_external_id, u.attribute_key, u.observation_ids, u.observed_ats, u.vals`,
    [projectId, ...keyColumns(keys)],
  );
  for (const r of rows) {
    const id = keyOf({ subjectKind: r.subject_kind, subjectExternalId: r.subject_external_id, attributeKey: r.attribute_key });
    appendTo(taken, id, ...pointsOf(r));
  }
  return taken;
}

/** Points waiting in the project (the project page's backlog). */
export async function unfoldedBacklog(db: Queryable, projectId: string): Promise<number> {
  const { rows } = await db.query<{ n: number }>(`SELECT coalesce(sum(cardinality(observation_ids)), 0)::int AS n FROM typed_unfolded WHERE project_id = $1`, [projectId]);
  return rows[0]!.n;
}
