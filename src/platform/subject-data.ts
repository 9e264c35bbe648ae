// Helpers every module's subject hook uses (platform/module.ts SubjectDataHook): reading a
// subject's rows a page at a time, and deleting them by one statement, from one description of
// the table's subject rows.
import type { Queryable } from './db.js';
import type { SubjectRows } from './module.js';

/** The rows of one subject in a table with the usual columns: $1 the project, $2 the subject's kind, $3 its id. */
export const SUBJECT_WHERE = 'project_id = $1 AND subject_kind = $2 AND subject_external_id = $3';

/** Rows a page holds: small enough that an export of any subject stays in bounded memory. */
export const SUBJECT_PAGE = 500;

/**
 * Pages of one kind by keyset: `fetch(after)` answers up to SUBJECT_PAGE rows ordered by `key`,
 * strictly after `after` (null for the first page).
 */
export async function* keysetPages<R extends Record<string, unknown>>(
  kind: string,
  key: (row: R) => string,
  fetch: (after: string | null, limit: number) => Promise<readonly R[]>,
): AsyncIterable<SubjectRows> {
  let after: string | null = null;
  for (;;) {
    const rows = await fetch(after, SUBJECT_PAGE);
    if (rows.length === 0) return;
    yield { kind, rows };
    if (rows.length < SUBJECT_PAGE) return;
    after = key(rows[rows.length - 1]!);
  }
}

/** Pages of one kind over a known list of ids, SUBJECT_PAGE ids a query. */
export async function* idPages(kind: string, ids: readonly string[], fetch: (ids: readonly string[]) => Promise<readonly Record<string, unknown>[]>): AsyncIterable<SubjectRows> {
  for (let i = 0; i < ids.length; i += SUBJECT_PAGE) {
    const rows = await fetch(ids.slice(i, i + SUBJECT_PAGE));
    if (rows.length > 0) yield { kind, rows };
  }
}

/**
 * A subject's rows of one table, as SQL: `where` over the parameters the caller passes ($1 the
 * project, $2 the subject's kind, $3 its id, then any others); `key` (a unique text column)
 * orders and pages them; `columns` are what an export shows.
 */
export interface SubjectTable {
  from: string;
  where: string;
  key: string;
  columns: string;
}

/** The table's rows of the subject, a page at a time. */
export function tablePages(db: Queryable, kind: string, table: SubjectTable, params: readonly unknown[]): AsyncIterable<SubjectRows> {
  const after = `$${params.length + 1}`;
  const limit = `$${params.length + 2}`;
  const sql = `SELECT ${table.columns} FROM ${table.from} WHERE (${table.where}) AND (${after}::text IS NULL OR ${table.key} > ${after}) ORDER BY ${table.key} LIMIT ${limit}`;
  return keysetPages(
    kind,
    (row) => String(row[table.key]),
    async (from, n) => (await db.query(sql, [...params, from, n])).rows,
  );
}

/** The keys of the table's rows of the subject (a hook's `ids`: what other modules' rows point at). */
export async function subjectKeys(db: Queryable, table: Pick<SubjectTable, 'from' | 'where' | 'key'>, params: readonly unknown[]): Promise<string[]> {
  const { rows } = await db.query<{ key: string }>(`SELECT ${table.key} AS key FROM ${table.from} WHERE ${table.where} ORDER BY 1`, params);
  return rows.map((r) => r.key);
}

/** The table's rows of the subject, deleted; answers how many. */
export async function deleteRows(tx: Queryable, table: Pick<SubjectTable, 'from' | 'where'>, params: readonly unknown[]): Promise<number> {
  const { rowCount } = await tx.query(`DELETE FROM ${table.from} WHERE ${table.where}`, params);
  return rowCount;
}
