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
