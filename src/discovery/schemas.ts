// Shapes of discovery (SPEC.md "Behavior (discovery result)", "Behavior discovery", "Limits";
// WIRE.md "Discovery, cohorts, profile"; SDK-WIRE.md 4.5).
import { Type, type Static } from 'typebox';
import { SubjectSchema, Timestamp } from '../platform/common-schemas.js';

/** Defaults and the ranges every input is clamped to (SPEC.md clamps rather than refuses). */
export const DISCOVERY = {
  simThreshold: { default: 0.75, min: 0, max: 1 },
  minClusterSize: { default: 3, min: 2, max: 10_000 },
  minStability: { default: 0.6, min: 0, max: 1 },
  maxMembers: { default: 50, min: 1, max: 500 },
  /** Subjects clustered directly; a larger project is clustered on a sample this size. */
  sample: 2000,
} as const;

export const DiscoverBodySchema = Type.Object(
  {
    simThreshold: Type.Optional(Type.Number({ description: `Least similarity of any two members of a behavior; default ${DISCOVERY.simThreshold.default}, clamped to [0, 1]` })),
    minClusterSize: Type.Optional(Type.Number({ description: `Smaller clusters are noise; default ${DISCOVERY.minClusterSize.default}, clamped to [2, 10000]` })),
    minStability: Type.Optional(Type.Number({ description: `Behaviors less cohesive (mean pairwise similarity) are dropped; default ${DISCOVERY.minStability.default}, clamped to [0, 1]` })),
    maxMembers: Type.Optional(Type.Number({ description: `Members listed per behavior, medoid first; default ${DISCOVERY.maxMembers.default}, clamped to [1, 500]` })),
    promote: Type.Optional(Type.Boolean({ default: false, description: 'Save each behavior as an insight memory (needs WRITE_MEMORY); an unchanged behavior is not saved twice' })),
  },
  { additionalProperties: false },
);
export type DiscoverBody = Static<typeof DiscoverBodySchema>;

export const BehaviorSchema = Type.Object(
  {
    label: Type.String({ description: 'Rule-based: the dominant RFM segment, cadence, pattern kind and entity of the members' }),
    prevalence: Type.Number({ description: 'size / subjectsAnalyzed' }),
    stability: Type.Number({ description: 'Mean pairwise similarity of the members (of the sampled ones, in a sampled project)' }),
    size: Type.Integer({ description: 'Subjects in the behavior; may exceed memberSubjects' }),
    memberSubjects: Type.Array(SubjectSchema, { description: 'Medoid first, then nearest it, at most maxMembers' }),
    exemplarEvidence: Type.Array(Type.String(), { description: 'The signals behind the label' }),
  },
  { $id: 'Behavior', title: 'Behavior' },
);
export type Behavior = Static<typeof BehaviorSchema>;

export const DiscoverResponseSchema = Type.Object({
  behaviors: Type.Array(Type.Ref('Behavior'), { description: 'By prevalence, then stability; empty means abstained (unknown), never "no behaviors"' }),
  subjectsAnalyzed: Type.Integer({ description: 'Subjects with features: the prevalence denominator' }),
  sampled: Type.Boolean({ description: `Beyond the spec: true when the project has more than ${DISCOVERY.sample} subjects and clusters were found on a sample (see the route's description)` }),
  promotedCount: Type.Integer({ description: 'Insight memories written by promote (0 without it)' }),
  generatedAt: Timestamp(),
  durationMs: Type.Number(),
});
export type DiscoverResponse = Static<typeof DiscoverResponseSchema>;

export const COHORT = {
  k: { default: 10, min: 1, max: 50 },
  minSimilarity: { default: 0, min: 0, max: 1 },
  predictionLimit: { default: 5, min: 1, max: 50 },
} as const;

export const CohortBodySchema = Type.Object(
  {
    subject: SubjectSchema,
    k: Type.Optional(Type.Number({ description: `Members; default ${COHORT.k.default}, clamped to [1, 50]` })),
    minSimilarity: Type.Optional(Type.Number({ description: 'Least similarity of a member; default 0, clamped to [0, 1]' })),
  },
  { additionalProperties: false },
);
export type CohortBody = Static<typeof CohortBodySchema>;

export const CohortMemberSchema = Type.Object(
  {
    subject: SubjectSchema,
    similarity: Type.Number({ description: '0.5 RFM + 0.25 entity Jaccard + 0.25 pattern-kind Jaccard, in [0, 1]' }),
    rfmSegment: Type.Union([Type.String(), Type.Null()]),
    patternKinds: Type.Array(Type.String()),
  },
  { $id: 'CohortMember', title: 'CohortMember' },
);
export type CohortMember = Static<typeof CohortMemberSchema>;

export const CohortResponseSchema = Type.Object({
  target: SubjectSchema,
  members: Type.Array(Type.Ref('CohortMember'), { description: 'Most similar first; empty when the target has no activity (unknown, not "no one like it")' }),
  candidateCount: Type.Integer({ description: 'Subjects compared (those with features, the target left out)' }),
  generatedAt: Timestamp(),
  durationMs: Type.Number(),
});

export const CohortPredictBodySchema = Type.Object(
  {
    subject: SubjectSchema,
    cohortK: Type.Optional(Type.Number({ description: `Cohort members; default ${COHORT.k.default}, clamped to [1, 50]` })),
    predictionLimit: Type.Optional(Type.Number({ description: `Predictions; default ${COHORT.predictionLimit.default}, clamped to [1, 50]` })),
    minSimilarity: Type.Optional(Type.Number({ description: 'Least similarity of a member; default 0, clamped to [0, 1]' })),
  },
  { additionalProperties: false },
);
export type CohortPredictBody = Static<typeof CohortPredictBodySchema>;

export const CohortPredictionSchema = Type.Object({
  patternKind: Type.String(),
  eventType: Type.Union([Type.String(), Type.Null()]),
  description: Type.String(),
  expectedAt: Timestamp('Now plus the similarity-weighted mean time until the supporting members\' next firing (now for patterns without one)'),
  confidence: Type.Number({ description: "The supporting members' confidences weighted by similarity, times s / (s + 1) for s supporters" }),
  windowMinutes: Type.Number(),
  supportingSubjects: Type.Array(SubjectSchema),
  sourceMemoryIds: Type.Array(Type.String(), { description: 'The supporting patterns' }),
});
export type CohortPrediction = Static<typeof CohortPredictionSchema>;

export const CohortPredictResponseSchema = Type.Object({
  target: SubjectSchema,
  cohort: Type.Array(Type.Ref('CohortMember')),
  predictions: Type.Array(CohortPredictionSchema, { description: 'Most confident first; empty when the cohort has no active pattern (abstained)' }),
  generatedAt: Timestamp(),
  durationMs: Type.Number(),
});
