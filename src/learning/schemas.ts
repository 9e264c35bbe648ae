// Shapes of the learning loop (SPEC.md "Decision record", "Outcome", "Ref update", "Effectiveness
// row", "Calibration bucket"; WIRE.md "Decisions and outcomes" and decision 2; SDK-WIRE.md 4.5, 4.7).
import { Type, type Static } from 'typebox';
import { Nullable, SubjectSchema, Timestamp } from '../platform/common-schemas.js';
import { DECISION_STATUSES, GROUP_BY, REF_TYPES, RESULTS } from './enums.js';

export { DECISION_STATUSES, GROUP_BY, REF_TYPES, RESULTS } from './enums.js';
export type { GroupBy, OutcomeResult, RefType } from './enums.js';

export const LIMITS = { refs: 100, label: 200, idempotencyKey: 256, outcomesDefault: 100, outcomesMax: 1000, bucketsDefault: 5, bucketsMin: 1, bucketsMax: 20 } as const;

const Label = (description: string) => Type.String({ minLength: 1, maxLength: LIMITS.label, description });
const MetadataSchema = Type.Record(Type.String({ maxLength: 200 }), Type.Unknown(), { description: 'Free-form; stored as given' });
const IdempotencyKey = Type.String({
  minLength: 1,
  maxLength: LIMITS.idempotencyKey,
  description: 'Re-sending the same key (in this project) answers the record first written with it, also under concurrent identical requests; nothing is written twice',
});

export const RefSchema = Type.Object(
  {
    memoryId: Type.String({
      minLength: 1,
      maxLength: 64,
      description: 'pattern: a behavior_pattern memory (mem_); prediction: a recorded prediction (prd_); observation: a memory (mem_) or a typed observation (obs_); collective: a memory (mem_)',
    }),
    refType: Type.Optional(Type.Enum(REF_TYPES, { default: 'pattern' })),
    weight: Type.Optional(Type.Number({ minimum: 0, maximum: 1000, description: 'How much an outcome counts for this ref; 0 or unset counts as 1' })),
  },
  { additionalProperties: false },
);

export const DecisionBodySchema = Type.Object(
  {
    subject: SubjectSchema,
    actor: Type.Optional(Label('Who decided: an agent, a policy engine, a person')),
    decisionType: Type.Optional(Label('What kind of decision, e.g. retention_offer')),
    policy: Type.Optional(Label('The policy or model version that decided')),
    actionType: Type.Optional(Label('What was done, e.g. send_discount')),
    params: Type.Optional(MetadataSchema),
    informedBy: Type.Optional(Type.Array(RefSchema, { maxItems: LIMITS.refs, description: `The evidence the decision rests on (at most ${LIMITS.refs}); every ref must exist in this project` })),
    status: Type.Optional(Type.Enum(DECISION_STATUSES, { default: 'executed' })),
    occurredAt: Type.Optional(Timestamp('When the decision was taken; default now')),
    metadata: Type.Optional(MetadataSchema),
    idempotencyKey: Type.Optional(IdempotencyKey),
  },
  { additionalProperties: false },
);
export type DecisionBody = Static<typeof DecisionBodySchema>;

const StoredRefSchema = Type.Object({
  memoryId: Type.String(),
  refType: Type.Enum(REF_TYPES),
  weight: Type.Number({ description: 'As counted: 0 or unset became 1' }),
});
export type StoredRef = Static<typeof StoredRefSchema>;

const DecisionFields = {
  decisionId: Type.String({ description: 'dec_ id' }),
  subject: SubjectSchema,
  actor: Nullable(Type.String()),
  decisionType: Nullable(Type.String()),
  policy: Nullable(Type.String()),
  actionType: Nullable(Type.String()),
  params: Type.Record(Type.String(), Type.Unknown()),
  informedBy: Type.Array(StoredRefSchema),
  status: Type.Enum(DECISION_STATUSES),
  occurredAt: Timestamp(),
  metadata: Type.Record(Type.String(), Type.Unknown()),
  idempotencyKey: Nullable(Type.String()),
  memoryId: Type.String({ description: 'The decision memory (type decision) that mirrors the record' }),
  created: Timestamp(),
};
export const DecisionRecordSchema = Type.Object(DecisionFields, { $id: 'DecisionRecord', title: 'DecisionRecord' });
export type DecisionRecord = Static<typeof DecisionRecordSchema>;
export const DecisionResponseSchema = Type.Object({
  ...DecisionFields,
  decision: Type.Ref('DecisionRecord', { description: 'The same record, for the clients that read it under this key (WIRE.md decision 2)' }),
});

export const OutcomeBodySchema = Type.Object(
  {
    decisionId: Type.String({ minLength: 1, maxLength: 64 }),
    subject: Type.Optional(SubjectSchema),
    outcomeType: Type.Optional(Label('What was measured, e.g. purchase_within_7d')),
    result: Type.Enum(RESULTS),
    reward: Type.Optional(Type.Number({ description: 'Any finite number; averaged by the effectiveness report' })),
    realizedAt: Type.Optional(Timestamp('When the outcome happened; default now')),
    attributionWindowSecs: Type.Optional(
      Type.Number({ minimum: 0, maximum: 315_360_000, description: 'Counts only when realizedAt is within this many seconds after the decision occurred; unset, no limit' }),
    ),
    metadata: Type.Optional(MetadataSchema),
    idempotencyKey: Type.Optional(IdempotencyKey),
  },
  { additionalProperties: false },
);
export type OutcomeBody = Static<typeof OutcomeBodySchema>;

export const RefUpdateSchema = Type.Object(
  {
    refId: Type.String(),
    refType: Type.Enum(REF_TYPES),
    priorConfidence: Type.Number({ description: 'The confidence before this outcome (the Beta posterior of the earlier ones)' }),
    posteriorConfidence: Type.Number({ description: 'After it' }),
    hits: Type.Number({ description: 'Weighted successes the ref has gathered, this outcome included (a partial is half)' }),
    misses: Type.Number({ description: 'Weighted failures' }),
  },
  { $id: 'RefUpdate', title: 'RefUpdate' },
);
export type RefUpdate = Static<typeof RefUpdateSchema>;

export const OutcomeResponseSchema = Type.Object({
  outcomeId: Type.String({ description: 'out_ id' }),
  decisionId: Type.String(),
  attributed: Type.Boolean({ description: 'False when realized outside the attribution window (or before the decision): stored, no ref updated' }),
  attributionNote: Nullable(Type.String()),
  updates: Type.Array(Type.Ref('RefUpdate')),
  memoryId: Type.String({ description: 'The outcome memory (type outcome)' }),
});
export type OutcomeResponse = Static<typeof OutcomeResponseSchema>;

export const OutcomesQuerySchema = Type.Object(
  {
    subjectKind: Type.Optional(Type.String({ minLength: 1, maxLength: 100 })),
    subjectExternalId: Type.Optional(Type.String({ minLength: 1, maxLength: 256 })),
    decisionType: Type.Optional(Type.String({ minLength: 1, maxLength: LIMITS.label })),
    actionType: Type.Optional(Type.String({ minLength: 1, maxLength: LIMITS.label })),
    decisionId: Type.Optional(Type.String({ minLength: 1, maxLength: 64 })),
    limit: Type.Optional(Type.Integer({ minimum: 1, maximum: LIMITS.outcomesMax, default: LIMITS.outcomesDefault })),
  },
  { additionalProperties: false },
);
export type OutcomesQuery = Static<typeof OutcomesQuerySchema>;

export const OutcomeRowSchema = Type.Object({
  outcomeId: Type.String(),
  decisionId: Type.String(),
  subject: SubjectSchema,
  decisionType: Nullable(Type.String()),
  actionType: Nullable(Type.String()),
  policy: Nullable(Type.String()),
  outcomeType: Nullable(Type.String()),
  result: Type.Enum(RESULTS),
  reward: Nullable(Type.Number()),
  occurredAt: Timestamp('When the decision occurred'),
  realizedAt: Timestamp('When the outcome happened'),
  attributionWindowSecs: Nullable(Type.Number()),
  attributed: Type.Boolean(),
  metadata: Type.Record(Type.String(), Type.Unknown()),
  created: Timestamp('When the outcome was recorded'),
});
export type OutcomeRow = Static<typeof OutcomeRowSchema>;

export const EffectivenessQuerySchema = Type.Object(
  {
    groupBy: Type.Optional(Type.Enum(GROUP_BY, { default: 'action_type' })),
    minSupport: Type.Optional(Type.Integer({ minimum: 1, maximum: 1_000_000, default: 1, description: 'Groups with fewer outcomes are left out' })),
  },
  { additionalProperties: false },
);

export const EffectivenessRowSchema = Type.Object({
  groupKey: Type.String({ description: 'The group\'s value; "(none)" for decisions without one' }),
  n: Type.Integer({ description: 'Attributed outcomes in the group' }),
  successRate: Type.Number({ description: '(successes + partials / 2) / n' }),
  avgReward: Type.Number({ description: 'Mean reward of the outcomes that carry one; 0 when none does' }),
  confidence: Type.Number({ description: 'Beta-Binomial posterior mean of the success rate under a uniform Beta(1, 1) prior: (successes + partials / 2 + 1) / (n + 2)' }),
  successes: Type.Integer(),
  failures: Type.Integer(),
  partials: Type.Integer(),
});

export const CalibrationQuerySchema = Type.Object(
  { bucketCount: Type.Optional(Type.Number({ description: `Default ${LIMITS.bucketsDefault}, rounded and clamped to [${LIMITS.bucketsMin}, ${LIMITS.bucketsMax}]` })) },
  { additionalProperties: false },
);

export const CalibrationSchema = Type.Object({
  buckets: Type.Array(
    Type.Object({
      lower: Type.Number(),
      upper: Type.Number({ description: 'Exclusive, except for the last bucket (1 included)' }),
      patterns: Type.Integer({ description: 'Active patterns whose confidence falls in the bucket now' }),
      predictions: Type.Integer({ description: 'Recorded predictions that state a probability in the bucket' }),
      hits: Type.Integer({ description: 'Scored predictions that came true' }),
      misses: Type.Integer({ description: 'Scored predictions that did not' }),
      realizedHitRate: Type.Number({ description: 'hits / (hits + misses); 0 and not to be read when hasData is false' }),
      hasData: Type.Boolean({ description: 'False when no prediction in the bucket has been scored' }),
      meanPredicted: Nullable(Type.Number({ description: 'Beyond the spec: the mean probability of the scored predictions' })),
      patternOutcomes: Type.Number({
        description:
          "Beyond the spec: the weighted outcomes of decisions citing a pattern whose confidence, when the outcome came, fell in the bucket (a pattern's calibration, read against the confidence it had, not the one the outcome gave it)",
      }),
      patternHits: Type.Number({ description: 'Beyond the spec: their weighted successes (a partial is half)' }),
      patternMeanConfidence: Nullable(Type.Number({ description: 'Beyond the spec: their mean confidence when each came; null without any' })),
    }),
  ),
  totalPatterns: Type.Integer(),
  totalPredictions: Type.Integer(),
  scoredPredictions: Type.Integer({ description: 'Beyond the spec: predictions scored so far (a job scores each once its horizon has passed)' }),
  brierScore: Nullable(Type.Number({ description: 'Beyond the spec: mean (p - outcome)^2 over the scored predictions; null before any' })),
  expectedCalibrationError: Nullable(Type.Number({ description: 'Beyond the spec: sum over buckets of (scored in bucket / scored) |mean p - hit rate|, scored predictions only' })),
  generatedAt: Timestamp(),
});
