// The audit log's write path, in two steps around each audited call, both batched (a group
// commit: what arrives while a statement runs goes together in the next one).
//   1. As the route starts its work, its row (key, event type, subject, query) is inserted, while the
//      route works; the answer waits until that row is committed. So no call is answered without a
//      durable row, and a route slower than one insert pays nothing for it.
//   2. Behind the answer, the outcome (status, rows answered, the memories among them) updates the
//      row. A crash between the answer and this update leaves the row marked `incomplete`: the
//      access is recorded, its outcome is not.
import { createHash } from 'node:crypto';
import type { Db } from '../platform/db.js';
import { newId } from '../platform/ids.js';
import type { FastifyBaseLogger } from 'fastify';
import type { AuditEntry, AuditRecord, AuditResult } from '../tenancy/index.js';
import { completeAuditRows, insertAuditRows, type AuditOutcomeRow, type NewAuditRow } from './store.js';

/** The most rows one INSERT carries; more wait for the next. */
const BATCH = 500;

/** How the log names a subject: a digest of project, kind and id (the subject is never stored in clear). */
export function subjectRef(projectId: string, kind: string, externalId: string): string {
  return createHash('sha256').update(`${projectId}\u0000${kind}\u0000${externalId}`).digest('hex');
}

interface Waiting<T> {
  item: T;
  resolve: () => void;
  reject: (error: unknown) => void;
}

/** Items written a batch at a time by one writer: each resolves once the batch holding it is written. */
class GroupWriter<T> {
  private waiting: Waiting<T>[] = [];
  private writing: Promise<void> | undefined;

  constructor(private readonly write: (items: T[]) => Promise<void>) {}

  add(item: T): Promise<void> {
    return new Promise((resolve, reject) => {
      this.waiting.push({ item, resolve, reject });
      this.writing ??= this.drain().finally(() => (this.writing = undefined));
    });
  }

  /** Resolves once nothing waits to be written. */
  async settled(): Promise<void> {
    while (this.writing) await this.writing;
  }

  private async drain(): Promise<void> {
    while (this.waiting.length > 0) {
      const batch = this.waiting.splice(0, BATCH);
      try {
        await this.write(batch.map((w) => w.item));
        for (const w of batch) w.resolve();
      } catch (error) {
        for (const w of batch) w.reject(error);
      }
    }
  }
}

export class AuditLog {
  private readonly inserts: GroupWriter<NewAuditRow>;
  private readonly outcomes: GroupWriter<AuditOutcomeRow>;

  constructor(db: Db, log: FastifyBaseLogger) {
    this.inserts = new GroupWriter((rows) => insertAuditRows(db, rows));
    this.outcomes = new GroupWriter(async (rows) => {
      try {
        await completeAuditRows(db, rows);
      } catch (error) {
        log.error({ err: error, rows: rows.length }, 'recording the outcome of audited calls failed; their rows stay marked incomplete');
      }
    });
  }

  /** A call's row: durable once `durable` resolves; `end` records its outcome behind the answer. */
  begin(record: AuditRecord): AuditEntry {
    const id = newId('aud');
    const durable = this.inserts.add({
      id,
      projectId: record.projectId,
      at: record.at,
      keyId: record.keyId,
      keyName: record.keyName,
      eventType: record.eventType,
      subjectKind: record.subject?.kind ?? null,
      subjectRef: record.subject ? subjectRef(record.projectId, record.subject.kind, record.subject.externalId) : null,
      query: record.query,
      memoryIds: [],
      resultCount: 0,
      metadata: { method: record.method, route: record.route, requestId: record.requestId, incomplete: true },
    });
    return {
      durable,
      end: (result: AuditResult) => void this.outcomes.add({ id, projectId: result.projectId, resultCount: result.resultCount, memoryIds: result.memoryIds, metadata: result.metadata }),
    };
  }

  /** Resolves once every row begun so far is written with its outcome (tests, shutdown). */
  async settled(): Promise<void> {
    await this.inserts.settled();
    await this.outcomes.settled();
  }
}
