// Typed attributes: definitions, validated ingest (synchronous or queued), per-subject running
// statistics, and a `typed.observation` event for every accepted numeric observation (appended
// behind the ingest by the typed.events job, from an outbox the ingest writes in its transaction).
import type { FastifyBaseLogger } from 'fastify';
import type { EventsApi } from '../events/index.js';
import { ENGINE_EVENT_TYPES, type NewEvent } from '../events/schemas.js';
import type { Db, Queryable } from '../platform/db.js';
import { ConflictError, NotFoundError } from '../platform/errors.js';
import { newId } from '../platform/ids.js';
import type { DomainQueue, JobHandlers } from '../platform/queue.js';
import type { Principal, TenancyApi } from '../tenancy/index.js';
import { derive, EMPTY_ACCUMULATOR, foldBatch, withSeries } from './accumulator.js';
import type { Accumulator, Attribute, AttributeBody, IngestReport, ObservationInput, ObservationQuery } from './schemas.js';
import * as accumulators from './store/accumulators.js';
import * as attributes from './store/attributes.js';
import * as outbox from './store/event-outbox.js';
import * as batches from './store/ingest-batches.js';
import * as observations from './store/observations.js';
import * as unfolded from './store/unfolded.js';
import { attributeKeysOf, checkRows, type CheckedRow } from './validate.js';
import { appendTo } from '../platform/collections.js';

const METER = 'events-ingested';
/** A queued batch older than this with no job working on it is enqueued again by the sweep. */
export const SWEEP_AFTER_MS = 60_000;
/** How the typed.ingest and typed.events jobs are retried, whoever enqueues them. */
const JOB_RETRIES = { attempts: 5, backoffMs: 2000 } as const;

/** Queued batches are ingested by a job; a sweep re-enqueues batches whose job was lost. */
export type TypedJobs = {
  'typed.ingest': { payload: { projectId: string; batchId: string }; result: { accepted: number; quarantined: number; duplicates: number } | null };
  'typed.events': { payload: { projectId: string; outboxId: string }; result: { appended: number } | null };
  'typed.sweep': { payload: Record<string, never>; result: { enqueued: number } };
  'typed.rebuild-series': { payload: Record<string, never>; result: { rebuilt: number } };
  'typed.fold': { payload: Record<string, never>; result: { folded: number } };
};

/** Accumulator keys folded per transaction of the typed.fold job, and transactions per run at most. */
const FOLD_KEYS = 500;
const FOLD_BATCHES_PER_RUN = 50;

/** Stale accumulators rebuilt per transaction of the typed.rebuild-series job. */
const REBUILD_BATCH = 100;
/** Batches one run of the job takes at most. */
const REBUILD_BATCHES_PER_RUN = 50;

export class TypedService {
  constructor(
    private readonly db: Db,
    private readonly queue: DomainQueue<TypedJobs>,
    private readonly tenancy: Pick<TenancyApi, 'metered'>,
    private readonly events: Pick<EventsApi, 'appendInTransaction' | 'afterCommit'>,
    private readonly log: FastifyBaseLogger,
  ) {}

  // ---- definitions ----------------------------------------------------------------------------

  /** Registers the attribute, or replaces the definition with this key (its dataType may change only while it has no observations). */
  async defineAttribute(projectId: string, body: AttributeBody): Promise<{ attribute: Attribute; created: boolean }> {
    return this.db.transaction(async (tx) => {
      const existing = await attributes.getAttribute(tx, projectId, body.attributeKey);
      if (existing && existing.dataType !== body.dataType && (await observations.hasObservations(tx, projectId, body.attributeKey))) {
        throw new ConflictError(
          `attribute ${body.attributeKey} already has ${existing.dataType} observations; its dataType cannot change to ${body.dataType}. Register a new attributeKey instead.`,
          { attributeKey: body.attributeKey, dataType: existing.dataType },
        );
      }
      return attributes.upsertAttribute(tx, newId('att'), projectId, body);
    });
  }

  listAttributes(projectId: string, query: { attributeKey?: string; limit: number; offset: number }): Promise<Attribute[]> {
    return attributes.listAttributes(this.db, projectId, query);
  }

  // ---- ingest ---------------------------------------------------------------------------------

  /** Synchronous ingest. Every row is metered against events-ingested first; over quota nothing of the batch is taken. */
  async ingest(principal: Principal, rows: readonly ObservationInput[]): Promise<IngestReport> {
    const { report, outboxId } = await this.metered(principal, rows.length, () =>
      this.db.transaction((tx) => this.ingestInTransaction(tx, principal.projectId, rows)),
    );
    await this.enqueueEvents(principal.projectId, outboxId);
    return report;
  }

  /**
   * Queued ingest: the rows are metered and stored durably (in the database) before this returns;
   * a job ingests them with the same code as the synchronous path. Answers the number queued.
   */
  async enqueue(principal: Principal, rows: readonly ObservationInput[]): Promise<number> {
    const batchId = newId('tib');
    await this.metered(principal, rows.length, () => batches.insertIngestBatch(this.db, batchId, principal.projectId, rows));
    // The batch is safe in the database; if the queue is down the sweep enqueues it later.
    await this.queue
      .enqueue('typed.ingest', { projectId: principal.projectId, batchId }, { jobId: `typed.ingest.${batchId}`, ...JOB_RETRIES })
      .catch((error: unknown) => this.log.warn({ err: error, batchId }, 'enqueue of a typed batch failed; the sweep will pick it up'));
    return rows.length;
  }

  /** Every row counts against events-ingested; the units come back if the work fails. */
  private metered<T>(principal: Principal, count: number, work: () => Promise<T>): Promise<T> {
    return this.tenancy.metered(principal, METER, count, work, this.log);
  }

  /**
   * Hands an ingest's outbox row to the typed.events job. The ingest has committed by now, so a
   * failure here is logged, not thrown: the row stays, and the sweep enqueues it.
   */
  private async enqueueEvents(projectId: string, outboxId: string | undefined): Promise<void> {
    if (outboxId === undefined) return;
    await this.queue
      .enqueue('typed.events', { projectId, outboxId }, { jobId: `typed.events.${outboxId}`, ...JOB_RETRIES })
      .catch((error: unknown) => this.log.warn({ err: error, outboxId }, 'enqueue of typed.observation events failed; the sweep will pick them up'));
  }

  /**
   * The job: appends the typed.observation events of one ingest's outbox row and deletes the row,
   * in one transaction (exactly once); the alert rules they match fire as for any event. Each event
   * is built from its observation as stored now, and never while a hard delete of the project's
   * subjects runs (outbox.shareEraseLock), so an erased observation gets none.
   * Answers the number appended; undefined when the row was done already.
   */
  async appendOutboxEvents(projectId: string, outboxId: string): Promise<number | undefined> {
    const result = await this.db.transaction(async (tx) => {
      const ids = await outbox.claimOutbox(tx, projectId, outboxId);
      if (!ids) return undefined;
      await outbox.shareEraseLock(tx, projectId);
      const stored = await observations.eventSources(tx, projectId, ids);
      const rules = await attributes.loadRules(tx, projectId, [...new Set(stored.map((o) => o.attributeKey))]);
      const events: NewEvent[] = stored.map((row) => ({
        eventType: ENGINE_EVENT_TYPES.typedObservation,
        subject: { kind: row.subjectKind, externalId: row.subjectExternalId },
        severity: 'info',
        payload: { observationId: row.id, attributeKey: row.attributeKey, value: row.value, unit: rules.get(row.attributeKey)?.unit ?? null, observedAt: row.observedAt, source: row.source },
        sourceMemoryIds: [],
        sourcePatternId: null,
        emittedByPack: null,
        dedupeKey: `typed:${row.id}`,
      }));
      // Each key names an observation of this row alone, and the row is taken once.
      const receipt = await this.events.appendInTransaction(tx, projectId, events, { keysAreNew: true });
      await outbox.deleteOutbox(tx, projectId, outboxId);
      return receipt;
    });
    if (!result) return undefined;
    await this.events
      .afterCommit(result)
      .catch((error: unknown) => this.log.warn({ err: error, dispatches: result.dispatches }, 'alert dispatch failed; the delivery sweep will retry'));
    return result.appended.length;
  }

  /** The job: ingests one queued batch and deletes it in the same transaction (exactly once). */
  async ingestQueued(projectId: string, batchId: string): Promise<IngestReport | undefined> {
    const result = await this.db.transaction(async (tx) => {
      const observations = await batches.claimIngestBatch(tx, projectId, batchId);
      if (!observations) return undefined;
      const ingested = await this.ingestInTransaction(tx, projectId, observations);
      await batches.deleteIngestBatch(tx, projectId, batchId);
      return ingested;
    });
    if (!result) return undefined;
    await this.enqueueEvents(projectId, result.outboxId);
    return result.report;
  }

  /** Enqueues queued batches and event outbox rows whose job may have been lost (a crash, a queue outage). */
  async sweepQueued(olderThanMs = SWEEP_AFTER_MS): Promise<{ batches: number; events: number }> {
    const round = Math.floor(Date.now() / 1000);
    const pending = await batches.pendingIngestBatches(this.db, olderThanMs);
    for (const { id, projectId } of pending) {
      await this.queue.enqueue('typed.ingest', { projectId, batchId: id }, { jobId: `typed.ingest.${id}.sweep.${round}`, ...JOB_RETRIES });
    }
    const due = await outbox.pendingOutbox(this.db, olderThanMs);
    for (const { id, projectId } of due) {
      await this.queue.enqueue('typed.events', { projectId, outboxId: id }, { jobId: `typed.events.${id}.sweep.${round}`, ...JOB_RETRIES });
    }
    return { batches: pending.length, events: due.length };
  }

  private async ingestInTransaction(tx: Queryable, projectId: string, rows: readonly ObservationInput[]): Promise<{ report: IngestReport; outboxId: string | undefined }> {
    const rules = await attributes.loadRules(tx, projectId, attributeKeysOf(rows));
    const checked = checkRows(rows, rules);
    const { stored, duplicates } = await this.storeRows(tx, projectId, checked);

    const numeric = stored.filter((row) => row.status === 'accepted' && row.valueNumeric !== null);
    // The accumulators are folded behind (typed.fold), so concurrent ingests of the same subjects
    // never wait on each other: here the points are appended, and the rows created if new. Their
    // typed.observation events are appended behind too, by the typed.events job, from the outbox
    // row the same statement writes.
    const outboxId = numeric.length > 0 ? newId('tev') : undefined;
    await unfolded.appendUnfolded(
      tx,
      projectId,
      numeric.map((row) => ({
        subjectKind: row.subjectKind!,
        subjectExternalId: row.subjectExternalId!,
        attributeKey: row.attributeKey!,
        observationId: row.id,
        value: row.valueNumeric!,
        observedAt: row.observedAt!,
      })),
      { eventOutboxId: outboxId },
    );

    const quarantined = stored.filter((row) => row.status === 'quarantined');
    return {
      report: {
        accepted: stored.length - quarantined.length,
        quarantined: quarantined.length,
        duplicates,
        quarantineReasons: Object.fromEntries(quarantined.map((row) => [row.ref, row.reason!])),
      },
      outboxId,
    };
  }

  /**
   * Inserts the rows. A row that was not inserted is a duplicate when its dedupe hash is stored;
   * otherwise its client id names a different observation, and it is stored quarantined under a
   * new id so nothing is lost.
   */
  private async storeRows(tx: Queryable, projectId: string, checked: CheckedRow[]): Promise<{ stored: CheckedRow[]; duplicates: number }> {
    const inserted = await observations.insertObservations(tx, projectId, checked, { optimistic: true });
    // A row was stored when its id and hash came back, and it is the first row of the batch with
    // that pair (an exact repeat inside the batch, same id included, is a duplicate).
    const seen = new Set<string>();
    const stored: CheckedRow[] = [];
    const skipped: CheckedRow[] = [];
    for (const row of checked) {
      const key = observations.insertedKey(row.id, row.dedupeHash);
      if (inserted.has(key) && !seen.has(key)) stored.push(row);
      else skipped.push(row);
      seen.add(key);
    }
    if (skipped.length === 0) return { stored, duplicates: 0 };

    const storedHashes = await observations.existingHashes(tx, projectId, skipped.map((row) => row.dedupeHash));
    const clashes = skipped
      .filter((row) => !storedHashes.has(row.dedupeHash))
      .map((row): CheckedRow => ({
        ...row,
        id: newId('obs'),
        status: 'quarantined',
        reason: `id '${row.id}' is already used by a different observation`,
        raw: row.raw ?? rowAsSent(row),
      }));
    const reinserted = await observations.insertObservations(tx, projectId, clashes);
    const rescued = clashes.filter((row) => reinserted.has(observations.insertedKey(row.id, row.dedupeHash)));
    return { stored: [...stored, ...rescued], duplicates: skipped.length - rescued.length };
  }

  /**
   * Folds the points that ingests appended into their accumulators, for up to `limit` keys (of any
   * project) in one transaction, skipping keys another fold holds. Answers how many keys it folded.
   */
  async foldPending(limit = FOLD_KEYS): Promise<number> {
    return this.db.transaction(async (tx) => {
      const due = await unfolded.dueKeys(tx, limit);
      const byProject = new Map<string, accumulators.AccumulatorKey[]>();
      for (const { projectId, key } of due) appendTo(byProject, projectId, key);
      let folded = 0;
      for (const [projectId, keys] of byProject) {
        const locked = await accumulators.lockFree(tx, projectId, keys);
        const held = keys.filter((key) => locked.has(accumulators.keyOf(key)));
        const points = await unfolded.takeUnfolded(tx, projectId, held);
        const next = new Map<string, accumulators.StoredAccumulator>();
        for (const [id, taken] of points) next.set(id, foldBatch(locked.get(id)!, taken));
        await accumulators.writeAccumulators(tx, projectId, next);
        folded += next.size;
      }
      return folded;
    });
  }

  /**
   * Rebuilds the EWMA of up to `limit` accumulators that late data left stale, from their whole
   * series, skipping those a fold holds. Answers how many were rebuilt.
   */
  async rebuildStaleSeries(limit = REBUILD_BATCH): Promise<number> {
    // One project's rows a transaction: locks stay within one project (on Citus, one shard group).
    let rebuilt = 0;
    for (const projectId of await accumulators.staleProjects(this.db, limit)) {
      if (rebuilt >= limit) break;
      rebuilt += await this.db.transaction(async (tx) => {
        const rows = await accumulators.lockStale(tx, projectId, limit - rebuilt);
        const series = await observations.loadSeries(tx, projectId, rows.map((r) => r.key));
        const next = new Map<string, accumulators.StoredAccumulator>();
        for (const { key, state } of rows) {
          const id = accumulators.keyOf(key);
          next.set(id, { ...withSeries(state, series.get(id) ?? []), stale: false });
        }
        await accumulators.writeAccumulators(tx, projectId, next);
        return rows.length;
      });
    }
    return rebuilt;
  }

  // ---- reads ----------------------------------------------------------------------------------

  /** The typed observations of the project among `ids`. */
  observationIds(projectId: string, ids: readonly string[]): Promise<Set<string>> {
    return observations.existingObservationIds(this.db, projectId, ids);
  }

  listObservations(projectId: string, query: ObservationQuery) {
    const subject = parseSubject(query.subject);
    return observations.listObservations(this.db, projectId, {
      ...strip({
        subjectKind: query.subjectKind ?? subject?.kind,
        subjectExternalId: query.subjectExternalId ?? subject?.externalId,
        attributeKey: query.attributeKey ?? query.attribute,
        since: query.since,
        until: query.until,
        minValue: query.minValue,
        maxValue: query.maxValue,
        status: query.status,
      }),
      limit: query.limit ?? 100,
      offset: query.offset ?? 0,
    });
  }

  /** The accumulator; a defined attribute with no observation for the subject answers count 0. */
  async accumulator(projectId: string, key: accumulators.AccumulatorKey): Promise<Accumulator> {
    const { stored: row, waiting } = await unfolded.accumulatorAndWaiting(this.db, projectId, key);
    // Points not folded yet are folded here, for this answer, as the typed.fold job will fold them.
    const stored = row && waiting.length > 0 ? { ...foldBatch(row, waiting), updated: row.updated } : row;
    // Stale (late data folded, its rebuild not run yet): the EWMA is rebuilt here, for this answer.
    const found = stored?.stale ? { ...stored, ...withSeries(stored, (await observations.loadSeries(this.db, projectId, [key])).get(accumulators.keyOf(key)) ?? []) } : stored;
    if (found) return accumulators.toAccumulator(key, found, derive(found), found.updated);
    if (!(await attributes.getAttribute(this.db, projectId, key.attributeKey))) throw new NotFoundError(`attribute ${key.attributeKey} is not defined`);
    return accumulators.toAccumulator(key, EMPTY_ACCUMULATOR, derive(EMPTY_ACCUMULATOR), null);
  }
}

export function typedJobs(typed: TypedService): JobHandlers<TypedJobs> {
  return {
    'typed.ingest': async ({ projectId, batchId }) => {
      const report = await typed.ingestQueued(projectId, batchId);
      return report ? { accepted: report.accepted, quarantined: report.quarantined, duplicates: report.duplicates } : null;
    },
    'typed.events': async ({ projectId, outboxId }) => {
      const appended = await typed.appendOutboxEvents(projectId, outboxId);
      return appended === undefined ? null : { appended };
    },
    'typed.sweep': async () => {
      const { batches, events } = await typed.sweepQueued();
      return { enqueued: batches + events };
    },
    // Batch after batch until none is left, or a bound per run (ingests may keep adding points and
    // marking rows); what is left waits for the next run.
    'typed.fold': async () => ({ folded: await inBatches(() => typed.foldPending(), FOLD_BATCHES_PER_RUN) }),
    'typed.rebuild-series': async () => ({ rebuilt: await inBatches(() => typed.rebuildStaleSeries(), REBUILD_BATCHES_PER_RUN) }),
  };
}

/** Runs `batch` until it answers 0, at most `max` times; answers the sum of its answers. */
async function inBatches(batch: () => Promise<number>, max: number): Promise<number> {
  let total = 0;
  for (let run = 0; run < max; run++) {
    const done = await batch();
    total += done;
    if (done === 0) break;
  }
  return total;
}

/** `kind:externalId`, or a bare externalId (any kind). */
export function parseSubject(subject: string | undefined): { kind?: string; externalId: string } | undefined {
  if (subject === undefined || subject === '') return undefined;
  const colon = subject.indexOf(':');
  return colon > 0 ? { kind: subject.slice(0, colon), externalId: subject.slice(colon + 1) } : { externalId: subject };
}

function strip<T extends Record<string, unknown>>(object: T): Partial<T> {
  return Object.fromEntries(Object.entries(object).filter(([, v]) => v !== undefined)) as Partial<T>;
}

function rowAsSent(row: CheckedRow): ObservationInput {
  return strip({
    id: row.ref,
    attributeKey: row.attributeKey ?? undefined,
    subjectKind: row.subjectKind ?? undefined,
    subjectExternalId: row.subjectExternalId ?? undefined,
    valueNumeric: row.valueNumeric,
    valueText: row.valueText,
    valueBool: row.valueBool,
    valueTs: row.valueTs,
    observedAt: row.observedAt ?? undefined,
    source: row.source,
    trust: row.trust,
  }) as ObservationInput;
}
