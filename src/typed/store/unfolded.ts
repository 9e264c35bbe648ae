// SQL for typed_unfolded: accepted numeric observations not yet folded into their accumulators
// (migration 0017). Ingests append; the typed.fold job takes them, a batch of keys at a time; reads
// fold what is left on top of the stored accumulator.
import type { Queryable } from '../../platform/db.js';
import type { NumericPoint } from '../accumulator.js';
import { keyColumns, keyOf, type AccumulatorKey } from './accumulators.js';

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
  observation_id: string;
  value: number;
  observed_at: Date;
}

const point = (r: Row): NumericPoint => ({ id: r.observation_id, value: r.value, observedAt: new Date(r.observed_at).getTime() });

/** Appends the rows; each names an observation just stored, so none can exist yet. */
export async function appendUnfolded(db: Queryable, projectId: string, rows: readonly UnfoldedRow[]): Promise<void> {
  if (rows.length === 0) return;
  await db.query(
    `INSERT INTO typed_unfolded (project_id, subject_kind, subject_external_id, attribute_key, observation_id, value, observed_at)
     SELECT $1, u.kind, u.ext, u.attr, u.id, u.value, u.at::timestamptz
       FROM unnest($2::text[], $3::text[], $4::text[], $5::text[], $6::float8[], $7::text[]) AS u(kind, ext, attr, id, value, at)`,
    [
      projectId,
      rows.map((r) => r.subjectKind),
      rows.map((r) => r.subjectExternalId),
      rows.map((r) => r.attributeKey),
      rows.map((r) => r.observationId),
      rows.map((r) => r.value),
      rows.map((r) => r.observedAt),
    ],
  );
}

/** The points still waiting for one key, in no particular order. */
export async function unfoldedPoints(db: Queryable, projectId: string, key: AccumulatorKey): Promise<NumericPoint[]> {
  const { rows } = await db.query<Row>(
    `SELECT subject_kind, subject_external_id, attribute_key, observation_id, value, observed_at FROM typed_unfolded
      WHERE project_id = $1 AND subject_kind = $2 AND subject_external_id = $3 AND attribute_key = $4`,
    [projectId, key.subjectKind, key.subjectExternalId, key.attributeKey],
  );
  return rows.map(point);
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
     RETURNING u.subject_kind, u.subject_external_id, u.attribute_key, u.observation_id, u.value, u.observed_at`,
    [projectId, ...keyColumns(keys)],
  );
  for (const r of rows) {
    const id = keyOf({ subjectKind: r.subject_kind, subjectExternalId: r.subject_external_id, attributeKey: r.attribute_key });
    taken.set(id, [...(taken.get(id) ?? []), point(r)]);
  }
  return taken;
}

/** Points waiting in the project, and since when (the project page's backlog). */
export async function unfoldedBacklog(db: Queryable, projectId: string): Promise<number> {
  const { rows } = await db.query<{ n: number }>(`SELECT count(*)::int AS n FROM typed_unfolded WHERE project_id = $1`, [projectId]);
  return rows[0]!.n;
}
