// The alerts domain's face: alert rules evaluated on every event appended to the log, and their
// deliveries (signed webhooks, memory write-back) with retries through the queue.
import type { EventsApi } from '../events/index.js';
import type { MemoryApi } from '../memory/index.js';
import { bindMethods, type DomainModule } from '../platform/module.js';
import { domainQueue } from '../platform/queue.js';
import type { Runtime } from '../platform/runtime.js';
import { alertRoutes } from './routes.js';
import { AlertService, alertJobs, type AlertJobs } from './service.js';
import { alertsSubjectData } from './subject-data.js';

export type { AlertJobs, DeliverFiresPayload, DeliverPayload } from './service.js';

/** The face's methods, named once: its api type and its bound api both read them. */
const ALERTS_METHODS = ['create', 'list', 'get', 'patch', 'delete', 'fires', 'countActive', 'deliver', 'deliverFires', 'sweepDeliveries'] as const;

export type AlertsApi = Pick<AlertService, (typeof ALERTS_METHODS)[number]>;

export function createAlertsModule(
  runtime: Pick<Runtime, 'config' | 'db' | 'log' | 'queue'>,
  deps: { events: Pick<EventsApi, 'onAppend' | 'get'>; memory: Pick<MemoryApi, 'save'> },
): DomainModule<AlertsApi, AlertJobs> {
  const { config } = runtime;
  const alerts = new AlertService(
    runtime.db,
    domainQueue<AlertJobs>(runtime.queue, 'alerts'),
    deps.events,
    deps.memory,
    {
      allowPrivateTargets: config.webhookAllowPrivateTargets,
      allowance: config.webhookAllowedTargets,
      timeoutMs: config.webhookTimeoutMs,
      maxAttempts: config.webhookMaxAttempts,
      retryBaseMs: config.webhookRetryBaseMs,
    },
    runtime.log,
  );
  // Rules are evaluated in the transaction that appends the events; their fires are delivered after it commits.
  deps.events.onAppend(async (tx, projectId, events) => {
    const fires = await alerts.evaluate(tx, projectId, events);
    return fires.length === 0 ? undefined : { dispatches: fires.length, afterCommit: () => alerts.dispatch(projectId, fires) };
  });
  return {
    name: 'alerts',
    api: bindMethods(alerts, ALERTS_METHODS),
    routes: async (app) => app.register(alertRoutes, { alerts }),
    jobs: alertJobs(alerts),
    // Webhook and write-back deliveries whose job was lost are enqueued again (every 10 s: a retry
    // that could not be enqueued during a queue outage goes out within seconds of its return).
    schedules: [{ id: 'alerts.delivery-sweep', job: 'alerts.sweep', payload: {}, everyMs: 10_000 }],
    // Deliveries pending from before a restart, or from a queue outage, go out now rather than at the first sweep.
    onStart: async () => void (await alerts.sweepDeliveries()),
    subjectData: alertsSubjectData(runtime.db),
  };
}
