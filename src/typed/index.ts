// The typed domain's face: attribute definitions, validated ingest of typed observations
// (synchronous or queued), and per-subject running statistics. Every accepted numeric observation
// is appended to the event log (by the typed.events job, just behind the ingest), so alert rules see it.
import type { EventsApi } from '../events/index.js';
import { bindMethods, type DomainModule } from '../platform/module.js';
import { domainQueue } from '../platform/queue.js';
import type { Runtime } from '../platform/runtime.js';
import type { TenancyApi } from '../tenancy/index.js';
import { typedRoutes } from './routes.js';
import { TypedService, typedJobs, type TypedJobs } from './service.js';
import { outboxBacklog } from './store/event-outbox.js';
import { queuedBacklog } from './store/ingest-batches.js';
import { unfoldedBacklog } from './store/unfolded.js';
import { typedSubjectData } from './subject-data.js';

export type { TypedJobs } from './service.js';

/** The face's methods, named once: its api type and its bound api both read them. */
const TYPED_SERVICE_METHODS = ['defineAttribute', 'listAttributes', 'ingest', 'enqueue', 'sweepQueued', 'appendOutboxEvents', 'foldPending', 'rebuildStaleSeries', 'listObservations', 'observationIds', 'accumulator'] as const;

export type TypedApi = Pick<TypedService, (typeof TYPED_SERVICE_METHODS)[number]>;

export function createTypedModule(
  runtime: Pick<Runtime, 'db' | 'log' | 'queue'>,
  deps: { tenancy: Pick<TenancyApi, 'metered'>; events: Pick<EventsApi, 'appendInTransaction' | 'afterCommit'> },
): DomainModule<TypedApi, TypedJobs> {
  const typed = new TypedService(runtime.db, domainQueue<TypedJobs>(runtime.queue, 'typed'), deps.tenancy, deps.events, runtime.log);
  return {
    name: 'typed',
    api: bindMethods(typed, TYPED_SERVICE_METHODS),
    routes: async (app) => app.register(typedRoutes, { typed }),
    jobs: typedJobs(typed),
    // Queued batches and event outbox rows whose job was lost (a crash, a queue outage) are enqueued again.
    schedules: [
      { id: 'typed.ingest-sweep', job: 'typed.sweep', payload: {}, everyMs: 60_000 },
      // The points ingests appended are folded into their accumulators (reads fold what is left).
      { id: 'typed.fold', job: 'typed.fold', payload: {}, everyMs: 2_000 },
      // Accumulators that late data left stale get their EWMA rebuilt from the whole series.
      { id: 'typed.rebuild-series', job: 'typed.rebuild-series', payload: {}, everyMs: 10_000 },
    ],
    // Batches queued (and events left to append) before a restart are taken now rather than at the first sweep.
    onStart: async () => void (await typed.sweepQueued(0)),
    subjectData: typedSubjectData(runtime.db),
    backlog: async (projectId) => {
      const { batches, rows, oldestPendingAt } = await queuedBacklog(runtime.db, projectId);
      const description = `Observations accepted by POST /memory-typed/observations/enqueue (${batches} batch${batches === 1 ? '' : 'es'}) waiting for the typed.ingest job to validate and store them.`;
      const unfoldedPoints = await unfoldedBacklog(runtime.db, projectId);
      const events = await outboxBacklog(runtime.db, projectId);
      return [
        { name: 'ingest', description, pending: rows, done: null, total: null, oldestPendingAt },
        {
          name: 'events',
          description: 'Numeric observations stored whose typed.observation events the typed.events job has yet to append to the event log (it runs just behind each ingest).',
          pending: events.events,
          done: null,
          total: null,
          oldestPendingAt: events.oldestPendingAt,
        },
        {
          name: 'accumulators',
          description: 'Numeric observations stored but not yet folded into their running statistics by the typed.fold job (every 2 s); reads of an accumulator fold them already.',
          pending: unfoldedPoints,
          done: null,
          total: null,
          oldestPendingAt: null,
        },
      ];
    },
  };
}
