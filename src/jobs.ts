// Every job Lattice runs: name -> payload and result. One handler per name (see handlers below).
import type { JobHandlers, JobQueue } from './platform/queue.js';
import type { ConsolidateOptions, ConsolidateResult, DedupOptions, DedupResult, MemoryCuration } from './memory/curation.js';
import type { MemoryObserver, ObserveInput } from './memory/observe.js';
import type { MemoryService } from './memory/service.js';
import { memoryJobs } from './memory/jobs.js';
import type { AlertService, DeliverPayload } from './alerts/service.js';
import type { TypedService } from './typed/service.js';

export type JobMap = {
  'embeddings.backfill': { payload: { projectId: string; batch: number }; result: { embedded: number } };
  'embeddings.drain': { payload: { projectId: string }; result: { embedded: number } };
  'memory.dedup': { payload: { projectId: string } & DedupOptions; result: DedupResult };
  'memory.consolidate': { payload: { projectId: string } & ConsolidateOptions; result: ConsolidateResult };
  'memory.consolidate-all': { payload: Record<string, never>; result: { projects: number } };
  'memory.observe': { payload: { projectId: string; input: Omit<ObserveInput, 'occurredAt'> & { occurredAt: string } }; result: { saved: number } };
  'typed.ingest': { payload: { projectId: string; batchId: string }; result: { accepted: number; quarantined: number; duplicates: number } | null };
  'typed.sweep': { payload: Record<string, never>; result: { enqueued: number } };
  'alerts.deliver': { payload: DeliverPayload; result: { delivered: boolean } };
  'alerts.sweep': { payload: Record<string, never>; result: { enqueued: number } };
};

export type JobName = keyof JobMap;
export const JOB_NAMES: readonly JobName[] = [
  'embeddings.backfill',
  'embeddings.drain',
  'memory.dedup',
  'memory.consolidate',
  'memory.consolidate-all',
  'memory.observe',
  'typed.ingest',
  'typed.sweep',
  'alerts.deliver',
  'alerts.sweep',
];
export type AppQueue = JobQueue<JobMap>;

export function jobHandlers(services: {
  memory: MemoryService;
  curation: MemoryCuration;
  observer: MemoryObserver;
  typed: TypedService;
  alerts: AlertService;
}): JobHandlers<JobMap> {
  return {
    ...memoryJobs(services.memory, services.curation, services.observer),
    'typed.ingest': async ({ batchId }) => {
      const report = await services.typed.ingestQueued(batchId);
      return report ? { accepted: report.accepted, quarantined: report.quarantined, duplicates: report.duplicates } : null;
    },
    'typed.sweep': async () => ({ enqueued: await services.typed.sweepQueued() }),
    'alerts.deliver': (payload) => services.alerts.deliver(payload),
    'alerts.sweep': async () => ({ enqueued: await services.alerts.sweepDeliveries() }),
  };
}

/** Repeatable jobs, registered (idempotently) by every process that starts. */
export async function registerSchedules(queue: AppQueue): Promise<void> {
  // The nightly consolidation: dedup and decay in every project, at 03:00 UTC.
  await queue.schedule('nightly-consolidation', 'memory.consolidate-all', {}, { cron: '0 3 * * *' });
  // Queued typed batches whose job was lost (a crash, a queue outage) are enqueued again.
  await queue.schedule('typed-ingest-sweep', 'typed.sweep', {}, { everyMs: 60_000 });
  // Webhook and write-back deliveries whose job was lost are enqueued again.
  await queue.schedule('alert-delivery-sweep', 'alerts.sweep', {}, { everyMs: 60_000 });
}
