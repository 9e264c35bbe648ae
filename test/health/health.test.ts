// The healthcare pack through the API: the health profile (biological age, threshold and trend
// indications with their sources, diagnoses, latest biomarkers), cohort risk (aggregate, opted-out
// patients left out, small cohorts and cells suppressed), the pack listing, the entitlement and
// the pack switch, and the screening rules on their own.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { STANDARD_UNITS, toStandardUnit } from '../../src/estimators/units.js';
import { SCREENING_RULES, screen } from '../../src/health/screening.js';
import { createHarness, type Harness } from '../helpers/harness.js';

const DAY = 86_400_000;

describe('healthcare pack', () => {
  let h: Harness;
  let a: { projectId: string; apiKey: string };
  const now = Date.now();
  const patient = (id: string) => ({ kind: 'patient', externalId: id });

  const write = (projectId: string, who: { kind: string; externalId: string }, metadata: Record<string, unknown>, content: string, daysAgo = 1) =>
    h.call('POST', projectId, '/admin/memory', { body: { content, type: 'fact', category: 'health', source: 'sdk:health', validFrom: new Date(now - daysAgo * DAY).toISOString(), metadata: { subject: who, ...metadata } } });
  const marker = (projectId: string, who: { kind: string; externalId: string }, biomarker: string, value: number, unit: string, daysAgo = 5) =>
    write(projectId, who, { health: { biomarker, value, unit, observedAt: new Date(now - daysAgo * DAY).toISOString() } }, `${biomarker} = ${value} ${unit} (${daysAgo})`, daysAgo);

  beforeAll(async () => {
    h = await createHarness();
    a = await h.project();
    const p1 = patient('p-1');
    expect((await write(a.projectId, p1, { demographic: { ageYears: 40, sex: 'male', weightKg: 100, heightCm: 180 } }, 'Demographics update')).statusCode).toBe(201);
    await write(a.projectId, p1, { condition: { icd10: 'I10', status: 'active' } }, 'Diagnosis I10');
    for (const [b, v, u] of [['albumin', 4.2, 'g/dL'], ['creatinine', 88 / 88.4, 'mg/dL'], ['glucose', 5.3 * 18.016, 'mg/dL'], ['crp', 0.5, 'mg/L'], ['lymphocyte_pct', 30, '%'], ['mcv', 90, 'fL'], ['rdw', 13, '%'], ['alp', 70, 'U/L'], ['wbc', 6.5, '10^9/L'], ['systolic_bp', 150, 'mmHg']] as const) {
      expect((await marker(a.projectId, p1, b, v, u)).statusCode).toBe(201);
    }
    // HbA1c rising: 5.4, 5.6, 5.8 over 200 days.
    await marker(a.projectId, p1, 'hba1c', 5.4, '%', 205);
    await marker(a.projectId, p1, 'hba1c', 5.6, '%', 105);
    await marker(a.projectId, p1, 'hba1c', 5.8, '%', 5);
  });
  afterAll(async () => h?.close());

  it('profiles a patient: biological age, indications by threshold and by trend with their sources, diagnoses, latest biomarkers', async () => {
    const res = await h.call('POST', a.projectId, '/lattice/health/profile', { body: { subject: patient('p-1') } });
    expect(res.statusCode, res.body).toBe(200);
    const body = res.json();
    expect(body.disclaimer).toMatch(/not diagnoses/);
    expect(body.biologicalAge).toMatchObject({ method: 'phenoage', chronologicalAgeYears: expect.any(Number) });
    expect(Math.abs(body.biologicalAge.biologicalAgeYears - 35.11)).toBeLessThan(0.5);
    expect(body.biologicalAge.deltaYears).toBeCloseTo(body.biologicalAge.biologicalAgeYears - body.biologicalAge.chronologicalAgeYears, 9);
    expect(body.diagnosedConditions).toEqual([expect.objectContaining({ icd10: 'I10', status: 'active' })]);
    const byCondition = Object.fromEntries(body.predictedConditions.map((c: { condition: string }) => [c.condition, c]));
    // BMI 100 / 1.8^2 = 30.9: obesity by threshold.
    expect(byCondition.obesity).toMatchObject({ basis: 'threshold', threshold: 30, biomarker: 'bmi' });
    // HbA1c 5.8 is past 5.7: prediabetes; rising 0.2 per 100 days, it reaches 6.5 in about 350 days.
    expect(byCondition.prediabetes).toMatchObject({ basis: 'threshold', currentValue: 5.8, threshold: 5.7 });
    expect(byCondition.prediabetes.rationale).toContain('ADA');
    expect(byCondition.type_2_diabetes).toMatchObject({ basis: 'trend', threshold: 6.5 });
    const onset = (Date.parse(byCondition.type_2_diabetes.projectedOnsetAt) - now) / DAY;
    expect(onset).toBeGreaterThan(300);
    expect(onset).toBeLessThan(400);
    expect(byCondition.type_2_diabetes.sourceMemoryIds).toHaveLength(3);
    // Systolic 150 is past 130, but hypertension is diagnosed already.
    expect(byCondition.hypertension).toBeUndefined();
    expect(body.latestBiomarkers.find((b: { biomarker: string }) => b.biomarker === 'hba1c')).toMatchObject({ value: 5.8, unit: '%' });
  });

  it('reports cohort risk in aggregate, leaves opted-out patients out, and suppresses small cohorts and cells', async () => {
    const c = await h.project();
    // 24 patients: ages 50 to 73; the 12 oldest have diabetes (E11), every fourth hypertension.
    for (let i = 0; i < 24; i++) {
      const who = patient(`c-${i}`);
      await write(c.projectId, who, { demographic: { ageYears: 50 + i, sex: i % 2 ? 'female' : 'male', weightKg: 70 + i, heightCm: 175 } }, `Demographics ${i}`);
      await marker(c.projectId, who, 'glucose', 5 + i * 0.1, 'mmol/L');
      if (i >= 12) await write(c.projectId, who, { condition: { icd10: 'E11.9' } }, `Diagnosis E11.9 ${i}`);
      if (i % 4 === 0) await write(c.projectId, who, { condition: { icd10: 'I10' } }, `Diagnosis I10 ${i}`);
    }
    const target = patient('c-20');
    const risk = async (k?: number) => (await h.call('POST', c.projectId, '/lattice/health/cohort-risk', { body: { subject: target, ...(k === undefined ? {} : { k }) } })).json();
    const body = await risk(10);
    expect(body).toMatchObject({ subject: target, populationSize: 23, cohortSize: 10, suppressed: false, disclaimer: expect.any(String) });
    const e11 = body.risks.find((r: { condition: string }) => r.condition === 'E11');
    expect(e11.countWith).toBeGreaterThanOrEqual(8);
    expect(e11.cohortPrevalence).toBeCloseTo(e11.countWith / 10, 12);
    expect(e11.confidence).toBeGreaterThan(0);
    expect(e11.confidence).toBeLessThanOrEqual(1);
    // No member is named: the only subject in the answer is the target.
    expect(JSON.stringify({ ...body, subject: null })).not.toMatch(/c-\d/);
    for (const r of body.risks) expect(r.countWith).toBeGreaterThanOrEqual(3);
    // An opted-out patient leaves the population.
    await h.call('POST', c.projectId, '/admin/memory', {
      body: { content: 'consent c-0', type: 'consent', category: 'consent', importance: 10, metadata: { subject: patient('c-0'), optedOut: true, recordKind: 'consent' } },
    });
    expect((await risk(10)).populationSize).toBe(22);
    // A cohort under ten is suppressed.
    const small = await risk(5);
    expect(small).toMatchObject({ cohortSize: 5, risks: [], suppressed: true, suppressionReason: expect.stringContaining('10') });
  });

  it('compares cohort members by biomarkers in their standard unit, read from typed observations as well as memories', async () => {
    const c = await h.project();
    // 24 patients, 12 with high glucose and HbA1c and diabetes (E11), 12 normal. Half of each group
    // record glucose as typed observations in mg/dL, half as memories in mmol/L; HbA1c is typed, in %.
    // Compared as written, mg/dL readings (90 to 170) would sit far from every mmol/L one and the
    // cohort would follow how glucose was recorded rather than its level.
    await h.call('POST', c.projectId, '/memory-typed/attributes', { body: { attributeKey: 'fasting_glucose', dataType: 'numeric', unit: 'mg/dL' } });
    await h.call('POST', c.projectId, '/memory-typed/attributes', { body: { attributeKey: 'hba1c', dataType: 'numeric', unit: '%' } });
    const observations: object[] = [];
    const observedAt = new Date(now - 3 * DAY).toISOString();
    for (let i = 0; i < 24; i++) {
      const who = patient(`g-${i}`);
      const high = i < 12;
      const mmol = (high ? 9 : 5) + (i % 6) * 0.05;
      if (i % 2 === 0) observations.push({ attributeKey: 'fasting_glucose', subjectKind: 'patient', subjectExternalId: who.externalId, valueNumeric: mmol * 18.016, observedAt });
      else expect((await marker(c.projectId, who, 'glucose', mmol, 'mmol/L')).statusCode).toBe(201);
      observations.push({ attributeKey: 'hba1c', subjectKind: 'patient', subjectExternalId: who.externalId, valueNumeric: (high ? 8 : 5.2) + (i % 6) * 0.02, observedAt });
      if (high) await write(c.projectId, who, { condition: { icd10: 'E11.9' } }, `Diagnosis E11.9 ${i}`);
    }
    expect((await h.call('POST', c.projectId, '/memory-typed/observations', { body: { observations } })).json().accepted).toBe(36);
    const body = (await h.call('POST', c.projectId, '/lattice/health/cohort-risk', { body: { subject: patient('g-1'), k: 10 } })).json();
    expect(body).toMatchObject({ populationSize: 23, cohortSize: 10, suppressed: false });
    expect(body.risks).toEqual([expect.objectContaining({ condition: 'E11', countWith: 10, cohortPrevalence: 1 })]);
  });

  it('needs the health entitlement; the pack listing needs none', async () => {
    const growth = await h.project({ plan: 'growth' });
    const refused = await h.call('POST', growth.projectId, '/lattice/health/profile', { body: { subject: patient('x') } });
    expect(refused.statusCode).toBe(403);
    expect(refused.json()).toMatchObject({ code: 'FEATURE_DISABLED' });
    expect((await h.call('POST', growth.projectId, '/lattice/health/cohort-risk', { body: { subject: patient('x') } })).statusCode).toBe(403);
    const packs = await h.call('GET', growth.projectId, '/memory-compliance/packs');
    expect(packs.statusCode).toBe(200);
    // A bare array (SDK-WIRE 4.10), each with the fields the clients read and the pack's own details.
    expect(packs.json().map((p: { id: string }) => p.id)).toEqual(['healthcare', 'financial']);
    const healthcare = packs.json()[0];
    expect(healthcare).toEqual(
      expect.objectContaining({ id: 'healthcare', version: '1.0.0', ownsClasses: ['health'], regulatoryTags: expect.any(Array), entitlement: 'health', privacy: { minCohort: 10, minCell: 3, excludesOptedOut: true } }),
    );
    expect(healthcare.description.length).toBeGreaterThan(10);
    expect(healthcare.screening.every((r: { source: string }) => r.source.length > 10)).toBe(true);
    expect((await h.call('POST', a.projectId, '/lattice/health/profile', { body: { subject: patient('x'), extra: 1 } })).statusCode).toBe(400);
  });

  it('a project turns the pack off and on (/memory-compliance-packs, as the Python client calls it); other projects keep it', async () => {
    const p = await h.project({ plan: 'enterprise' });
    const other = await h.project({ plan: 'enterprise' });
    const profile = (projectId: string) => h.call('POST', projectId, '/lattice/health/profile', { body: { subject: patient('x') } });
    expect((await h.call('GET', p.projectId, '/memory-compliance-packs')).json()).toEqual([]);
    expect((await profile(p.projectId)).statusCode).toBe(200);

    // Off, by the clients' package name: the row keeps the pack's id, and the pack's routes refuse at once.
    const off = await h.call('POST', p.projectId, '/memory-compliance-packs', { body: { packId: '@thinkfleet/pack-healthcare', enabled: false, config: { note: 'pilot over' } } });
    expect(off.statusCode, off.body).toBe(200);
    expect(off.json()).toMatchObject({ packId: 'healthcare', enabled: false, config: { note: 'pilot over' }, enabledByUserId: expect.any(String) });
    const refused = await profile(p.projectId);
    expect(refused.statusCode).toBe(403);
    expect(refused.json()).toMatchObject({ code: 'FEATURE_DISABLED', params: { pack: 'healthcare' } });
    expect(refused.json().message).toContain('/memory-compliance-packs');
    expect((await h.call('POST', p.projectId, '/lattice/health/cohort-risk', { body: { subject: patient('x') } })).statusCode).toBe(403);
    expect((await profile(other.projectId)).statusCode).toBe(200);
    expect((await h.call('GET', other.projectId, '/memory-compliance-packs')).json()).toEqual([]);

    // On again: the same row, updated in place, its config kept.
    const on = (await h.call('POST', p.projectId, '/memory-compliance-packs', { body: { packId: 'healthcare', enabled: true } })).json();
    expect(on).toMatchObject({ id: off.json().id, enabled: true, config: { note: 'pilot over' } });
    expect((await profile(p.projectId)).statusCode).toBe(200);
    expect((await h.call('GET', p.projectId, '/memory-compliance-packs')).json()).toHaveLength(1);

    // Forgotten (a JSON content type with no body, as the Python client sends it): the default applies again.
    const removed = await h.call('DELETE', p.projectId, '/memory-compliance-packs/%40thinkfleet%2Fpack-healthcare', { body: '', headers: { 'content-type': 'application/json' } });
    expect(removed.statusCode).toBe(204);
    expect((await h.call('GET', p.projectId, '/memory-compliance-packs')).json()).toEqual([]);

    // Validation, permission, unknown packs.
    expect((await h.call('POST', p.projectId, '/memory-compliance-packs', { body: { packId: 'healthcare' } })).statusCode).toBe(400);
    expect((await h.call('POST', p.projectId, '/memory-compliance-packs', { body: { packId: 'hipaa-x', enabled: true } })).statusCode).toBe(404);
    expect((await h.call('DELETE', p.projectId, '/memory-compliance-packs/hipaa-x')).statusCode).toBe(404);
    const reader = await h.key(p.projectId, ['READ_MEMORY']);
    expect((await h.call('POST', p.projectId, '/memory-compliance-packs', { apiKey: reader, body: { packId: 'healthcare', enabled: false } })).statusCode).toBe(403);
    expect((await h.call('GET', p.projectId, '/memory-compliance-packs', { apiKey: reader })).statusCode).toBe(200);
  });

  it('answers 404 for health routes when the pack is not loaded, and lists no pack', async () => {
    const bare = await createHarness({ env: { LATTICE_PACKS: 'none' } });
    try {
      const p = await bare.project();
      const res = await bare.call('POST', p.projectId, '/lattice/health/profile', { body: { subject: patient('x') } });
      expect(res.statusCode).toBe(404);
      expect(res.json().message).toContain('LATTICE_PACKS');
      expect((await bare.call('GET', p.projectId, '/memory-compliance/packs')).json()).toEqual([]);
      // No pack to turn on or off.
      const unknown = await bare.call('POST', p.projectId, '/memory-compliance-packs', { body: { packId: 'healthcare', enabled: true } });
      expect(unknown.statusCode).toBe(404);
      expect(unknown.json().message).toContain('loaded: none');
    } finally {
      await bare.close();
    }
  });
});

describe('screen', () => {
  const none = { ageYears: null, sex: null, weightKg: null, heightCm: null, bmi: null };
  const reading = (biomarker: string, value: number, unit: string | null, daysAgo: number) => ({ biomarker, value, unit, standard: toStandardUnit(biomarker, value, unit) ?? null, observedAt: new Date(Date.UTC(2026, 0, 1) - daysAgo * DAY).toISOString(), sourceId: `mem_${biomarker}_${daysAgo}` });
  const t = Date.UTC(2026, 0, 1);

  it('states every threshold in its biomarker\'s standard unit, the unit readings carry their standard value in', () => {
    for (const rule of SCREENING_RULES) expect(`${rule.biomarker} ${rule.unit}`).toBe(`${rule.biomarker} ${STANDARD_UNITS[rule.biomarker]?.unit}`);
  });

  it('converts units before comparing, uses the sex-specific anaemia threshold, and needs two readings past a threshold for 0.9', () => {
    const glucose = screen([reading('glucose_fasting', 130, 'mg/dL', 1)], none, [], t);
    expect(glucose).toEqual([expect.objectContaining({ condition: 'type_2_diabetes', basis: 'threshold', confidence: 0.7 })]);
    expect(screen([reading('glucose_fasting', 120, 'mg/dL', 1)], none, [], t)).toEqual([]);
    expect(screen([reading('glucose_fasting', 7.2, 'mmol/L', 30), reading('glucose_fasting', 7.4, 'mmol/L', 1)], none, [], t)[0]!.confidence).toBe(0.9);
    expect(screen([reading('haemoglobin', 12.5, 'g/dL', 1)], { ...none, sex: 'male' }, [], t).map((c) => c.condition)).toEqual(['anaemia']);
    expect(screen([reading('haemoglobin', 125, 'g/L', 1)], { ...none, sex: 'female' }, [], t)).toEqual([]);
    expect(screen([reading('haemoglobin', 12.5, 'stones', 1)], { ...none, sex: 'male' }, [], t)).toEqual([]);
  });

  it('projects a trend only toward the threshold, within five years, from three readings over 90 days', () => {
    const falling = [reading('egfr', 80, null, 400), reading('egfr', 74, null, 200), reading('egfr', 68, null, 1)];
    const [ckd] = screen(falling, none, [], t);
    expect(ckd).toMatchObject({ condition: 'chronic_kidney_disease', basis: 'trend', threshold: 60 });
    expect(Date.parse(ckd!.projectedOnsetAt!)).toBeGreaterThan(t);
    // Rising eGFR moves away from it; two readings are too few; a diagnosis (N18.3) silences it.
    expect(screen([reading('egfr', 68, null, 400), reading('egfr', 74, null, 200), reading('egfr', 80, null, 1)], none, [], t)).toEqual([]);
    expect(screen(falling.slice(1), none, [], t)).toEqual([]);
    expect(screen(falling, none, [{ icd10: 'N18.3', status: 'active', onsetAt: null, sourceMemoryId: 'mem_x' }], t)).toEqual([]);
  });
});
