// PhenoAge, a biological age from nine blood biomarkers and chronological age: Levine et al., "An
// epigenetic biomarker of aging for lifespan and healthspan", Aging 10(4), 2018 (the clinical
// PhenoAge of its supplement). With xb the linear predictor below and gamma the Gompertz shape,
//   M = 1 - exp(-exp(xb) (exp(120 gamma) - 1) / gamma)        (the 10-year mortality score)
//   PhenoAge = 141.50225 + ln(-0.0055305 ln(1 - M)) / 0.090165.
// Since ln(1 - M) = -exp(xb) (exp(120 gamma) - 1) / gamma exactly, the stable form used here is
//   PhenoAge = 141.50225 + (ln 0.0055305 + xb + ln(expm1(120 gamma) / gamma)) / 0.090165,
// which never takes the logarithm of a difference that rounds to 0. Pure.
import { STANDARD_UNITS, toStandardUnit } from './units.js';

export const PHENOAGE_SIGNALS = ['albumin', 'creatinine', 'glucose_fasting', 'crp', 'lymphocyte_pct', 'mcv', 'rdw', 'alkaline_phosphatase', 'wbc', 'age'] as const;
export type PhenoAgeSignal = (typeof PHENOAGE_SIGNALS)[number];

/** The model's unit of each signal: the biomarker's standard unit (units.ts). */
export const PHENOAGE_UNITS = Object.fromEntries(PHENOAGE_SIGNALS.map((s) => [s, STANDARD_UNITS[s]!.unit])) as Record<PhenoAgeSignal, string>;

const INTERCEPT = -19.90667;
/** Coefficients of xb; CRP enters as its natural logarithm. */
const COEFFICIENTS: Record<PhenoAgeSignal, number> = {
  albumin: -0.03359355,
  creatinine: 0.009506491,
  glucose_fasting: 0.1953192,
  crp: 0.09536762,
  lymphocyte_pct: -0.01199984,
  mcv: 0.02676401,
  rdw: 0.3306156,
  alkaline_phosphatase: 0.001868778,
  wbc: 0.05542406,
  age: 0.08035356,
};
const GAMMA = 0.0076927;
const SCALE = 0.090165;
const OFFSET = 141.50225;
/** The part of PhenoAge that no signal moves: the intercept and the constants, in years. */
const BASE_YEARS = OFFSET + (Math.log(0.0055305) + INTERCEPT + Math.log(Math.expm1(120 * GAMMA) / GAMMA)) / SCALE;

/** A reading in the model's unit; undefined when its unit is not one this knows (unset means the model's own). */
export function toModelUnit(signal: PhenoAgeSignal, value: number, unit: string | null | undefined): number | undefined {
  return toStandardUnit(signal, value, unit);
}

export interface PhenoAgeResult {
  value: number;
  /** Each signal's term, in years: coefficient x value (ln for CRP) / 0.090165; with the base they sum to the value. */
  contributions: Record<PhenoAgeSignal, number>;
  baseYears: number;
  /** The 10-year mortality score M. */
  mortalityScore: number;
}

/** PhenoAge of readings in the model's units (CRP above 0). */
export function phenoAge(readings: Record<PhenoAgeSignal, number>): PhenoAgeResult {
  const terms = Object.fromEntries(
    PHENOAGE_SIGNALS.map((s) => [s, COEFFICIENTS[s] * (s === 'crp' ? Math.log(readings[s]) : readings[s])]),
  ) as Record<PhenoAgeSignal, number>;
  const xb = INTERCEPT + PHENOAGE_SIGNALS.reduce((sum, s) => sum + terms[s], 0);
  const contributions = Object.fromEntries(PHENOAGE_SIGNALS.map((s) => [s, terms[s] / SCALE])) as Record<PhenoAgeSignal, number>;
  const value = OFFSET + (Math.log(0.0055305) + xb + Math.log(Math.expm1(120 * GAMMA) / GAMMA)) / SCALE;
  return { value, contributions, baseYears: BASE_YEARS, mortalityScore: -Math.expm1(-Math.exp(xb) * (Math.expm1(120 * GAMMA) / GAMMA)) };
}
