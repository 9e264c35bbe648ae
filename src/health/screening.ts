// Screening indicators from biomarker thresholds, each cited. A condition is indicated when the
// latest reading is past its threshold ("threshold"), or projected when at least three readings
// over 90 days or more trend toward it and their least-squares line crosses it within five years
// ("trend"). Thresholds are in each biomarker's standard unit (estimators/units.ts), the unit every
// reading carries its `standard` value in. Screening, not diagnosis.
import type { BiomarkerReading, Demographics, Diagnosis } from './records.js';

interface Rule {
  condition: string;
  label: string;
  /** ICD-10 code; a diagnosis in the same three-character category means it is known already. */
  icd10: string;
  biomarker: string;
  /** The biomarker's standard unit, in which the threshold is stated. */
  unit: string;
  direction: 'above' | 'below';
  threshold: (d: Demographics) => number;
  source: string;
}

export const SCREENING_RULES: readonly Rule[] = [
  { condition: 'type_2_diabetes', label: 'Type 2 diabetes', icd10: 'E11', biomarker: 'hba1c', unit: '%', direction: 'above', threshold: () => 6.5, source: 'ADA Standards of Care in Diabetes 2024, 2.1: HbA1c >= 6.5%' },
  { condition: 'type_2_diabetes', label: 'Type 2 diabetes', icd10: 'E11', biomarker: 'glucose_fasting', unit: 'mmol/L', direction: 'above', threshold: () => 7.0, source: 'ADA Standards of Care in Diabetes 2024, 2.1: fasting glucose >= 126 mg/dL (7.0 mmol/L)' },
  { condition: 'prediabetes', label: 'Prediabetes', icd10: 'R73', biomarker: 'hba1c', unit: '%', direction: 'above', threshold: () => 5.7, source: 'ADA Standards of Care in Diabetes 2024, 2.5: HbA1c 5.7-6.4%' },
  { condition: 'hypertension', label: 'Hypertension', icd10: 'I10', biomarker: 'systolic_bp', unit: 'mmHg', direction: 'above', threshold: () => 130, source: 'Whelton et al., 2017 ACC/AHA guideline: stage 1 from 130 mmHg systolic' },
  { condition: 'hypertension', label: 'Hypertension', icd10: 'I10', biomarker: 'diastolic_bp', unit: 'mmHg', direction: 'above', threshold: () => 80, source: 'Whelton et al., 2017 ACC/AHA guideline: stage 1 from 80 mmHg diastolic' },
  { condition: 'severe_hypercholesterolaemia', label: 'Severe hypercholesterolaemia', icd10: 'E78', biomarker: 'ldl_cholesterol', unit: 'mmol/L', direction: 'above', threshold: () => 4.9, source: 'Grundy et al., 2018 AHA/ACC cholesterol guideline: LDL-C >= 190 mg/dL (4.9 mmol/L)' },
  { condition: 'chronic_kidney_disease', label: 'Chronic kidney disease', icd10: 'N18', biomarker: 'egfr', unit: 'mL/min/1.73m2', direction: 'below', threshold: () => 60, source: 'KDIGO 2012 CKD guideline: eGFR < 60 mL/min/1.73 m2 (G3a and beyond)' },
  { condition: 'obesity', label: 'Obesity', icd10: 'E66', biomarker: 'bmi', unit: 'kg/m2', direction: 'above', threshold: () => 30, source: 'WHO, Obesity: preventing and managing the global epidemic, 2000: BMI >= 30' },
  { condition: 'anaemia', label: 'Anaemia', icd10: 'D64', biomarker: 'haemoglobin', unit: 'g/dL', direction: 'below', threshold: (d) => (d.sex === 'male' ? 13 : 12), source: 'WHO 2011, Haemoglobin concentrations for the diagnosis of anaemia: < 13 g/dL (men), < 12 g/dL (non-pregnant women)' },
];

export interface PredictedCondition {
  condition: string;
  label: string;
  basis: 'threshold' | 'trend';
  biomarker: string;
  currentValue: number;
  threshold: number;
  projectedOnsetAt: string | null;
  confidence: number;
  rationale: string;
  sourceMemoryIds: string[];
}

const DAY_MS = 86_400_000;
const TREND_MIN_READINGS = 3;
const TREND_MIN_SPAN_DAYS = 90;
const TREND_HORIZON_DAYS = 5 * 365;

/** Least squares of value on time: slope per day, intercept at t = 0 (ms), and r^2. */
function trend(points: readonly { t: number; v: number }[]) {
  const n = points.length;
  const mt = points.reduce((s, p) => s + p.t, 0) / n;
  const mv = points.reduce((s, p) => s + p.v, 0) / n;
  let stt = 0;
  let stv = 0;
  let svv = 0;
  for (const p of points) {
    stt += (p.t - mt) ** 2;
    stv += (p.t - mt) * (p.v - mv);
    svv += (p.v - mv) ** 2;
  }
  const slope = stt === 0 ? 0 : stv / stt;
  return { slope, at: (t: number) => mv + slope * (t - mt), r2: svv === 0 || stt === 0 ? 0 : (stv * stv) / (stt * svv) };
}

export function screen(readings: readonly BiomarkerReading[], demographics: Demographics, diagnoses: readonly Diagnosis[], now: number): PredictedCondition[] {
  const known = new Set(diagnoses.map((d) => d.icd10.slice(0, 3)));
  const out = new Map<string, PredictedCondition>();
  for (const rule of SCREENING_RULES) {
    if (known.has(rule.icd10)) continue;
    const series = readings
      .filter((r) => r.biomarker === rule.biomarker)
      .flatMap((r) => (r.standard === null ? [] : [{ t: Date.parse(r.observedAt), v: r.standard, id: r.sourceId }]))
      .sort((a, b) => a.t - b.t);
    if (series.length === 0 && !(rule.biomarker === 'bmi' && demographics.bmi !== null)) continue;
    const latest = series.at(-1) ?? { t: now, v: demographics.bmi!, id: '' };
    const threshold = rule.threshold(demographics);
    const past = (v: number) => (rule.direction === 'above' ? v >= threshold : v < threshold);
    let found: PredictedCondition | undefined;
    if (past(latest.v)) {
      const confirming = series.filter((p) => past(p.v)).length;
      found = {
        condition: rule.condition,
        label: rule.label,
        basis: 'threshold',
        biomarker: rule.biomarker,
        currentValue: latest.v,
        threshold,
        projectedOnsetAt: null,
        confidence: confirming >= 2 ? 0.9 : 0.7,
        rationale: `Latest ${rule.biomarker} ${latest.v.toFixed(2)} ${rule.unit} is ${rule.direction === 'above' ? 'at or above' : 'below'} ${threshold} ${rule.unit} (${rule.source}); ${confirming} reading(s) past it.`,
        sourceMemoryIds: series.filter((p) => past(p.v)).map((p) => p.id).filter((id) => id !== ''),
      };
    } else if (series.length >= TREND_MIN_READINGS && (latest.t - series[0]!.t) / DAY_MS >= TREND_MIN_SPAN_DAYS) {
      const line = trend(series.map((p) => ({ t: p.t, v: p.v })));
      const toward = rule.direction === 'above' ? line.slope > 0 : line.slope < 0;
      if (toward) {
        const crossAt = series[0]!.t + (threshold - line.at(series[0]!.t)) / line.slope;
        if (crossAt > now && crossAt - now <= TREND_HORIZON_DAYS * DAY_MS) {
          found = {
            condition: rule.condition,
            label: rule.label,
            basis: 'trend',
            biomarker: rule.biomarker,
            currentValue: latest.v,
            threshold,
            projectedOnsetAt: new Date(crossAt).toISOString(),
            confidence: Math.min(0.6, 0.3 + 0.3 * line.r2),
            rationale: `${series.length} ${rule.biomarker} readings over ${Math.round((latest.t - series[0]!.t) / DAY_MS)} days trend ${rule.direction === 'above' ? 'up' : 'down'} (r^2 ${line.r2.toFixed(2)}) and cross ${threshold} ${rule.unit} around ${new Date(crossAt).toISOString().slice(0, 10)} (${rule.source}).`,
            sourceMemoryIds: series.map((p) => p.id).filter((id) => id !== ''),
          };
        }
      }
    }
    // One indication per condition: the most confident of its rules.
    if (found && (out.get(rule.condition)?.confidence ?? -1) < found.confidence) out.set(rule.condition, found);
  }
  return [...out.values()].sort((a, b) => b.confidence - a.confidence || (a.condition < b.condition ? -1 : 1));
}
