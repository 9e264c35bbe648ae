// Behaviour routes: pattern mining and reading (SDK-WIRE.md 4.4), pattern projection and
// declared-target prediction (metered on memory.predictions, behind the predictions entitlement),
// the project-wide upcoming list, and profiles.
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { PermissionError } from '../platform/errors.js';
import type { TenancyApi } from '../tenancy/index.js';
import {
  ContactParamsSchema,
  ContactPatternsQuerySchema,
  ExtractBodySchema,
  ExtractReportSchema,
  PatternPageSchema,
  PatternParamsSchema,
} from './patterns/schemas.js';
import { ProjectBodySchema, ProjectResponseSchema, TargetPredictBodySchema, TargetPredictResponseSchema, UpcomingQuerySchema, UpcomingSchema } from './predict/schemas.js';
import type { TargetPredictor } from './predict/target.js';
import type { Profiler } from './profile/profile.js';
import { ProfileBodySchema } from './profile/schemas.js';
import type { BehaviorService } from './service.js';
import { Type } from 'typebox';
import type { ContextBuilder } from './context/context.js';
import type { ContactContexts } from './context/contact.js';
import { MONITOR_TICK_MAX, type PatternMonitor } from './monitor/monitor.js';
import { BatchContextBodySchema, ContactContextQuerySchema, ContextBodySchema, CONTEXT_LIMITS } from './context/schemas.js';

const tags = ['behavior'];
const READ = { permission: 'READ_MEMORY' } as const;
const WRITE = { permission: 'WRITE_MEMORY' } as const;
const PREDICT = { permission: 'READ_MEMORY', feature: 'predictions', audit: 'read.predict' } as const;

export interface BehaviorRouteDeps {
  behavior: BehaviorService;
  predictor: TargetPredictor;
  profiler: Profiler;
  context: ContextBuilder;
  contacts: ContactContexts;
  monitor: PatternMonitor;
  tenancy: Pick<TenancyApi, 'metered'>;
  /** Extract calls per minute per key; counted apart from RATE_LIMIT_PER_MINUTE. */
  extractPerMinute: number;
}

export const behaviorRoutes: FastifyPluginAsyncTypebox<BehaviorRouteDeps> = async (app, { behavior, predictor, profiler, context, contacts, monitor, tenancy, extractPerMinute }) => {
  app.post(
    '/lattice/patterns/extract',
    {
      // Mining a whole project is the heaviest call there is: its own, stricter count per key.
      config: { ...WRITE, audit: 'write.patterns', rateLimit: { max: extractPerMinute, timeWindow: 60_000 } },
      schema: {
        tags,
        summary: 'Mine behaviour patterns from activity',
        description:
          "Reads activity (events, activity memories: type event or with metadata.eventType, and typed observations) of the last `windowDays` days, per activity type, and mines recurring_event, day_of_week, time_of_day, entity_preference and declining_engagement patterns. " +
          'Patterns are behavior_pattern memories: a pattern found again is refreshed in place (same id), one that no longer holds is deactivated (metadata.active false), a new one is created and announced as a pattern.emerged event. ' +
          'With `subject` or `contactId` one subject is mined (contactId matches the externalId of subjects of any kind); with neither, every subject with activity in the window, as a job the call awaits (503 JOB_TIMEOUT past the request timeout; the job still completes). ' +
          'A pattern found over a longer window than this call\'s is not deactivated by it (a monthly habit needs months to show). ' +
          `At most PATTERN_EXTRACT_PER_MINUTE calls per minute per key (default 5, as the SDK states; counted apart from RATE_LIMIT_PER_MINUTE): over it, 429 RATE_LIMIT with Retry-After. ` +
          'Mining also runs by itself, over the last 365 days: for a subject, once its new activity has been quiet for BEHAVIOR_MINING_DEBOUNCE_MS (default 30 s, at most BEHAVIOR_MINING_MAX_WAIT_MS, default 5 min, after the first), and nightly for every subject with active patterns.',
        body: ExtractBodySchema,
        response: { 200: ExtractReportSchema },
      },
    },
    async (request) => behavior.extract(request.principal.projectId, request.body),
  );

  app.get(
    '/lattice/patterns/:patternId',
    { config: { ...READ, audit: 'read.patterns' }, schema: { tags, summary: 'A mined pattern', params: PatternParamsSchema, response: { 200: Type.Ref('PatternRecord') } } },
    async (request) => behavior.getPattern(request.principal.projectId, request.params.patternId),
  );

  app.get(
    '/lattice/contacts/:contactId/patterns',
    {
      config: { ...READ, audit: 'read.patterns' },
      schema: {
        tags,
        summary: "A contact's patterns, newest first",
        description: 'contactId is a subject externalId (of any kind; narrow with subjectKind). Pass nextCursor back as cursor for the next page.',
        params: ContactParamsSchema,
        querystring: ContactPatternsQuerySchema,
        response: { 200: PatternPageSchema },
      },
    },
    async (request) => behavior.contactPatterns(request.principal.projectId, request.params.contactId, request.query),
  );

  app.get(
    '/lattice/contacts/:contactId/context',
    {
      config: { ...READ, audit: 'read.context' },
      schema: {
        tags,
        summary: "A contact's context: its card, patterns, recent events and memories, and its part of the graph",
        description:
          'contactId is a subject externalId (of any kind; narrow with subjectKind): every subject with that id is the contact. 404 when no memory, event or observation of the project is about it. ' +
          "The card: displayName, email, phone and tags from the latest typed readings of display_name (displayName, name, full_name), email, phone (phone_number) and tags (split at commas), displayName else the name of the graph entity that stands for the contact; segment, the RFM segment of its profile (without asOf); lifetimeValue, the sum of the amounts its activity carries; lastInteractionAt, its latest activity. Fields with nothing behind them are left out. " +
          'activePatterns: its active patterns, most confident first (with asOf, those valid then). recentEvents: its events in the log and its activity memories (type event or with metadata.eventType), newest first, up to eventsLimit. recentMemories: its other live memories, newest first, up to memoriesLimit. ' +
          'entities and edges: the graph entities that stand for the contact or are mentioned in those memories (at most 50), and what lies within graphHops of them over edges between entities (both directions, at most 200 edges). ' +
          'With asOf, everything is as it stood then: memories valid and written by then, events up to then, patterns valid then, edges valid then.',
        params: ContactParamsSchema,
        querystring: ContactContextQuerySchema,
        response: { 200: Type.Ref('ContactContext') },
      },
    },
    async (request) => contacts.build(request.principal.projectId, request.params.contactId, request.query),
  );

  const monitorRules =
    "The pattern monitor: an active pattern whose next expected firing (metadata.nextExpectedAt) has passed by more than its tolerance (metadata.toleranceMinutes) is marked broken for that firing (metadata.broken true, brokenAt, brokenFor: the missed firing) " +
    "and announced as a `pattern.broken` event (severity warn; payload patternId, patternKind, eventType, description, expectedAt, toleranceMinutes, hoursOverdue, confidence; sourcePatternId), once per pattern and missed firing; an alert rule with an engine-event trigger on pattern.broken fires on it. " +
    `A schedule ticks every project with an overdue pattern every MONITOR_TICK_INTERVAL_MS (default 15 minutes). Re-mining moves a pattern's next firing (the habit resumed) or deactivates it; a pattern broken for one firing can break again for a later one.`;

  app.post(
    '/lattice/monitor/tick',
    {
      config: { ...WRITE, audit: 'write.monitor' },
      schema: {
        tags,
        summary: 'Check active patterns for missed firings now',
        description: `${monitorRules} One tick takes the ${MONITOR_TICK_MAX} longest overdue patterns of the project (capped true when more wait); a pattern it could not mark is listed in failures and tried again by the next tick. The body is ignored.`,
        body: Type.Optional(Type.Object({}, { additionalProperties: true })),
        response: { 200: Type.Ref('MonitorTick') },
      },
    },
    async (request) => monitor.tick(request.principal.projectId),
  );

  app.get(
    '/lattice/monitor/status',
    {
      config: { ...READ, audit: 'read.monitor' },
      schema: { tags, summary: "The pattern monitor's last tick and what is due", description: monitorRules, response: { 200: Type.Ref('MonitorStatus') } },
    },
    async (request) => monitor.status(request.principal.projectId),
  );

  app.post(
    '/lattice/predict',
    {
      config: PREDICT,
      schema: {
        tags,
        summary: "Project a subject's patterns forward (pattern projection)",
        description:
          'Extends each active recurring_event and day_of_week pattern by its cadence within horizonDays, ranked by confidence, then time. The k-th firing of a pattern has confidence c^k and the 95% Wilson interval of its hit rate raised to k. ' +
          'Empty predictions is an abstention (abstained true, with the reason): no active pattern, or none above minConfidence. ' +
          'With a `target` (the public clients\' predictTarget sends it here), the declared target is also answered as POST /memory-intelligence/predict answers it, in `targetPrediction`, and `abstained` and `abstentionReason` are then the target\'s (WIRE.md decision 1); without one the answer is the projection alone. ' +
          'emitEvents (needs WRITE_MEMORY) fires one prediction.imminent event per prediction due within imminentWithinHours, at most once per subject, pattern and day, through the event log (alert rules fire). Metered: one memory.predictions unit per call.',
        body: ProjectBodySchema,
        response: { 200: ProjectResponseSchema },
      },
    },
    async (request) => {
      if (request.body.emitEvents && !request.principal.permissions.has('WRITE_MEMORY')) {
        throw new PermissionError('emitEvents writes events: this API key lacks the WRITE_MEMORY permission', { required: 'WRITE_MEMORY' });
      }
      return tenancy.metered(
        request.principal,
        'memory.predictions',
        1,
        async () => {
          const { projectId } = request.principal;
          const { target } = request.body;
          const [projection, targetPrediction] = await Promise.all([
            behavior.projectPatterns(projectId, request.body),
            target ? predictor.predict(projectId, request.body.subject, target, request.body.horizonDays) : undefined,
          ]);
          if (!targetPrediction) return projection;
          return { ...projection, targetPrediction, abstained: targetPrediction.abstained, abstentionReason: targetPrediction.abstentionReason };
        },
        request.log,
      );
    },
  );

  app.post(
    '/memory-intelligence/predict',
    {
      config: PREDICT,
      schema: {
        tags,
        summary: 'Predict a declared target for a subject',
        description:
          'event_occurrence: P(at least one event of target.eventType within horizonDays), from BG/NBD fitted over the project (Fader, Hardie and Lee 2005; once 50 subjects have the activity; fitted by a job, cached per activity type and lookback, refitted in the background every 6 hours; the first ask for a type and lookback sets the fit off and is answered from the subject\'s own rate meanwhile, which its explanation says) or else the subject\'s own rate with a Gamma posterior; `value` is the expected count. ' +
          'numeric: EWMA level of target.attributeKey. event_time: the next occurrence from the inter-arrival times. anomaly: |z| of the latest reading against those before it (at least 5 readings; anomalous at 3). ' +
          'Thin signal abstains with a reason (unknown, never "no"). A prediction that answers is recorded with a predictionId (cite it in a decision as refType prediction) and scored against what happened once its horizon has passed. Metered: one memory.predictions unit per call.',
        body: TargetPredictBodySchema,
        response: { 200: TargetPredictResponseSchema },
      },
    },
    async (request) =>
      tenancy.metered(
        request.principal,
        'memory.predictions',
        1,
        async () => {
          const started = performance.now();
          const { subject, target, horizonDays } = request.body;
          const prediction = await predictor.predict(request.principal.projectId, subject, target, horizonDays);
          return {
            targetPrediction: prediction,
            abstained: prediction.abstained,
            abstentionReason: prediction.abstentionReason,
            generatedAt: new Date().toISOString(),
            durationMs: performance.now() - started,
          };
        },
        request.log,
      ),
  );

  app.get(
    '/lattice/predictions/upcoming',
    {
      config: { ...READ, feature: 'predictions' },
      schema: {
        tags,
        summary: 'Upcoming and overdue predicted events, project-wide',
        description: 'The next expected firing of every active pattern that has one, up to horizonDays ahead; overdue ones (past their window) come first, then by expected time. Not metered.',
        querystring: UpcomingQuerySchema,
        response: { 200: UpcomingSchema },
      },
    },
    async (request) => behavior.upcoming(request.principal.projectId, request.query),
  );

  const contextRules =
    `The bundle holds the profile, active patterns (most confident first; tentative ones, seen fewer times than a full pattern needs, are left out), projected predictions (next ${30} days, confidence at least 0.5), the subject's memories (most important, then newest; with \`query\`, those that best answer it, ranked by the same search as POST /memory/search within the subject, its words about time read against \`referenceTime\`) and observations ` +
    '(consolidated observation memories and the latest reading of each typed attribute). Its tokens are counted with gpt-tokenizer (o200k_base) over the bundle content (guidance, subject and the sections as JSON); ' +
    `maxTokens (default ${CONTEXT_LIMITS.defaultTokens}, clamped to [${CONTEXT_LIMITS.minTokens}, ${CONTEXT_LIMITS.maxTokens}]) is a hard cap: whole items are kept in the order profile, patterns, predictions, memories, observations until it is spent, ` +
    'and sections that lost items are named in `truncated`. tokensEstimate is the exact count and never exceeds maxTokens. Every item carries its source ids; `provenance` gathers them. excludeCategories drops memories of those categories and patterns, predictions and observations of those activity types.';

  app.post(
    '/lattice/context',
    {
      config: { ...READ, audit: 'read.context' },
      schema: { tags, summary: "A subject's context bundle, token-budgeted, with provenance", description: contextRules, body: ContextBodySchema, response: { 200: Type.Ref('ContextBundle') } },
    },
    async (request) => {
      const { subject, ...options } = request.body;
      return context.build(request.principal.projectId, subject, options);
    },
  );

  app.post(
    '/lattice/context/batch',
    {
      config: { ...READ, audit: 'read.context' },
      schema: {
        tags,
        summary: `Context bundles for up to ${CONTEXT_LIMITS.maxSubjects} subjects`,
        description: `The same options for every subject; bundles come back in request order, built by a job the call awaits. A subject Lattice knows nothing about gets an empty bundle (profile null, empty sections), not a failed batch. ${contextRules}`,
        body: BatchContextBodySchema,
        response: { 200: Type.Object({ bundles: Type.Array(Type.Ref('ContextBundle')) }) },
      },
    },
    async (request) => {
      const { subjects, ...options } = request.body;
      return { bundles: await behavior.contextBatch(request.principal.projectId, subjects, options) };
    },
  );

  for (const url of ['/lattice/profile', '/memory-intelligence/profile']) {
    app.post(
      url,
      {
        config: { ...READ, audit: 'read.profile' },
        schema: {
          tags,
          summary: "A subject's behavioural profile",
          description:
            'RFM scored 1 to 5 against the project\'s subjects (quintiles over the last 365 days: days since the last activity, occurrences, summed amounts; cut points cached and refreshed hourly), the segment on the R x F grid, the cadence its patterns describe, and active risks ' +
            '(declining_engagement, cadence_missed, rfm_at_risk_high_value, rfm_cant_lose_them). Amounts are metadata/payload amount, value or price, or typed observations of an attribute whose unit is a currency code. /lattice/profile and /memory-intelligence/profile are the same.',
          body: ProfileBodySchema,
          response: { 200: Type.Ref('Profile') },
        },
      },
      async (request) => profiler.profile(request.principal.projectId, request.body.subject),
    );
  }
};
