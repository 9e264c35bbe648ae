// Which rules an event fires, the dedupe key of a fire, throttling, and the write-back template.
// Pure: no I/O, no clock (times are passed in).
import { ENGINE_EVENT_TYPES, type LoggedEvent } from '../events/schemas.js';
import type { Filter, Rule, Throttle, Trigger } from './schemas.js';

/** `*` matches any run of characters; everything else is literal. */
export function globMatches(pattern: string, text: string): boolean {
  const source = pattern
    .split('*')
    .map((part) => part.replace(/[.+?^${}()|[\]\\]/g, '\\$&'))
    .join('.*');
  return new RegExp(`^${source}$`, 's').test(text);
}

/** The value at a dot path (`order.total`) of a JSON object, or undefined. */
export function valueAt(object: unknown, path: string): unknown {
  let current: unknown = object;
  for (const part of path.split('.')) {
    if (current === null || typeof current !== 'object' || !Object.hasOwn(current, part)) return undefined;
    current = (current as Record<string, unknown>)[part];
  }
  return current;
}

export function triggerMatches(trigger: Trigger, event: LoggedEvent): boolean {
  switch (trigger.kind) {
    case 'engine-event':
      return trigger.eventTypes.length === 0 || trigger.eventTypes.some((type) => globMatches(type, event.eventType));
    case 'segment-change':
      return (
        event.eventType === ENGINE_EVENT_TYPES.segmentChanged &&
        event.payload.to === trigger.to &&
        (trigger.from === undefined || event.payload.from === trigger.from)
      );
    case 'pattern-emerged':
      return event.eventType === ENGINE_EVENT_TYPES.patternEmerged && (trigger.patternKind === undefined || event.payload.patternKind === trigger.patternKind);
  }
}

export function filterMatches(filter: Filter | null, event: LoggedEvent): boolean {
  if (filter === null) return true;
  if (filter.subjectKind !== undefined && event.subject?.kind !== filter.subjectKind) return false;
  if (filter.subjectExternalIdPattern !== undefined && (event.subject === null || !globMatches(filter.subjectExternalIdPattern, event.subject.externalId))) {
    return false;
  }
  if (filter.categories !== undefined) {
    const category = event.payload.category;
    if (typeof category !== 'string' || !filter.categories.includes(category)) return false;
  }
  if (filter.metadataMatch !== undefined) {
    for (const [path, expected] of Object.entries(filter.metadataMatch)) {
      if (valueAt(event.payload, path) !== expected) return false;
    }
  }
  return true;
}

export function ruleMatches(rule: Pick<Rule, 'enabled' | 'trigger' | 'filter'>, event: LoggedEvent): boolean {
  return rule.enabled && triggerMatches(rule.trigger, event) && filterMatches(rule.filter, event);
}

/** Fires sharing a dedupe key share a throttle budget. */
export function dedupeKeyFor(rule: Pick<Rule, 'id' | 'throttle'>, event: LoggedEvent): string {
  const subject = event.subject === null ? '-' : `${event.subject.kind}/${event.subject.externalId}`;
  switch (rule.throttle?.dedupOn ?? 'subject+rule') {
    case 'rule':
      return `rule:${rule.id}`;
    case 'subject':
      return `subject:${subject}`;
    case 'subject+rule':
      return `rule:${rule.id}|subject:${subject}`;
  }
}

export function isThrottled(throttle: Throttle | null): throttle is Throttle {
  return throttle !== null && (throttle.maxPerHour !== undefined || (throttle.cooldownMinutes ?? 0) > 0);
}

/** What the log says about one dedupe key: fires in the trailing hour and the latest fire time. */
export interface ThrottleHistory {
  lastHour: number;
  lastFiredAt: number | null;
}

/** Whether a fire may happen now; when it may, records it in `history`. */
export function admitFire(throttle: Throttle | null, history: ThrottleHistory, now: number): boolean {
  if (throttle === null) return true;
  if (throttle.maxPerHour !== undefined && history.lastHour >= throttle.maxPerHour) return false;
  const cooldownMs = (throttle.cooldownMinutes ?? 0) * 60_000;
  if (cooldownMs > 0 && history.lastFiredAt !== null && now - history.lastFiredAt < cooldownMs) return false;
  history.lastHour += 1;
  history.lastFiredAt = now;
  return true;
}

/** Fills `{{event.eventType}}`, `{{subject.externalId}}`, `{{rule.name}}`, `{{event.payload.x.y}}`; unknown variables become empty. */
export function renderTemplate(template: string, context: { event: LoggedEvent; rule: Pick<Rule, 'id' | 'name'> }): string {
  const scope = {
    event: context.event,
    subject: context.event.subject ?? { kind: '', externalId: '' },
    rule: context.rule,
  };
  return template.replace(/\{\{\s*([A-Za-z0-9_.]+)\s*\}\}/g, (_all, path: string) => {
    const value = valueAt(scope, path);
    if (value === undefined || value === null) return '';
    return typeof value === 'object' ? JSON.stringify(value) : String(value);
  });
}
