// One standard unit per biomarker, and the conversions into it from the units clients write (case
// and spaces ignored). PhenoAge's model units and the screening thresholds are both stated in these,
// so every reader converts once, here. The factors: albumin g/dL x 10; creatinine mg/dL x 88.4;
// glucose mg/dL / 18.016 (its molar mass, 180.16 g/mol); CRP mg/L / 10; WBC 10^9/L is 10^3/uL; HbA1c
// IFCC mmol/mol to NGSP % by the master equation (NGSP = 0.09148 IFCC + 2.152); LDL cholesterol
// mg/dL / 38.67; haemoglobin g/L / 10.
const same = (v: number) => v;

export const STANDARD_UNITS: Readonly<Record<string, { unit: string; from: Readonly<Record<string, (v: number) => number>> }>> = {
  age: { unit: 'years', from: { years: same, y: same, yr: same } },
  albumin: { unit: 'g/L', from: { 'g/l': same, 'g/dl': (v) => v * 10 } },
  creatinine: { unit: 'umol/L', from: { 'umol/l': same, 'µmol/l': same, 'mg/dl': (v) => v * 88.4 } },
  glucose_fasting: { unit: 'mmol/L', from: { 'mmol/l': same, 'mg/dl': (v) => v / 18.016 } },
  crp: { unit: 'mg/dL', from: { 'mg/dl': same, 'mg/l': (v) => v / 10 } },
  lymphocyte_pct: { unit: '%', from: { '%': same } },
  mcv: { unit: 'fL', from: { fl: same } },
  rdw: { unit: '%', from: { '%': same } },
  alkaline_phosphatase: { unit: 'U/L', from: { 'u/l': same, 'iu/l': same } },
  wbc: { unit: '10^3/uL', from: { '10^3/ul': same, '10^9/l': same, 'k/ul': same, '10*3/ul': same } },
  hba1c: { unit: '%', from: { '%': same, 'mmol/mol': (v) => 0.09148 * v + 2.152 } },
  systolic_bp: { unit: 'mmHg', from: { mmhg: same } },
  diastolic_bp: { unit: 'mmHg', from: { mmhg: same } },
  ldl_cholesterol: { unit: 'mmol/L', from: { 'mmol/l': same, 'mg/dl': (v) => v / 38.67 } },
  egfr: { unit: 'mL/min/1.73m2', from: { 'ml/min/1.73m2': same, 'ml/min/1.73m²': same, 'ml/min': same } },
  bmi: { unit: 'kg/m2', from: { 'kg/m2': same, 'kg/m²': same } },
  haemoglobin: { unit: 'g/dL', from: { 'g/dl': same, 'g/l': (v) => v / 10 } },
};

/**
 * A reading in its biomarker's standard unit: unset unit means the standard one already; undefined
 * when the unit is not one this knows, and for a biomarker without a standard unit unless unitless.
 */
export function toStandardUnit(biomarker: string, value: number, unit: string | null | undefined): number | undefined {
  if (unit === null || unit === undefined || unit.trim() === '') return value;
  return STANDARD_UNITS[biomarker]?.from[unit.replace(/\s+/g, '').toLowerCase()]?.(value);
}
