// Shapes of the project overview (GET /project): the plan and its meters, the work the modules
// hold for the project, and the queue's jobs of the project.
import { Type, type Static } from 'typebox';
import { CeilingSchema, EntitlementsSchema, MeterSchema, PlanSchema } from '../tenancy/schemas.js';

const Instant = (description: string) => Type.String({ format: 'date-time', description });
const NullableInstant = (description: string) => Type.Union([Type.String({ format: 'date-time' }), Type.Null()], { description });
/** A quota on the wire: Infinity cannot travel as JSON, so an unlimited one is null. */
const Limit = Type.Union([Type.Number({ minimum: 0 }), Type.Null()], { description: 'The quota; null is unlimited' });

/** No query parameters: an unknown one is refused (400), as everywhere. */
export const ProjectQuerySchema = Type.Object({}, { additionalProperties: false });

export const MeterUsageSchema = Type.Object({
  meter: MeterSchema,
  used: Type.Number({ minimum: 0, description: 'Units used this month' }),
  limit: Limit,
  period: Instant('The first instant (UTC) of the month metered'),
  resetsAt: Instant('The first instant (UTC) of the next month, when the meter starts again from 0'),
});

export const CeilingUsageSchema = Type.Object({
  ceiling: CeilingSchema,
  used: Type.Integer({ minimum: 0, description: 'Resources counted now (active-triggers: enabled alert rules)' }),
  limit: Limit,
});

export const BacklogSchema = Type.Object({
  module: Type.String({ description: 'The domain holding the work (memory, graph, behavior, typed, discovery)' }),
  name: Type.String({ description: 'The backlog, unique within its module (embeddings, extraction, mining, ingest, features)' }),
  description: Type.String({ description: 'What waits (and in what unit), and what works it off' }),
  pending: Type.Integer({ minimum: 0, description: 'Units waiting' }),
  done: Type.Union([Type.Integer({ minimum: 0 }), Type.Null()], { description: 'Units done, when the pending are a share of a whole; else null' }),
  total: Type.Union([Type.Integer({ minimum: 0 }), Type.Null()], { description: 'Units in all (done + pending), or null with done' }),
  oldestPendingAt: NullableInstant('Since when the longest-waiting unit has waited; null when none waits'),
});

export const JobInFlightSchema = Type.Object({
  id: Type.String(),
  name: Type.String({ description: 'The job, `<domain>.<job>` (memory.consolidate, discovery.discover, typed.ingest, ...)' }),
  state: Type.Enum(['active', 'waiting', 'delayed'], { description: 'delayed: a later start, or a retry waiting out its backoff' }),
  attempt: Type.Integer({ minimum: 1, description: 'The try it is on (active) or will be on next' }),
  enqueuedAt: Instant('When it was enqueued'),
  startedAt: NullableInstant('When its running try started; null unless active'),
});

export const ProjectOverviewSchema = Type.Object({
  project: Type.Object({ id: Type.String(), name: Type.String(), plan: PlanSchema }),
  entitlements: EntitlementsSchema,
  usage: Type.Object({
    meters: Type.Array(MeterUsageSchema, { description: 'Every meter, this calendar month (UTC)' }),
    ceilings: Type.Array(CeilingUsageSchema, { description: 'Every ceiling on counted resources' }),
  }),
  work: Type.Array(BacklogSchema, { description: 'The backlogs the modules hold for the project, in module order' }),
  jobs: Type.Object({
    items: Type.Array(JobInFlightSchema, { description: "The project's jobs not yet finished: active, then waiting, then delayed; oldest first within each" }),
    truncated: Type.Boolean({ description: 'The listing scanned its cap of jobs in flight (of every project) and stopped: some of this project may be missing' }),
  }),
});
export type ProjectOverview = Static<typeof ProjectOverviewSchema>;
export type WireBacklog = Static<typeof BacklogSchema>;
export type WireJob = Static<typeof JobInFlightSchema>;
