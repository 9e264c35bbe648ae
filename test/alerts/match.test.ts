// Pure rule matching: globs, dot paths, triggers, filters, dedupe keys, throttling and the
// write-back template. No database, no clock: every time is passed in.
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import {
  admitFire,
  dedupeKeyFor,
  filterMatches,
  globMatches,
  isThrottled,
  renderTemplate,
  ruleMatches,
  triggerMatches,
  valueAt,
  type ThrottleHistory,
} from '../../src/alerts/match.js';
import type { Filter, Throttle, Trigger } from '../../src/alerts/schemas.js';
import type { LoggedEvent } from '../../src/events/schemas.js';

function event(overrides: Partial<LoggedEvent> = {}): LoggedEvent {
  return {
    id: 'evt_1',
    eventType: 'custom.thing',
    subject: { kind: 'user', externalId: 'u-42' },
    severity: 'info',
    payload: {},
    sourceMemoryIds: [],
    sourcePatternId: null,
    emittedByPack: null,
    dedupeKey: 'k1',
    occurredAt: '2026-01-01T00:00:00.000001Z',
    ...overrides,
  };
}

const MIN = 60_000;
const T0 = Date.UTC(2026, 0, 1);
const fresh = (): ThrottleHistory => ({ lastHour: 0, lastFiredAt: null });

describe('globMatches', () => {
  it('matches literal text exactly, whole string only', () => {
    expect(globMatches('typed.observation', 'typed.observation')).toBe(true);
    expect(globMatches('typed.observation', 'typed.observations')).toBe(false);
    expect(globMatches('typed.observation', 'xtyped.observation')).toBe(false);
    expect(globMatches('typed', 'typed.observation')).toBe(false);
  });

  it('lets * match any run of characters, including none and dots', () => {
    expect(globMatches('typed.*', 'typed.observation')).toBe(true);
    expect(globMatches('typed.*', 'typed.')).toBe(true);
    expect(globMatches('typed.*', 'typed.a.b.c')).toBe(true);
    expect(globMatches('typed.*', 'typedXobservation')).toBe(false);
    expect(globMatches('*', '')).toBe(true);
    expect(globMatches('*', 'anything at all')).toBe(true);
    expect(globMatches('u-*-eu', 'u-17-eu')).toBe(true);
    expect(globMatches('u-*-eu', 'u-17-us')).toBe(false);
    expect(globMatches('*.changed', 'segment.changed')).toBe(true);
    expect(globMatches('a*b*c', 'aXXbYYc')).toBe(true);
    expect(globMatches('a*b*c', 'aXXcYYb')).toBe(false);
  });

  it('treats regular-expression characters as literals', () => {
    expect(globMatches('a.c', 'abc')).toBe(false);
    expect(globMatches('a+b', 'a+b')).toBe(true);
    expect(globMatches('a+b', 'aab')).toBe(false);
    expect(globMatches('(x|y)', '(x|y)')).toBe(true);
    expect(globMatches('(x|y)', 'x')).toBe(false);
    expect(globMatches('[ab]', 'a')).toBe(false);
    expect(globMatches('$^?{}\\', '$^?{}\\')).toBe(true);
  });

  it('matches every string against itself and against prefix*', () => {
    fc.assert(
      fc.property(fc.string({ maxLength: 30 }).filter((s) => !s.includes('*')), fc.string({ maxLength: 10 }), (text, tail) => {
        expect(globMatches(text, text)).toBe(true);
        expect(globMatches(`${text}*`, text + tail)).toBe(true);
        expect(globMatches(`*${text}`, tail + text)).toBe(true);
      }),
    );
  });
});

describe('valueAt', () => {
  const doc = { order: { total: 100, lines: [{ sku: 'a' }], nothing: null }, flag: false, 'dotted.key': 1 };

  it('follows a dot path', () => {
    expect(valueAt(doc, 'order.total')).toBe(100);
    expect(valueAt(doc, 'flag')).toBe(false);
    expect(valueAt(doc, 'order.nothing')).toBeNull();
    expect(valueAt(doc, 'order')).toEqual(doc.order);
    expect(valueAt(doc, 'order.lines.0.sku')).toBe('a');
  });

  it('answers undefined for a missing step, a step through a scalar or null, and inherited properties', () => {
    expect(valueAt(doc, 'order.missing')).toBeUndefined();
    expect(valueAt(doc, 'order.total.value')).toBeUndefined();
    expect(valueAt(doc, 'order.nothing.x')).toBeUndefined();
    expect(valueAt(doc, 'dotted.key')).toBeUndefined();
    expect(valueAt(doc, 'constructor')).toBeUndefined();
    expect(valueAt(doc, 'toString')).toBeUndefined();
    expect(valueAt(doc, '__proto__')).toBeUndefined();
    expect(valueAt(null, 'a')).toBeUndefined();
    expect(valueAt('text', 'length')).toBeUndefined();
  });
});

describe('triggerMatches', () => {
  describe('engine-event', () => {
    const trigger = (eventTypes: string[]): Trigger => ({ kind: 'engine-event', eventTypes });

    it('matches an exact type and nothing else', () => {
      expect(triggerMatches(trigger(['custom.thing']), event())).toBe(true);
      expect(triggerMatches(trigger(['custom.other']), event())).toBe(false);
      expect(triggerMatches(trigger(['custom']), event())).toBe(false);
    });

    it('matches a glob such as typed.*', () => {
      expect(triggerMatches(trigger(['typed.*']), event({ eventType: 'typed.observation' }))).toBe(true);
      expect(triggerMatches(trigger(['typed.*']), event({ eventType: 'prediction.imminent' }))).toBe(false);
    });

    it('matches when any listed type matches', () => {
      expect(triggerMatches(trigger(['a.b', 'custom.*']), event())).toBe(true);
      expect(triggerMatches(trigger(['a.b', 'c.d']), event())).toBe(false);
    });

    it('matches every event type when the list is empty', () => {
      for (const eventType of ['custom.thing', 'typed.observation', 'segment.changed', 'x']) {
        expect(triggerMatches(trigger([]), event({ eventType }))).toBe(true);
      }
    });
  });

  describe('segment-change', () => {
    const changed = (payload: Record<string, unknown>) => event({ eventType: 'segment.changed', payload });

    it('matches segment.changed with the given `to`', () => {
      expect(triggerMatches({ kind: 'segment-change', to: 'churn-risk' }, changed({ from: 'active', to: 'churn-risk' }))).toBe(true);
      expect(triggerMatches({ kind: 'segment-change', to: 'churn-risk' }, changed({ to: 'churn-risk' }))).toBe(true);
      expect(triggerMatches({ kind: 'segment-change', to: 'churn-risk' }, changed({ from: 'active', to: 'loyal' }))).toBe(false);
      expect(triggerMatches({ kind: 'segment-change', to: 'churn-risk' }, changed({}))).toBe(false);
    });

    it('also requires `from` when the trigger gives it', () => {
      const trigger: Trigger = { kind: 'segment-change', from: 'active', to: 'churn-risk' };
      expect(triggerMatches(trigger, changed({ from: 'active', to: 'churn-risk' }))).toBe(true);
      expect(triggerMatches(trigger, changed({ from: 'new', to: 'churn-risk' }))).toBe(false);
      expect(triggerMatches(trigger, changed({ to: 'churn-risk' }))).toBe(false);
    });

    it('ignores other event types carrying the same payload', () => {
      expect(triggerMatches({ kind: 'segment-change', to: 'b' }, event({ eventType: 'segment.updated', payload: { from: 'a', to: 'b' } }))).toBe(false);
      expect(triggerMatches({ kind: 'segment-change', to: 'b' }, event({ eventType: 'custom.thing', payload: { to: 'b' } }))).toBe(false);
    });
  });

  describe('pattern-emerged', () => {
    const emerged = (payload: Record<string, unknown>) => event({ eventType: 'pattern.emerged', payload });

    it('matches pattern.emerged with the given patternKind', () => {
      expect(triggerMatches({ kind: 'pattern-emerged', patternKind: 'weekly' }, emerged({ patternKind: 'weekly' }))).toBe(true);
      expect(triggerMatches({ kind: 'pattern-emerged', patternKind: 'weekly' }, emerged({ patternKind: 'daily' }))).toBe(false);
      expect(triggerMatches({ kind: 'pattern-emerged', patternKind: 'weekly' }, emerged({}))).toBe(false);
    });

    it('matches any pattern.emerged when patternKind is absent', () => {
      expect(triggerMatches({ kind: 'pattern-emerged' }, emerged({ patternKind: 'daily' }))).toBe(true);
      expect(triggerMatches({ kind: 'pattern-emerged' }, emerged({}))).toBe(true);
    });

    it('ignores other event types', () => {
      expect(triggerMatches({ kind: 'pattern-emerged', patternKind: 'weekly' }, event({ eventType: 'pattern.retired', payload: { patternKind: 'weekly' } }))).toBe(false);
    });
  });
});

describe('filterMatches', () => {
  it('passes everything without a filter or with an empty one', () => {
    expect(filterMatches(null, event())).toBe(true);
    expect(filterMatches({}, event())).toBe(true);
    expect(filterMatches({}, event({ subject: null }))).toBe(true);
  });

  it('narrows by subjectKind', () => {
    expect(filterMatches({ subjectKind: 'user' }, event())).toBe(true);
    expect(filterMatches({ subjectKind: 'customer' }, event())).toBe(false);
    expect(filterMatches({ subjectKind: 'user' }, event({ subject: null }))).toBe(false);
  });

  it('narrows by a glob on the subject externalId', () => {
    expect(filterMatches({ subjectExternalIdPattern: 'u-*' }, event())).toBe(true);
    expect(filterMatches({ subjectExternalIdPattern: 'u-42' }, event())).toBe(true);
    expect(filterMatches({ subjectExternalIdPattern: 'c-*' }, event())).toBe(false);
    expect(filterMatches({ subjectExternalIdPattern: '*' }, event({ subject: null }))).toBe(false);
  });

  it('narrows by payload.category', () => {
    const f: Filter = { categories: ['billing', 'security'] };
    expect(filterMatches(f, event({ payload: { category: 'billing' } }))).toBe(true);
    expect(filterMatches(f, event({ payload: { category: 'security' } }))).toBe(true);
    expect(filterMatches(f, event({ payload: { category: 'support' } }))).toBe(false);
    expect(filterMatches(f, event({ payload: {} }))).toBe(false);
    expect(filterMatches(f, event({ payload: { category: ['billing'] } }))).toBe(false);
    expect(filterMatches({ categories: [] }, event({ payload: { category: 'billing' } }))).toBe(false);
  });

  it('narrows by dot-path equality on the payload', () => {
    const payload = { order: { total: 100, currency: 'EUR', paid: true, coupon: null } };
    expect(filterMatches({ metadataMatch: { 'order.total': 100 } }, event({ payload }))).toBe(true);
    expect(filterMatches({ metadataMatch: { 'order.total': 100, 'order.currency': 'EUR', 'order.paid': true } }, event({ payload }))).toBe(true);
    expect(filterMatches({ metadataMatch: { 'order.coupon': null } }, event({ payload }))).toBe(true);
    expect(filterMatches({ metadataMatch: { 'order.total': '100' } }, event({ payload }))).toBe(false);
    expect(filterMatches({ metadataMatch: { 'order.total': 100, 'order.currency': 'USD' } }, event({ payload }))).toBe(false);
    expect(filterMatches({ metadataMatch: { 'order.missing': null } }, event({ payload }))).toBe(false);
    expect(filterMatches({ metadataMatch: { attributeKey: 'hr' } }, event({ payload: { attributeKey: 'hr' } }))).toBe(true);
    expect(filterMatches({ metadataMatch: { attributeKey: 'hr' } }, event({ payload: { attributeKey: 'temp' } }))).toBe(false);
  });

  it('requires every given condition', () => {
    const f: Filter = { subjectKind: 'user', subjectExternalIdPattern: 'u-*', categories: ['billing'], metadataMatch: { 'order.total': 100 } };
    const payload = { category: 'billing', order: { total: 100 } };
    expect(filterMatches(f, event({ payload }))).toBe(true);
    expect(filterMatches(f, event({ payload, subject: { kind: 'customer', externalId: 'u-1' } }))).toBe(false);
    expect(filterMatches(f, event({ payload, subject: { kind: 'user', externalId: 'x-1' } }))).toBe(false);
    expect(filterMatches(f, event({ payload: { ...payload, category: 'other' } }))).toBe(false);
    expect(filterMatches(f, event({ payload: { ...payload, order: { total: 99 } } }))).toBe(false);
  });
});

describe('ruleMatches', () => {
  it('needs the rule enabled, the trigger and the filter', () => {
    const rule = { enabled: true, trigger: { kind: 'engine-event', eventTypes: ['custom.*'] } as Trigger, filter: { subjectKind: 'user' } };
    expect(ruleMatches(rule, event())).toBe(true);
    expect(ruleMatches({ ...rule, enabled: false }, event())).toBe(false);
    expect(ruleMatches(rule, event({ eventType: 'other' }))).toBe(false);
    expect(ruleMatches(rule, event({ subject: { kind: 'device', externalId: 'd' } }))).toBe(false);
  });
});

describe('dedupeKeyFor', () => {
  const u1 = event({ subject: { kind: 'user', externalId: 'u1' } });
  const u2 = event({ subject: { kind: 'user', externalId: 'u2' } });
  const c1 = event({ subject: { kind: 'customer', externalId: 'u1' } });
  const none = event({ subject: null });
  const rule = (id: string, dedupOn?: Throttle['dedupOn']) => ({ id, throttle: dedupOn === undefined ? null : { cooldownMinutes: 5, dedupOn } });

  it('subject+rule (the default): one key per rule and subject', () => {
    expect(dedupeKeyFor(rule('r1'), u1)).toBe(dedupeKeyFor(rule('r1', 'subject+rule'), u1));
    expect(dedupeKeyFor({ id: 'r1', throttle: { maxPerHour: 1 } }, u1)).toBe(dedupeKeyFor(rule('r1', 'subject+rule'), u1));
    expect(dedupeKeyFor(rule('r1', 'subject+rule'), u1)).toBe(dedupeKeyFor(rule('r1', 'subject+rule'), event({ id: 'evt_other', subject: { kind: 'user', externalId: 'u1' } })));
    expect(dedupeKeyFor(rule('r1', 'subject+rule'), u1)).not.toBe(dedupeKeyFor(rule('r1', 'subject+rule'), u2));
    expect(dedupeKeyFor(rule('r1', 'subject+rule'), u1)).not.toBe(dedupeKeyFor(rule('r1', 'subject+rule'), c1));
    expect(dedupeKeyFor(rule('r1', 'subject+rule'), u1)).not.toBe(dedupeKeyFor(rule('r2', 'subject+rule'), u1));
    expect(dedupeKeyFor(rule('r1', 'subject+rule'), none)).not.toBe(dedupeKeyFor(rule('r1', 'subject+rule'), u1));
  });

  it('rule: one key per rule, whatever the subject', () => {
    expect(dedupeKeyFor(rule('r1', 'rule'), u1)).toBe(dedupeKeyFor(rule('r1', 'rule'), u2));
    expect(dedupeKeyFor(rule('r1', 'rule'), u1)).toBe(dedupeKeyFor(rule('r1', 'rule'), none));
    expect(dedupeKeyFor(rule('r1', 'rule'), u1)).not.toBe(dedupeKeyFor(rule('r2', 'rule'), u1));
  });

  it('subject: one key per subject, shared by every rule', () => {
    expect(dedupeKeyFor(rule('r1', 'subject'), u1)).toBe(dedupeKeyFor(rule('r2', 'subject'), u1));
    expect(dedupeKeyFor(rule('r1', 'subject'), u1)).not.toBe(dedupeKeyFor(rule('r1', 'subject'), u2));
    expect(dedupeKeyFor(rule('r1', 'subject'), u1)).not.toBe(dedupeKeyFor(rule('r1', 'subject'), c1));
  });

  it('never confuses the three kinds of key', () => {
    const keys = new Set([dedupeKeyFor(rule('r1', 'subject+rule'), u1), dedupeKeyFor(rule('r1', 'rule'), u1), dedupeKeyFor(rule('r1', 'subject'), u1)]);
    expect(keys.size).toBe(3);
  });
});

describe('isThrottled', () => {
  it('is true only with a maxPerHour or a positive cooldown', () => {
    expect(isThrottled(null)).toBe(false);
    expect(isThrottled({})).toBe(false);
    expect(isThrottled({ dedupOn: 'rule' })).toBe(false);
    expect(isThrottled({ cooldownMinutes: 0 })).toBe(false);
    expect(isThrottled({ cooldownMinutes: 1 })).toBe(true);
    expect(isThrottled({ maxPerHour: 3 })).toBe(true);
  });
});

describe('admitFire', () => {
  it('always admits without a throttle', () => {
    const history = { lastHour: 1000, lastFiredAt: T0 };
    expect(admitFire(null, history, T0)).toBe(true);
  });

  it('admits at most maxPerHour fires, counting the ones it admits', () => {
    const history = fresh();
    const throttle: Throttle = { maxPerHour: 2 };
    expect(admitFire(throttle, history, T0)).toBe(true);
    expect(admitFire(throttle, history, T0 + 1)).toBe(true);
    expect(history).toEqual({ lastHour: 2, lastFiredAt: T0 + 1 });
    expect(admitFire(throttle, history, T0 + 2)).toBe(false);
    expect(history).toEqual({ lastHour: 2, lastFiredAt: T0 + 1 });
  });

  it('respects fires already in the log for the trailing hour', () => {
    expect(admitFire({ maxPerHour: 3 }, { lastHour: 3, lastFiredAt: T0 - 30 * MIN }, T0)).toBe(false);
    expect(admitFire({ maxPerHour: 3 }, { lastHour: 2, lastFiredAt: T0 - 30 * MIN }, T0)).toBe(true);
  });

  it('blocks a second fire within the cooldown and admits one at or after its end', () => {
    const throttle: Throttle = { cooldownMinutes: 60 };
    const history = fresh();
    expect(admitFire(throttle, history, T0)).toBe(true);
    expect(admitFire(throttle, history, T0 + 1)).toBe(false);
    expect(admitFire(throttle, history, T0 + 60 * MIN - 1)).toBe(false);
    expect(admitFire(throttle, history, T0 + 60 * MIN)).toBe(true);
    expect(history.lastFiredAt).toBe(T0 + 60 * MIN);
    expect(admitFire(throttle, history, T0 + 61 * MIN)).toBe(false);
  });

  it('judges the cooldown from the last fire in the log', () => {
    expect(admitFire({ cooldownMinutes: 10 }, { lastHour: 1, lastFiredAt: T0 - 9 * MIN }, T0)).toBe(false);
    expect(admitFire({ cooldownMinutes: 10 }, { lastHour: 1, lastFiredAt: T0 - 11 * MIN }, T0)).toBe(true);
    expect(admitFire({ cooldownMinutes: 0.5 }, { lastHour: 1, lastFiredAt: T0 - 29_000 }, T0)).toBe(false);
    expect(admitFire({ cooldownMinutes: 0.5 }, { lastHour: 1, lastFiredAt: T0 - 30_000 }, T0)).toBe(true);
  });

  it('applies both limits together', () => {
    const throttle: Throttle = { maxPerHour: 2, cooldownMinutes: 10 };
    const history = fresh();
    expect(admitFire(throttle, history, T0)).toBe(true);
    expect(admitFire(throttle, history, T0 + 5 * MIN)).toBe(false); // cooldown
    expect(admitFire(throttle, history, T0 + 10 * MIN)).toBe(true);
    expect(admitFire(throttle, history, T0 + 25 * MIN)).toBe(false); // two this hour
  });

  it('with neither limit set admits everything', () => {
    const history = fresh();
    for (let i = 0; i < 5; i++) expect(admitFire({ dedupOn: 'rule' }, history, T0)).toBe(true);
  });
});

describe('renderTemplate', () => {
  const rule = { id: 'alr_1', name: 'High heart rate' };
  const e = event({
    eventType: 'typed.observation',
    severity: 'critical',
    subject: { kind: 'patient', externalId: 'p-7' },
    payload: { attributeKey: 'hr', value: 180, reading: { unit: 'bpm', device: { id: 'd1' } }, tags: ['a', 'b'], none: null },
  });

  it('fills every documented variable', () => {
    expect(
      renderTemplate('{{rule.name}}|{{event.eventType}}|{{event.severity}}|{{subject.kind}}|{{subject.externalId}}', { event: e, rule }),
    ).toBe('High heart rate|typed.observation|critical|patient|p-7');
  });

  it('fills payload paths, numbers and nested objects', () => {
    expect(renderTemplate('{{event.payload.attributeKey}}={{event.payload.value}} {{event.payload.reading.unit}} on {{event.payload.reading.device.id}}', { event: e, rule })).toBe(
      'hr=180 bpm on d1',
    );
    expect(renderTemplate('{{event.payload.reading.device}} {{event.payload.tags}}', { event: e, rule })).toBe('{"id":"d1"} ["a","b"]');
  });

  it('tolerates spaces inside the braces and repeats', () => {
    expect(renderTemplate('{{ rule.name }} / {{rule.name}}', { event: e, rule })).toBe('High heart rate / High heart rate');
  });

  it('renders unknown variables, null values and a missing subject as empty', () => {
    expect(renderTemplate('[{{event.payload.missing}}][{{nothing}}][{{event.payload.none}}]', { event: e, rule })).toBe('[][][]');
    expect(renderTemplate('[{{subject.kind}}/{{subject.externalId}}]', { event: { ...e, subject: null }, rule })).toBe('[/]');
  });

  it('leaves text that is not a variable alone', () => {
    expect(renderTemplate('no variables {here} {{ not a var }}', { event: e, rule })).toBe('no variables {here} {{ not a var }}');
  });
});
