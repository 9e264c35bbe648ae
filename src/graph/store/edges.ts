// SQL for graph_edges: dated facts from an entity to another entity or to a literal, each with a
// weight and the memory that stated it. It opens, strengthens and closes edges, answers which hold at
// an instant (a subject's, a predicate's, an entity's ended ones) and reads one hop of a traversal. A
// read "at" an instant sees the rows valid then: valid_from <= at < valid_to (or no valid_to), the
// condition validAt writes for the other store files too. Plain SQL; every statement is scoped by
// project.
import type { Queryable } from '../../platform/db.js';
import { Conditions, iso } from '../../platform/sql.js';
import type { Edge } from '../schemas.js';

export interface EdgeRow {
  id: string;
  subject_id: string;
  predicate: string;
  object_id: string | null;
  object_literal: string | null;
  weight: number;
  source_memory_id: string | null;
  valid_from: Date;
  valid_to: Date | null;
}

export const EDGE_COLUMNS = `id, subject_id, predicate, object_id, object_literal, weight, source_memory_id, valid_from, valid_to`;

/** Valid at the instant given by the placeholder `at`, for table alias `t`. */
export const validAt = (t: string, at: string) => `${t}.valid_from <= ${at}::timestamptz AND (${t}.valid_to IS NULL OR ${t}.valid_to > ${at}::timestamptz)`;

export const toEdge = (r: EdgeRow): Edge => ({
  id: r.id,
  subjectId: r.subject_id,
  predicate: r.predicate,
  objectId: r.object_id,
  objectLiteral: r.object_literal,
  weight: Number(r.weight),
  validFrom: iso(r.valid_from),
  validTo: iso(r.valid_to),
  sourceMemoryId: r.source_memory_id,
});

export interface NewEdge {
  id: string;
  subjectId: string;
  predicate: string;
  objectId: string | null;
  objectLiteral: string | null;
  weight: number;
  sourceMemoryId: string | null;
  validFrom: Date;
  validTo: Date | null;
}

export async function insertEdge(db: Queryable, projectId: string, e: NewEdge): Promise<EdgeRow> {
  const { rows } = await db.query<EdgeRow>(
    `INSERT INTO graph_edges (project_id, id, subject_id, predicate, object_id, object_literal, weight, source_memory_id, valid_from, valid_to, retired_at)
     VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, CASE WHEN $10::timestamptz IS NULL THEN NULL ELSE now() END) RETURNING ${EDGE_COLUMNS}`,
    [projectId, e.id, e.subjectId, e.predicate, e.objectId, e.objectLiteral, e.weight, e.sourceMemoryId, e.validFrom.toISOString(), e.validTo?.toISOString() ?? null],
  );
  return rows[0]!;
}

export async function getEdge(db: Queryable, projectId: string, id: string, lock = false): Promise<EdgeRow | undefined> {
  const { rows } = await db.query<EdgeRow>(`SELECT ${EDGE_COLUMNS} FROM graph_edges WHERE project_id = $1 AND id = $2${lock ? ' FOR UPDATE' : ''}`, [projectId, id]);
  return rows[0];
}

/** The subject's open edges (valid_to unset) with this predicate. */
export async function openEdges(db: Queryable, projectId: string, subjectId: string, predicate: string): Promise<EdgeRow[]> {
  const { rows } = await db.query<EdgeRow>(
    `SELECT ${EDGE_COLUMNS} FROM graph_edges WHERE project_id = $1 AND subject_id = $2 AND predicate = $3 AND valid_to IS NULL ORDER BY valid_from, id`,
    [projectId, subjectId, predicate],
  );
  return rows;
}

/** The earliest start of the subject's edges with this predicate that begin after `after`. */
export async function nextStart(db: Queryable, projectId: string, subjectId: string, predicate: string, after: Date): Promise<Date | undefined> {
  const { rows } = await db.query<{ start: Date | null }>(
    `SELECT min(valid_from) AS start FROM graph_edges WHERE project_id = $1 AND subject_id = $2 AND predicate = $3 AND valid_from > $4::timestamptz`,
    [projectId, subjectId, predicate, after.toISOString()],
  );
  return rows[0]?.start ?? undefined;
}

export async function strengthenEdge(db: Queryable, projectId: string, id: string, weight: number): Promise<EdgeRow> {
  const { rows } = await db.query<EdgeRow>(
    `UPDATE graph_edges SET weight = greatest(weight, $3) WHERE project_id = $1 AND id = $2 RETURNING ${EDGE_COLUMNS}`,
    [projectId, id, weight],
  );
  return rows[0]!;
}

/** Closes an open edge at `at` (never before it began). */
export async function endEdge(db: Queryable, projectId: string, id: string, at: Date): Promise<EdgeRow> {
  const { rows } = await db.query<EdgeRow>(
    `UPDATE graph_edges SET valid_to = greatest(valid_from, $3::timestamptz), retired_at = now() WHERE project_id = $1 AND id = $2 RETURNING ${EDGE_COLUMNS}`,
    [projectId, id, at.toISOString()],
  );
  return rows[0]!;
}

/** Closes every open edge touching an entity. */
export async function endEdgesOf(db: Queryable, projectId: string, entityId: string, at: Date): Promise<number> {
  const { rowCount } = await db.query(
    `UPDATE graph_edges SET valid_to = greatest(valid_from, $3::timestamptz), retired_at = now()
      WHERE project_id = $1 AND (subject_id = $2 OR object_id = $2) AND valid_to IS NULL`,
    [projectId, entityId, at.toISOString()],
  );
  return rowCount;
}

export async function edgesAt(
  db: Queryable,
  projectId: string,
  filter: { subjectId?: string; predicate?: string; at: Date },
  limit: number,
  offset = 0,
): Promise<EdgeRow[]> {
  const where = new Conditions();
  where.add('g.project_id = ?', projectId);
  where.add('g.subject_id = ?', filter.subjectId);
  where.add('g.predicate = ?', filter.predicate);
  where.add(validAt('g', where.param(filter.at.toISOString())));
  const { rows } = await db.query<EdgeRow>(
    `SELECT ${EDGE_COLUMNS} FROM graph_edges g WHERE ${where.sql}
      ORDER BY g.valid_from DESC, g.id LIMIT ${where.param(limit)} OFFSET ${where.param(offset)}`,
    where.params,
  );
  return rows;
}

/** The edges into and out of an entity that had ended by `at` (validTo at or before it), latest ended first. */
export async function endedEdgesOf(db: Queryable, projectId: string, entityId: string, at: Date, limit: number): Promise<EdgeRow[]> {
  const { rows } = await db.query<EdgeRow>(
    `SELECT ${EDGE_COLUMNS} FROM graph_edges g
      WHERE g.project_id = $1 AND (g.subject_id = $2 OR g.object_id = $2) AND g.valid_to IS NOT NULL AND g.valid_to <= $3
      ORDER BY g.valid_to DESC, g.id LIMIT $4`,
    [projectId, entityId, at.toISOString(), limit],
  );
  return rows;
}

/**
 * One hop of a traversal: the edges valid at `at` out of (and, with `both`, into) the frontier, at
 * most `fanOut` per frontier entity and direction (strongest first, then newest, then id), and at
 * most `limit` in all, taking every entity's strongest edge before any entity's second. Each
 * entity's edges are read through its index with a LATERAL lookup, so the plan never depends on
 * statistics.
 */
export async function hopEdges(
  db: Queryable,
  projectId: string,
  frontier: readonly string[],
  options: { at: Date; predicates?: readonly string[]; both: boolean; fanOut: number; limit?: number },
): Promise<(EdgeRow & { from_id: string })[]> {
  const params: unknown[] = [projectId, frontier, options.at.toISOString(), options.fanOut, options.limit ?? null];
  const predicate = options.predicates && options.predicates.length > 0 ? `AND g.predicate = ANY($${params.push(options.predicates)}::text[])` : '';
  const side = (from: 'subject_id' | 'object_id') => `
    SELECT e.* FROM unnest($2::text[]) AS f(id) CROSS JOIN LATERAL (
      SELECT ${EDGE_COLUMNS}, f.id AS from_id, row_number() OVER (ORDER BY g.weight DESC, g.valid_from DESC, g.id) AS rank
        FROM graph_edges g
       WHERE g.project_id = $1 AND g.${from} = f.id AND ${validAt('g', '$3')} ${predicate}
       ORDER BY g.weight DESC, g.valid_from DESC, g.id LIMIT $4) e`;
  const { rows } = await db.query<EdgeRow & { from_id: string }>(
    `SELECT * FROM (${side('subject_id')}${options.both ? ` UNION ALL ${side('object_id')}` : ''}) hop ORDER BY rank, from_id, id LIMIT $5`,
    params,
  );
  return rows;
}

/** Closes the open edges a memory stated that are not among `kept` (it no longer states them). */
export async function endEdgesOfMemoryExcept(db: Queryable, projectId: string, memoryId: string, kept: readonly string[]): Promise<void> {
  await db.query(
    // The time as a parameter: beside a column (greatest), now() is refused by Citus.
    `UPDATE graph_edges SET valid_to = greatest(valid_from, $4::timestamptz), retired_at = $4::timestamptz
      WHERE project_id = $1 AND source_memory_id = $2 AND valid_to IS NULL AND NOT (id = ANY($3::text[]))`,
    [projectId, memoryId, kept, new Date()],
  );
}
