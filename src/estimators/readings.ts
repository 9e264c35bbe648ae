// A subject's recorded health data, read one way for the estimators and the healthcare pack
// (SDK-WIRE.md 4.11): fact memories with category health (metadata.health {biomarker, value,
// unit?, observedAt?}, metadata.demographic, metadata.condition), consent memories, and typed
// observations whose attribute key names a biomarker (the unit from the attribute). Biomarker names
// are folded to one canonical snake_case spelling here, so that a threshold, an estimator and a
// cohort feature all find the same reading whatever the client wrote.
import type { MemoryApi } from '../memory/index.js';
import type { Subject } from '../platform/common-schemas.js';
import type { TypedApi } from '../typed/index.js';
import { toStandardUnit } from './units.js';

export interface BiomarkerReading {
  /** Canonical name (canonicalBiomarker). */
  biomarker: string;
  /** As recorded, in `unit`. */
  value: number;
  unit: string | null;
  /** The value in the biomarker's standard unit (units.ts); null when the unit is not one known. */
  standard: number | null;
  observedAt: string;
  /** The memory (mem_) or typed observation (obs_) it came from. */
  sourceId: string;
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

/** A date of birth (epoch ms) as recorded at `at`. */
export type Birth = { bornAt: number; at: number; sourceId: string };

export interface SubjectHealth {
  subject: Subject;
  /** The subject's health and consent memories. */
  memories: HealthMemory[];
  /** Numeric biomarker readings from the memories and the typed observations, oldest first per biomarker. */
  readings: BiomarkerReading[];
  /** The latest date of birth recorded as a date_of_birth reading (memory or typed observation), and when it was recorded. */
  birth: Birth | null;
}

const ALIASES: Record<string, string> = {
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
  c_reactive_protein: 'crp',
  lymphocytes: 'lymphocyte_pct',
  lymphocyte_percent: 'lymphocyte_pct',
  alp: 'alkaline_phosphatase',
  white_blood_cells: 'wbc',
  birth_date: 'date_of_birth',
  dob: 'date_of_birth',
};

/** A biomarker name as written, in the canonical snake_case the thresholds and estimators use. */
export function canonicalBiomarker(name: string): string {
  const key = name.trim().toLowerCase().replace(/[\s-]+/g, '_');
  return ALIASES[key] ?? key;
}

const num = (v: unknown): number | null => (typeof v === 'number' && Number.isFinite(v) ? v : typeof v === 'string' && v.trim() !== '' && Number.isFinite(Number(v)) ? Number(v) : null);
const iso = (v: unknown, fallback: string): string => (typeof v === 'string' && !Number.isNaN(Date.parse(v)) ? new Date(v).toISOString() : fallback);

/** The biomarker readings and dates of birth that memories record. Pure. */
export function memoryReadings(memories: readonly HealthMemory[]): { readings: BiomarkerReading[]; births: Birth[] } {
  const readings: BiomarkerReading[] = [];
  const births: Birth[] = [];
  for (const m of memories) {
    const health = m.metadata?.health as Record<string, unknown> | undefined;
    if (!health || typeof health.biomarker !== 'string') continue;
    const biomarker = canonicalBiomarker(health.biomarker);
    const observedAt = iso(health.observedAt, m.validFrom);
    if (biomarker === 'date_of_birth') {
      const bornAt = typeof health.value === 'string' ? Date.parse(health.value) : NaN;
      if (!Number.isNaN(bornAt)) births.push({ bornAt, at: Date.parse(observedAt), sourceId: m.id });
      continue;
    }
    const value = num(health.value);
    if (value === null) continue;
    const unit = typeof health.unit === 'string' ? health.unit : null;
    readings.push({ biomarker, value, unit, standard: toStandardUnit(biomarker, value, unit) ?? null, observedAt, sourceId: m.id });
  }
  return { readings, births };
}

/** A typed observation read as a biomarker reading, or as a date of birth. */
type Observed = { subject: Subject } & ({ reading: BiomarkerReading } | { birth: Birth });

const byBiomarkerThenTime = (a: BiomarkerReading, b: BiomarkerReading) => a.biomarker.localeCompare(b.biomarker) || Date.parse(a.observedAt) - Date.parse(b.observedAt) || (a.sourceId < b.sourceId ? -1 : 1);
const subjectKey = (s: Subject) => `${s.kind}\0${s.externalId}`;
const PAGE = 500;
/** Typed observations read per biomarker attribute and subject (the newest). */
const OBSERVATIONS_PER_SUBJECT = 100;

export class HealthReader {
  constructor(
    private readonly memory: Pick<MemoryApi, 'list'>,
    private readonly typed: Pick<TypedApi, 'listObservations' | 'listAttributes'>,
  ) {}

  private async memories(projectId: string, filter: { category?: string; type?: string; subjectKind?: string; subjectExternalId?: string }): Promise<HealthMemory[]> {
    const out: HealthMemory[] = [];
    for (let offset = 0; ; offset += PAGE) {
      const page = await this.memory.list(projectId, { ...filter, limit: PAGE, offset });
      out.push(...page.map((m) => ({ id: m.id, type: m.type, metadata: m.metadata, validFrom: m.validFrom, created: m.created, subject: m.subject ?? null })));
      if (page.length < PAGE) return out;
    }
  }

  /**
   * Accepted typed observations of attributes whose key names a biomarker (narrowed to `only` when
   * given), newest first: the subject's, or with no subject every subject's.
   */
  private async observations(projectId: string, subject: Subject | null, only?: ReadonlySet<string>): Promise<Observed[]> {
    const out: Observed[] = [];
    for (let offset = 0; ; offset += 1000) {
      const attributes = await this.typed.listAttributes(projectId, { limit: 1000, offset });
      for (const attribute of attributes) {
        const biomarker = canonicalBiomarker(attribute.attributeKey);
        if (only && !only.has(biomarker)) continue;
        const filter = { attributeKey: attribute.attributeKey, status: 'accepted' as const, ...(subject ? { subjectKind: subject.kind, subjectExternalId: subject.externalId } : {}) };
        const limit = subject ? OBSERVATIONS_PER_SUBJECT : 1000;
        for (let at = 0; ; at += limit) {
          const rows = await this.typed.listObservations(projectId, { ...filter, limit, offset: at });
          for (const r of rows) {
            if (r.observedAt === null || r.subjectKind === null || r.subjectExternalId === null) continue;
            const who = { kind: r.subjectKind, externalId: r.subjectExternalId };
            if (biomarker === 'date_of_birth') {
              const written = r.valueTs ?? r.valueText;
              const bornAt = written === null ? NaN : Date.parse(written);
              if (!Number.isNaN(bornAt)) out.push({ subject: who, birth: { bornAt, at: Date.parse(r.observedAt), sourceId: r.id } });
            } else if (r.valueNumeric !== null) {
              out.push({ subject: who, reading: { biomarker, value: r.valueNumeric, unit: attribute.unit, standard: toStandardUnit(biomarker, r.valueNumeric, attribute.unit) ?? null, observedAt: r.observedAt, sourceId: r.id } });
            }
          }
          if (subject || rows.length < limit) break;
        }
      }
      if (attributes.length < 1000) return out;
    }
  }

  private static assemble(subject: Subject, memories: HealthMemory[], observed: readonly Observed[]): SubjectHealth {
    const { readings, births } = memoryReadings(memories);
    for (const o of observed) {
      if ('reading' in o) readings.push(o.reading);
      else births.push(o.birth);
    }
    const [birth] = births.sort((a, b) => b.at - a.at || (a.sourceId < b.sourceId ? -1 : 1));
    return { subject, memories, readings: readings.sort(byBiomarkerThenTime), birth: birth ?? null };
  }

  /** One subject's health data. */
  async subject(projectId: string, subject: Subject): Promise<SubjectHealth> {
    const filter = { subjectKind: subject.kind, subjectExternalId: subject.externalId };
    const [health, consent, observed] = await Promise.all([
      this.memories(projectId, { ...filter, category: 'health' }),
      this.memories(projectId, { ...filter, type: 'consent' }),
      this.observations(projectId, subject),
    ]);
    return HealthReader.assemble(subject, [...health, ...consent], observed);
  }

  /**
   * Every subject's health data in the project: health and consent memories, and typed
   * observations of the biomarkers named (all biomarkers when none are).
   */
  async project(projectId: string, biomarkers?: readonly string[]): Promise<SubjectHealth[]> {
    const [health, consent, observed] = await Promise.all([
      this.memories(projectId, { category: 'health' }),
      this.memories(projectId, { type: 'consent' }),
      this.observations(projectId, null, biomarkers ? new Set(biomarkers) : undefined),
    ]);
    const bySubject = new Map<string, { subject: Subject; memories: HealthMemory[]; observed: Observed[] }>();
    const entry = (s: Subject) => {
      const found = bySubject.get(subjectKey(s)) ?? { subject: s, memories: [], observed: [] };
      bySubject.set(subjectKey(s), found);
      return found;
    };
    for (const m of [...health, ...consent]) if (m.subject) entry(m.subject).memories.push(m);
    for (const o of observed) entry(o.subject).observed.push(o);
    return [...bySubject.values()].map((e) => HealthReader.assemble(e.subject, e.memories, e.observed));
  }
}
