// The event log: append (idempotent per dedupeKey), evaluate alert rules in the same transaction,
// deliver after commit; and poll.
import { createHash } from 'node:crypto';
import type { AlertService, DispatchMode, PendingFire } from '../alerts/service.js';
import type { Db, Queryable } from '../platform/db.js';
import { ValidationError } from '../platform/errors.js';
import type { EmitBody, LoggedEvent, NewEvent } from './schemas.js';
import * as store from './store.js';

export interface EmitResult {
  emitted: boolean;
  event: LoggedEvent;
  alertDispatches: number;
}

/** The payload object from `payload` or the JSON text `payloadJson`. */
export function parsePayload(body: Pick<EmitBody, 'payload' | 'payloadJson'>): Record<string, unknown> {
  if (body.payload !== undefined && body.payloadJson !== undefined && body.payloadJson !== null) {
    throw new ValidationError('send payload or payloadJson, not both', { fields: ['payload', 'payloadJson'] });
  }
  if (body.payload !== undefined) return body.payload;
  if (body.payloadJson === undefined || body.payloadJson === null || body.payloadJson.trim() === '') return {};
  let parsed: unknown;
  try {
    parsed = JSON.parse(body.payloadJson);
  } catch (error) {
    throw new ValidationError(`payloadJson is not valid JSON: ${(error as Error).message}`, { field: 'payloadJson' });
  }
  if (parsed === null || typeof parsed !== 'object' || Array.isArray(parsed)) {
    throw new ValidationError('payloadJson must hold a JSON object', { field: 'payloadJson' });
  }
  return parsed as Record<string, unknown>;
}

/** JSON with object keys sorted at every depth, so `{"a":1,"b":2}` and `{"b":2,"a":1}` hash alike. */
export function canonicalJson(value: unknown): string {
  if (Array.isArray(value)) return `[${value.map(canonicalJson).join(',')}]`;
  if (value !== null && typeof value === 'object') {
    const entries = Object.entries(value as Record<string, unknown>)
      .filter(([, v]) => v !== undefined)
      .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
    return `{${entries.map(([k, v]) => `${JSON.stringify(k)}:${canonicalJson(v)}`).join(',')}}`;
  }
  return JSON.stringify(value) ?? 'null';
}

export function toNewEvent(body: EmitBody): NewEvent {
  const event = {
    eventType: body.eventType,
    subject: body.subject ?? null,
    severity: body.severity ?? 'info',
    payload: parsePayload(body),
    sourceMemoryIds: body.sourceMemoryIds ?? [],
    sourcePatternId: body.sourcePatternId ?? null,
    emittedByPack: body.emittedByPack ?? null,
  };
  // Without a dedupeKey the content is the key: a replayed request is one event.
  const dedupeKey = body.dedupeKey ?? `sha256:${createHash('sha256').update(canonicalJson(event)).digest('base64url')}`;
  return { ...event, dedupeKey };
}

export class EventLog {
  constructor(
    private readonly db: Db,
    private readonly alerts: AlertService,
  ) {}

  /** Appends inside the caller's transaction and evaluates the rules there; deliver with `dispatch` after commit. */
  async appendInTransaction(tx: Queryable, projectId: string, events: readonly NewEvent[], options: { keysAreNew?: boolean } = {}) {
    const appended = await store.appendEvents(tx, projectId, events, options);
    const fires = await this.alerts.evaluate(tx, projectId, appended);
    return { appended, fires };
  }

  dispatch(projectId: string, fires: readonly PendingFire[], mode: DispatchMode): Promise<void> {
    return this.alerts.dispatch(projectId, fires, mode);
  }

  /** One event; rules fire synchronously and their channels get a first attempt before this returns. */
  async emit(projectId: string, body: EmitBody): Promise<EmitResult> {
    const event = toNewEvent(body);
    const { appended, fires } = await this.db.transaction((tx) => this.appendInTransaction(tx, projectId, [event]));
    const [logged] = appended;
    if (!logged) {
      const existing = await store.findByDedupeKey(this.db, projectId, event.dedupeKey);
      return { emitted: false, event: existing!, alertDispatches: 0 };
    }
    await this.dispatch(projectId, fires, 'sync');
    return { emitted: true, event: logged, alertDispatches: fires.length };
  }

  list(projectId: string, page: store.EventPage): Promise<LoggedEvent[]> {
    return store.listEvents(this.db, projectId, page);
  }
}
