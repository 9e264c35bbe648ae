// The discovery domain's face: subject features kept current, and behaviors discovered over them.
import type { BehaviorApi } from '../behavior/index.js';
import type { EventsApi } from '../events/index.js';
import type { MemoryApi } from '../memory/index.js';
import type { Subject } from '../platform/common-schemas.js';
import { bindMethods, type DomainModule } from '../platform/module.js';
import { domainQueue, type JobHandlers } from '../platform/queue.js';
import type { Runtime } from '../platform/runtime.js';
import { Cohorts } from './cohort.js';
import { Discovery } from './discover.js';
import { discoverySubjectData, FeatureStore } from './features.js';
import { discoveryRoutes } from './routes.js';
import { BehaviorSchema, CohortMemberSchema, type DiscoverBody, type DiscoverResponse } from './schemas.js';

export type DiscoveryJobs = {
  /** Recomputes the features of these subjects (all with activity in the last year when none). */
  'discovery.refresh-features': { payload: { projectId: string; subjects?: Subject[] }; result: { refreshed: number; removed: number; segmentChanges: number } };
  /** Every project's features, nightly: the RFM cut points move as the project does. */
  'discovery.refresh-nightly': { payload: Record<string, never>; result: { projects: number } };
  /** One discovery, which the route awaits. */
  'discovery.discover': { payload: { projectId: string; body: DiscoverBody }; result: DiscoverResponse };
};

/** The face's methods, named once: its api type and its bound api both read them. */
const FEATURE_STORE_METHODS = ['refresh', 'all'] as const;
const COHORTS_METHODS = ['cohort', 'predict'] as const;

export type DiscoveryApi = Pick<FeatureStore, (typeof FEATURE_STORE_METHODS)[number]> & Pick<Cohorts, (typeof COHORTS_METHODS)[number]> & { discover(projectId: string, body: DiscoverBody): Promise<DiscoverResponse> };

export function createDiscoveryModule(
  runtime: Pick<Runtime, 'config' | 'db' | 'log' | 'pool' | 'queue'>,
  deps: {
    behavior: Pick<BehaviorApi, 'summaries' | 'activeSubjects' | 'onMined' | 'activePatternsOf' | 'queuedSubjects'>;
    events: Pick<EventsApi, 'appendInTransaction' | 'afterCommit'>;
    memory: Pick<MemoryApi, 'saveMany'>;
  },
): DomainModule<DiscoveryApi, DiscoveryJobs> {
  const { db, pool, log, config } = runtime;
  const queue = domainQueue<DiscoveryJobs>(runtime.queue, 'discovery');
  const features = new FeatureStore(db, deps.behavior, deps.events);
  const discovery = new Discovery(features, pool, deps.memory);
  const cohorts = new Cohorts(features, deps.behavior);
  // Mined subjects get their features recomputed behind, by a job.
  deps.behavior.onMined(async (projectId, subjects) => {
    await queue.enqueue('discovery.refresh-features', { projectId, subjects: [...subjects] });
  });
  const discover = async (projectId: string, body: DiscoverBody) =>
    queue.run('discovery.discover', { projectId, body }, { timeoutMs: Math.max(1000, config.requestTimeoutMs - 2000) });
  const jobs: JobHandlers<DiscoveryJobs> = {
    'discovery.refresh-features': ({ projectId, subjects }) => features.refresh(projectId, subjects),
    'discovery.refresh-nightly': async () => {
      const projects = await features.projects();
      for (const projectId of projects) {
        await features.refresh(projectId).catch((error: unknown) => log.error({ err: error, projectId }, 'nightly feature refresh failed'));
      }
      return { projects: projects.length };
    },
    'discovery.discover': ({ projectId, body }) => discovery.discover(projectId, body),
  };
  return {
    name: 'discovery',
    api: { ...bindMethods(features, FEATURE_STORE_METHODS), ...bindMethods(cohorts, COHORTS_METHODS), discover },
    routes: async (app) => app.register(discoveryRoutes, { discover, cohorts }),
    schemas: [BehaviorSchema, CohortMemberSchema],
    jobs,
    // After the nightly mining (04:00 UTC).
    schedules: [{ id: 'discovery.refresh-nightly', job: 'discovery.refresh-nightly', payload: {}, cron: '0 5 * * *' }],
    subjectData: discoverySubjectData(db),
    backlog: async (projectId) => {
      const { stored, missing, stale, oldestPendingAt } = await features.backlog(projectId);
      const description =
        'Subject features (what discovery and cohorts compare) behind their activity: subjects with activity since they were last mined, ' +
        'whose features are missing or older than it. They are recomputed after the mining (and nightly for all).';
      return [{ name: 'features', description, pending: missing + stale, done: stored - stale, total: stored + missing, oldestPendingAt }];
    },
  };
}
