// Deterministic estimators over a subject's readings (readings.ts). PhenoAge takes each
// biomarker's latest reading from the last year, converts it to the model's unit, and answers the
// estimate with each signal's contribution; age comes from the newest of an `age` reading (years), a
// demographic ageYears and a `date_of_birth` reading.
import type { MemoryApi } from '../memory/index.js';
import type { Subject } from '../platform/common-schemas.js';
import type { TypedApi } from '../typed/index.js';
import { PHENOAGE_SIGNALS, PHENOAGE_UNITS, phenoAge, type PhenoAgeSignal } from './phenoage.js';
import { HealthReader, type SubjectHealth } from './readings.js';
import type { Estimate, EstimateBody } from './schemas.js';

const DAY_MS = 86_400_000;
/** Biomarker readings older than this are not used. */
export const READING_WINDOW_DAYS = 365;
const YEAR_MS = 365.2425 * DAY_MS;

const isSignal = (name: string): name is PhenoAgeSignal => (PHENOAGE_SIGNALS as readonly string[]).includes(name);

export const FRAMING = 'Biological age estimate (PhenoAge, Levine et al. 2018) from nine blood biomarkers and chronological age: the age at which the average person has the same 10-year mortality risk.';
export const DISCLAIMER = 'A screening indicator for research and wellness tracking, not a diagnosis or medical advice. Discuss results with a qualified clinician.';

interface Value {
  value: number;
  at: number;
  id: string;
}

/**
 * Chronological age at `t`: the newest of an age reading, a demographic ageYears (each aged with the
 * calendar since it was recorded) and a date of birth.
 */
function chronologicalAge(health: SubjectHealth, t: number): Value | undefined {
  const candidates: Value[] = [];
  for (const m of health.memories) {
    const years = (m.metadata as { demographic?: { ageYears?: unknown } } | null)?.demographic?.ageYears;
    if (typeof years === 'number' && Number.isFinite(years)) candidates.push({ value: years, at: Date.parse(m.validFrom), id: m.id });
  }
  for (const r of health.readings) {
    const years = r.biomarker === 'age' ? r.standard : null;
    if (years !== null) candidates.push({ value: years, at: Date.parse(r.observedAt), id: r.sourceId });
  }
  const aged = candidates.filter((c) => c.at <= t).map((c) => ({ ...c, value: c.value + (t - c.at) / YEAR_MS }));
  if (health.birth && health.birth.at <= t) aged.push({ value: (t - health.birth.bornAt) / YEAR_MS, at: health.birth.at, id: health.birth.sourceId });
  return aged.sort((a, b) => b.at - a.at || (a.id < b.id ? -1 : 1))[0];
}

/** Each biomarker's latest usable reading from the window, in the model's unit. */
function latestBiomarkers(health: SubjectHealth, t: number): Map<PhenoAgeSignal, Value> {
  const values = new Map<PhenoAgeSignal, Value>();
  const newestFirst = [...health.readings].sort((a, b) => Date.parse(b.observedAt) - Date.parse(a.observedAt) || (a.sourceId < b.sourceId ? -1 : 1));
  for (const r of newestFirst) {
    const at = Date.parse(r.observedAt);
    if (!isSignal(r.biomarker) || r.biomarker === 'age' || values.has(r.biomarker) || at > t || t - at > READING_WINDOW_DAYS * DAY_MS) continue;
    if (r.standard === null || (r.biomarker === 'crp' && r.standard <= 0)) continue;
    values.set(r.biomarker, { value: r.standard, at, id: r.sourceId });
  }
  return values;
}

export class Estimators {
  private readonly reader: HealthReader;

  constructor(
    private readonly memory: Pick<MemoryApi, 'list' | 'save'>,
    typed: Pick<TypedApi, 'listObservations' | 'listAttributes'>,
  ) {
    this.reader = new HealthReader(memory, typed);
  }

  /** A subject's recorded health data (memories, biomarker readings, date of birth). */
  subjectHealth(projectId: string, subject: Subject): Promise<SubjectHealth> {
    return this.reader.subject(projectId, subject);
  }

  /** Every subject's health data in the project, with typed observations of the biomarkers named. */
  projectHealth(projectId: string, biomarkers?: readonly string[]): Promise<SubjectHealth[]> {
    return this.reader.project(projectId, biomarkers);
  }

  /** The estimate; `health` when the caller has read the subject's data already. */
  async estimate(projectId: string, body: EstimateBody, now = new Date(), health?: SubjectHealth): Promise<Estimate> {
    const t = now.getTime();
    const data = health ?? (await this.reader.subject(projectId, body.subject));
    const values = latestBiomarkers(data, t);
    const age = chronologicalAge(data, t);
    if (age) values.set('age', age);
    const missing = PHENOAGE_SIGNALS.filter((s) => !values.has(s));
    const provenance = [...new Set([...values.values()].map((v) => v.id))];
    const base = { subject: body.subject, estimatorId: body.estimatorId, unit: PHENOAGE_UNITS.age, provenance, framing: FRAMING, disclaimer: DISCLAIMER, chronologicalAge: age?.value ?? null, memoryId: null };
    if (missing.length > 0) return { ...base, ok: false, value: 0, contributors: [], confidence: 0, missingSignals: [...missing], mortalityScore: null };
    const result = phenoAge(Object.fromEntries(PHENOAGE_SIGNALS.map((s) => [s, values.get(s)!.value])) as Record<PhenoAgeSignal, number>);
    const biomarkers = PHENOAGE_SIGNALS.filter((s) => s !== 'age');
    // Each biomarker counts in full when read today and nothing at the window's edge.
    const confidence = biomarkers.reduce((sum, s) => sum + Math.max(0, 1 - (t - values.get(s)!.at) / (READING_WINDOW_DAYS * DAY_MS)), 0) / biomarkers.length;
    const estimate: Estimate = {
      ...base,
      ok: true,
      value: result.value,
      contributors: PHENOAGE_SIGNALS.map((s) => ({ signal: s, contribution: result.contributions[s] })).sort((a, b) => Math.abs(b.contribution) - Math.abs(a.contribution)),
      confidence,
      missingSignals: [],
      mortalityScore: result.mortalityScore,
    };
    if (!body.persist) return estimate;
    const saved = await this.memory.save(projectId, {
      type: 'estimate',
      content: `PhenoAge ${result.value.toFixed(1)} years (chronological ${age!.value.toFixed(1)}) for ${body.subject.kind} ${body.subject.externalId} on ${now.toISOString().slice(0, 10)}`,
      subject: body.subject,
      source: 'estimator',
      validFrom: now,
      sourceMemoryIds: provenance.filter((id) => id.startsWith('mem_')),
      metadata: { estimate: { estimatorId: body.estimatorId, value: result.value, unit: PHENOAGE_UNITS.age, chronologicalAge: age!.value, confidence, mortalityScore: result.mortalityScore, provenance } },
    });
    return { ...estimate, memoryId: saved.memory.id };
  }
}
