// Discovery through the API: features kept current after mining (a job), segment.changed when a
// segment moves, behaviors discovered from two planted groups (both routes the same), options
// clamped, promote (idempotent, needs WRITE_MEMORY), abstention on an empty project, isolation.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { cohortSimilarity } from '../../src/discovery/cohort.js';
import { createHarness, type Harness } from '../helpers/harness.js';

const DAY = 86_400_000;

describe('behavior discovery', () => {
  let h: Harness;
  let a: { projectId: string; apiKey: string };
  let b: { projectId: string; apiKey: string };
  const now = Date.now();

  /** Six weekly big spenders (w0..w5) and six lapsed small buyers (l0..l5). */
  async function plant(projectId: string) {
    await h.call('POST', projectId, '/memory-typed/attributes', { body: { attributeKey: 'purchase', dataType: 'numeric', unit: 'USD' } });
    const observations = [];
    for (let s = 0; s < 6; s++) {
      for (let i = 0; i < 20; i++) {
        observations.push({ attributeKey: 'purchase', subjectKind: 'customer', subjectExternalId: `w${s}`, valueNumeric: 80, observedAt: new Date(now - (i * 7 + 1) * DAY + s * 3_600_000).toISOString() });
      }
      for (let i = 0; i < 4; i++) {
        observations.push({ attributeKey: 'purchase', subjectKind: 'customer', subjectExternalId: `l${s}`, valueNumeric: 10, observedAt: new Date(now - (i * 29 + 150 + s) * DAY).toISOString() });
      }
    }
    const res = await h.call('POST', projectId, '/memory-typed/observations', { body: { observations } });
    expect(res.json().accepted).toBe(observations.length);
  }

  const discover = (projectId: string, body: Record<string, unknown> = {}, path = '/lattice/discover', apiKey?: string) =>
    h.call('POST', projectId, path, { body, ...(apiKey ? { apiKey } : {}) });

  beforeAll(async () => {
    h = await createHarness();
    a = await h.project();
    b = await h.project();
    await plant(a.projectId);
  });
  afterAll(async () => h?.close());

  it('abstains (empty behaviors) on a project with no activity', async () => {
    const res = await discover(b.projectId);
    expect(res.statusCode).toBe(200);
    expect(res.json()).toMatchObject({ behaviors: [], subjectsAnalyzed: 0, promotedCount: 0, sampled: false });
  });

  it('keeps features current: mining a subject refreshes its features by a job', async () => {
    expect(await h.apis.discovery.all(a.projectId)).toEqual([]);
    const res = await h.call('POST', a.projectId, '/lattice/patterns/extract', { body: { windowDays: 365 } });
    expect(res.json().contactsProcessed).toBe(12);
    await expect.poll(async () => (await h.apis.discovery.all(a.projectId)).length, { timeout: 60_000 }).toBe(12);
    const features = await h.apis.discovery.all(a.projectId);
    const weekly = features.find((f) => f.subject.externalId === 'w0')!;
    expect(weekly).toMatchObject({ subject: { kind: 'customer', externalId: 'w0' }, cadenceDays: 7, activityCount: 20, attributes: { purchase: { count: 20, mean: 80, last: 80 } } });
    expect(weekly.patternKinds).toContain('recurring_event');
    expect(weekly.patternIds.length).toBe(weekly.patternKinds.length);
    const lapsed = features.find((f) => f.subject.externalId === 'l0')!;
    expect(lapsed).toMatchObject({ cadenceDays: null, activityCount: 4 });
    // Quintiles of 12 subjects: the weekly buyers score higher on all three, on average.
    const mean = (prefix: string, score: (f: (typeof features)[number]) => number | null) => {
      const group = features.filter((f) => f.subject.externalId.startsWith(prefix));
      return group.reduce((s, f) => s + score(f)!, 0) / group.length;
    };
    for (const score of [(f: (typeof features)[number]) => f.recencyScore, (f: (typeof features)[number]) => f.frequencyScore, (f: (typeof features)[number]) => f.monetaryScore]) {
      expect(mean('w', score)).toBeGreaterThan(mean('l', score));
    }
    for (const f of features) {
      expect(f.vector).toHaveLength(weekly.vector.length);
      expect(Math.hypot(...f.vector)).toBeLessThanOrEqual(1 + 1e-12);
    }
  });

  it('discovers the two planted groups, medoid first, labelled by what they share; both routes answer the same', async () => {
    const res = await discover(a.projectId);
    expect(res.statusCode, res.body).toBe(200);
    const body = res.json();
    expect(body).toMatchObject({ subjectsAnalyzed: 12, sampled: false, promotedCount: 0 });
    expect(body.behaviors).toHaveLength(2);
    const groups = body.behaviors.map((x: { memberSubjects: { externalId: string }[] }) => x.memberSubjects.map((m) => m.externalId[0]));
    expect(groups.map((g: string[]) => [...new Set(g)])).toEqual(expect.arrayContaining([['w'], ['l']]));
    for (const behavior of body.behaviors) {
      expect(behavior).toMatchObject({ size: 6, prevalence: 0.5 });
      expect(behavior.stability).toBeGreaterThanOrEqual(0.75);
      expect(behavior.exemplarEvidence.length).toBeGreaterThan(0);
    }
    const weekly = body.behaviors.find((x: { memberSubjects: { externalId: string }[] }) => x.memberSubjects[0]!.externalId.startsWith('w'));
    expect(weekly.label).toContain('weekly');
    expect(weekly.exemplarEvidence.join(' ')).toContain('recurring every 7.0 days');
    const twin = await discover(a.projectId, {}, '/memory-intelligence/discover');
    expect({ ...twin.json(), generatedAt: 0, durationMs: 0 }).toEqual({ ...body, generatedAt: 0, durationMs: 0 });
    expect((await discover(a.projectId, { maxMembers: 2 })).json().behaviors.every((x: { size: number; memberSubjects: unknown[] }) => x.size === 6 && x.memberSubjects.length === 2)).toBe(true);
  });

  it('clamps its options rather than refusing them, and refuses unknown fields', async () => {
    // simThreshold 5 is 1: only identical subjects cluster; minClusterSize 0 is 2.
    const behaviorsOf = async (body: Record<string, unknown>) => (await discover(a.projectId, body)).json().behaviors;
    expect(await behaviorsOf({ simThreshold: 5, minClusterSize: 0 })).toEqual(await behaviorsOf({ simThreshold: 1, minClusterSize: 2 }));
    // minStability above 1 is 1: nothing less than perfectly cohesive survives, so the groups go.
    expect((await behaviorsOf({})).length).toBe(2);
    expect(await behaviorsOf({ minStability: 7 })).toEqual(await behaviorsOf({ minStability: 1 }));
    expect((await behaviorsOf({ minStability: 7 })).every((x: { stability: number }) => x.stability === 1)).toBe(true);
    // A threshold of 0 puts everyone together.
    const loose = (await discover(a.projectId, { simThreshold: -1, maxMembers: 1000 })).json();
    expect(loose.behaviors).toHaveLength(1);
    expect(loose.behaviors[0]).toMatchObject({ size: 12, prevalence: 1 });
    expect(loose.behaviors[0].memberSubjects).toHaveLength(12);
    const bad = await discover(a.projectId, { simThreshhold: 0.5 });
    expect(bad.statusCode).toBe(400);
    expect(bad.json()).toMatchObject({ code: 'VALIDATION_ERROR' });
    expect((await discover(a.projectId, { minClusterSize: 'three' })).statusCode).toBe(400);
  });

  it('promotes behaviors to insight memories once, and needs WRITE_MEMORY to', async () => {
    const reader = await h.key(a.projectId, ['READ_MEMORY']);
    expect((await discover(a.projectId, {}, '/lattice/discover', reader)).statusCode).toBe(200);
    const refused = await discover(a.projectId, { promote: true }, '/lattice/discover', reader);
    expect(refused.statusCode).toBe(403);
    const first = (await discover(a.projectId, { promote: true })).json();
    expect(first.promotedCount).toBe(2);
    const insights = (await h.call('GET', a.projectId, '/admin/memory?type=insight')).json();
    expect(insights).toHaveLength(2);
    expect(insights[0]).toMatchObject({ type: 'insight', metadata: { discovery: { size: 6 } } });
    expect((await discover(a.projectId, { promote: true })).json().promotedCount).toBe(0);
    expect((await h.call('POST', a.projectId, '/lattice/discover', { apiKey: 'lt_nope', body: {} })).statusCode).toBe(401);
  });

  it("never shows another project's subjects", async () => {
    const theirs = (await discover(b.projectId)).json();
    expect(theirs.subjectsAnalyzed).toBe(0);
    expect(JSON.stringify(theirs)).not.toContain('w0');
    expect(await h.apis.discovery.all(b.projectId)).toEqual([]);
  });

  it('finds the most similar subjects, clamped and filtered, and nothing for an unknown subject or in another project', async () => {
    const cohort = (projectId: string, body: Record<string, unknown>) => h.call('POST', projectId, '/lattice/cohort', { body: { subject: { kind: 'customer', externalId: 'w0' }, ...body } });
    const res = await cohort(a.projectId, { k: 5 });
    expect(res.statusCode, res.body).toBe(200);
    const body = res.json();
    expect(body).toMatchObject({ target: { kind: 'customer', externalId: 'w0' }, candidateCount: 11 });
    expect(body.members.map((m: { subject: { externalId: string } }) => m.subject.externalId).sort()).toEqual(['w1', 'w2', 'w3', 'w4', 'w5']);
    const similarities = body.members.map((m: { similarity: number }) => m.similarity);
    expect([...similarities].sort((x, y) => y - x)).toEqual(similarities);
    expect(body.members[0]).toMatchObject({ rfmSegment: expect.any(String), patternKinds: expect.arrayContaining(['recurring_event']) });
    expect((await cohort(a.projectId, { k: 500 })).json().members).toHaveLength(11);
    expect((await cohort(a.projectId, { k: 0 })).json().members).toHaveLength(1);
    const floor = similarities.at(-1)!;
    const close = (await cohort(a.projectId, { k: 50, minSimilarity: floor })).json().members;
    expect(close.every((m: { similarity: number }) => m.similarity >= floor)).toBe(true);
    expect(close.length).toBeGreaterThanOrEqual(5);
    expect(close.length).toBeLessThan(11);
    const unknown = (await h.call('POST', a.projectId, '/lattice/cohort', { body: { subject: { kind: 'customer', externalId: 'nobody' } } })).json();
    expect(unknown).toMatchObject({ members: [], candidateCount: 0 });
    expect((await cohort(b.projectId, {})).json()).toMatchObject({ members: [], candidateCount: 0 });
    expect((await cohort(a.projectId, { k: 'ten' })).statusCode).toBe(400);
  });

  it("predicts from the cohort's shared habits, reinforced by support, with the subjects and patterns behind each", async () => {
    const res = await h.call('POST', a.projectId, '/lattice/cohort/predict', { body: { subject: { kind: 'customer', externalId: 'w0' }, cohortK: 5 } });
    expect(res.statusCode, res.body).toBe(200);
    const body = res.json();
    expect(body.cohort).toHaveLength(5);
    const recurring = body.predictions.find((p: { patternKind: string }) => p.patternKind === 'recurring_event');
    expect(recurring.supportingSubjects.map((s: { externalId: string }) => s.externalId).sort()).toEqual(['w1', 'w2', 'w3', 'w4', 'w5']);
    expect(recurring.sourceMemoryIds).toHaveLength(5);
    // The members' patterns, weighted by similarity, times 5 / 6 for five supporters.
    const weights = new Map(body.cohort.map((m: { subject: { externalId: string }; similarity: number }) => [m.subject.externalId, m.similarity]));
    let sum = 0;
    let total = 0;
    for (const id of recurring.sourceMemoryIds) {
      const p = (await h.call('GET', a.projectId, `/lattice/patterns/${id}`)).json();
      expect(p.metadata.patternKind).toBe('recurring_event');
      sum += (weights.get(p.contactId) as number) * p.confidence;
      total += weights.get(p.contactId) as number;
    }
    expect(recurring.confidence).toBeCloseTo((sum / total) * (5 / 6), 12);
    const until = Date.parse(recurring.expectedAt) - Date.now();
    expect(until).toBeGreaterThan(-60_000);
    expect(until).toBeLessThan(7 * DAY);
    expect(recurring.description).toContain('5 of 5 similar subjects');
    expect(body.predictions.length).toBeLessThanOrEqual(5);
    expect((await h.call('POST', a.projectId, '/lattice/cohort/predict', { body: { subject: { kind: 'customer', externalId: 'w0' }, predictionLimit: 1 } })).json().predictions).toHaveLength(1);
    // The lapsed buyers' cohort has no habit: no prediction (abstained).
    const lapsed = (await h.call('POST', a.projectId, '/lattice/cohort/predict', { body: { subject: { kind: 'customer', externalId: 'l0' }, cohortK: 5 } })).json();
    expect(lapsed.cohort.every((m: { subject: { externalId: string } }) => m.subject.externalId.startsWith('l'))).toBe(true);
    expect(lapsed.predictions).toEqual([]);
  });

  it('blends RFM, entities and pattern kinds with the documented weights', () => {
    const f = (r: number | null, entities: string[], kinds: string[]) => ({ recencyScore: r, frequencyScore: r, monetaryScore: r, topEntities: entities, patternKinds: kinds });
    expect(cohortSimilarity(f(5, ['a'], ['x']), f(5, ['a'], ['x']))).toBe(1);
    expect(cohortSimilarity(f(1, ['a'], ['x']), f(5, ['b'], ['y']))).toBeCloseTo(0, 12);
    expect(cohortSimilarity(f(3, [], []), f(3, [], []))).toBe(1);
    // Half the entities shared (1 of 3 in the union is a third), the same kinds, RFM one apart on each score.
    expect(cohortSimilarity(f(4, ['a', 'b'], ['x']), f(3, ['a', 'c'], ['x']))).toBeCloseTo(0.5 * (1 - Math.sqrt(3) / (4 * Math.sqrt(3))) + 0.25 / 3 + 0.25, 12);
    // A missing score counts as the middle.
    expect(cohortSimilarity(f(null, [], []), f(3, [], []))).toBe(1);
  });

  it('emits segment.changed when a refresh moves a subject to another segment, which segment-change rules fire on', async () => {
    const rule = await h.call('POST', a.projectId, '/memory-alerts', {
      body: { name: 'lapsing', trigger: { kind: 'segment-change', to: 'at_risk' }, notify: [{ kind: 'memory', writeAs: { content: '{{subject.externalId}} is at risk', scope: 'project' } }] },
    });
    expect(rule.statusCode, rule.body).toBe(201);
    const before = new Map((await h.apis.discovery.all(a.projectId)).map((f) => [f.subject.externalId, f.rfmSegment]));
    // Half a year on, with nothing new: the weekly buyers have gone quiet.
    const later = new Date(now + 200 * DAY);
    const { segmentChanges } = await h.apis.discovery.refresh(a.projectId, undefined, later);
    expect(segmentChanges).toBeGreaterThan(0);
    const after = await h.apis.discovery.all(a.projectId);
    const moved = after.filter((f) => f.rfmSegment !== before.get(f.subject.externalId));
    expect(moved.length).toBe(segmentChanges);
    const events = (await h.call('GET', a.projectId, '/memory-events?eventTypes=segment.changed&limit=100')).json();
    expect(events).toHaveLength(segmentChanges);
    const one = events.find((e: { subject: { externalId: string } }) => e.subject.externalId === moved[0]!.subject.externalId);
    expect(one.payload).toMatchObject({ from: before.get(moved[0]!.subject.externalId), to: moved[0]!.rfmSegment });
    // The weekly buyers, silent for half a year, are at risk now: the rule fired once for each.
    const atRisk = moved.filter((f) => f.rfmSegment === 'at_risk').map((f) => f.subject.externalId).sort();
    expect(atRisk).toEqual(['w0', 'w1', 'w2', 'w3', 'w4', 'w5']);
    await expect
      .poll(async () => (await h.call('GET', a.projectId, '/admin/memory?limit=500')).json().filter((m: { content: string }) => m.content.endsWith('is at risk')).map((m: { content: string }) => m.content.split(' ')[0]).sort(), { timeout: 60_000 })
      .toEqual(atRisk);
  });

  it('removes the features of subjects with no activity left in the year, and discovery then abstains', async () => {
    const { refreshed, removed } = await h.apis.discovery.refresh(a.projectId, undefined, new Date(now + 800 * DAY));
    expect({ refreshed, removed }).toEqual({ refreshed: 0, removed: 12 });
    expect(await h.apis.discovery.all(a.projectId)).toEqual([]);
  });
});
