// A subject's health record as the clients write it (SDK-WIRE.md 4.11): fact memories with category
// health and metadata.health {biomarker, value, unit?, observedAt?}, metadata.demographic {ageYears?,
// sex?, weightKg?, heightCm?, activity?} or metadata.condition {icd10, status?, onsetAt?}; typed
// observations whose attribute key is a biomarker; and consent memories (type consent,
// metadata.optedOut) that take a subject out of cohort statistics. Pure readers over memories.
import type { Subject } from '../platform/common-schemas.js';

export interface BiomarkerReading {
  biomarker: string;
  value: number;
  unit: string | null;
  observedAt: string;
  sourceId: string;
}

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

/** The memory fields the readers use. */
export interface HealthMemory {
  id: string;
  type: string;
  metadata: Record<string, unknown> | null;
  validFrom: string;
  created: string;
  subject: Subject | null;
}

/** A biomarker name as written, in the canonical snake_case the thresholds use. */
export const canonicalBiomarker = (name: string) => {
  const key = name.trim().toLowerCase().replace(/[\s-]+/g, '_');
  const aliases: Record<string, string> = {
    glucose: 'glucose_fasting',
    fasting_glucose: 'glucose_fasting',
    a1c: 'hba1c',
    hemoglobin_a1c: 'hba1c',
    systolic: 'systolic_bp',
    sbp: 'systolic_bp',
    diastolic: 'diastolic_bp',
    dbp: 'diastolic_bp',
    ldl: 'ldl_cholesterol',
    ldl_c: 'ldl_cholesterol',
    hemoglobin: 'haemoglobin',
    hgb: 'haemoglobin',
    hs_crp: 'crp',
  };
  return aliases[key] ?? key;
};

const num = (v: unknown): number | null => (typeof v === 'number' && Number.isFinite(v) ? v : typeof v === 'string' && v.trim() !== '' && Number.isFinite(Number(v)) ? Number(v) : null);

export function healthRecord(subject: Subject, memories: readonly HealthMemory[], observations: readonly BiomarkerReading[]): HealthRecord {
  const readings: BiomarkerReading[] = [...observations];
  const demographics: Demographics = { ageYears: null, sex: null, weightKg: null, heightCm: null, bmi: null };
  const diagnoses: Diagnosis[] = [];
  let optedOut = false;
  let consentAt = -Infinity;
  // Newest first, so the first value seen of each demographic is the latest.
  const newestFirst = [...memories].sort((a, b) => Date.parse(b.validFrom) - Date.parse(a.validFrom) || (a.id < b.id ? 1 : -1));
  for (const m of newestFirst) {
    const meta = m.metadata ?? {};
    if (m.type === 'consent') {
      const at = Date.parse(m.created);
      if (at > consentAt) [consentAt, optedOut] = [at, meta.optedOut === true];
      continue;
    }
    const health = meta.health as Record<string, unknown> | undefined;
    if (health && typeof health.biomarker === 'string' && num(health.value) !== null) {
      readings.push({
        biomarker: canonicalBiomarker(health.biomarker),
        value: num(health.value)!,
        unit: typeof health.unit === 'string' ? health.unit : null,
        observedAt: typeof health.observedAt === 'string' && !Number.isNaN(Date.parse(health.observedAt)) ? new Date(health.observedAt).toISOString() : m.validFrom,
        sourceId: m.id,
      });
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
  if (demographics.bmi === null) {
    const bmi = [...readings].reverse().find((r) => r.biomarker === 'bmi');
    if (bmi) demographics.bmi = bmi.value;
  }
  readings.sort((a, b) => a.biomarker.localeCompare(b.biomarker) || Date.parse(a.observedAt) - Date.parse(b.observedAt));
  return { subject, readings, demographics, diagnoses: diagnoses.filter((d) => d.status !== 'resolved'), optedOut };
}

/** The latest reading of each biomarker. */
export function latestReadings(record: HealthRecord): BiomarkerReading[] {
  const latest = new Map<string, BiomarkerReading>();
  for (const r of record.readings) latest.set(r.biomarker, r);
  return [...latest.values()];
}
