// The admin memory surface: create, read, list, review, stats, insights, edit, confirm, promote, delete.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createHarness, type Harness } from '../helpers/harness.js';

type Project = { projectId: string; apiKey: string };

describe('admin memory routes', () => {
  let h: Harness;
  let a: Project;
  let b: Project;
  const create = (p: Project, body: Record<string, unknown>) => h.call('POST', p.projectId, '/admin/memory', { body });

  beforeAll(async () => {
    h = await createHarness();
    a = await h.project();
    b = await h.project();
  });
  afterAll(() => h?.close());

  it('creates a memory with the documented defaults and answers it in full', async () => {
    const res = await create(a, { content: 'Prefers window seats on long flights' });
    expect(res.statusCode).toBe(201);
    const m = res.json();
    expect(m).toMatchObject({
      type: 'fact',
      kind: 'fact',
      scope: 'project',
      status: 'confirmed',
      importance: 5,
      confidence: 1,
      projectId: a.projectId,
      validTo: null,
      supersededById: null,
      sourceMemoryIds: [],
    });
    expect(m.id).toMatch(/^mem_[0-9A-Z]{26}$/);
    expect(m.contentHash).toMatch(/^[0-9a-f]{64}$/);
    expect(Date.parse(m.validFrom)).toBeLessThanOrEqual(Date.now());
  });

  it('is idempotent: the same content again answers the existing memory with 200', async () => {
    const first = await create(a, { content: 'Allergic to peanuts', type: 'fact', subject: { kind: 'user', externalId: 'u1' } });
    const again = await create(a, { content: '  allergic to PEANUTS. ', type: 'fact', subject: { kind: 'user', externalId: 'u1' } });
    expect(first.statusCode).toBe(201);
    expect(again.statusCode).toBe(200);
    expect(again.json().id).toBe(first.json().id);
    const otherSubject = await create(a, { content: 'Allergic to peanuts', type: 'fact', subject: { kind: 'user', externalId: 'u2' } });
    expect(otherSubject.statusCode).toBe(201);
  });

  it('saves once under concurrent identical writes', async () => {
    const results = await Promise.all(Array.from({ length: 8 }, () => create(a, { content: 'Renews the gym membership every January' })));
    expect(new Set(results.map((r) => r.json().id)).size).toBe(1);
    expect(results.filter((r) => r.statusCode === 201)).toHaveLength(1);
  });

  it('honours a client-chosen id, and a replay with that id answers the same memory', async () => {
    const id = 'mem_client_chosen_id_000000001';
    const first = await create(a, { id, content: 'Works night shifts' });
    const replay = await create(a, { id, content: 'Works night shifts' });
    expect(first.json().id).toBe(id);
    expect(replay.statusCode).toBe(200);
    expect(replay.json().id).toBe(id);
  });

  it.each([
    [{}, 'body.content'],
    [{ content: '' }, 'body.content'],
    [{ content: 'x'.repeat(20_001) }, 'body.content'],
    [{ content: 'ok', scope: 'galaxy' }, 'body.scope'],
    [{ content: 'ok', type: 'gossip' }, 'body.type'],
    [{ content: 'ok', importance: 11 }, 'body.importance'],
    [{ content: 'ok', validFrom: 'yesterday' }, 'body.validFrom'],
    [{ content: 'ok', colour: 'blue' }, 'body.colour'],
  ])('refuses %j, naming %s', async (body, path) => {
    const res = await create(a, body);
    expect(res.statusCode).toBe(400);
    expect(res.json().code).toBe('VALIDATION_ERROR');
    expect(res.json().params.errors.map((e: { path: string }) => e.path)).toContain(path);
  });

  it('refuses blank content and writes nothing', async () => {
    const before = (await h.call('GET', a.projectId, '/admin/memory/stats')).json().total;
    const res = await create(a, { content: '   ' });
    expect(res.statusCode).toBe(400);
    expect((await h.call('GET', a.projectId, '/admin/memory/stats')).json().total).toBe(before);
  });

  it('lists newest first with filters, and pages with limit and offset', async () => {
    const p = await h.project();
    for (const [i, scope] of ['user', 'agent', 'user', 'session'].entries()) {
      await create(p, { content: `listed memory ${i}`, scope, type: i % 2 ? 'preference' : 'fact', category: i === 3 ? 'travel' : undefined });
    }
    const all = (await h.call('GET', p.projectId, '/admin/memory')).json();
    expect(all.map((m: { content: string }) => m.content)).toEqual(['listed memory 3', 'listed memory 2', 'listed memory 1', 'listed memory 0']);
    expect((await h.call('GET', p.projectId, '/admin/memory?scope=user')).json()).toHaveLength(2);
    expect((await h.call('GET', p.projectId, '/admin/memory?type=preference')).json()).toHaveLength(2);
    expect((await h.call('GET', p.projectId, '/admin/memory?category=travel')).json()[0].content).toBe('listed memory 3');
    const page = (await h.call('GET', p.projectId, '/admin/memory?limit=2&offset=1')).json();
    expect(page.map((m: { content: string }) => m.content)).toEqual(['listed memory 2', 'listed memory 1']);
    expect((await h.call('GET', p.projectId, '/admin/memory?limit=501')).statusCode).toBe(400);
    expect((await h.call('GET', p.projectId, '/admin/memory?scope=nowhere')).statusCode).toBe(400);
    expect((await h.call('GET', p.projectId, '/admin/memory?asOf=not-a-date')).statusCode).toBe(400);
  });

  it('lists platform memories separately', async () => {
    const p = await h.project();
    await create(p, { content: 'Store opens at 9', scope: 'platform' });
    await create(p, { content: 'Not a platform memory' });
    const res = (await h.call('GET', p.projectId, '/admin/memory/platform')).json();
    expect(res.map((m: { content: string }) => m.content)).toEqual(['Store opens at 9']);
  });

  it('queues pending memories for review, confirms or rejects them, and refuses a second decision with 409', async () => {
    const p = await h.project();
    const pending = (await create(p, { content: 'Might be vegetarian', status: 'pending' })).json();
    const other = (await create(p, { content: 'Maybe moving to Lisbon', status: 'pending' })).json();
    const queue = (await h.call('GET', p.projectId, '/admin/memory/review')).json();
    expect(queue.map((m: { id: string; reviewReason: string }) => [m.id, m.reviewReason]).sort()).toEqual(
      [[pending.id, 'pending'], [other.id, 'pending']].sort(),
    );
    const confirmed = await h.call('POST', p.projectId, `/admin/memory/${pending.id}/confirm`, { body: { status: 'confirmed' } });
    expect(confirmed.statusCode).toBe(200);
    expect(confirmed.json()).toMatchObject({ status: 'confirmed', reviewReason: null });
    expect(confirmed.json().confirmedAt).not.toBeNull();
    const rejected = await h.call('POST', p.projectId, `/admin/memory/${other.id}/confirm`, { body: { status: 'rejected' } });
    expect(rejected.json().status).toBe('rejected');
    const again = await h.call('POST', p.projectId, `/admin/memory/${pending.id}/confirm`, { body: { status: 'rejected' } });
    expect(again.statusCode).toBe(409);
    expect(again.json().code).toBe('CONFLICT');
    expect((await h.call('GET', p.projectId, '/admin/memory/review')).json()).toEqual([]);
    expect((await h.call('POST', p.projectId, `/admin/memory/${other.id}/confirm`, { body: { status: 'maybe' } })).statusCode).toBe(400);
  });

  it('edits the fields given, re-embeds new content, and refuses fields that may not change', async () => {
    const m = (await create(a, { content: 'Drives a blue car', category: 'vehicle' })).json();
    const res = await h.call('PATCH', a.projectId, `/admin/memory/${m.id}`, { body: { content: 'Drives a red car', importance: 8 } });
    expect(res.statusCode).toBe(200);
    expect(res.json()).toMatchObject({ content: 'Drives a red car', importance: 8, category: 'vehicle', hasEmbedding: false });
    expect(res.json().contentHash).not.toBe(m.contentHash);
    for (const body of [{ id: 'mem_other' }, { contentHash: 'abc' }, { recordedAt: new Date().toISOString() }, { supersededById: 'x' }]) {
      const refused = await h.call('PATCH', a.projectId, `/admin/memory/${m.id}`, { body });
      expect(refused.statusCode).toBe(400);
      expect(refused.json().message).toMatch(/cannot be changed/);
    }
    const unchanged = (await h.call('GET', a.projectId, `/admin/memory/${m.id}`)).json();
    expect(unchanged.content).toBe('Drives a red car');
    const badInterval = await h.call('PATCH', a.projectId, `/admin/memory/${m.id}`, { body: { validTo: '2000-01-01T00:00:00Z' } });
    expect(badInterval.statusCode).toBe(400);
  });

  it('promotes by moving the memory to another scope, and answers 409 when the target already holds it', async () => {
    const p = await h.project();
    const m = (await create(p, { content: 'Closes on Sundays', scope: 'agent' })).json();
    const moved = await h.call('POST', p.projectId, `/admin/memory/${m.id}/promote`, { body: { targetScope: 'platform' } });
    expect(moved.statusCode).toBe(200);
    expect(moved.json()).toMatchObject({ id: m.id, scope: 'platform' });
    expect((await h.call('GET', p.projectId, '/admin/memory?scope=agent')).json()).toEqual([]);
    const twin = (await create(p, { content: 'Closes on Sundays', scope: 'agent' })).json();
    const clash = await h.call('POST', p.projectId, `/admin/memory/${twin.id}/promote`, { body: { targetScope: 'platform' } });
    expect(clash.statusCode).toBe(409);
    expect((await h.call('POST', p.projectId, `/admin/memory/${twin.id}/promote`, { body: { targetScope: 'mars' } })).statusCode).toBe(400);
  });

  it('deletes with 204 and no body, then answers 404', async () => {
    const m = (await create(a, { content: 'Temporary note' })).json();
    const res = await h.call('DELETE', a.projectId, `/admin/memory/${m.id}`);
    expect(res.statusCode).toBe(204);
    expect(res.body).toBe('');
    expect((await h.call('GET', a.projectId, `/admin/memory/${m.id}`)).statusCode).toBe(404);
    expect((await h.call('DELETE', a.projectId, `/admin/memory/${m.id}`)).statusCode).toBe(404);
    const viaCaller = (await create(a, { content: 'Another temporary note' })).json();
    expect((await h.call('DELETE', a.projectId, `/memory/${viaCaller.id}`)).statusCode).toBe(204);
  });

  it('counts by scope, status and type, with embedding coverage', async () => {
    const p = await h.project();
    await create(p, { content: 'one', scope: 'user' });
    await create(p, { content: 'two', scope: 'user', type: 'preference' });
    await create(p, { content: 'three', status: 'pending' });
    await create(p, { content: 'a weekly pattern', type: 'behavior_pattern' });
    const stats = (await h.call('GET', p.projectId, '/admin/memory/stats')).json();
    expect(stats).toMatchObject({
      total: 4,
      pendingReview: 1,
      flagged: 0,
      byScope: { user: 2, project: 2 },
      byStatus: { confirmed: 3, pending: 1 },
      byType: { fact: 2, preference: 1, behavior_pattern: 1 },
      patternCount: 1,
      embedding: { graphReady: false, projectIndex: false },
    });
    expect(stats.embedding.total).toBe(4);
    expect(stats.embedding.coverage).toBeGreaterThanOrEqual(0);
    expect(stats.embedding.coverage).toBeLessThanOrEqual(1);
  });

  it('rolls memories up per subject: count, recency, silence and importance', async () => {
    const p = await h.project();
    const day = 86_400_000;
    await create(p, { content: 'old fact', subject: { kind: 'user', externalId: 'quiet' }, importance: 9, validFrom: new Date(Date.now() - 30 * day).toISOString() });
    await create(p, { content: 'recent fact', subject: { kind: 'user', externalId: 'chatty' }, importance: 3 });
    await create(p, { content: 'another recent', subject: { kind: 'user', externalId: 'chatty' }, importance: 5 });
    const { subjects } = (await h.call('GET', p.projectId, '/admin/memory/insights')).json();
    expect(subjects.map((s: { subject: { externalId: string } }) => s.subject.externalId)).toEqual(['quiet', 'chatty']);
    expect(subjects[0].daysSinceLastMemory).toBeGreaterThan(29);
    expect(subjects[1]).toMatchObject({ memoryCount: 2, maxImportance: 5, avgImportance: 4 });
  });

  it('embeds a single write before it answers, and a bulk write behind, without a backfill call', async () => {
    const p = await h.project();
    // The inline embedding has a 250 ms budget; on a loaded machine (the other half of the suite
    // running beside this file) one write can miss it. Warm the encoder, and allow three writes:
    // at least one must come back embedded, or the inline path is broken rather than slow.
    await h.apis.embeddings.embed(['warm the encoder']);
    let m = { id: '', hasEmbedding: false };
    for (let attempt = 0; attempt < 3 && !m.hasEmbedding; attempt++) {
      m = (await create(p, { content: `Embedded before the write answers (${attempt})` })).json();
    }
    expect(m.hasEmbedding).toBe(true);
    expect((await h.call('GET', p.projectId, `/admin/memory/${m.id}`)).json().hasEmbedding).toBe(true);
    const bulk = await h.apis.memory.saveMany(p.projectId, Array.from({ length: 10 }, (_, i) => ({ content: `Bulk memory number ${i}` })));
    expect(bulk.every((r) => !r.memory.hasEmbedding)).toBe(true);
    for (const { memory } of bulk) {
      await expect
        .poll(async () => (await h.call('GET', p.projectId, `/admin/memory/${memory.id}`)).json().hasEmbedding, { timeout: 60_000, interval: 250 })
        .toBe(true);
    }
  });

  describe('isolation and permissions', () => {
    const routes = (id: string): [string, string, unknown?][] => [
      ['GET', `/admin/memory/${id}`],
      ['PATCH', `/admin/memory/${id}`, { importance: 1 }],
      ['POST', `/admin/memory/${id}/confirm`, { status: 'confirmed' }],
      ['POST', `/admin/memory/${id}/promote`, { targetScope: 'platform' }],
      ['DELETE', `/admin/memory/${id}`],
      ['DELETE', `/memory/${id}`],
    ];

    it("answers 404 for another project's memory on every route, and changes nothing", async () => {
      const m = (await create(a, { content: 'Belongs to A', status: 'pending' })).json();
      for (const [method, path, body] of routes(m.id)) {
        const res = await h.call(method as 'GET', b.projectId, path, { body });
        expect(res.statusCode, `${method} ${path}`).toBe(404);
      }
      const still = (await h.call('GET', a.projectId, `/admin/memory/${m.id}`)).json();
      expect(still).toMatchObject({ status: 'pending', scope: 'project', importance: 5 });
    });

    it("never lists another project's memories", async () => {
      await create(a, { content: 'A only, for listing' });
      for (const path of ['/admin/memory', '/admin/memory/review', '/admin/memory/platform']) {
        const listed = (await h.call('GET', b.projectId, path)).json();
        expect(listed.some((m: { projectId: string }) => m.projectId === a.projectId)).toBe(false);
      }
      expect((await h.call('GET', b.projectId, '/admin/memory/stats')).json().total).toBe(0);
    });

    it('refuses a READ_MEMORY key on the admin surface', async () => {
      const reader = await h.key(a.projectId, ['READ_MEMORY']);
      for (const [method, path] of [['GET', '/admin/memory'], ['POST', '/admin/memory'], ['GET', '/admin/memory/stats']] as const) {
        const res = await h.call(method, a.projectId, path, { apiKey: reader, body: method === 'POST' ? { content: 'x' } : undefined });
        expect(res.statusCode).toBe(403);
      }
    });

    it("answers project A's key on B's admin routes with 404", async () => {
      const res = await h.call('GET', b.projectId, '/admin/memory', { apiKey: a.apiKey });
      expect(res.statusCode).toBe(404);
    });
  });
});
