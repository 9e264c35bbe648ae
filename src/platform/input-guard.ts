// One guard for everything a client sends (JSON bodies, query strings, and so MCP tool arguments,
// which arrive in the body): what the schemas let through but Postgres or JS cannot hold answers
// 400 naming the field, never 500 later. No NUL character (Postgres text refuses 0x00), no unpaired
// surrogate (not UTF-8, refused by jsonb), a nesting limit (deeper values are refused before any
// code walks them), and timestamps that both Postgres and JS hold (the `date-time` format, below).
// The walk is iterative: nothing recursive runs on user data.

import { ValidationError } from './errors.js';

/** Objects and arrays nested deeper than this are refused. */
export const MAX_NESTING = 32;

export interface InputProblem {
  /** Where, as the error body names fields: `body.metadata.note`, `querystring.asOf`. */
  path: string;
  message: string;
}

/** A high surrogate not followed by a low one, or a low one not preceded by a high one. */
const LONE_SURROGATE = /[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/;

/** Text as near as Postgres can hold it: NUL characters and unpaired surrogates become U+FFFD (for records of what a caller sent, such as the audit log). */
export const storableText = (text: string): string => text.replaceAll('\u0000', '\uFFFD').replace(new RegExp(LONE_SURROGATE.source, 'g'), '\uFFFD');

const describe = (text: string): string | undefined => {
  if (text.includes('\u0000')) return 'contains a NUL character (\\u0000)';
  if (LONE_SURROGATE.test(text)) return 'contains an unpaired UTF-16 surrogate';
  return undefined;
};

const child = (path: string, key: string | number) =>
  typeof key === 'number' ? `${path}[${key}]` : /^[A-Za-z_$][\w$]*$/.test(key) ? `${path}.${key}` : `${path}[${JSON.stringify(key)}]`;

/** The first problem in a parsed value, or undefined. Iterative, so any depth is safe to inspect. */
export function findInputProblem(value: unknown, root: string): InputProblem | undefined {
  const stack: { value: unknown; path: string; depth: number }[] = [{ value, path: root, depth: 0 }];
  while (stack.length > 0) {
    const { value: current, path, depth } = stack.pop()!;
    if (typeof current === 'string') {
      const problem = describe(current);
      if (problem) return { path, message: problem };
      continue;
    }
    if (current === null || typeof current !== 'object') continue;
    if (depth >= MAX_NESTING) return { path, message: `nests deeper than ${MAX_NESTING} levels` };
    if (Array.isArray(current)) {
      for (let i = current.length - 1; i >= 0; i--) stack.push({ value: current[i], path: child(path, i), depth: depth + 1 });
      continue;
    }
    const entries = Object.entries(current as Record<string, unknown>);
    for (let i = entries.length - 1; i >= 0; i--) {
      const [key, item] = entries[i]!;
      const keyProblem = describe(key);
      if (keyProblem) return { path: child(path, key), message: `has a key that ${keyProblem}` };
      stack.push({ value: item, path: child(path, key), depth: depth + 1 });
    }
  }
  return undefined;
}

/** Throws the 400 naming the field when `value` holds something no store can take. */
export function assertStorableInput(value: unknown, root: string): void {
  const problem = findInputProblem(value, root);
  if (problem) throw new ValidationError(`${problem.path} ${problem.message}`, { errors: [problem] });
}

// RFC 3339 date-time, as the `date-time` format reads it.
const DATE_TIME = /^(\d{4})-(\d{2})-(\d{2})[Tt ](\d{2}):(\d{2}):(\d{2})(?:\.(\d{1,9}))?(?:[Zz]|([+-])(\d{2}):(\d{2}))$/;
const daysIn = (year: number, month: number) => new Date(Date.UTC(year, month, 0)).getUTCDate();

/**
 * A timestamp both Postgres and JS hold: RFC 3339 with a real calendar date, no leap second (JS
 * has no 23:59:60), and a year from 0001 to 9999 (Postgres has no year 0 and JS ends in 275760),
 * which `new Date(text)` (how the services read it) reads as the instant it names: with a space
 * for the T, JS reads years 0050 to 0099 as 1950 to 1999, and years before 0050 as no date at all.
 */
export function isStorableTimestamp(text: string): boolean {
  const m = DATE_TIME.exec(text);
  if (!m) return false;
  const [year, month, day, hour, minute, second] = m.slice(1, 7).map(Number) as [number, number, number, number, number, number];
  if (year < 1 || month < 1 || month > 12 || day < 1 || day > daysIn(year, month)) return false;
  if (hour > 23 || minute > 59 || second > 59) return false;
  if (m[8] && (Number(m[9]) > 23 || Number(m[10]) > 59)) return false;
  // The instant from the fields themselves (setUTCFullYear takes years 0-99 as they are).
  const fields = new Date(0);
  fields.setUTCFullYear(year, month - 1, day);
  fields.setUTCHours(hour, minute, second, Number((m[7] ?? '').padEnd(3, '0').slice(0, 3)));
  const instant = fields.getTime() - (m[8] ? (m[8] === '-' ? -1 : 1) * (Number(m[9]) * 60 + Number(m[10])) * 60_000 : 0);
  if (Date.parse(text) !== instant) return false;
  const utcYear = new Date(instant).getUTCFullYear();
  return utcYear >= 1 && utcYear <= 9999;
}
