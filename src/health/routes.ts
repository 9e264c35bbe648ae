// The healthcare pack's routes (SPEC.md "Estimators" health lines; SDK-WIRE.md 4.11) and its
// manifest (listed by compliance's GET /memory-compliance/packs).
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { Type } from 'typebox';
import { Nullable, SubjectSchema } from '../platform/common-schemas.js';
import { NotFoundError } from '../platform/errors.js';
import type { PackManifest } from '../platform/module.js';
import { COHORT_RISK, HEALTH_DISCLAIMER, MIN_CELL, MIN_COHORT, type HealthPack } from './service.js';
import { SCREENING_RULES } from './screening.js';

const tags = ['health'];

export const HEALTHCARE_MANIFEST: PackManifest = {
  id: 'healthcare',
  name: 'Healthcare',
  version: '1.0.0',
  description: 'Biological age (PhenoAge), screening indicators from cited biomarker thresholds, and de-identified cohort risk. Screening, not diagnosis.',
  // Memories of category health (the clients' biomarker, demographic and diagnosis writers): data concerning health.
  ownsClasses: ['health'],
  regulatoryTags: ['GDPR-Art-9', 'HIPAA'],
  aliases: ['@thinkfleet/pack-healthcare'],
  entitlement: 'health',
  routes: ['POST /lattice/health/profile', 'POST /lattice/health/cohort-risk', 'POST /lattice/estimate (phenoage)'],
  screening: SCREENING_RULES.map((r) => ({ condition: r.condition, icd10: r.icd10, biomarker: r.biomarker, direction: r.direction, source: r.source })),
  privacy: { minCohort: MIN_COHORT, minCell: MIN_CELL, excludesOptedOut: true },
  disclaimer: HEALTH_DISCLAIMER,
};

const Body = Type.Object({ subject: SubjectSchema }, { additionalProperties: false });
const RiskBody = Type.Object(
  { subject: SubjectSchema, k: Type.Optional(Type.Number({ description: `Cohort size; default ${COHORT_RISK.k.default}, clamped to [1, ${COHORT_RISK.k.max}]` })) },
  { additionalProperties: false },
);

const HealthProfileSchema = Type.Object({
  subject: SubjectSchema,
  biologicalAge: Nullable(
    Type.Object({
      biologicalAgeYears: Type.Number(),
      chronologicalAgeYears: Type.Number(),
      deltaYears: Type.Number(),
      method: Type.String(),
      confidence: Type.Number(),
      components: Type.Array(Type.Object({ label: Type.String(), yearsDelta: Type.Number() })),
      mortalityScore: Nullable(Type.Number()),
    }),
  ),
  predictedConditions: Type.Array(
    Type.Object({
      condition: Type.String(),
      label: Type.String(),
      basis: Type.String({ description: 'threshold or trend' }),
      biomarker: Type.String(),
      currentValue: Type.Number(),
      threshold: Type.Number(),
      projectedOnsetAt: Nullable(Type.String({ format: 'date-time' })),
      confidence: Type.Number(),
      rationale: Type.String(),
      sourceMemoryIds: Type.Array(Type.String()),
    }),
  ),
  diagnosedConditions: Type.Array(Type.Object({ icd10: Type.String(), status: Type.String(), onsetAt: Nullable(Type.String()), sourceMemoryId: Type.String() })),
  latestBiomarkers: Type.Array(Type.Object({ biomarker: Type.String(), value: Type.Number(), unit: Nullable(Type.String()), observedAt: Type.String({ format: 'date-time' }) })),
  demographics: Type.Object({
    ageYears: Nullable(Type.Number()),
    sex: Nullable(Type.String()),
    weightKg: Nullable(Type.Number()),
    heightCm: Nullable(Type.Number()),
    bmi: Nullable(Type.Number()),
  }),
  disclaimer: Type.String(),
  generatedAt: Type.String({ format: 'date-time' }),
});

const CohortRiskSchema = Type.Object({
  subject: SubjectSchema,
  cohortSize: Type.Integer(),
  populationSize: Type.Integer({ description: 'Patients with health data, the target and those opted out left out' }),
  risks: Type.Array(
    Type.Object({
      condition: Type.String({ description: 'ICD-10 category (three characters)' }),
      cohortPrevalence: Type.Number(),
      cohortSize: Type.Integer(),
      countWith: Type.Integer(),
      meanSimilarity: Type.Number(),
      confidence: Type.Number({ description: "(1 - the width of the prevalence's 95% Wilson interval) x meanSimilarity" }),
      rationale: Type.String(),
    }),
  ),
  suppressed: Type.Boolean(),
  suppressionReason: Nullable(Type.String()),
  disclaimer: Type.String(),
  generatedAt: Type.String({ format: 'date-time' }),
});

export const healthRoutes: FastifyPluginAsyncTypebox<{ health: HealthPack; loaded: boolean }> = async (app, { health, loaded }) => {
  const needPack = () => {
    // Not installed here: 404, naming the setting that installs it.
    if (!loaded) throw new NotFoundError('the healthcare pack is not loaded in this deployment: set LATTICE_PACKS=healthcare', { pack: 'healthcare' });
  };
  app.post(
    '/lattice/health/profile',
    {
      config: { permission: 'READ_MEMORY', feature: 'health', pack: HEALTHCARE_MANIFEST.id, audit: 'read.health' },
      schema: {
        tags,
        summary: "A subject's health profile: biological age, screening indicators, diagnoses, latest biomarkers",
        description:
          'biologicalAge from PhenoAge (null when a signal is missing). predictedConditions: a threshold crossed by the latest reading (basis threshold), or a trend of at least three readings over 90 days that crosses it within five years (basis trend, with projectedOnsetAt); thresholds and their sources are in the pack manifest (GET /memory-compliance/packs); conditions already diagnosed (same ICD-10 category) are left out. ' +
          'Reads fact memories with category health (metadata.health, metadata.demographic, metadata.condition) and typed observations named for a biomarker. Screening indicators, not diagnoses: every answer carries the disclaimer. Needs the health entitlement and the healthcare pack.',
        body: Body,
        response: { 200: HealthProfileSchema },
      },
    },
    async (request) => {
      needPack();
      return health.profile(request.principal.projectId, request.body.subject);
    },
  );
  app.post(
    '/lattice/health/cohort-risk',
    {
      config: { permission: 'READ_MEMORY', feature: 'health', pack: HEALTHCARE_MANIFEST.id, audit: 'read.health' },
      schema: {
        tags,
        summary: 'Condition prevalence among the most similar patients (aggregate, de-identified)',
        description:
          `The k patients (default ${COHORT_RISK.k.default}) most similar by age, sex, BMI and biomarkers (glucose, HbA1c, systolic pressure, LDL, CRP, eGFR; standardised; similarity 1 / (1 + RMS difference over the features both have, at least two)), and the prevalence of each diagnosed ICD-10 category among them. ` +
          `No member is named. Patients whose latest consent memory opted out are left out of the population. A cohort under ${MIN_COHORT} is suppressed (risks empty, suppressed true, with the reason); a condition fewer than ${MIN_CELL} members have is not reported. Every answer carries the disclaimer. Needs the health entitlement and the healthcare pack.`,
        body: RiskBody,
        response: { 200: CohortRiskSchema },
      },
    },
    async (request) => {
      needPack();
      return health.cohortRisk(request.principal.projectId, request.body.subject, request.body.k);
    },
  );
};
