// Data-subject rights over every module that keeps a subject's rows (each brings a subject hook,
// platform/module.ts): the export, streamed a page at a time; the hard delete, one transaction over
// every module with its tombstone; and the audit log's listing.
import type { FastifyBaseLogger } from 'fastify';
import type { Subject } from '../platform/common-schemas.js';
import type { Db, Queryable } from '../platform/db.js';
import { newId } from '../platform/ids.js';
import type { AnyModule, ErasedRows, SubjectDataHook, SubjectScope } from '../platform/module.js';
import type { Principal } from '../tenancy/index.js';
import { subjectRef } from './audit-log.js';
import { camel, SUBJECT_KINDS, type AuditQuery, type AuditRow, type HardDeleteBody } from './schemas.js';
import * as store from './store.js';

/**
 * Erase passes in one hard delete. The second pass finds what a write of the same subject committed
 * while the first ran (under READ COMMITTED each statement sees the latest commits), and so on; a
 * pass that finds nothing ends it. A subject written to faster than it can be erased stops here,
 * and what is left is newer than the erase.
 */
const MAX_PASSES = 5;

/** Thrown to roll a dry run back, carrying its counts out. */
class DryRunRollback<T> extends Error {
  constructor(readonly result: T) {
    super('dry run');
  }
}

interface Hook {
  module: string;
  hook: SubjectDataHook;
}

export type HardDeleteReport = Record<string, unknown> & {
  subject: Subject;
  dryRun: boolean;
  auditEventId: string | null;
  generatedAt: string;
  durationMs: number;
};

export class ComplianceService {
  /** In composition order (lowest domain first): exports read in this order, erases run in reverse. */
  private readonly hooks: readonly Hook[];

  constructor(
    private readonly db: Db,
    modules: readonly AnyModule[],
    private readonly log: FastifyBaseLogger,
  ) {
    this.hooks = modules.flatMap((m) => (m.subjectData ? [{ module: m.name, hook: m.subjectData }] : []));
  }

  /** The rows the export covers, settled before the answer starts (the audit row names the memories). */
  async exportScope(projectId: string, subject: Subject): Promise<SubjectScope> {
    return this.scope(this.db, projectId, subject);
  }

  /** The subject's ids from every module that owns rows others point at, read through `db`. */
  private async scope(db: Queryable, projectId: string, subject: Subject): Promise<SubjectScope> {
    const scope: SubjectScope = { projectId, subject, memoryIds: [], eventIds: [], observationIds: [], predictionIds: [] };
    for (const { hook } of this.hooks) if (hook.ids) Object.assign(scope, await hook.ids(db, projectId, subject));
    return scope;
  }

  /**
   * The export bundle as JSON text, a page at a time: every module's rows of the subject, each kind
   * an array, then the counts. Nothing holds more than a page. A failure midway ends the stream
   * with an error (the client sees a broken answer, never a short one that parses).
   */
  async *exportJson(scope: SubjectScope): AsyncIterable<string> {
    const started = performance.now();
    const subject = JSON.stringify({ kind: scope.subject.kind, externalId: scope.subject.externalId });
    const counts = new Map<string, number>(SUBJECT_KINDS.map((k) => [k, 0]));
    const done = new Set<string>();
    yield `{"subject":${subject},"export":{"subject":${subject}`;
    let open: string | undefined;
    for (const { module, hook } of this.hooks) {
      for await (const page of hook.export(scope)) {
        if (page.kind !== open) {
          if (open !== undefined) yield ']';
          if (done.has(page.kind) || !counts.has(page.kind)) throw new Error(`module ${module} exported kind ${page.kind} out of turn or undeclared`);
          done.add(page.kind);
          open = page.kind;
          yield `,${JSON.stringify(page.kind)}:[`;
        } else if (page.rows.length > 0) yield ',';
        yield page.rows.map((row) => JSON.stringify(row)).join(',');
        counts.set(page.kind, counts.get(page.kind)! + page.rows.length);
      }
    }
    if (open !== undefined) yield ']';
    for (const kind of SUBJECT_KINDS) if (!done.has(kind)) yield `,${JSON.stringify(kind)}:[]`;
    const generatedAt = new Date().toISOString();
    yield `,"generated_at":${JSON.stringify(generatedAt)}},"counts":${JSON.stringify(Object.fromEntries([...counts].map(([k, n]) => [camel(k), n])))}`;
    yield `,"generatedAt":${JSON.stringify(generatedAt)},"durationMs":${performance.now() - started}}`;
  }

  /**
   * Erases the subject from every module in one transaction (reverse dependency order, passes until
   * nothing is left), writes the tombstone, then deletes what lives outside the database (blobs).
   * A dry run is the same erase rolled back: its counts are the real ones and it leaves no row.
   */
  async hardDelete(principal: Principal, body: HardDeleteBody): Promise<HardDeleteReport> {
    const started = performance.now();
    const { projectId } = principal;
    const dryRun = body.dryRun ?? false;
    const erase = async (tx: Queryable) => {
      const counts = new Map<string, number>(SUBJECT_KINDS.map((k) => [k, 0]));
      const afterCommit: NonNullable<ErasedRows['afterCommit']>[] = [];
      const memoryIds: string[] = [];
      for (let pass = 0; pass < MAX_PASSES; pass++) {
        const scope = await this.scope(tx, projectId, body.subject);
        memoryIds.push(...scope.memoryIds);
        let removed = 0;
        for (const { module, hook } of [...this.hooks].reverse()) {
          const erased = await hook.erase(tx, scope);
          for (const [kind, n] of Object.entries(erased.counts)) {
            if (!counts.has(kind)) throw new Error(`module ${module} erased undeclared kind ${kind}`);
            counts.set(kind, counts.get(kind)! + n);
            removed += n;
          }
          if (erased.afterCommit) afterCommit.push(erased.afterCommit);
        }
        if (removed === 0) break;
      }
      const total = [...counts.values()].reduce((a, b) => a + b, 0);
      const durationMs = performance.now() - started;
      let auditEventId: string | null = null;
      if (!dryRun) {
        auditEventId = newId('aud');
        const ref = subjectRef(projectId, body.subject.kind, body.subject.externalId);
        await store.insertAuditRows(tx, [
          {
            id: auditEventId,
            projectId,
            at: new Date(),
            keyId: principal.keyId,
            keyName: principal.keyName,
            eventType: 'subject.hard_delete',
            subjectKind: body.subject.kind,
            subjectRef: ref,
            query: null,
            memoryIds: memoryIds.slice(0, 1000),
            resultCount: total,
            metadata: { reason: body.reason, counts: Object.fromEntries([...counts].map(([k, n]) => [camel(k), n])), durationMs },
          },
        ]);
        await store.redactSubjectQueries(tx, projectId, ref);
      }
      return { counts, afterCommit, auditEventId };
    };

    const outcome = dryRun
      ? await this.db
          .transaction(async (tx) => {
            throw new DryRunRollback(await erase(tx));
          })
          .catch((error: unknown) => {
            if (error instanceof DryRunRollback) return error.result as Awaited<ReturnType<typeof erase>>;
            throw error;
          })
      : await this.db.transaction(erase);

    if (!dryRun) {
      for (const work of outcome.afterCommit) {
        await work().catch((error: unknown) => this.log.error({ err: error, projectId }, 'work after a hard delete failed'));
      }
    }
    return {
      subject: body.subject,
      ...Object.fromEntries([...outcome.counts].map(([k, n]) => [`${camel(k)}Deleted`, n])),
      dryRun,
      auditEventId: outcome.auditEventId,
      generatedAt: new Date().toISOString(),
      durationMs: performance.now() - started,
    };
  }

  async audit(projectId: string, query: AuditQuery): Promise<AuditRow[]> {
    const subjectRefFilter =
      query.subjectKind !== undefined && query.subjectExternalId !== undefined ? subjectRef(projectId, query.subjectKind, query.subjectExternalId) : undefined;
    return store.listAudit(this.db, projectId, {
      subjectKind: query.subjectKind,
      subjectRef: subjectRefFilter,
      actor: query.actor,
      eventTypes: query.eventTypes
        ?.split(',')
        .map((t) => t.trim())
        .filter((t) => t.length > 0),
      since: query.since,
      before: query.before,
      limit: query.limit ?? 100,
    });
  }

  /** The nightly pruning of rows past the retention (tombstones stay). */
  prune(retentionDays: number): Promise<number> {
    return store.pruneAudit(this.db, retentionDays);
  }
}
