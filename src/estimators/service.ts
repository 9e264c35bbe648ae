// Deterministic estimators over a subject's readings. PhenoAge reads each biomarker's latest
// reading from the last year (fact memories with category health and metadata.health {biomarker,
// value, unit, observedAt}, or typed observations whose attribute key is the biomarker, the unit
// from the attribute), converts it to the model's unit, and answers the estimate with each
// signal's contribution; age comes from an `age` reading (years) or a `date_of_birth` one.
import type { MemoryApi } from '../memory/index.js';
import type { Subject } from '../platform/common-schemas.js';
import type { TypedApi } from '../typed/index.js';
import { PHENOAGE_SIGNALS, PHENOAGE_UNITS, phenoAge, toModelUnit, type PhenoAgeSignal } from './phenoage.js';
import type { Estimate, EstimateBody } from './schemas.js';

const DAY_MS = 86_400_000;
/** Biomarker readings older than this are not used. */
export const READING_WINDOW_DAYS = 365;
const YEAR_MS = 365.2425 * DAY_MS;

/** Names the clients write for the same biomarker. */
const ALIASES: Record<string, PhenoAgeSignal> = {
  glucose: 'glucose_fasting',
  fasting_glucose: 'glucose_fasting',
  hs_crp: 'crp',
  c_reactive_protein: 'crp',
  lymphocytes: 'lymphocyte_pct',
  lymphocyte_percent: 'lymphocyte_pct',
  alp: 'alkaline_phosphatase',
  white_blood_cells: 'wbc',
};
const canonical = (name: string): PhenoAgeSignal | 'date_of_birth' | undefined => {
  const key = name.trim().toLowerCase().replace(/[\s-]+/g, '_');
  if (key === 'date_of_birth' || key === 'birth_date' || key === 'dob') return 'date_of_birth';
  if ((PHENOAGE_SIGNALS as readonly string[]).includes(key)) return key as PhenoAgeSignal;
  return ALIASES[key];
};

interface Reading {
  signal: PhenoAgeSignal | 'date_of_birth';
  value: number | string;
  unit: string | null;
  at: number;
  id: string;
}

export const FRAMING = 'Biological age estimate (PhenoAge, Levine et al. 2018) from nine blood biomarkers and chronological age: the age at which the average person has the same 10-year mortality risk.';
export const DISCLAIMER = 'A screening indicator for research and wellness tracking, not a diagnosis or medical advice. Discuss results with a qualified clinician.';

export class Estimators {
  constructor(
    private readonly memory: Pick<MemoryApi, 'list' | 'save'>,
    private readonly typed: Pick<TypedApi, 'listObservations' | 'listAttributes'>,
  ) {}

  private async readings(projectId: string, subject: Subject, now: number): Promise<Reading[]> {
    const out: Reading[] = [];
    const memories = await this.memory.list(projectId, { category: 'health', subjectKind: subject.kind, subjectExternalId: subject.externalId, limit: 500 });
    for (const m of memories) {
      const demographic = (m.metadata as { demographic?: { ageYears?: unknown } } | null)?.demographic;
      if (typeof demographic?.ageYears === 'number' && Number.isFinite(demographic.ageYears)) {
        out.push({ signal: 'age', value: demographic.ageYears, unit: 'years', at: Date.parse(m.validFrom), id: m.id });
      }
      const health = (m.metadata as { health?: { biomarker?: unknown; value?: unknown; unit?: unknown; observedAt?: unknown } } | null)?.health;
      const signal = typeof health?.biomarker === 'string' ? canonical(health.biomarker) : undefined;
      if (!signal || (typeof health!.value !== 'number' && typeof health!.value !== 'string')) continue;
      const at = typeof health!.observedAt === 'string' && !Number.isNaN(Date.parse(health!.observedAt)) ? Date.parse(health!.observedAt) : Date.parse(m.validFrom);
      out.push({ signal, value: health!.value, unit: typeof health!.unit === 'string' ? health!.unit : null, at, id: m.id });
    }
    const attributes = await this.typed.listAttributes(projectId, { limit: 1000, offset: 0 });
    for (const attribute of attributes) {
      const signal = canonical(attribute.attributeKey);
      if (!signal) continue;
      const [latest] = await this.typed.listObservations(projectId, { subjectKind: subject.kind, subjectExternalId: subject.externalId, attributeKey: attribute.attributeKey, status: 'accepted', limit: 1, offset: 0 });
      if (!latest || latest.observedAt === null) continue;
      const value = latest.valueNumeric ?? latest.valueTs ?? latest.valueText;
      if (value === null) continue;
      out.push({ signal, value, unit: attribute.unit, at: Date.parse(latest.observedAt), id: latest.id });
    }
    return out.filter((r) => r.at <= now).sort((a, b) => b.at - a.at || (a.id < b.id ? -1 : 1));
  }

  async estimate(projectId: string, body: EstimateBody, now = new Date()): Promise<Estimate> {
    const t = now.getTime();
    const readings = await this.readings(projectId, body.subject, t);
    const values = new Map<PhenoAgeSignal, { value: number; at: number; id: string }>();
    let chronologicalAge: number | null = null;
    for (const r of readings) {
      if (r.signal === 'date_of_birth') {
        const born = Date.parse(String(r.value));
        if (!values.has('age') && !Number.isNaN(born)) values.set('age', { value: (t - born) / YEAR_MS, at: t, id: r.id });
        continue;
      }
      if (values.has(r.signal)) continue;
      if (r.signal !== 'age' && t - r.at > READING_WINDOW_DAYS * DAY_MS) continue;
      const number = typeof r.value === 'number' ? r.value : Number(r.value);
      const converted = Number.isFinite(number) ? toModelUnit(r.signal, number, r.unit) : undefined;
      if (converted === undefined || (r.signal === 'crp' && converted <= 0)) continue;
      // An age reading ages with the calendar.
      values.set(r.signal, { value: r.signal === 'age' ? converted + (t - r.at) / YEAR_MS : converted, at: r.signal === 'age' ? t : r.at, id: r.id });
    }
    chronologicalAge = values.get('age')?.value ?? null;
    const missing = PHENOAGE_SIGNALS.filter((s) => !values.has(s));
    const provenance = [...new Set([...values.values()].map((v) => v.id))];
    const base = { subject: body.subject, estimatorId: body.estimatorId, unit: PHENOAGE_UNITS.age, provenance, framing: FRAMING, disclaimer: DISCLAIMER, chronologicalAge, memoryId: null };
    if (missing.length > 0) return { ...base, ok: false, value: 0, contributors: [], confidence: 0, missingSignals: [...missing], mortalityScore: null };
    const readingsBySignal = Object.fromEntries(PHENOAGE_SIGNALS.map((s) => [s, values.get(s)!.value])) as Record<PhenoAgeSignal, number>;
    const result = phenoAge(readingsBySignal);
    const biomarkers = PHENOAGE_SIGNALS.filter((s) => s !== 'age');
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
      content: `PhenoAge ${result.value.toFixed(1)} years (chronological ${chronologicalAge!.toFixed(1)}) for ${body.subject.kind} ${body.subject.externalId} on ${now.toISOString().slice(0, 10)}`,
      subject: body.subject,
      source: 'estimator',
      validFrom: now,
      sourceMemoryIds: provenance.filter((id) => id.startsWith('mem_')),
      metadata: { estimate: { estimatorId: body.estimatorId, value: result.value, unit: PHENOAGE_UNITS.age, chronologicalAge, confidence, mortalityScore: result.mortalityScore, provenance } },
    });
    return { ...estimate, memoryId: saved.memory.id };
  }
}
