// POST /lattice/estimate through the API: biomarkers from health memories and typed observations
// (units converted, the latest of the last year), missing signals, persist, the health
// entitlement, permissions and isolation.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { phenoAge } from '../../src/estimators/phenoage.js';
import { createHarness, type Harness } from '../helpers/harness.js';

const DAY = 86_400_000;

describe('POST /lattice/estimate', () => {
  let h: Harness;
  let a: { projectId: string; apiKey: string };
  const patient = { kind: 'patient', externalId: 'p-1' };
  const now = Date.now();

  const health = (projectId: string, biomarker: string, value: number | string, unit?: string, daysAgo = 10, who = patient) =>
    h.call('POST', projectId, '/admin/memory', {
      body: { content: `${biomarker} ${value} ${unit ?? ''} for ${who.externalId} ${daysAgo}`, type: 'fact', category: 'health', subject: who, metadata: { health: { biomarker, value, ...(unit ? { unit } : {}), observedAt: new Date(now - daysAgo * DAY).toISOString() } } },
    });
  const estimate = (projectId: string, body: Record<string, unknown> = {}, apiKey?: string) =>
    h.call('POST', projectId, '/lattice/estimate', { body: { subject: patient, estimatorId: 'phenoage', ...body }, ...(apiKey ? { apiKey } : {}) });

  beforeAll(async () => {
    h = await createHarness();
    a = await h.project();
    // The worked example: US units in memories, one biomarker as a typed observation.
    for (const [biomarker, value, unit] of [
      ['albumin', 4.2, 'g/dL'],
      ['creatinine', 88 / 88.4, 'mg/dL'],
      ['glucose', 5.3 * 18.016, 'mg/dL'],
      ['crp', 0.5, 'mg/L'],
      ['lymphocyte_pct', 30, '%'],
      ['mcv', 90, 'fL'],
      ['rdw', 13, '%'],
      ['alp', 70, 'U/L'],
    ] as const) {
      expect((await health(a.projectId, biomarker, value, unit)).statusCode).toBe(201);
    }
    // An older albumin reading, and one beyond the window: the latest within the year counts.
    await health(a.projectId, 'albumin', 3.0, 'g/dL', 100);
    await health(a.projectId, 'wbc', 99, '10^9/L', 400);
    await h.call('POST', a.projectId, '/memory-typed/attributes', { body: { attributeKey: 'wbc', dataType: 'numeric', unit: '10^9/L' } });
    const obs = await h.call('POST', a.projectId, '/memory-typed/observations', {
      body: { observations: [{ attributeKey: 'wbc', subjectKind: 'patient', subjectExternalId: 'p-1', valueNumeric: 6.5, observedAt: new Date(now - 5 * DAY).toISOString() }] },
    });
    expect(obs.json().accepted).toBe(1);
  });
  afterAll(async () => h?.close());

  it('answers ok false with the missing signals while age is unknown', async () => {
    const res = await estimate(a.projectId);
    expect(res.statusCode, res.body).toBe(200);
    expect(res.json()).toMatchObject({ ok: false, value: 0, missingSignals: ['age'], contributors: [], estimatorId: 'phenoage', unit: 'years', disclaimer: expect.any(String) });
  });

  it('estimates from the latest readings of the year, converted, with contributions, confidence and provenance', async () => {
    await health(a.projectId, 'date_of_birth', new Date(now - 40 * 365.2425 * DAY).toISOString().slice(0, 10), undefined, 1000);
    const res = await estimate(a.projectId);
    const body = res.json();
    expect(body).toMatchObject({ ok: true, missingSignals: [], subject: patient, framing: expect.stringContaining('PhenoAge') });
    expect(body.chronologicalAge).toBeCloseTo(40, 1);
    const expected = phenoAge({ age: body.chronologicalAge, albumin: 42, creatinine: 88, glucose_fasting: 5.3, crp: 0.05, lymphocyte_pct: 30, mcv: 90, rdw: 13, alkaline_phosphatase: 70, wbc: 6.5 });
    expect(body.value).toBeCloseTo(expected.value, 6);
    expect(Math.abs(body.value - 35.11)).toBeLessThan(0.1);
    expect(body.contributors).toHaveLength(10);
    expect(body.contributors.reduce((s: number, c: { contribution: number }) => s + c.contribution, 0) + expected.baseYears).toBeCloseTo(body.value, 6);
    expect(body.confidence).toBeGreaterThan(0.95);
    expect(body.confidence).toBeLessThanOrEqual(1);
    expect(body.provenance).toHaveLength(10);
    expect(body.provenance.some((id: string) => id.startsWith('obs_'))).toBe(true);
    expect(body.memoryId).toBeNull();
  });

  it('persists the estimate as an estimate memory, only with WRITE_MEMORY', async () => {
    const reader = await h.key(a.projectId, ['READ_MEMORY']);
    expect((await estimate(a.projectId, {}, reader)).statusCode).toBe(200);
    expect((await estimate(a.projectId, { persist: true }, reader)).statusCode).toBe(403);
    const saved = (await estimate(a.projectId, { persist: true })).json();
    expect(saved.memoryId).toMatch(/^mem_/);
    const memory = (await h.call('GET', a.projectId, `/admin/memory/${saved.memoryId}`)).json();
    expect(memory).toMatchObject({ type: 'estimate', subject: patient, metadata: { estimate: { estimatorId: 'phenoage' } } });
    expect(memory.metadata.estimate.value).toBeCloseTo(saved.value, 9);
  });

  it('needs the health entitlement, refuses bad bodies, and sees only its own project', async () => {
    const growth = await h.project({ plan: 'growth' });
    const refused = await estimate(growth.projectId);
    expect(refused.statusCode).toBe(403);
    expect(refused.json()).toMatchObject({ code: 'FEATURE_DISABLED' });
    expect((await estimate(a.projectId, { estimatorId: 'horoscope' })).statusCode).toBe(400);
    expect((await h.call('POST', a.projectId, '/lattice/estimate', { body: { estimatorId: 'phenoage' } })).statusCode).toBe(400);
    const other = await h.project();
    const theirs = (await estimate(other.projectId)).json();
    expect(theirs).toMatchObject({ ok: false, provenance: [] });
    expect(theirs.missingSignals).toHaveLength(10);
  });
});
