// Shapes of the two prediction routes (SPEC.md "Declared-target prediction", "Pattern projection";
// WIRE.md "Prediction"; SDK-WIRE.md 4.5) and of the project-wide upcoming list.
import { Type, type Static } from 'typebox';
import { Nullable, SubjectSchema, Timestamp } from '../../platform/common-schemas.js';

export const TARGET_KINDS = ['event_occurrence', 'numeric', 'event_time', 'anomaly'] as const;
export type TargetKind = (typeof TARGET_KINDS)[number];

export const LOOKBACK = { default: 365, max: 3650 } as const;

export { clamp } from '../../platform/common-schemas.js';
export const HORIZON = { default: 30, min: 1, max: 365 } as const;


export const TargetSchema = Type.Object(
  {
    kind: Type.Enum(TARGET_KINDS, { description: 'Drives model selection' }),
    eventType: Type.Optional(Type.String({ maxLength: 200, description: "event_occurrence, event_time: matches an activity's metadata.eventType, then its category, then a case-insensitive substring of its text; empty means any activity" })),
    attributeKey: Type.Optional(Type.String({ minLength: 1, maxLength: 200, description: 'numeric, anomaly: the typed attribute' })),
    lookbackDays: Type.Optional(Type.Number({ description: `History window; default ${LOOKBACK.default}, clamped to [1, ${LOOKBACK.max}]` })),
  },
  { additionalProperties: false },
);
export type Target = Static<typeof TargetSchema>;

export const TargetPredictBodySchema = Type.Object(
  {
    subject: SubjectSchema,
    horizonDays: Type.Optional(Type.Number({ description: `Default ${HORIZON.default}, clamped to [${HORIZON.min}, ${HORIZON.max}]` })),
    target: TargetSchema,
  },
  { additionalProperties: false },
);
export type TargetPredictBody = Static<typeof TargetPredictBodySchema>;

export const TargetPredictionSchema = Type.Object(
  {
    targetKind: Type.String(),
    eventType: Nullable(Type.String()),
    probability: Nullable(Type.Number({ description: 'event_occurrence: P(at least one event within the horizon)' })),
    probabilityLower: Nullable(Type.Number()),
    probabilityUpper: Nullable(Type.Number()),
    value: Nullable(Type.Number({ description: 'numeric: the EWMA level; anomaly: the latest reading; event_occurrence: the expected number of events within the horizon' })),
    valueLower: Nullable(Type.Number()),
    valueUpper: Nullable(Type.Number()),
    expectedAt: Nullable(Timestamp()),
    expectedAtLower: Nullable(Timestamp()),
    expectedAtUpper: Nullable(Timestamp()),
    daysUntil: Nullable(Type.Number({ description: 'event_time: negative when the event is already due' })),
    overdue: Nullable(Type.Boolean({ description: 'event_time: past the upper end of the usual gap' })),
    anomalyScore: Nullable(Type.Number({ description: 'anomaly: |z| of the latest reading against the readings before it' })),
    isAnomaly: Nullable(Type.Boolean()),
    abstained: Type.Boolean(),
    abstentionReason: Nullable(Type.String()),
    explanation: Type.String({ description: 'Which model answered, on what evidence' }),
    evidenceMemoryIds: Type.Array(Type.String(), { description: 'The activities and readings the answer rests on (memory, event and observation ids), most recent first' }),
    predictionId: Nullable(Type.String({ description: 'prd_ id of the recorded prediction (cite it in a decision as refType prediction); null when abstained' })),
    model: Nullable(Type.String({ description: 'bgnbd, gamma_poisson, ewma, inter_arrival or zscore' })),
  },
  { $id: 'TargetPrediction', title: 'TargetPrediction' },
);
export type TargetPrediction = Static<typeof TargetPredictionSchema>;

export const TargetPredictResponseSchema = Type.Object({
  targetPrediction: Type.Ref('TargetPrediction'),
  abstained: Type.Boolean({ description: 'Check first: true means unknown, never "no"' }),
  abstentionReason: Nullable(Type.String()),
  generatedAt: Timestamp(),
  durationMs: Type.Number(),
});

export const ProjectBodySchema = Type.Object(
  {
    subject: SubjectSchema,
    horizonDays: Type.Optional(Type.Number({ description: `Default ${HORIZON.default}, clamped to [${HORIZON.min}, ${HORIZON.max}]` })),
    limit: Type.Optional(Type.Integer({ minimum: 1, maximum: 200, default: 20 })),
    minConfidence: Type.Optional(Type.Number({ minimum: 0, maximum: 1, default: 0.5 })),
    occurrencesPerPattern: Type.Optional(Type.Integer({ minimum: 1, maximum: 50, default: 1, description: 'Later firings of a pattern get a horizon-decayed confidence (c^k for the k-th)' })),
    emitEvents: Type.Optional(Type.Boolean({ default: false })),
    imminentWithinHours: Type.Optional(Type.Number({ description: 'Default 48, clamped to [1, 720]' })),
    target: Type.Optional(TargetSchema),
  },
  { additionalProperties: false },
);
export type ProjectBody = Static<typeof ProjectBodySchema>;

export const PredictedEventSchema = Type.Object(
  {
    patternId: Type.String(),
    patternKind: Type.String(),
    eventType: Nullable(Type.String()),
    description: Type.String(),
    expectedAt: Timestamp(),
    confidence: Type.Number(),
    confidenceLower: Type.Number({ description: '95% Wilson interval of the pattern hit rate (raised to the k-th power for the k-th firing)' }),
    confidenceUpper: Type.Number(),
    windowMinutes: Type.Number({ description: 'Half-width of the window around expectedAt' }),
    sourceMemoryIds: Type.Array(Type.String()),
  },
  { $id: 'PredictedEvent', title: 'PredictedEvent' },
);
export type PredictedEvent = Static<typeof PredictedEventSchema>;

export const ProjectResponseSchema = Type.Object({
  subject: SubjectSchema,
  predictions: Type.Array(Type.Ref('PredictedEvent')),
  activePatternCount: Type.Integer(),
  eventsEmitted: Type.Integer(),
  abstained: Type.Boolean({ description: "With a target, the target's abstention; otherwise the projection's (no prediction)" }),
  abstentionReason: Nullable(Type.String()),
  targetPrediction: Type.Optional(Type.Ref('TargetPrediction', { description: 'Present when the body names a target' })),
  generatedAt: Timestamp(),
  durationMs: Type.Number(),
});

export const UpcomingQuerySchema = Type.Object(
  {
    horizonDays: Type.Optional(Type.Number({ minimum: 0, maximum: 365, default: 7, description: 'Upcoming up to this many days ahead' })),
    minConfidence: Type.Optional(Type.Number({ minimum: 0, maximum: 1, default: 0 })),
    patternKind: Type.Optional(Type.String({ maxLength: 100 })),
    limit: Type.Optional(Type.Integer({ minimum: 1, maximum: 200, default: 50 })),
    offset: Type.Optional(Type.Integer({ minimum: 0, maximum: 1_000_000, default: 0 })),
  },
  { additionalProperties: false },
);

export const UpcomingSchema = Type.Object({
  predictions: Type.Array(
    Type.Object({
      subject: SubjectSchema,
      patternId: Type.String(),
      patternKind: Type.String(),
      eventType: Nullable(Type.String()),
      description: Type.String(),
      expectedAt: Timestamp(),
      overdue: Type.Boolean({ description: 'Past expectedAt by more than its window' }),
      hoursOverdue: Type.Number({ description: '0 unless overdue' }),
      confidence: Type.Number(),
      windowMinutes: Type.Number(),
      sourceMemoryIds: Type.Array(Type.String()),
    }),
  ),
  generatedAt: Timestamp(),
});
