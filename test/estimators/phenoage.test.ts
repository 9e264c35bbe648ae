// PhenoAge: the worked example, the stable form against the paper's form, the additive
// contributions, the direction of each biomarker, and unit conversions.
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { phenoAge, PHENOAGE_SIGNALS, toModelUnit, type PhenoAgeSignal } from '../../src/estimators/phenoage.js';

const EXAMPLE: Record<PhenoAgeSignal, number> = { age: 40, albumin: 42, creatinine: 88, glucose_fasting: 5.3, crp: 0.05, lymphocyte_pct: 30, mcv: 90, rdw: 13, alkaline_phosphatase: 70, wbc: 6.5 };

/** The paper's form, M first, as published (unstable where M rounds to 0 or 1). */
function paperForm(r: Record<PhenoAgeSignal, number>): number {
  const xb =
    -19.90667 - 0.03359355 * r.albumin + 0.009506491 * r.creatinine + 0.1953192 * r.glucose_fasting + 0.09536762 * Math.log(r.crp) - 0.01199984 * r.lymphocyte_pct +
    0.02676401 * r.mcv + 0.3306156 * r.rdw + 0.001868778 * r.alkaline_phosphatase + 0.05542406 * r.wbc + 0.08035356 * r.age;
  const gamma = 0.0076927;
  const m = 1 - Math.exp((-Math.exp(xb) * (Math.exp(120 * gamma) - 1)) / gamma);
  return 141.50225 + Math.log(-0.0055305 * Math.log(1 - m)) / 0.090165;
}

const readings = fc.record({
  age: fc.double({ min: 20, max: 90, noNaN: true }),
  albumin: fc.double({ min: 30, max: 55, noNaN: true }),
  creatinine: fc.double({ min: 40, max: 200, noNaN: true }),
  glucose_fasting: fc.double({ min: 3.5, max: 12, noNaN: true }),
  crp: fc.double({ min: 0.01, max: 5, noNaN: true }),
  lymphocyte_pct: fc.double({ min: 10, max: 50, noNaN: true }),
  mcv: fc.double({ min: 75, max: 105, noNaN: true }),
  rdw: fc.double({ min: 11, max: 18, noNaN: true }),
  alkaline_phosphatase: fc.double({ min: 30, max: 150, noNaN: true }),
  wbc: fc.double({ min: 3, max: 12, noNaN: true }),
});

describe('phenoAge', () => {
  it('gives the worked example: about 35.11 years', () => {
    expect(Math.abs(phenoAge(EXAMPLE).value - 35.11)).toBeLessThan(0.01);
    expect(phenoAge(EXAMPLE).value).toBeCloseTo(paperForm(EXAMPLE), 9);
  });

  // A second published source: the BioAge R package (Kwon and Belsky, "A toolkit for quantification
  // of biological age from blood chemistry and organ function test data: BioAge", GeroScience 43,
  // 2021; github.com/dayoonkwon/BioAge, data/NHANES4.rda) ships each NHANES IV participant's
  // original Levine PhenoAge as `phenoage0`. Six participants of the 1999 wave, as BioAge has them
  // (albumin g/L, creatinine umol/L, glucose mmol/L, lymphocytes %, MCV fL, RDW %, ALP U/L, WBC
  // 10^3/uL). BioAge enters CRP as its column `lncrp` = ln(1 + CRP mg/dL) where Levine enters
  // ln(CRP mg/dL), so these rows feed 1 + CRP to compare the same formula.
  const NHANES_IV: readonly [string, Omit<Record<PhenoAgeSignal, number>, 'crp'>, number, number][] = [
    ['1999_20', { age: 23, albumin: 44, creatinine: 39.86032653, glucose_fasting: 4.773, lymphocyte_pct: 28.1, mcv: 91, rdw: 11.4, alkaline_phosphatase: 50, wbc: 5.6 }, 0.67, 10.4251980549219],
    ['1999_15', { age: 38, albumin: 44, creatinine: 66.72560316, glucose_fasting: 5.1615, lymphocyte_pct: 20.8, mcv: 97.1, rdw: 11.9, alkaline_phosphatase: 31, wbc: 7.6 }, 0.21, 32.5774754572702],
    ['1999_29', { age: 62, albumin: 46, creatinine: 93.59087979, glucose_fasting: 7.548, lymphocyte_pct: 4.5, mcv: 93.1, rdw: 13.8, alkaline_phosphatase: 70, wbc: 9.5 }, 1.11, 71.7362622560368],
    ['1999_14', { age: 81, albumin: 45, creatinine: 102.545972, glucose_fasting: 6.3825, lymphocyte_pct: 29.8, mcv: 90.4, rdw: 12.4, alkaline_phosphatase: 110, wbc: 9.1 }, 1.99, 79.110551688409],
    ['1999_2023', { age: 45, albumin: 39, creatinine: 57.77051095, glucose_fasting: 5.8275, lymphocyte_pct: 12.3, mcv: 85.4, rdw: 13.9, alkaline_phosphatase: 100, wbc: 5.4 }, 4.13, 47.7746645200642],
    ['1999_13', { age: 70, albumin: 40, creatinine: 75.68069537, glucose_fasting: 7.881, lymphocyte_pct: 13.1, mcv: 91.1, rdw: 14.4, alkaline_phosphatase: 103, wbc: 11.6 }, 0.27, 81.8339232454004],
  ];

  it.each(NHANES_IV)('matches BioAge\'s published PhenoAge of NHANES IV participant %s to 0.01', (_id, markers, crp, published) => {
    expect(Math.abs(phenoAge({ ...markers, crp: 1 + crp }).value - published)).toBeLessThan(0.01);
  });

  it('agrees with the paper\'s form wherever that form is finite, and its contributions add up to it', () => {
    fc.assert(
      fc.property(readings, (r) => {
        const result = phenoAge(r);
        const paper = paperForm(r);
        // Where M nears 1 the paper's form loses digits in 1 - M (that is why the stable form
        // exists): the closer, the fewer digits it keeps, and past 1 - M = 1e-9 it keeps none worth
        // comparing; elsewhere the two agree to 1e-6.
        const survival = 1 - result.mortalityScore;
        if (Number.isFinite(paper) && survival > 1e-9) expect(result.value).toBeCloseTo(paper, survival > 0.01 ? 6 : survival > 1e-6 ? 4 : 2);
        expect(Number.isFinite(result.value)).toBe(true);
        const sum = result.baseYears + PHENOAGE_SIGNALS.reduce((s, k) => s + result.contributions[k], 0);
        expect(sum).toBeCloseTo(result.value, 9);
        expect(result.mortalityScore).toBeGreaterThanOrEqual(0);
        expect(result.mortalityScore).toBeLessThanOrEqual(1);
      }),
    );
  });

  it('stays finite where the paper\'s form rounds to 1 - M = 1 (a very young, very healthy profile)', () => {
    const young = { ...EXAMPLE, age: 5, albumin: 60, crp: 0.001, glucose_fasting: 3, rdw: 10 };
    expect(Number.isFinite(phenoAge(young).value)).toBe(true);
  });

  it('moves each way the coefficients say: older with age, CRP, glucose, RDW; younger with albumin and lymphocytes', () => {
    const base = phenoAge(EXAMPLE).value;
    for (const [signal, up] of [['age', true], ['crp', true], ['glucose_fasting', true], ['rdw', true], ['wbc', true], ['albumin', false], ['lymphocyte_pct', false]] as const) {
      const moved = phenoAge({ ...EXAMPLE, [signal]: EXAMPLE[signal] * 1.2 }).value;
      expect(moved > base, signal).toBe(up);
    }
  });
});

describe('toModelUnit', () => {
  it('converts the common units and refuses unknown ones', () => {
    expect(toModelUnit('albumin', 4.2, 'g/dL')).toBeCloseTo(42, 12);
    expect(toModelUnit('creatinine', 1, 'mg/dL')).toBeCloseTo(88.4, 12);
    expect(toModelUnit('glucose_fasting', 90.08, 'mg/dL')).toBeCloseTo(5, 12);
    expect(toModelUnit('crp', 0.5, 'mg/L')).toBeCloseTo(0.05, 12);
    expect(toModelUnit('wbc', 6.5, '10^9/L')).toBe(6.5);
    expect(toModelUnit('albumin', 42, null)).toBe(42);
    expect(toModelUnit('albumin', 42, ' G/L ')).toBe(42);
    expect(toModelUnit('albumin', 42, 'furlongs')).toBeUndefined();
    // The worked example in US units gives the same age.
    const us = { ...EXAMPLE, albumin: toModelUnit('albumin', 4.2, 'g/dL')!, creatinine: toModelUnit('creatinine', 88 / 88.4, 'mg/dL')!, glucose_fasting: toModelUnit('glucose_fasting', 5.3 * 18.016, 'mg/dL')! };
    expect(phenoAge(us).value).toBeCloseTo(phenoAge(EXAMPLE).value, 9);
  });
});
