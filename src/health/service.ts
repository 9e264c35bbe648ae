// The healthcare pack: a subject's health profile (biological age from the PhenoAge estimator,
// screening indicators from cited biomarker thresholds, diagnosed conditions, latest biomarkers)
// and cohort risk: the prevalence of diagnosed conditions among the k patients most similar by
// age, sex, BMI and biomarkers, aggregate and de-identified (no member is named; cohorts under
// MIN_COHORT and conditions fewer than MIN_CELL members have are suppressed; subjects whose latest
// consent memory opted out are left out). Every answer carries the disclaimer.
import type { EstimatorsApi } from '../estimators/index.js';
import { clampTo, type Subject } from '../platform/common-schemas.js';
import { healthRecord, latestReadings, type HealthRecord } from './records.js';
import { screen } from './screening.js';

export const HEALTH_DISCLAIMER =
  'Screening indicators computed from recorded values, not diagnoses or medical advice. Thresholds follow the cited guidelines; discuss any result with a qualified clinician.';
/** Cohorts with fewer members are not reported (the answer would say too much about too few). */
export const MIN_COHORT = 10;
/** A condition fewer than this many cohort members have is not reported (small-cell suppression). */
export const MIN_CELL = 3;
export const COHORT_RISK = { k: { default: 25, min: 1, max: 200 } } as const;
/** Features of the cohort distance: age, sex, BMI and these biomarkers, each standardised. */
const COHORT_BIOMARKERS = ['glucose_fasting', 'hba1c', 'systolic_bp', 'ldl_cholesterol', 'crp', 'egfr'] as const;

const sameSubject = (a: Subject, b: Subject) => a.kind === b.kind && a.externalId === b.externalId;
const key = (s: Subject) => `${s.kind}\0${s.externalId}`;

export class HealthPack {
  constructor(private readonly estimators: Pick<EstimatorsApi, 'estimate' | 'subjectHealth' | 'projectHealth'>) {}

  async profile(projectId: string, subject: Subject, now = new Date()) {
    const data = await this.estimators.subjectHealth(projectId, subject);
    const record = healthRecord(data, now.getTime());
    const estimate = await this.estimators.estimate(projectId, { subject, estimatorId: 'phenoage' }, now, data);
    const biologicalAge = estimate.ok
      ? {
          biologicalAgeYears: estimate.value,
          chronologicalAgeYears: estimate.chronologicalAge!,
          deltaYears: estimate.value - estimate.chronologicalAge!,
          method: 'phenoage',
          confidence: estimate.confidence,
          components: estimate.contributors.map((c) => ({ label: c.signal, yearsDelta: c.contribution })),
          mortalityScore: estimate.mortalityScore,
        }
      : null;
    return {
      subject,
      biologicalAge,
      predictedConditions: screen(record.readings, record.demographics, record.diagnoses, now.getTime()),
      diagnosedConditions: record.diagnoses,
      latestBiomarkers: latestReadings(record).map((r) => ({ biomarker: r.biomarker, value: r.value, unit: r.unit, observedAt: r.observedAt })),
      demographics: record.demographics,
      disclaimer: HEALTH_DISCLAIMER,
      generatedAt: now.toISOString(),
    };
  }

  async cohortRisk(projectId: string, subject: Subject, k: number | undefined, now = new Date()) {
    const size = Math.round(clampTo(k, COHORT_RISK.k));
    const records = (await this.estimators.projectHealth(projectId, COHORT_BIOMARKERS)).map((h) => healthRecord(h, now.getTime()));
    const target = records.find((r) => sameSubject(r.subject, subject)) ?? healthRecord({ subject, memories: [], readings: [], birth: null }, now.getTime());
    const population = records.filter((r) => !sameSubject(r.subject, subject) && !r.optedOut);
    const base = { subject, populationSize: population.length, disclaimer: HEALTH_DISCLAIMER, generatedAt: now.toISOString() };

    const features = (r: HealthRecord): (number | null)[] => {
      const latest = new Map(latestReadings(r).map((x) => [x.biomarker, x.standard]));
      return [r.demographics.ageYears, r.demographics.sex === null ? null : r.demographics.sex === 'male' ? 1 : 0, r.demographics.bmi, ...COHORT_BIOMARKERS.map((b) => latest.get(b) ?? null)];
    };
    const rows = population.map(features);
    const mine = features(target);
    const sd = mine.map((_, j) => {
      const xs = rows.flatMap((r) => (r[j] === null ? [] : [r[j]!]));
      if (xs.length < 2) return 1;
      const mean = xs.reduce((s, x) => s + x, 0) / xs.length;
      return Math.sqrt(xs.reduce((s, x) => s + (x - mean) ** 2, 0) / (xs.length - 1)) || 1;
    });
    // Similarity 1 / (1 + RMS of the standardised differences over the features both have; at least two).
    const scored = population.flatMap((r, i) => {
      const diffs = mine.flatMap((x, j) => (x === null || rows[i]![j] === null ? [] : [((x - rows[i]![j]!) / sd[j]!) ** 2]));
      return diffs.length < 2 ? [] : [{ r, similarity: 1 / (1 + Math.sqrt(diffs.reduce((s, d) => s + d, 0) / diffs.length)) }];
    });
    scored.sort((a, b) => b.similarity - a.similarity || (key(a.r.subject) < key(b.r.subject) ? -1 : 1));
    const cohort = scored.slice(0, size);
    if (cohort.length < MIN_COHORT) {
      return { ...base, cohortSize: cohort.length, risks: [], suppressed: true, suppressionReason: `fewer than ${MIN_COHORT} comparable patients (${cohort.length}); nothing is reported for so small a cohort` };
    }
    const meanSimilarity = cohort.reduce((s, c) => s + c.similarity, 0) / cohort.length;
    const counts = new Map<string, number>();
    for (const c of cohort) for (const code of new Set(c.r.diagnoses.map((d) => d.icd10.slice(0, 3)))) counts.set(code, (counts.get(code) ?? 0) + 1);
    const risks = [...counts]
      .filter(([, n]) => n >= MIN_CELL)
      .map(([condition, countWith]) => {
        const prevalence = countWith / cohort.length;
        // The 95% Wilson interval's half-width shrinks as the cohort grows; confidence is what it leaves.
        const z = 1.96;
        const half = (z * Math.sqrt((prevalence * (1 - prevalence)) / cohort.length + (z * z) / (4 * cohort.length ** 2))) / (1 + (z * z) / cohort.length);
        return {
          condition,
          cohortPrevalence: prevalence,
          cohortSize: cohort.length,
          countWith,
          meanSimilarity,
          confidence: Math.max(0, 1 - 2 * half) * meanSimilarity,
          rationale: `${countWith} of the ${cohort.length} most similar patients (by age, sex, BMI and biomarkers; mean similarity ${meanSimilarity.toFixed(2)}) have ICD-10 ${condition}.`,
        };
      })
      .sort((a, b) => b.cohortPrevalence - a.cohortPrevalence || (a.condition < b.condition ? -1 : 1));
    return { ...base, cohortSize: cohort.length, risks, suppressed: false, suppressionReason: null };
  }
}
