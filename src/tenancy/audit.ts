// The audit seam: routes (and MCP tools) that read or write a subject's data declare an audit
// event type; each such call is published, before its answer leaves, to whoever subscribed. The
// audit log itself (storage, queries) belongs to the compliance domain, which subscribes and
// resolves once the record is durable, so no answered call goes unrecorded (see compliance/).
import type { FastifyBaseLogger } from 'fastify';
import { Value } from 'typebox/value';
import type { AuditEventType } from '../platform/access.js';
import { DependencyUnavailableError } from '../platform/errors.js';
import { SubjectSchema, type Subject } from '../platform/common-schemas.js';

/** One audited call, as the caller's key made it. */
export interface AuditCall {
  projectId: string;
  keyId: string;
  keyName: string | null;
  eventType: AuditEventType;
  /** The HTTP method, or `MCP` for a tool call. */
  method: string;
  /** The route pattern, or the MCP tool name. */
  route: string;
  statusCode: number;
  requestId: string;
  at: Date;
  /** What the caller sent: the body, then the query string (or the tool's arguments). */
  input: { body?: unknown; query?: unknown };
  /** The answer's payload (object or array) when there is one. */
  result?: unknown;
  /** What the route itself says about the call, over what is read from input and result. */
  detail?: Partial<AuditDetail>;
}

/** What an audit row says about the data touched. */
export interface AuditDetail {
  subject: Subject | null;
  query: string | null;
  /** Memories in the answer (at most MAX_AUDITED_IDS). */
  memoryIds: string[];
  /** Rows in the answer (the length of its list, 1 for a single object, 0 for an error). */
  resultCount: number;
  metadata: Record<string, unknown>;
}

export type AuditRecord = Omit<AuditCall, 'input' | 'result' | 'detail'> & AuditDetail;

export type AuditListener = (record: AuditRecord) => Promise<void>;

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

/** The detail of a call, read from what it was sent and what it answered; the route's own detail wins. */
export function auditDetail(call: AuditCall): AuditDetail {
  const failed = call.statusCode >= 400;
  const list = failed ? undefined : listOf(call.result);
  const single = !failed && list === undefined && isObject(call.result) ? [call.result] : [];
  const items = list ?? single;
  const memoryIds = [...new Set(items.map(memoryIdOf).filter((id): id is string => id !== undefined))].slice(0, MAX_AUDITED_IDS);
  return {
    subject: subjectOfInput(call.input),
    query: queryOfInput(call.input),
    memoryIds,
    resultCount: failed ? 0 : items.length,
    ...call.detail,
    metadata: { method: call.method, route: call.route, statusCode: call.statusCode, requestId: call.requestId, ...call.detail?.metadata },
  };
}

export class Audit {
  private readonly listeners: AuditListener[] = [];

  subscribe(listener: AuditListener): void {
    this.listeners.push(listener);
  }

  get active(): boolean {
    return this.listeners.length > 0;
  }

  /**
   * Hands the call's record to every listener and resolves once all have it (the log resolves when
   * the row is durable). A listener's failure is logged and rethrown: the caller answers an error
   * rather than data the log does not show was read.
   */
  async publish(call: AuditCall, log: FastifyBaseLogger): Promise<void> {
    if (this.listeners.length === 0) return;
    const { input: _input, result: _result, detail: _detail, ...who } = call;
    const record: AuditRecord = { ...who, ...auditDetail(call) };
    try {
      await Promise.all(this.listeners.map((listener) => listener(record)));
    } catch (error) {
      log.error({ err: error, eventType: call.eventType }, 'audit record failed');
      throw new DependencyUnavailableError('the audit log could not record this call, so it was not answered; retry shortly', { cause: error });
    }
  }
}
