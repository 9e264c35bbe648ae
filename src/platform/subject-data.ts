// Helpers every module's subject hook uses (platform/module.ts SubjectDataHook): reading a
// subject's rows a page at a time, and deleting them by one statement.
import type { Queryable } from './db.js';
import type { SubjectRows } from './module.js';

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

/** One erase statement, `DELETE FROM <from> WHERE <where>`; answers the rows it removed. */
export async function deleteWhere(tx: Queryable, from: string, where: string, params: readonly unknown[]): Promise<number> {
  const { rowCount } = await tx.query(`DELETE FROM ${from} WHERE ${where}`, params);
  return rowCount;
}
