// The audit log's write path: a group commit. Each audited call hands its record over and waits
// until the row is committed; records that arrive while a batch is being written go together in
// the next one (one INSERT however many calls are in flight). So a call costs one short insert
// shared with its neighbours, never a transaction of its own, and nothing is lost on a crash: a
// call answers only after its row is durable, and a process that dies before that answered nothing.
import { createHash } from 'node:crypto';
import type { Db } from '../platform/db.js';
import { newId } from '../platform/ids.js';
import type { AuditRecord } from '../tenancy/index.js';
import { insertAuditRows, type NewAuditRow } from './store.js';

/** The most rows one INSERT carries; more wait for the next. */
const BATCH = 500;

/** How the log names a subject: a digest of project, kind and id (the subject is never stored in clear). */
export function subjectRef(projectId: string, kind: string, externalId: string): string {
  return createHash('sha256').update(`${projectId}\u0000${kind}\u0000${externalId}`).digest('hex');
}

interface Waiting {
  row: NewAuditRow;
  resolve: () => void;
  reject: (error: unknown) => void;
}

export class AuditLog {
  private waiting: Waiting[] = [];
  private writing = false;

  constructor(private readonly db: Db) {}

  /** Resolves once the record's row is committed. */
  record(record: AuditRecord): Promise<void> {
    const row: NewAuditRow = {
      id: newId('aud'),
      projectId: record.projectId,
      at: record.at,
      keyId: record.keyId,
      keyName: record.keyName,
      eventType: record.eventType,
      subjectKind: record.subject?.kind ?? null,
      subjectRef: record.subject ? subjectRef(record.projectId, record.subject.kind, record.subject.externalId) : null,
      query: record.query,
      memoryIds: record.memoryIds,
      resultCount: record.resultCount,
      metadata: record.metadata,
    };
    return new Promise((resolve, reject) => {
      this.waiting.push({ row, resolve, reject });
      if (!this.writing) void this.drain();
    });
  }

  private async drain(): Promise<void> {
    this.writing = true;
    try {
      while (this.waiting.length > 0) {
        const batch = this.waiting.splice(0, BATCH);
        try {
          await insertAuditRows(
            this.db,
            batch.map((w) => w.row),
          );
          for (const w of batch) w.resolve();
        } catch (error) {
          for (const w of batch) w.reject(error);
        }
      }
    } finally {
      this.writing = false;
    }
  }
}
