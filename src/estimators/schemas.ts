// Shapes of the estimators (SPEC.md "Estimator result", "Estimators"; SDK-WIRE.md 4.5).
import { Type, type Static } from 'typebox';
import { SubjectSchema } from '../platform/common-schemas.js';

export const ESTIMATOR_IDS = ['phenoage'] as const;

export const EstimateBodySchema = Type.Object(
  {
    subject: SubjectSchema,
    estimatorId: Type.Enum(ESTIMATOR_IDS, { description: 'phenoage: Levine et al. 2018 PhenoAge' }),
    persist: Type.Optional(Type.Boolean({ default: false, description: 'Save the estimate as a memory of type estimate (needs WRITE_MEMORY): a trajectory over time' })),
  },
  { additionalProperties: false },
);
export type EstimateBody = Static<typeof EstimateBodySchema>;

export const EstimateSchema = Type.Object(
  {
    subject: SubjectSchema,
    estimatorId: Type.String(),
    ok: Type.Boolean({ description: 'False when a required signal has no reading (see missingSignals); value is then 0' }),
    value: Type.Number(),
    unit: Type.String(),
    contributors: Type.Array(Type.Object({ signal: Type.String(), contribution: Type.Number({ description: 'Years this signal adds (its term of the linear predictor / 0.090165)' }) })),
    confidence: Type.Number({ description: 'How fresh the readings are: the mean over the biomarkers of 1 - days since the reading / 365' }),
    provenance: Type.Array(Type.String(), { description: 'The memories and typed observations read' }),
    framing: Type.String(),
    disclaimer: Type.String(),
    missingSignals: Type.Array(Type.String()),
    chronologicalAge: Type.Union([Type.Number(), Type.Null()], { description: 'Beyond the spec' }),
    mortalityScore: Type.Union([Type.Number(), Type.Null()], { description: 'Beyond the spec: the 10-year mortality score M of the model' }),
    memoryId: Type.Union([Type.String(), Type.Null()], { description: 'The estimate memory persist wrote' }),
  },
  { $id: 'Estimate', title: 'Estimate' },
);
export type Estimate = Static<typeof EstimateSchema>;
