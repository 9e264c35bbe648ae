// A subject's health record: demographics (metadata.demographic {ageYears?, sex?, weightKg?,
// heightCm?}), diagnoses (metadata.condition {icd10, status?, onsetAt?}) and consent (type consent,
// metadata.optedOut, which takes a subject out of cohort statistics), over the health data the
// estimators' reader gathers (SDK-WIRE.md 4.11); biomarker readings come with it already read. Pure.
import type { BiomarkerReading, SubjectHealth } from '../estimators/index.js';
import type { Subject } from '../platform/common-schemas.js';

export type { BiomarkerReading } from '../estimators/index.js';

export interface Demographics {
  ageYears: number | null;
  sex: 'female' | 'male' | null;
  weightKg: number | null;
  heightCm: number | null;
  bmi: number | null;
}

export interface Diagnosis {
  icd10: string;
  status: string;
  onsetAt: string | null;
  sourceMemoryId: string;
}

export interface HealthRecord {
  subject: Subject;
  /** Oldest first per biomarker. */
  readings: BiomarkerReading[];
  demographics: Demographics;
  diagnoses: Diagnosis[];
  optedOut: boolean;
}

const num = (v: unknown): number | null => (typeof v === 'number' && Number.isFinite(v) ? v : typeof v === 'string' && v.trim() !== '' && Number.isFinite(Number(v)) ? Number(v) : null);

const YEAR_MS = 365.2425 * 86_400_000;

/** The health record of the data the estimators' reader gathered; ages are as of `now`. */
export function healthRecord(health: SubjectHealth, now: number): HealthRecord {
  const demographics: Demographics = { ageYears: null, sex: null, weightKg: null, heightCm: null, bmi: null };
  const diagnoses: Diagnosis[] = [];
  let optedOut = false;
  let consentAt = -Infinity;
  // Newest first, so the first value seen of each demographic is the latest.
  const newestFirst = [...health.memories].sort((a, b) => Date.parse(b.validFrom) - Date.parse(a.validFrom) || (a.id < b.id ? 1 : -1));
  for (const m of newestFirst) {
    const meta = m.metadata ?? {};
    if (m.type === 'consent') {
      const at = Date.parse(m.created);
      if (at > consentAt) [consentAt, optedOut] = [at, meta.optedOut === true];
      continue;
    }
    const demographic = meta.demographic as Record<string, unknown> | undefined;
    if (demographic) {
      demographics.ageYears ??= num(demographic.ageYears);
      demographics.weightKg ??= num(demographic.weightKg);
      demographics.heightCm ??= num(demographic.heightCm);
      if (demographics.sex === null && typeof demographic.sex === 'string') {
        const sex = demographic.sex.trim().toLowerCase();
        demographics.sex = sex.startsWith('f') ? 'female' : sex.startsWith('m') ? 'male' : null;
      }
    }
    const condition = meta.condition as Record<string, unknown> | undefined;
    if (condition && typeof condition.icd10 === 'string' && condition.icd10.trim() !== '') {
      const icd10 = condition.icd10.trim().toUpperCase();
      if (!diagnoses.some((d) => d.icd10 === icd10)) {
        diagnoses.push({ icd10, status: typeof condition.status === 'string' ? condition.status : 'active', onsetAt: typeof condition.onsetAt === 'string' ? condition.onsetAt : null, sourceMemoryId: m.id });
      }
    }
  }
  if (demographics.weightKg !== null && demographics.heightCm !== null && demographics.heightCm > 0) demographics.bmi = demographics.weightKg / (demographics.heightCm / 100) ** 2;
  if (demographics.bmi === null) demographics.bmi = [...health.readings].reverse().find((r) => r.biomarker === 'bmi' && r.standard !== null)?.standard ?? null;
  if (demographics.ageYears === null && health.birth) demographics.ageYears = (now - health.birth.bornAt) / YEAR_MS;
  return { subject: health.subject, readings: health.readings, demographics, diagnoses: diagnoses.filter((d) => d.status !== 'resolved'), optedOut };
}

/** The latest reading of each biomarker. */
export function latestReadings(record: HealthRecord): BiomarkerReading[] {
  const latest = new Map<string, BiomarkerReading>();
  for (const r of record.readings) latest.set(r.biomarker, r);
  return [...latest.values()];
}
