// Checks each observation row against its attribute's definition. Pure: a row is either a clean
// row ready to store as accepted, or the same row with the reason it is quarantined. Nothing is
// dropped here; duplicates are found by the store (a unique hash), so they are exact under races.
import { hash } from 'node:crypto';
import { newId } from '../platform/ids.js';
import type { DataType, ObservationInput } from './schemas.js';

export interface AttributeRule {
  dataType: DataType;
  minValid: number | null;
  maxValid: number | null;
}

export interface CheckedRow {
  id: string;
  /** How the report names the row: its id when the client gave one, else its index. */
  ref: string;
  attributeKey: string | null;
  subjectKind: string | null;
  subjectExternalId: string | null;
  valueNumeric: number | null;
  valueText: string | null;
  valueBool: boolean | null;
  /** ISO 8601, millisecond precision. */
  valueTs: string | null;
  observedAt: string | null;
  source: string | null;
  trust: number;
  status: 'accepted' | 'quarantined';
  reason: string | null;
  /** The row as sent; kept only for quarantined rows. */
  raw: ObservationInput | null;
  dedupeHash: string;
}

const VALUE_FIELDS = { numeric: 'valueNumeric', categorical: 'valueText', temporal: 'valueTs', boolean: 'valueBool' } as const;
type ValueField = (typeof VALUE_FIELDS)[DataType];
/** For each dataType, the value fields it does not take. */
const OTHER_FIELDS = Object.fromEntries(
  Object.entries(VALUE_FIELDS).map(([dataType, field]) => [dataType, Object.values(VALUE_FIELDS).filter((f) => f !== field)]),
) as Record<DataType, ValueField[]>;
/** The form toISOString writes, which most clients send: a fast path that needs no regex groups. */
const CANONICAL = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/;

const ISO_DATE = /^(\d{4})-(\d{2})-(\d{2})(?:[T ](\d{2}):(\d{2})(?::(\d{2})(?:[.,]\d+)?)?)?\s*(Z|[+-]\d{2}(?::?\d{2})?)?$/i;

/**
 * ISO 8601 at millisecond precision, or undefined when the text is not a real instant: the date
 * must exist (no February 30th), the year must be 1 or later, and a time without an offset is UTC.
 */
export function normaliseTimestamp(text: string): string | undefined {
  // Canonical already: it stands when it reads back the same (no February 30th), from year 1 on.
  if (CANONICAL.test(text)) {
    const ms = Date.parse(text);
    if (Number.isFinite(ms) && !text.startsWith('0000') && new Date(ms).toISOString() === text) return text;
  }
  const match = ISO_DATE.exec(text.trim());
  if (!match) return undefined;
  const [, year, month, day, hour, minute, second, offset] = match;
  const y = Number(year);
  const m = Number(month);
  const d = Number(day);
  if (y < 1 || m < 1 || m > 12 || d < 1 || d > new Date(Date.UTC(2000, m, 0)).getUTCDate() || (m === 2 && d === 29 && !isLeapYear(y))) return undefined;
  if (hour !== undefined && (Number(hour) > 23 || Number(minute) > 59 || Number(second ?? 0) > 59)) return undefined;
  const withOffset = hour !== undefined && offset === undefined ? `${text.trim()}Z` : text.trim();
  const ms = Date.parse(withOffset);
  return Number.isFinite(ms) ? new Date(ms).toISOString() : undefined;
}

function isLeapYear(year: number): boolean {
  return (year % 4 === 0 && year % 100 !== 0) || year % 400 === 0;
}

function present(value: unknown): boolean {
  return value !== undefined && value !== null;
}

/** The first problem with the row, or undefined when it may be accepted. */
function problemOf(row: ObservationInput, rule: AttributeRule | undefined, observedAt: string | undefined): string | undefined {
  if (!row.attributeKey) return 'missing attributeKey';
  if (!row.subjectKind) return 'missing subjectKind';
  if (!row.subjectExternalId) return 'missing subjectExternalId';
  if (row.observedAt === undefined) return 'missing observedAt';
  if (observedAt === undefined) return `observedAt '${row.observedAt}' is not an ISO 8601 timestamp`;
  if (row.trust !== undefined && !(row.trust >= 0 && row.trust <= 1)) return `trust ${row.trust} is outside [0, 1]`;
  if (!rule) return `unknown attribute '${row.attributeKey}': define it with POST /memory-typed/attributes first`;
  const field: ValueField = VALUE_FIELDS[rule.dataType];
  const others = OTHER_FIELDS[rule.dataType].filter((f) => present(row[f]));
  if (!present(row[field])) {
    return `${rule.dataType} attribute '${row.attributeKey}' needs ${field}${others.length > 0 ? ` (got ${others.join(', ')})` : ''}`;
  }
  if (others.length > 0) return `${rule.dataType} attribute '${row.attributeKey}' takes only ${field} (got ${others.join(', ')} too)`;
  if (rule.dataType === 'temporal' && normaliseTimestamp(row.valueTs!) === undefined) return `valueTs '${row.valueTs}' is not an ISO 8601 timestamp`;
  if (rule.dataType === 'categorical' && row.valueText!.length === 0) return 'valueText is empty';
  if (rule.dataType === 'numeric') {
    const value = row.valueNumeric!;
    if (rule.minValid !== null && value < rule.minValid) return `value ${value} below minValid ${rule.minValid}`;
    if (rule.maxValid !== null && value > rule.maxValid) return `value ${value} above maxValid ${rule.maxValid}`;
    if (!Number.isFinite(value * value)) return `value ${value} is too large to accumulate (its square overflows)`;
  }
  return undefined;
}

function dedupeHash(parts: readonly unknown[]): string {
  return hash('sha256', JSON.stringify(parts), 'base64url').slice(0, 32);
}

export function checkRows(rows: readonly ObservationInput[], rules: ReadonlyMap<string, AttributeRule>): CheckedRow[] {
  return rows.map((row, index) => {
    const observedAt = row.observedAt === undefined ? undefined : normaliseTimestamp(row.observedAt);
    const rule = row.attributeKey ? rules.get(row.attributeKey) : undefined;
    const reason = problemOf(row, rule, observedAt);
    const valueTs = present(row.valueTs) ? (normaliseTimestamp(row.valueTs!) ?? row.valueTs!) : null;
    const accepted = reason === undefined;
    const values = {
      valueNumeric: row.valueNumeric ?? null,
      valueText: row.valueText ?? null,
      valueBool: row.valueBool ?? null,
      valueTs: accepted ? valueTs : null,
    };
    return {
      id: row.id ?? newId('obs'),
      ref: row.id ?? String(index),
      attributeKey: row.attributeKey ?? null,
      subjectKind: row.subjectKind ?? null,
      subjectExternalId: row.subjectExternalId ?? null,
      ...values,
      observedAt: observedAt ?? null,
      source: row.source ?? null,
      trust: accepted ? (row.trust ?? 1) : 1,
      status: accepted ? 'accepted' : 'quarantined',
      reason: reason ?? null,
      raw: accepted ? null : row,
      dedupeHash: dedupeHash([
        row.subjectKind ?? null,
        row.subjectExternalId ?? null,
        row.attributeKey ?? null,
        observedAt ?? row.observedAt ?? null,
        row.valueNumeric ?? null,
        row.valueText ?? null,
        row.valueBool ?? null,
        valueTs,
        row.source ?? null,
      ]),
    };
  });
}

/** The attribute keys a batch names, for loading their definitions in one query. */
export function attributeKeysOf(rows: readonly ObservationInput[]): string[] {
  return [...new Set(rows.flatMap((row) => (row.attributeKey ? [row.attributeKey] : [])))];
}
