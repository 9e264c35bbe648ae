// Shapes of the typed-attribute API: definitions, observation rows, reports and accumulators.
import { Type, type Static } from 'typebox';
import { LimitOffset } from '../platform/common-schemas.js';

export const DATA_TYPES = ['numeric', 'categorical', 'temporal', 'boolean'] as const;
export type DataType = (typeof DATA_TYPES)[number];

export const OBSERVATION_STATUSES = ['accepted', 'quarantined'] as const;
export type ObservationStatus = (typeof OBSERVATION_STATUSES)[number];

/** Rows per ingest or enqueue call. */
export const MAX_OBSERVATIONS_PER_REQUEST = 10_000;

const attributeKey = Type.String({ minLength: 1, maxLength: 200, pattern: '^[A-Za-z0-9_.:-]+$', description: 'Identifier of the attribute, e.g. heart_rate or order.total' });

export const AttributeBodySchema = Type.Object(
  {
    attributeKey,
    dataType: Type.Enum(DATA_TYPES),
    unit: Type.Optional(Type.Union([Type.String({ maxLength: 64 }), Type.Null()])),
    minValid: Type.Optional(Type.Union([Type.Number(), Type.Null()], { description: 'Lower plausibility bound (numeric attributes); lower values are quarantined' })),
    maxValid: Type.Optional(Type.Union([Type.Number(), Type.Null()], { description: 'Upper plausibility bound (numeric attributes); higher values are quarantined' })),
    required: Type.Optional(Type.Boolean({ default: false })),
    metadata: Type.Optional(Type.Unknown({ description: 'Any JSON, stored as given' })),
  },
  { additionalProperties: false },
);
export type AttributeBody = Static<typeof AttributeBodySchema>;

export const AttributeSchema = Type.Object(
  {
    id: Type.String(),
    projectId: Type.String(),
    attributeKey: Type.String(),
    dataType: Type.Enum(DATA_TYPES),
    unit: Type.Union([Type.String(), Type.Null()]),
    minValid: Type.Union([Type.Number(), Type.Null()]),
    maxValid: Type.Union([Type.Number(), Type.Null()]),
    required: Type.Boolean(),
    metadata: Type.Unknown(),
    metadataJson: Type.Union([Type.String(), Type.Null()], { description: 'metadata as JSON text, for clients that read it so' }),
    created: Type.String({ format: 'date-time' }),
    updated: Type.String({ format: 'date-time' }),
  },
  { $id: 'TypedAttribute', title: 'TypedAttribute' },
);
export type Attribute = Static<typeof AttributeSchema>;

export const AttributeListQuerySchema = Type.Object(
  { attributeKey: Type.Optional(Type.String({ maxLength: 200 })), ...LimitOffset(100, 1000) },
  { additionalProperties: false },
);

/**
 * One input row. JSON types are checked for the batch (a wrong type is a 400 naming the row);
 * everything about meaning (a missing field, an unknown attribute, the wrong value field, a value
 * out of range, an unparsable time) quarantines the row instead.
 */
export const ObservationInputSchema = Type.Object(
  {
    id: Type.Optional(Type.String({ minLength: 1, maxLength: 128, description: 'Client-chosen id; generated (obs_...) when absent' })),
    attributeKey: Type.Optional(Type.String({ maxLength: 200 })),
    subjectKind: Type.Optional(Type.String({ maxLength: 100 })),
    subjectExternalId: Type.Optional(Type.String({ maxLength: 256 })),
    valueNumeric: Type.Optional(Type.Union([Type.Number(), Type.Null()])),
    valueText: Type.Optional(Type.Union([Type.String({ maxLength: 4000 }), Type.Null()])),
    valueBool: Type.Optional(Type.Union([Type.Boolean(), Type.Null()])),
    valueTs: Type.Optional(Type.Union([Type.String({ maxLength: 64 }), Type.Null()])),
    observedAt: Type.Optional(Type.String({ maxLength: 64, description: 'ISO 8601; stored at millisecond precision' })),
    source: Type.Optional(Type.Union([Type.String({ maxLength: 200 }), Type.Null()])),
    trust: Type.Optional(Type.Number({ description: 'How far the source is trusted, 0 to 1 (default 1)' })),
  },
  { additionalProperties: false },
);
export type ObservationInput = Static<typeof ObservationInputSchema>;

export const IngestBodySchema = Type.Object(
  { observations: Type.Array(ObservationInputSchema, { minItems: 1, maxItems: MAX_OBSERVATIONS_PER_REQUEST }) },
  { additionalProperties: false },
);

export const IngestReportSchema = Type.Object({
  accepted: Type.Integer(),
  quarantined: Type.Integer(),
  duplicates: Type.Integer(),
  quarantineReasons: Type.Record(Type.String(), Type.String(), {
    description: "Reason per quarantined row, keyed by the row's id when it has one, otherwise by its index in the request ('0', '1', ...)",
  }),
});
export type IngestReport = Static<typeof IngestReportSchema>;

export const ObservationSchema = Type.Object(
  {
    id: Type.String(),
    projectId: Type.String(),
    attributeKey: Type.Union([Type.String(), Type.Null()]),
    subjectKind: Type.Union([Type.String(), Type.Null()]),
    subjectExternalId: Type.Union([Type.String(), Type.Null()]),
    valueNumeric: Type.Union([Type.Number(), Type.Null()]),
    valueText: Type.Union([Type.String(), Type.Null()]),
    valueBool: Type.Union([Type.Boolean(), Type.Null()]),
    valueTs: Type.Union([Type.String(), Type.Null()]),
    observedAt: Type.Union([Type.String(), Type.Null()]),
    source: Type.Union([Type.String(), Type.Null()]),
    trust: Type.Number(),
    qualityScore: Type.Number({ description: 'The trust the row was ingested with' }),
    status: Type.Enum(OBSERVATION_STATUSES),
    quarantineReason: Type.Union([Type.String(), Type.Null()]),
    raw: Type.Unknown({ description: 'The row as sent (quarantined rows only)' }),
    created: Type.String({ format: 'date-time' }),
  },
  { $id: 'TypedObservation', title: 'TypedObservation' },
);
export type Observation = Static<typeof ObservationSchema>;

export const ObservationQuerySchema = Type.Object(
  {
    subject: Type.Optional(Type.String({ maxLength: 360, description: "`kind:externalId`, or an externalId of any kind (SPEC spelling)" })),
    attribute: Type.Optional(Type.String({ maxLength: 200, description: 'Same as attributeKey (SPEC spelling)' })),
    subjectKind: Type.Optional(Type.String({ maxLength: 100 })),
    subjectExternalId: Type.Optional(Type.String({ maxLength: 256 })),
    attributeKey: Type.Optional(Type.String({ maxLength: 200 })),
    since: Type.Optional(Type.String({ format: 'date-time', description: 'observedAt at or after' })),
    until: Type.Optional(Type.String({ format: 'date-time', description: 'observedAt before' })),
    minValue: Type.Optional(Type.Number()),
    maxValue: Type.Optional(Type.Number()),
    status: Type.Optional(Type.Enum(OBSERVATION_STATUSES)),
    ...LimitOffset(100, 1000),
  },
  { additionalProperties: false },
);
export type ObservationQuery = Static<typeof ObservationQuerySchema>;

export const AccumulatorQuerySchema = Type.Object(
  {
    subjectKind: Type.String({ minLength: 1, maxLength: 100 }),
    subjectExternalId: Type.String({ minLength: 1, maxLength: 256 }),
    attributeKey: Type.String({ minLength: 1, maxLength: 200 }),
  },
  { additionalProperties: false },
);

const nullableNumber = Type.Union([Type.Number(), Type.Null()]);
export const AccumulatorSchema = Type.Object({
  subjectKind: Type.String(),
  subjectExternalId: Type.String(),
  attributeKey: Type.String(),
  count: Type.Integer(),
  sum: Type.Number(),
  sumSq: Type.Number(),
  min: nullableNumber,
  max: nullableNumber,
  last: nullableNumber,
  minVal: nullableNumber,
  maxVal: nullableNumber,
  lastVal: nullableNumber,
  lastObservedAt: Type.Union([Type.String(), Type.Null()]),
  cumulative: Type.Number(),
  mean: nullableNumber,
  variance: Type.Union([Type.Number(), Type.Null()], { description: 'Population variance, derived on read' }),
  stddev: nullableNumber,
  ewma: Type.Union([Type.Number(), Type.Null()], { description: 'Exponentially weighted moving average, alpha 0.3, in observedAt order' }),
  ewmaVar: Type.Union([Type.Number(), Type.Null()], { description: 'Exponentially weighted variance around ewma' }),
  updated: Type.Union([Type.String(), Type.Null()]),
});
export type Accumulator = Static<typeof AccumulatorSchema>;
