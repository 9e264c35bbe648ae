// The behaviour domain's face: a subject's activity read as one, patterns mined from it, projected
// forward, declared-target predictions with honest uncertainty, and profiles.
import type { EventsApi } from '../events/index.js';
import type { MemoryApi } from '../memory/index.js';
import { bindMethods, type DomainModule } from '../platform/module.js';
import { domainQueue } from '../platform/queue.js';
import type { Runtime } from '../platform/runtime.js';
import type { TenancyApi } from '../tenancy/index.js';
import { ProjectModels } from './models.js';
import { PatternMonitor } from './monitor/monitor.js';
import { MonitorStatusSchema, TickReportSchema } from './monitor/schemas.js';
import { PatternMiner } from './patterns/miner.js';
import { miningBacklog } from './patterns/store.js';
import { PatternMetaSchema, PatternRecordSchema } from './patterns/schemas.js';
import { PredictedEventSchema, TargetPredictionSchema } from './predict/schemas.js';
import { TargetPredictor } from './predict/target.js';
import { Profiler } from './profile/profile.js';
import { ProfileSchema } from './profile/schemas.js';
import { BehaviorRefs } from './refs.js';
import { behaviorRoutes } from './routes.js';
import { ContextBuilder } from './context/context.js';
import { ContactContexts } from './context/contact.js';
import { BundleSchema, ContactContextSchema } from './context/schemas.js';
import { BehaviorService, behaviorJobs, type BehaviorJobs } from './service.js';
import { behaviorSubjectData } from './subject-data.js';

export type { BehaviorJobs } from './service.js';
export type { Calibration, CalibrationBucket, PatternRef } from './refs.js';
export type { SubjectSummary } from './profile/profile.js';
export type { PatternRecord } from './patterns/schemas.js';
export type { Profile } from './profile/schemas.js';

/** The face's methods, named once: its api type and its bound api both read them. */
const BEHAVIOR_SERVICE_METHODS = ['extract', 'mineDue', 'projectPatterns', 'getPattern', 'scoreDue', 'activeSubjects', 'activePatternsOf', 'queuedSubjects'] as const;
const PATTERN_MINER_METHODS = ['onMined'] as const;
const TARGET_PREDICTOR_METHODS = ['predict'] as const;
const PROFILER_METHODS = ['profile', 'summaries'] as const;
const CONTEXT_BUILDER_METHODS = ['build'] as const;
const CONTACT_CONTEXTS_METHODS = ['setContactGraph'] as const;
const BEHAVIOR_REFS_METHODS = ['patternRefs', 'predictionRefs', 'applyOutcomeEvidence', 'calibration'] as const;

export type BehaviorApi = Pick<BehaviorService, (typeof BEHAVIOR_SERVICE_METHODS)[number]> &
  Pick<PatternMiner, (typeof PATTERN_MINER_METHODS)[number]> &
  Pick<TargetPredictor, (typeof TARGET_PREDICTOR_METHODS)[number]> &
  Pick<Profiler, (typeof PROFILER_METHODS)[number]> &
  Pick<ContextBuilder, (typeof CONTEXT_BUILDER_METHODS)[number]> &
  Pick<ContactContexts, (typeof CONTACT_CONTEXTS_METHODS)[number]> &
  Pick<BehaviorRefs, (typeof BEHAVIOR_REFS_METHODS)[number]>;

export function createBehaviorModule(
  runtime: Pick<Runtime, 'config' | 'db' | 'log' | 'pool' | 'queue'>,
  deps: { tenancy: Pick<TenancyApi, 'metered'>; memory: Pick<MemoryApi, 'upsertKeyed' | 'afterKeyedCommit' | 'lockKeyed' | 'patchKeyed' | 'search'>; events: Pick<EventsApi, 'appendInTransaction' | 'afterCommit' | 'emit'> },
): DomainModule<BehaviorApi, BehaviorJobs> {
  const { config, db, log, pool } = runtime;
  const models = new ProjectModels(db, pool, domainQueue<BehaviorJobs>(runtime.queue, 'behavior'), log);
  const miner = new PatternMiner(db, pool, deps.memory, deps.events, log);
  const behavior = new BehaviorService(db, domainQueue<BehaviorJobs>(runtime.queue, 'behavior'), miner, deps.events, config);
  const predictor = new TargetPredictor(db, models);
  const profiler = new Profiler(db, models);
  const context = new ContextBuilder(db, pool, profiler, (projectId, input) => deps.memory.search(projectId, input));
  const refs = new BehaviorRefs(db, deps.memory);
  const monitor = new PatternMonitor(db, deps.events, deps.memory);
  const contacts = new ContactContexts(db, profiler);
  return {
    name: 'behavior',
    api: {
      ...bindMethods(behavior, BEHAVIOR_SERVICE_METHODS),
      ...bindMethods(miner, PATTERN_MINER_METHODS),
      ...bindMethods(predictor, TARGET_PREDICTOR_METHODS),
      ...bindMethods(profiler, PROFILER_METHODS),
      ...bindMethods(context, CONTEXT_BUILDER_METHODS),
      ...bindMethods(contacts, CONTACT_CONTEXTS_METHODS),
      ...bindMethods(refs, BEHAVIOR_REFS_METHODS),
    },
    routes: async (app) => app.register(behaviorRoutes, { behavior, predictor, profiler, context, contacts, monitor, tenancy: deps.tenancy, extractPerMinute: config.patternExtractPerMinute }),
    schemas: [PatternMetaSchema, PatternRecordSchema, PredictedEventSchema, TargetPredictionSchema, ProfileSchema, BundleSchema, ContactContextSchema, TickReportSchema, MonitorStatusSchema],
    jobs: behaviorJobs(behavior, context, models, monitor),
    schedules: [
      // Subjects whose activity changed are mined once quiet (the debounce).
      { id: 'behavior.mine-due', job: 'behavior.mine-due', payload: {}, everyMs: 10_000 },
      // Every subject with active patterns, nightly at 04:00 UTC: habits that stopped are retired.
      { id: 'behavior.mine-nightly', job: 'behavior.mine-nightly', payload: {}, cron: '0 4 * * *' },
      // Recorded predictions whose horizon has passed are scored.
      { id: 'behavior.score-predictions', job: 'behavior.score-predictions', payload: {}, everyMs: 300_000 },
      // Active patterns overdue beyond their tolerance are marked broken and announced (pattern.broken).
      { id: 'behavior.monitor-tick', job: 'behavior.monitor-tick', payload: {}, everyMs: config.monitorTickIntervalMs },
    ],
    subjectData: behaviorSubjectData(db),
    backlog: async (projectId) => {
      const { pending, oldestPendingAt } = await miningBacklog(db, projectId);
      const seconds = (ms: number) => `${Math.round(ms / 1000)} s`;
      const description =
        `Subjects with new activity (memories, events, observations) waiting to be mined for patterns: each is mined once quiet for ` +
        `${seconds(config.miningDebounceMs)}, or after ${seconds(config.miningMaxWaitMs)} at most.`;
      return [{ name: 'mining', description, pending, done: null, total: null, oldestPendingAt }];
    },
  };
}
