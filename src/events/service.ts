// The event log: append (idempotent per dedupeKey), let subscribers act on the appended events in
// the same transaction (alert rules record their fires there) and after commit (deliveries); and
// poll. The log knows no subscriber: higher domains plug in through `onAppend`.
import { createHash } from 'node:crypto';
import type { Db, Queryable } from '../platform/db.js';
import { ValidationError } from '../platform/errors.js';
import { assertStorableInput } from '../platform/input-guard.js';
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
  // JSON text is parsed here, past the request guard: the same rules apply to what it holds.
  assertStorableInput(parsed, 'body.payloadJson');
  return parsed as Record<string, unknown>;
}

/** JSON with object keys sorted at every depth, so `{"a":1,"b":2}` and `{"b":2,"a":1}` hash alike. */
export function canonicalJson(value: unknown): string {
  // JSON.stringify walks the value (no recursion of ours on user data; the input guard bounds its
  // depth); the replacer hands it every object with its keys sorted.
  const sorted = (_key: string, v: unknown) =>
    v !== null && typeof v === 'object' && !Array.isArray(v)
      ? Object.fromEntries(Object.entries(v as Record<string, unknown>).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)))
      : v;
  return JSON.stringify(value, sorted) ?? 'null';
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

/** Work an append set off: recorded in the appending transaction, carried out after it commits. */
export interface AppendFollowUp {
  /** The notifications it will send (alert fires), reported to the emitter. */
  readonly dispatches: number;
  afterCommit(): Promise<void>;
}

/** Called inside the appending transaction with the events it appended (never empty). */
export type AppendHook = (tx: Queryable, projectId: string, events: readonly LoggedEvent[]) => Promise<AppendFollowUp | undefined>;

export interface AppendReceipt {
  appended: LoggedEvent[];
  /** Notifications set off by the append; sent by `afterCommit`. */
  dispatches: number;
  followUps: readonly AppendFollowUp[];
}

export class EventLog {
  private readonly hooks: AppendHook[] = [];

  constructor(private readonly db: Db) {}

  /** Subscribes to every append (alert rules do). */
  onAppend(hook: AppendHook): void {
    this.hooks.push(hook);
  }

  /** Appends inside the caller's transaction and runs the subscribers there; call `afterCommit` once it commits. */
  async appendInTransaction(tx: Queryable, projectId: string, events: readonly NewEvent[], options: { keysAreNew?: boolean } = {}): Promise<AppendReceipt> {
    const appended = await store.appendEvents(tx, projectId, events, options);
    const followUps: AppendFollowUp[] = [];
    if (appended.length > 0) {
      for (const hook of this.hooks) {
        const followUp = await hook(tx, projectId, appended);
        if (followUp) followUps.push(followUp);
      }
    }
    return { appended, dispatches: followUps.reduce((sum, f) => sum + f.dispatches, 0), followUps };
  }

  /** After the appending transaction committed: carries out what the subscribers recorded. */
  async afterCommit(receipt: Pick<AppendReceipt, 'followUps'>): Promise<void> {
    for (const followUp of receipt.followUps) await followUp.afterCommit();
  }

  /**
   * One event; rules are evaluated in its transaction, and their fires are handed to the queue
   * before this returns (their channels' first attempts follow at once, off the caller's path).
   */
  async emit(projectId: string, body: EmitBody): Promise<EmitResult> {
    const event = toNewEvent(body);
    const receipt = await this.db.transaction((tx) => this.appendInTransaction(tx, projectId, [event]));
    const [logged] = receipt.appended;
    if (!logged) {
      const existing = await store.findByDedupeKey(this.db, projectId, event.dedupeKey);
      return { emitted: false, event: existing!, alertDispatches: 0 };
    }
    await this.afterCommit(receipt);
    return { emitted: true, event: logged, alertDispatches: receipt.dispatches };
  }

  list(projectId: string, page: store.EventPage): Promise<LoggedEvent[]> {
    return store.listEvents(this.db, projectId, page);
  }

  /** Events by id (those of another project are not found). */
  get(projectId: string, ids: readonly string[]): Promise<LoggedEvent[]> {
    return store.getEvents(this.db, projectId, ids);
  }
}
