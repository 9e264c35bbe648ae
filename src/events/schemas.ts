// Shapes of the event log: a logged event, the emit request and answer, the poll query.
import { Type, type Static } from 'typebox';
import { SubjectSchema } from '../platform/common-schemas.js';

export const SEVERITIES = ['info', 'warn', 'critical'] as const;
export type Severity = (typeof SEVERITIES)[number];
const SeveritySchema = Type.Enum(SEVERITIES);

/**
 * Event types the engine emits itself, which are not activity to mine; alert triggers
 * segment-change and pattern-emerged match two of them. The activity predicate of the events table
 * (migrations 0022, index events_activity and the mining queue's trigger) lists them in this order.
 */
export const ENGINE_EVENT_TYPES = {
  typedObservation: 'typed.observation',
  predictionImminent: 'prediction.imminent',
  segmentChanged: 'segment.changed',
  patternEmerged: 'pattern.emerged',
  /** The pattern monitor: an active pattern's next firing is overdue beyond its tolerance (src/behavior/monitor/). */
  patternBroken: 'pattern.broken',
} as const;

export const EventSchema = Type.Object(
  {
    id: Type.String(),
    eventType: Type.String(),
    subject: Type.Union([SubjectSchema, Type.Null()]),
    severity: SeveritySchema,
    payload: Type.Record(Type.String(), Type.Unknown()),
    sourceMemoryIds: Type.Array(Type.String()),
    sourcePatternId: Type.Union([Type.String(), Type.Null()]),
    emittedByPack: Type.Union([Type.String(), Type.Null()]),
    dedupeKey: Type.String(),
    occurredAt: Type.String({ description: 'Assigned by the engine: unique and strictly increasing per project, microsecond precision (ISO 8601, UTC)' }),
  },
  { $id: 'Event', title: 'Event' },
);
export type LoggedEvent = Static<typeof EventSchema>;

export const EmitBodySchema = Type.Object(
  {
    eventType: Type.String({ minLength: 1, maxLength: 200, pattern: '^[A-Za-z0-9_.:-]+$' }),
    subject: Type.Optional(Type.Union([SubjectSchema, Type.Null()])),
    severity: Type.Optional(Type.Enum(SEVERITIES, { default: 'info' })),
    payloadJson: Type.Optional(Type.Union([Type.String({ maxLength: 262_144, description: 'A JSON object, as text' }), Type.Null()])),
    payload: Type.Optional(Type.Record(Type.String(), Type.Unknown(), { description: 'The payload as an object (instead of payloadJson)' })),
    sourceMemoryIds: Type.Optional(Type.Array(Type.String({ maxLength: 128 }), { maxItems: 1000 })),
    sourcePatternId: Type.Optional(Type.Union([Type.String({ maxLength: 128 }), Type.Null()])),
    emittedByPack: Type.Optional(Type.Union([Type.String({ maxLength: 128 }), Type.Null()])),
    dedupeKey: Type.Optional(
      Type.String({
        minLength: 1,
        maxLength: 512,
        description: 'Emission is idempotent per (project, dedupeKey). Absent: a hash of the event type, subject, severity, payload and sources, so a replayed request is one event',
      }),
    ),
  },
  { additionalProperties: false },
);
export type EmitBody = Static<typeof EmitBodySchema>;

export const EmitResponseSchema = Type.Object({
  emitted: Type.Boolean({ description: 'false when an event with the same dedupeKey already exists (then `event` is that event)' }),
  event: Type.Union([
    Type.Object({ id: Type.String(), eventType: Type.String(), severity: SeveritySchema, occurredAt: Type.String() }),
    Type.Null(),
  ]),
  alertDispatches: Type.Integer({ description: 'Alert rules that fired for this event (after throttling)' }),
});

export const EventQuerySchema = Type.Object(
  {
    since: Type.Optional(Type.String({ format: 'date-time', description: 'Only events strictly after this occurredAt; pass the last event of the previous page' })),
    limit: Type.Optional(Type.Integer({ minimum: 1, maximum: 1000, default: 100 })),
    eventTypes: Type.Optional(Type.String({ maxLength: 2000, description: 'Comma-separated event types' })),
    subjectKind: Type.Optional(Type.String({ maxLength: 100 })),
    subjectExternalId: Type.Optional(Type.String({ maxLength: 256 })),
  },
  { additionalProperties: false },
);

/** An event about to be appended. */
export interface NewEvent {
  eventType: string;
  subject: { kind: string; externalId: string } | null;
  severity: Severity;
  payload: Record<string, unknown>;
  sourceMemoryIds: string[];
  sourcePatternId: string | null;
  emittedByPack: string | null;
  dedupeKey: string;
}
