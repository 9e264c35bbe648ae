// The audit seam: routes (and MCP tools) that read or write a subject's data declare an audit
// event type; after each such call the tenancy domain publishes one record to whoever subscribed.
// The audit log itself (storage, queries) belongs to the compliance domain, which subscribes.
import type { FastifyBaseLogger } from 'fastify';
import type { AuditEventType } from '../platform/access.js';

/** One audited call, as the caller's key made it. */
export interface AuditRecord {
  projectId: string;
  keyId: string;
  eventType: AuditEventType;
  /** The HTTP method, or `MCP` for a tool call. */
  method: string;
  /** The route pattern, or the MCP tool name. */
  route: string;
  statusCode: number;
  requestId: string;
  at: Date;
}

export type AuditListener = (record: AuditRecord) => void | Promise<void>;

export class Audit {
  private readonly listeners: AuditListener[] = [];

  subscribe(listener: AuditListener): void {
    this.listeners.push(listener);
  }

  /** Hands the record to every listener; a listener's failure is logged, never the caller's. */
  publish(record: AuditRecord, log: FastifyBaseLogger): void {
    for (const listener of this.listeners) {
      void Promise.resolve()
        .then(() => listener(record))
        .catch((error: unknown) => log.error({ err: error, eventType: record.eventType }, 'audit listener failed'));
    }
  }
}
