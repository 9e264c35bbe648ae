// GET /project: the console's Project page for a READ_MEMORY key. The plan, its entitlements and
// this month's meters; the backlogs the modules hold (they move as work arrives and is done); the
// queue's jobs of this project only. Jobs are not consumed until the last test, so what is queued
// stays in flight while the page is read; then the consumers start and the backlogs drain.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { INLINE_EMBED_MAX } from '../../src/memory/embedding/pipeline.js';
import type { ProjectOverview } from '../../src/project/index.js';
import { createHarness, type Harness } from '../helpers/harness.js';

type Project = { projectId: string; apiKey: string };

describe('GET /project', () => {
  let h: Harness;
  let a: Project;
  let b: Project;
  let reader: string;

  beforeAll(async () => {
    h = await createHarness({ consumers: false });
    a = await h.project({ plan: 'enterprise' });
    b = await h.project({ plan: 'free' });
    reader = await h.key(a.projectId, ['READ_MEMORY']);
  });
  afterAll(() => h?.close());

  async function overview(projectId: string, apiKey?: string): Promise<ProjectOverview> {
    const res = await h.call('GET', projectId, '/project', apiKey ? { apiKey } : {});
    expect(res.statusCode, res.body).toBe(200);
    return res.json() as ProjectOverview;
  }
  const backlog = (o: ProjectOverview, module: string, name: string) => o.work.find((w) => w.module === module && w.name === name);
  const meter = (o: ProjectOverview, name: string) => o.usage.meters.find((m) => m.meter === name)!;
  const activeTriggers = (o: ProjectOverview) => o.usage.ceilings.find((c) => c.ceiling === 'active-triggers')!;

  async function post(project: Project, path: string, body: unknown): Promise<unknown> {
    const res = await h.call('POST', project.projectId, path, { body });
    expect(res.statusCode, `${path}: ${res.body}`).toBeLessThan(300);
    return res.json();
  }
  const observations = (subject: string, values: number[]) => ({
    observations: values.map((v, i) => ({ attributeKey: 'hr', subjectKind: 'user', subjectExternalId: subject, valueNumeric: v, observedAt: new Date(Date.UTC(2026, 0, 1, 0, i)).toISOString() })),
  });

  it('answers the plan, its entitlements (null where unlimited) and every meter of this month, for a READ_MEMORY key', async () => {
    const o = await overview(a.projectId, reader);
    expect(o.project).toEqual({ id: a.projectId, name: a.projectId, plan: 'enterprise' });
    expect(o.entitlements).toEqual({
      features: { predictions: true, 'memory.compliance': true, health: true, financial: true, FEATURE_MEMORY_INTELLIGENCE: true },
      quotas: { 'events-ingested': null, 'memory.predictions': null, 'model-tokens': null, 'active-triggers': null },
    });
    const now = new Date();
    const period = new Date(Date.UTC(now.getUTCFullYear(), now.getUTCMonth(), 1)).toISOString();
    const resetsAt = new Date(Date.UTC(now.getUTCFullYear(), now.getUTCMonth() + 1, 1)).toISOString();
    expect(o.usage.meters).toEqual(['events-ingested', 'memory.predictions', 'model-tokens'].map((m) => ({ meter: m, used: 0, limit: null, period, resetsAt })));
    expect(o.usage.ceilings).toEqual([{ ceiling: 'active-triggers', used: 0, limit: null }]);

    const free = await overview(b.projectId);
    expect(free.project.plan).toBe('free');
    expect(free.entitlements.features.predictions).toBe(false);
    expect(free.entitlements.quotas).toEqual({ 'events-ingested': 100_000, 'memory.predictions': 0, 'model-tokens': 0, 'active-triggers': 5 });
    expect(meter(free, 'events-ingested')).toMatchObject({ used: 0, limit: 100_000 });
  });

  it('moves events-ingested when observations are ingested, and counts enabled alert rules against active-triggers', async () => {
    await post(b, '/memory-typed/attributes', { attributeKey: 'hr', dataType: 'numeric' });
    await post(b, '/memory-typed/observations', observations('u1', [60, 61, 62]));
    const rule = (enabled: boolean) => ({
      name: `rule-${enabled}`,
      enabled,
      trigger: { kind: 'engine-event', eventTypes: ['never.fires'] },
      notify: [{ kind: 'memory', writeAs: { content: 'fired', scope: 'project' } }],
    });
    await post(b, '/memory-alerts', rule(true));
    await post(b, '/memory-alerts', rule(false));
    const o = await overview(b.projectId);
    expect(meter(o, 'events-ingested')).toMatchObject({ used: 3, limit: 100_000 });
    expect(activeTriggers(o)).toEqual({ ceiling: 'active-triggers', used: 1, limit: 5 });
    // Another project's use is not this one's.
    const other = await overview(a.projectId);
    expect(meter(other, 'events-ingested').used).toBe(0);
    expect(activeTriggers(other).used).toBe(0);
  });

  // A write of more than INLINE_EMBED_MAX memories is embedded behind, by a job (a small one may be embedded before it answers).
  const bulk = (projectId: string, count: number, text: string) =>
    h.apis.memory.saveMany(projectId, Array.from({ length: count }, (_, i) => ({ content: `${text} number ${i}` })));

  it('shows memories waiting for their embedding, and their drain job in flight', async () => {
    const p = await h.project();
    const before = await overview(p.projectId);
    expect(backlog(before, 'memory', 'embeddings')).toMatchObject({ pending: 0, done: 0, total: 0, oldestPendingAt: null });
    await bulk(p.projectId, INLINE_EMBED_MAX + 2, 'Prefers aisle seats');
    const o = await overview(p.projectId);
    const embeddings = backlog(o, 'memory', 'embeddings')!;
    expect(embeddings).toMatchObject({ pending: INLINE_EMBED_MAX + 2, done: 0, total: INLINE_EMBED_MAX + 2, description: expect.stringContaining('embedding') });
    expect(Date.parse(embeddings.oldestPendingAt!)).toBeLessThanOrEqual(Date.now());
    // The drain job waits for its second to end (delayed), then for a consumer (waiting).
    const drain = o.jobs.items.filter((j) => j.name === 'memory.embed-drain');
    expect(drain.length).toBeGreaterThan(0);
    expect(drain.every((j) => ['delayed', 'waiting'].includes(j.state) && j.attempt === 1 && j.startedAt === null)).toBe(true);
  });

  it('counts subjects waiting to be mined, and their features as behind until recomputed', async () => {
    const p = await h.project();
    let n = 0;
    // Without a dedupeKey an event's content is its key: each one differs.
    const emit = (externalId: string) => post(p, '/lattice/events/emit', { eventType: 'purchase', subject: { kind: 'user', externalId }, payload: { n: ++n } });
    await emit('u1');
    await emit('u2');
    let o = await overview(p.projectId);
    expect(backlog(o, 'behavior', 'mining')).toMatchObject({ pending: 2, done: null, total: null });
    expect(backlog(o, 'behavior', 'mining')!.oldestPendingAt).not.toBeNull();
    expect(backlog(o, 'discovery', 'features')).toMatchObject({ pending: 2, done: 0, total: 2 });

    // Recomputed: the features are current, though the subjects still wait to be mined.
    await h.apis.discovery.refresh(p.projectId);
    o = await overview(p.projectId);
    expect(backlog(o, 'discovery', 'features')).toMatchObject({ pending: 0, done: 2, total: 2, oldestPendingAt: null });
    expect(backlog(o, 'behavior', 'mining')!.pending).toBe(2);

    // New activity puts one behind again.
    await emit('u1');
    o = await overview(p.projectId);
    expect(backlog(o, 'discovery', 'features')).toMatchObject({ pending: 1, done: 1, total: 2 });
  });

  it('shows queued observations and their ingest job, and graph extraction once the project opts in', async () => {
    const p = await h.project();
    await post(p, '/memory-typed/attributes', { attributeKey: 'hr', dataType: 'numeric' });
    await post(p, '/memory-typed/observations/enqueue', observations('u1', [70, 71, 72]));
    let o = await overview(p.projectId);
    expect(backlog(o, 'typed', 'ingest')).toMatchObject({ pending: 3, done: null, total: null, description: expect.stringContaining('1 batch') });
    expect(o.jobs.items.filter((j) => j.name === 'typed.ingest')).toEqual([
      { id: expect.any(String), name: 'typed.ingest', state: 'waiting', attempt: 1, enqueuedAt: expect.any(String), startedAt: null },
    ]);
    expect(o.jobs.truncated).toBe(false);

    expect(o.work.some((w) => w.module === 'graph')).toBe(false);
    await post(p, '/admin/memory', { content: 'Maria works at Acme in Lisbon' });
    await post(p, '/admin/memory/graph/extraction/toggle', { enabled: true });
    o = await overview(p.projectId);
    expect(backlog(o, 'graph', 'extraction')).toMatchObject({ pending: 1, done: 0, total: 1 });
    // The same count as the backfill's `remaining`.
    await h.apis.graph.backfill(p.projectId);
    o = await overview(p.projectId);
    expect(backlog(o, 'graph', 'extraction')).toMatchObject({ pending: 0, done: 1, total: 1, oldestPendingAt: null });
  });

  it('refuses an unknown query parameter in the one error shape', async () => {
    const res = await h.call('GET', a.projectId, '/project?verbose=1', { apiKey: reader });
    expect(res.statusCode).toBe(400);
    expect(res.json()).toMatchObject({ statusCode: 400, code: 'VALIDATION_ERROR' });
  });

  it('needs READ_MEMORY, and a valid key', async () => {
    const writer = await h.key(a.projectId, ['WRITE_MEMORY']);
    const forbidden = await h.call('GET', a.projectId, '/project', { apiKey: writer });
    expect(forbidden.statusCode).toBe(403);
    expect(forbidden.json()).toMatchObject({ statusCode: 403, code: 'AUTHORIZATION_ERROR', message: expect.stringContaining('READ_MEMORY') });
    const wrong = await h.call('GET', a.projectId, '/project', { apiKey: 'lat_not_a_key' });
    expect(wrong.statusCode).toBe(401);
    expect(wrong.json()).toMatchObject({ statusCode: 401, code: 'AUTHENTICATION_ERROR' });
    expect((await h.app.inject({ url: `/api/v1/projects/${a.projectId}/project` })).statusCode).toBe(401);
  });

  it("never shows one project's usage, backlogs or jobs to another project's key", async () => {
    const busy = await h.project();
    const quiet = await h.project({ plan: 'free' });
    await post(busy, '/memory-typed/attributes', { attributeKey: 'hr', dataType: 'numeric' });
    await post(busy, '/memory-typed/observations/enqueue', observations('u9', [80, 81]));
    await bulk(busy.projectId, INLINE_EMBED_MAX + 1, 'Busy project memory');
    const busyView = await overview(busy.projectId);
    expect(busyView.jobs.items.length).toBeGreaterThan(0);
    expect(meter(busyView, 'events-ingested').used).toBe(2);

    const quietView = await overview(quiet.projectId);
    expect(quietView.project.id).toBe(quiet.projectId);
    expect(quietView.jobs.items).toEqual([]);
    expect(quietView.usage.meters.every((m) => m.used === 0)).toBe(true);
    expect(quietView.work.every((w) => w.pending === 0)).toBe(true);
    expect(JSON.stringify(quietView)).not.toContain(busy.projectId);
    // A key of one project on the other's path: 404, as on every project route.
    expect((await h.call('GET', busy.projectId, '/project', { apiKey: quiet.apiKey })).statusCode).toBe(404);
  });

  it('drains the backlogs and the jobs once the jobs run', async () => {
    const p = await h.project();
    await post(p, '/memory-typed/attributes', { attributeKey: 'hr', dataType: 'numeric' });
    await post(p, '/memory-typed/observations/enqueue', observations('u1', [90, 91]));
    await bulk(p.projectId, INLINE_EMBED_MAX + 1, 'Drinks jasmine tea');
    expect(backlog(await overview(p.projectId), 'memory', 'embeddings')).toMatchObject({ pending: INLINE_EMBED_MAX + 1, total: INLINE_EMBED_MAX + 1 });
    await h.lattice.startConsumers();
    await expect
      .poll(
        async () => {
          const o = await overview(p.projectId);
          return { embeddings: backlog(o, 'memory', 'embeddings'), ingest: backlog(o, 'typed', 'ingest')!.pending, jobs: o.jobs.items.map((j) => j.name) };
        },
        { timeout: 60_000, interval: 250 },
      )
      .toMatchObject({ embeddings: { pending: 0, done: INLINE_EMBED_MAX + 1, total: INLINE_EMBED_MAX + 1, oldestPendingAt: null }, ingest: 0, jobs: [] });
  }, 90_000);
});
