// The audit seam: routes (and MCP tools) that read or write a subject's data declare an audit
// event type; each such call is published, before its answer leaves, to whoever subscribed. The
// audit log itself (storage, queries) belongs to the compliance domain, which subscribes and
// resolves once the record is durable, so no answered call goes unrecorded (see compliance/).
import type { FastifyBaseLogger } from 'fastify';
import { Value } from 'typebox/value';
import type { AuditEventType } from '../platform/access.js';
import { DependencyUnavailableError } from '../platform/errors.js';
import { SubjectSchema, type Subject } from '../platform/common-schemas.js';

/** One audited call, as the caller's key made it, known before the route answers. */
export interface AuditCall {
  projectId: string;
  keyId: string;
  keyName: string | null;
  eventType: AuditEventType;
  /** The HTTP method, or `MCP` for a tool call. */
  method: string;
  /** The route pattern, or the MCP tool name. */
  route: string;
  requestId: string;
  at: Date;
  /** What the caller sent: the body, then the query string (or the tool's arguments). */
  input: { body?: unknown; query?: unknown };
}

/** How an audited call ended. */
export interface AuditOutcome {
  statusCode: number;
  /** The answer's payload (object or array) when there is one. */
  result?: unknown;
  /** What the route itself says about the call, over what is read from its answer. */
  detail?: Partial<AuditDetail>;
}

/** What an audit row says about the data touched. */
export interface AuditDetail {
  /** Memories in the answer (at most MAX_AUDITED_IDS). */
  memoryIds: string[];
  /** Rows in the answer (the length of its list, 1 for a single object, 0 for an error). */
  resultCount: number;
  metadata: Record<string, unknown>;
}

/** The row of a call as it starts: who, what kind of call, about whom, asking what. */
export type AuditRecord = Omit<AuditCall, 'input'> & { subject: Subject | null; query: string | null };

/** Its outcome, for the same row. */
export type AuditResult = { projectId: string; statusCode: number } & AuditDetail;

/** A listener's hold on one call's row: durable once `durable` resolves; `end` records the outcome behind the answer. */
export interface AuditEntry {
  durable: Promise<void>;
  end(result: AuditResult): void;
}

export type AuditListener = (record: AuditRecord) => AuditEntry;

/** The seam's hold on one call, across its listeners. */
export interface AuditTicket {
  /** Resolves once every listener holds the call durably; rejects (503) when one cannot. */
  durable: Promise<void>;
  end(outcome: AuditOutcome): void;
}

export const MAX_AUDITED_IDS = 1000;
const MAX_QUERY = 2000;
/** Where an answer keeps its list, in the order looked for. */
const LIST_KEYS = ['results', 'memories', 'items', 'saved', 'hits', 'patterns', 'predictions', 'events', 'observations', 'fires', 'outcomes', 'edges', 'entities', 'subjects', 'behaviors', 'members'];

const isObject = (value: unknown): value is Record<string, unknown> => typeof value === 'object' && value !== null && !Array.isArray(value);

function subjectOfInput(input: AuditCall['input']): Subject | null {
  for (const source of [input.body, input.query]) {
    if (!isObject(source)) continue;
    if (Value.Check(SubjectSchema, source.subject)) return { kind: source.subject.kind, externalId: source.subject.externalId };
    if (typeof source.subjectKind === 'string' && typeof source.subjectExternalId === 'string') return { kind: source.subjectKind, externalId: source.subjectExternalId };
  }
  return null;
}

function queryOfInput(input: AuditCall['input']): string | null {
  for (const source of [input.body, input.query]) {
    if (!isObject(source)) continue;
    const text = [source.query, source.q, source.text, source.content].find((v) => typeof v === 'string');
    if (typeof text === 'string') return text.slice(0, MAX_QUERY);
  }
  return null;
}

/** A memory in an answer: an item with content, or one carrying a memory or its id. */
function memoryIdOf(item: unknown): string | undefined {
  if (!isObject(item)) return undefined;
  if (isObject(item.memory) && typeof item.memory.id === 'string') return item.memory.id;
  if (typeof item.memoryId === 'string') return item.memoryId;
  if (typeof item.id === 'string' && typeof item.content === 'string') return item.id;
  return undefined;
}

function listOf(result: unknown): readonly unknown[] | undefined {
  if (Array.isArray(result)) return result;
  if (!isObject(result)) return undefined;
  for (const key of LIST_KEYS) if (Array.isArray(result[key])) return result[key] as unknown[];
  return undefined;
}

/** The row of a call as it starts, read from what it was sent. */
export function auditRecord(call: AuditCall): AuditRecord {
  const { input, ...who } = call;
  return { ...who, subject: subjectOfInput(input), query: queryOfInput(input) };
}

/** The detail of a call's outcome, read from what it answered; the route's own detail wins. */
export function auditDetail(call: Pick<AuditCall, 'method' | 'route' | 'requestId'>, outcome: AuditOutcome): AuditDetail {
  const failed = outcome.statusCode >= 400;
  const list = failed ? undefined : listOf(outcome.result);
  const items = list ?? (!failed && isObject(outcome.result) ? [outcome.result] : []);
  const memoryIds = [...new Set(items.map(memoryIdOf).filter((id): id is string => id !== undefined))].slice(0, MAX_AUDITED_IDS);
  return {
    memoryIds,
    resultCount: failed ? 0 : items.length,
    ...outcome.detail,
    metadata: { method: call.method, route: call.route, statusCode: outcome.statusCode, requestId: call.requestId, ...outcome.detail?.metadata },
  };
}

export class Audit {
  private readonly listeners: AuditListener[] = [];

  subscribe(listener: AuditListener): void {
    this.listeners.push(listener);
  }

  /**
   * Starts a call's record with every listener, as the route starts its work (the row is written
   * while the route works). Await `durable` before answering: a listener that cannot hold the
   * record makes the call answer 503 rather than data the log does not show was read. Then `end`
   * hands over the outcome, which listeners write behind the answer.
   */
  begin(call: AuditCall, log: FastifyBaseLogger): AuditTicket {
    const record = auditRecord(call);
    const entries = this.listeners.map((listener) => listener(record));
    const durable = Promise.all(entries.map((e) => e.durable)).then(
      () => undefined,
      (error: unknown) => {
        log.error({ err: error, eventType: call.eventType }, 'audit record failed');
        throw new DependencyUnavailableError('the audit log could not record this call, so it was not answered; retry shortly', { cause: error });
      },
    );
    // Awaited later (when the route answers); until then a failure must not count as unhandled.
    durable.catch(() => undefined);
    return {
      durable,
      end: (outcome) => {
        const result: AuditResult = { projectId: call.projectId, statusCode: outcome.statusCode, ...auditDetail(call, outcome) };
        for (const entry of entries) entry.end(result);
      },
    };
  }

  /** A whole call at once (begun and ended together): for calls that never reached their handler. */
  async record(call: AuditCall, outcome: AuditOutcome, log: FastifyBaseLogger): Promise<void> {
    const ticket = this.begin(call, log);
    await ticket.durable;
    ticket.end(outcome);
  }
}
