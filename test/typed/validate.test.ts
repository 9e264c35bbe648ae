// Unit tests of row validation (src/typed/validate.ts): quarantine reasons, row references, the
// dedupe hash and timestamp normalisation.
import { describe, expect, it } from 'vitest';
import type { ObservationInput } from '../../src/typed/schemas.js';
import { attributeKeysOf, checkRows, normaliseTimestamp, type AttributeRule } from '../../src/typed/validate.js';

const rules = new Map<string, AttributeRule>([
  ['hr', { dataType: 'numeric', minValid: 20, maxValid: 300 }],
  ['steps', { dataType: 'numeric', minValid: null, maxValid: null }],
  ['plan', { dataType: 'categorical', minValid: null, maxValid: null }],
  ['visit', { dataType: 'temporal', minValid: null, maxValid: null }],
  ['opted_in', { dataType: 'boolean', minValid: null, maxValid: null }],
]);

const base = { subjectKind: 'user', subjectExternalId: 'u1', observedAt: '2026-01-01T00:00:00Z' };
const hr = (value: number, extra: Partial<ObservationInput> = {}): ObservationInput => ({ ...base, attributeKey: 'hr', valueNumeric: value, ...extra });

function check(row: ObservationInput) {
  return checkRows([row], rules)[0]!;
}
function reasonOf(row: ObservationInput): string | null {
  return check(row).reason;
}

describe('checkRows: accepted rows', () => {
  it('accepts a row of each dataType with its value field', () => {
    const rows: ObservationInput[] = [
      hr(60),
      { ...base, attributeKey: 'plan', valueText: 'pro' },
      { ...base, attributeKey: 'visit', valueTs: '2026-01-02T03:04:05Z' },
      { ...base, attributeKey: 'opted_in', valueBool: false },
      { ...base, attributeKey: 'steps', valueNumeric: 0 },
    ];
    const checked = checkRows(rows, rules);
    expect(checked.map((r) => [r.status, r.reason])).toEqual(rows.map(() => ['accepted', null]));
    expect(checked[2]!.valueTs).toBe('2026-01-02T03:04:05.000Z');
    expect(checked[3]!.valueBool).toBe(false);
    expect(checked[4]!.valueNumeric).toBe(0);
  });

  it('accepts the bounds themselves (minValid and maxValid are inclusive)', () => {
    expect(check(hr(20)).status).toBe('accepted');
    expect(check(hr(300)).status).toBe('accepted');
  });

  it('treats a null value field as absent', () => {
    expect(check(hr(60, { valueText: null, valueBool: null, valueTs: null })).status).toBe('accepted');
  });

  it('keeps trust (default 1), no raw, and source', () => {
    expect(check(hr(60))).toMatchObject({ trust: 1, raw: null, source: null });
    expect(check(hr(60, { trust: 0, source: 'watch' }))).toMatchObject({ trust: 0, source: 'watch' });
    expect(check(hr(60, { trust: 1 })).trust).toBe(1);
  });
});

describe('checkRows: quarantine reasons', () => {
  it('names the first missing field', () => {
    expect(reasonOf({ subjectKind: 'user', subjectExternalId: 'u1', observedAt: base.observedAt, valueNumeric: 1 })).toBe('missing attributeKey');
    expect(reasonOf({ attributeKey: 'hr', subjectExternalId: 'u1', observedAt: base.observedAt, valueNumeric: 60 })).toBe('missing subjectKind');
    expect(reasonOf({ attributeKey: 'hr', subjectKind: 'user', observedAt: base.observedAt, valueNumeric: 60 })).toBe('missing subjectExternalId');
    expect(reasonOf({ attributeKey: 'hr', subjectKind: 'user', subjectExternalId: 'u1', valueNumeric: 60 })).toBe('missing observedAt');
    expect(reasonOf({ attributeKey: '', subjectKind: 'user', subjectExternalId: 'u1', observedAt: base.observedAt })).toBe('missing attributeKey');
  });

  it('quarantines an unknown attribute', () => {
    expect(reasonOf({ ...base, attributeKey: 'weight', valueNumeric: 70 })).toBe("unknown attribute 'weight': define it with POST /memory-typed/attributes first");
  });

  it('requires the value field of the dataType', () => {
    expect(reasonOf({ ...base, attributeKey: 'hr', valueText: '60' })).toBe("numeric attribute 'hr' needs valueNumeric (got valueText)");
    expect(reasonOf({ ...base, attributeKey: 'hr' })).toBe("numeric attribute 'hr' needs valueNumeric");
    expect(reasonOf({ ...base, attributeKey: 'plan', valueNumeric: 3 })).toBe("categorical attribute 'plan' needs valueText (got valueNumeric)");
    expect(reasonOf({ ...base, attributeKey: 'visit', valueText: 'tomorrow' })).toBe("temporal attribute 'visit' needs valueTs (got valueText)");
    expect(reasonOf({ ...base, attributeKey: 'opted_in', valueNumeric: 1 })).toBe("boolean attribute 'opted_in' needs valueBool (got valueNumeric)");
    expect(reasonOf({ ...base, attributeKey: 'opted_in', valueText: 'yes', valueNumeric: 1 })).toBe("boolean attribute 'opted_in' needs valueBool (got valueNumeric, valueText)");
  });

  it('refuses more than one value field', () => {
    expect(reasonOf(hr(60, { valueText: 'sixty' }))).toBe("numeric attribute 'hr' takes only valueNumeric (got valueText too)");
    expect(reasonOf({ ...base, attributeKey: 'opted_in', valueBool: true, valueTs: '2026-01-01T00:00:00Z', valueNumeric: 1 })).toBe(
      "boolean attribute 'opted_in' takes only valueBool (got valueNumeric, valueTs too)",
    );
  });

  it('quarantines values out of range, with the exact text', () => {
    expect(reasonOf(hr(512))).toBe('value 512 above maxValid 300');
    expect(reasonOf(hr(19.5))).toBe('value 19.5 below minValid 20');
    expect(reasonOf(hr(-3))).toBe('value -3 below minValid 20');
  });

  it('quarantines an unparsable observedAt or valueTs', () => {
    expect(reasonOf(hr(60, { observedAt: 'yesterday' }))).toBe("observedAt 'yesterday' is not an ISO 8601 timestamp");
    // "12" parses as a year in Date.parse; it is not a timestamp here.
    expect(reasonOf(hr(60, { observedAt: '12' }))).toBe("observedAt '12' is not an ISO 8601 timestamp");
    expect(reasonOf(hr(60, { observedAt: '2026-13-01T00:00:00Z' }))).toBe("observedAt '2026-13-01T00:00:00Z' is not an ISO 8601 timestamp");
    expect(reasonOf({ ...base, attributeKey: 'visit', valueTs: 'soon' })).toBe("valueTs 'soon' is not an ISO 8601 timestamp");
  });

  it('quarantines an empty valueText', () => {
    expect(reasonOf({ ...base, attributeKey: 'plan', valueText: '' })).toBe('valueText is empty');
  });

  it('quarantines trust outside [0, 1]', () => {
    expect(reasonOf(hr(60, { trust: 1.5 }))).toBe('trust 1.5 is outside [0, 1]');
    expect(reasonOf(hr(60, { trust: -0.1 }))).toBe('trust -0.1 is outside [0, 1]');
  });

  it('keeps the row as sent in raw, with trust 1 and no valueTs', () => {
    const row: ObservationInput = { ...base, id: 'r1', attributeKey: 'visit', valueTs: 'soon', trust: 0.4 };
    expect(check(row)).toMatchObject({ status: 'quarantined', raw: row, trust: 1, valueTs: null, id: 'r1' });
  });

  it('quarantines a calendar date that does not exist (2026-02-30)', () => {
    const checked = check(hr(60, { observedAt: '2026-02-30T00:00:00Z' }));
    expect(checked.status).toBe('quarantined');
    expect(checked.reason).toMatch(/observedAt/);
  });
});

describe('checkRows: references and ids', () => {
  it('refers to a row by its client id, else by its index', () => {
    const checked = checkRows([hr(999, { id: 'client-1' }), hr(999), { ...base, attributeKey: 'nope', valueNumeric: 1 }], rules);
    expect(checked.map((r) => r.ref)).toEqual(['client-1', '1', '2']);
    expect(checked[0]!.id).toBe('client-1');
    expect(checked[1]!.id).toMatch(/^obs_/);
    expect(checked[2]!.id).toMatch(/^obs_/);
    expect(checked[1]!.id).not.toBe(checked[2]!.id);
  });

  it('lists the attribute keys of a batch once each', () => {
    expect(attributeKeysOf([hr(1), hr(2), { ...base, attributeKey: 'plan' }, { ...base }]).sort()).toEqual(['hr', 'plan']);
  });
});

describe('checkRows: dedupe hash', () => {
  const hashOf = (row: ObservationInput) => check(row).dedupeHash;
  const original: ObservationInput = hr(60, { source: 'watch' });

  it('is equal for exact repeats, whatever the id or trust', () => {
    expect(hashOf(original)).toBe(hashOf({ ...original }));
    expect(hashOf(original)).toBe(hashOf({ ...original, id: 'a' }));
    expect(hashOf(original)).toBe(hashOf({ ...original, trust: 0.5 }));
  });

  it('is equal for the same instant written differently', () => {
    expect(hashOf(original)).toBe(hashOf({ ...original, observedAt: '2026-01-01T00:00:00.000Z' }));
    expect(hashOf(original)).toBe(hashOf({ ...original, observedAt: '2026-01-01T01:00:00+01:00' }));
  });

  it('differs when subject, attribute, observedAt, value or source differ', () => {
    const variants: ObservationInput[] = [
      { ...original, subjectKind: 'account' },
      { ...original, subjectExternalId: 'u2' },
      { ...original, attributeKey: 'steps' },
      { ...original, observedAt: '2026-01-01T00:00:00.001Z' },
      { ...original, valueNumeric: 61 },
      { ...original, source: 'phone' },
      { ...original, source: null },
    ];
    const hashes = new Set([hashOf(original), ...variants.map(hashOf)]);
    expect(hashes.size).toBe(variants.length + 1);
  });

  it('differs across value fields and for quarantined rows with different raw times', () => {
    expect(hashOf({ ...base, attributeKey: 'plan', valueText: 'a' })).not.toBe(hashOf({ ...base, attributeKey: 'plan', valueText: 'b' }));
    expect(hashOf({ ...base, attributeKey: 'opted_in', valueBool: true })).not.toBe(hashOf({ ...base, attributeKey: 'opted_in', valueBool: false }));
    expect(hashOf({ ...base, attributeKey: 'visit', valueTs: '2026-01-01T00:00:00Z' })).not.toBe(hashOf({ ...base, attributeKey: 'visit', valueTs: '2026-01-02T00:00:00Z' }));
    expect(hashOf(hr(60, { observedAt: 'yesterday' }))).not.toBe(hashOf(hr(60, { observedAt: 'today' })));
  });
});

describe('timestamps', () => {
  it('normalises observedAt to ISO 8601 at millisecond precision in UTC', () => {
    expect(check(hr(60, { observedAt: '2026-01-01T00:00:00Z' })).observedAt).toBe('2026-01-01T00:00:00.000Z');
    expect(check(hr(60, { observedAt: '2026-01-01T00:00:00.123456Z' })).observedAt).toBe('2026-01-01T00:00:00.123Z');
    expect(check(hr(60, { observedAt: '2026-01-01T05:30:00+05:00' })).observedAt).toBe('2026-01-01T00:30:00.000Z');
    expect(check(hr(60, { observedAt: 'yesterday' })).observedAt).toBeNull();
  });

  it('reads only ISO dates', () => {
    expect(normaliseTimestamp('2026-06-01')).toBe('2026-06-01T00:00:00.000Z');
    expect(normaliseTimestamp('12')).toBeUndefined();
    expect(normaliseTimestamp('June 1, 2026')).toBeUndefined();
    expect(normaliseTimestamp('2026-01-01T25:00:00Z')).toBeUndefined();
  });
});
