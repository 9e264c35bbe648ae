// Observe through HTTP: the corpus end to end, filler, idempotency (also under concurrency),
// corrections that supersede, bi-temporal reads, validation, permissions and isolation.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createHarness, REDIS_URL, type Harness } from '../../helpers/harness.js';
import { OBSERVE_CORPUS, OBSERVE_NOW } from './observe-corpus.js';

type Project = { projectId: string; apiKey: string };

describe('observe', () => {
  let h: Harness;
  let a: Project;
  const observe = (p: Project, body: Record<string, unknown>) => h.call('POST', p.projectId, '/memory/observe', { body });

  beforeAll(async () => {
    h = await createHarness();
    a = await h.project();
  });
  afterAll(() => h?.close());

  it(`saves what the ${OBSERVE_CORPUS.length}-turn corpus expects, turn by turn, and nothing for filler`, async () => {
    const p = await h.project();
    let expected = 0;
    let saved = 0;
    for (const [i, turn] of OBSERVE_CORPUS.entries()) {
      const res = await observe(p, { text: turn.text, role: turn.role, userId: `corpus-${i}`, occurredAt: OBSERVE_NOW.toISOString() });
      expect(res.statusCode, turn.id).toBe(200);
      const body = res.json();
      expect(body.saved.map((m: { type: string }) => m.type), turn.id).toEqual(turn.saves.map((s) => s.type));
      turn.saves.forEach((s, j) => expect(body.saved[j].content.toLowerCase(), turn.id).toContain(s.contains.toLowerCase()));
      expected += turn.saves.length;
      saved += body.saved.length;
    }
    expect(saved).toBe(expected);
    expect((await h.call('GET', p.projectId, '/admin/memory/stats')).json().total).toBe(expected);
  });

  it('saves nothing for filler, and says how many statements it considered', async () => {
    const res = await observe(a, { text: 'ok thanks! lol', userId: 'u-filler' });
    expect(res.json()).toMatchObject({ saved: [], supersededIds: [] });
    expect(res.json().candidateCount).toBeGreaterThanOrEqual(1);
  });

  it('is idempotent: the same text again saves nothing new', async () => {
    const text = 'I am allergic to shellfish. My daughter Emma starts school on September 3rd.';
    const first = (await observe(a, { text, userId: 'u-idem', occurredAt: OBSERVE_NOW.toISOString() })).json();
    expect(first.saved).toHaveLength(2);
    expect(first.saved[0]).toMatchObject({ subject: { kind: 'user', externalId: 'u-idem' }, source: 'observe' });
    const again = (await observe(a, { text, userId: 'u-idem', occurredAt: OBSERVE_NOW.toISOString() })).json();
    expect(again.saved).toEqual([]);
    expect(again.candidateCount).toBe(first.candidateCount);
  });

  it('saves once under concurrent identical observes', async () => {
    const text = 'I work at Siemens as an engineer.';
    const results = await Promise.all(Array.from({ length: 6 }, () => observe(a, { text, userId: 'u-race' })));
    expect(results.every((r) => r.statusCode === 200)).toBe(true);
    const created = results.flatMap((r) => r.json().saved);
    expect(created).toHaveLength(1);
    const listed = (await h.call('GET', a.projectId, '/admin/memory?subjectKind=user&subjectExternalId=u-race')).json();
    expect(listed).toHaveLength(1);
  });

  it('lets a correction supersede what it contradicts, and keeps both for point-in-time reads', async () => {
    const jan = '2026-01-10T09:00:00.000Z';
    const jun = '2026-06-10T09:00:00.000Z';
    const paris = (await observe(a, { text: 'I live in Paris.', userId: 'u-move', occurredAt: jan })).json().saved[0];
    expect(paris.metadata.slot).toBe('residence');
    const moved = (await observe(a, { text: 'Actually I moved to Berlin.', userId: 'u-move', occurredAt: jun })).json();
    expect(moved.saved).toHaveLength(1);
    const berlin = moved.saved[0];
    expect(moved.supersededIds).toEqual([paris.id]);
    const old = (await h.call('GET', a.projectId, `/admin/memory/${paris.id}`)).json();
    expect(old).toMatchObject({ status: 'superseded', supersededById: berlin.id, validTo: jun });

    const live = (await h.call('GET', a.projectId, '/admin/memory?subjectExternalId=u-move&subjectKind=user')).json();
    expect(live.map((m: { id: string }) => m.id)).toEqual([berlin.id]);
    const before = (await h.call('GET', a.projectId, '/admin/memory?subjectExternalId=u-move&subjectKind=user&asOf=2026-03-01T00:00:00Z')).json();
    expect(before.map((m: { id: string }) => m.id)).toEqual([paris.id]);
    while ((await h.call('POST', a.projectId, '/admin/memory/embeddings/backfill', { body: {} })).json().embedded > 0);
    const search = async (asOf?: string) =>
      (await h.call('POST', a.projectId, '/admin/memory/search', { body: { query: 'where does the user live', subject: { kind: 'user', externalId: 'u-move' }, ...(asOf ? { asOf } : {}) } }))
        .json()
        .map((x: { id: string }) => x.id);
    expect(await search()).toEqual([berlin.id]);
    expect(await search('2026-03-01T00:00:00Z')).toEqual([paris.id]);
    expect(await search('2026-07-01T00:00:00Z')).toEqual([berlin.id]);
  });

  it('closes a fact learned late: an older value observed after a newer one is superseded by it', async () => {
    const newer = (await observe(a, { text: 'I work at Bosch.', userId: 'u-late', occurredAt: '2026-05-01T00:00:00.000Z' })).json().saved[0];
    const older = (await observe(a, { text: 'I work at Siemens.', userId: 'u-late', occurredAt: '2025-01-01T00:00:00.000Z' })).json();
    expect(older.supersededIds).toEqual([older.saved[0].id]);
    const stored = (await h.call('GET', a.projectId, `/admin/memory/${older.saved[0].id}`)).json();
    expect(stored).toMatchObject({ status: 'superseded', supersededById: newer.id, validTo: '2026-05-01T00:00:00.000Z' });
    const asOf2025 = (await h.call('GET', a.projectId, '/admin/memory?subjectKind=user&subjectExternalId=u-late&asOf=2025-06-01T00:00:00Z')).json();
    expect(asOf2025.map((m: { content: string }) => m.content)).toEqual(['I work at Siemens.']);
  });

  it('keeps a customer\'s changing facts current from notes in the third person (the support-agent example)', async () => {
    const p = await h.project();
    const jane = { kind: 'contact', externalId: 'acme-jane' };
    const note = async (text: string, occurredAt: string) => (await observe(p, { text, subject: jane, occurredAt })).json();
    const enterprise = (await note('Jane at Acme is on the Enterprise plan.', '2026-09-01T10:00:00.000Z')).saved[0];
    expect(enterprise.metadata.slot).toBe('plan');
    await note('Jane reported the CSV export is slow on big accounts.', '2026-09-02T10:00:00.000Z');
    const downgraded = await note('Acme downgraded to the Pro plan this month.', '2026-10-01T10:00:00.000Z');
    expect(downgraded.supersededIds).toEqual([enterprise.id]);
    const pro = downgraded.saved[0];
    expect((await h.call('GET', p.projectId, `/admin/memory/${enterprise.id}`)).json()).toMatchObject({ status: 'superseded', supersededById: pro.id });
    while ((await h.call('POST', p.projectId, '/admin/memory/embeddings/backfill', { body: {} })).json().embedded > 0);
    const hits = (await h.call('POST', p.projectId, '/memory/search', { body: { query: 'what plan is Jane on', limit: 5 } })).json();
    const contents = hits.map((m: { content: string }) => m.content);
    expect(contents[0]).toBe('Acme downgraded to the Pro plan this month.');
    expect(contents).not.toContain('Jane at Acme is on the Enterprise plan.');
    // A user's own conversation: a friend's move is not the user's.
    const own = await h.project();
    await observe(own, { text: 'I live in Lisbon.', userId: 'u-own', occurredAt: '2026-09-01T10:00:00.000Z' });
    expect((await observe(own, { text: 'Jane moved to Denver.', userId: 'u-own', occurredAt: '2026-10-01T10:00:00.000Z' })).json().supersededIds).toEqual([]);
  });

  it('does not let one subject supersede another', async () => {
    await observe(a, { text: 'I live in Oslo.', userId: 'u-oslo' });
    await observe(a, { text: 'I live in Rome.', userId: 'u-rome' });
    const oslo = (await h.call('GET', a.projectId, '/admin/memory?subjectKind=user&subjectExternalId=u-oslo')).json();
    expect(oslo).toHaveLength(1);
    expect(oslo[0].status).toBe('confirmed');
  });

  it.each([
    [{}, 'body.text'],
    [{ text: '' }, 'body.text'],
    [{ text: 'x'.repeat(20_001) }, 'body.text'],
    [{ text: 'I like tea', role: 'robot' }, 'body.role'],
    [{ text: 'I like tea', occurredAt: 'last week' }, 'body.occurredAt'],
    [{ text: 'I like tea', mood: 'happy' }, 'body.mood'],
  ])('refuses %j, naming %s, and saves nothing', async (body, path) => {
    const p = await h.project();
    const res = await observe(p, body);
    expect(res.statusCode).toBe(400);
    expect(res.json().params.errors.map((e: { path: string }) => e.path)).toContain(path);
    expect((await h.call('GET', p.projectId, '/admin/memory/stats')).json().total).toBe(0);
  });

  it('accepts the legacy `content` alias', async () => {
    const res = await observe(a, { content: 'I prefer aisle seats.', userId: 'u-alias' });
    expect(res.json().saved[0]).toMatchObject({ type: 'preference' });
  });

  it('needs WRITE_MEMORY, and keeps projects apart', async () => {
    const reader = await h.key(a.projectId, ['READ_MEMORY']);
    expect((await h.call('POST', a.projectId, '/memory/observe', { apiKey: reader, body: { text: 'I like tea.' } })).statusCode).toBe(403);
    const b = await h.project();
    expect((await h.call('POST', b.projectId, '/memory/observe', { apiKey: a.apiKey, body: { text: 'I like tea.' } })).statusCode).toBe(404);
    await observe(b, { text: 'I live in Paris.', userId: 'u-move' });
    const stillA = (await h.call('GET', a.projectId, '/admin/memory?subjectKind=user&subjectExternalId=u-move')).json();
    expect(stillA).toHaveLength(1); // B's Paris did not supersede A's Berlin
  });
});

describe.skipIf(!REDIS_URL)('observe with the async buffer (AP_MEMORY_OBSERVE_ASYNC_ENABLED)', () => {
  let h: Harness;
  afterAll(() => h?.close());

  it('answers once the turn is enqueued, and a job extracts and saves it', async () => {
    h = await createHarness({ env: { AP_MEMORY_OBSERVE_ASYNC_ENABLED: 'true' } });
    const p = await h.project();
    const res = (await h.call('POST', p.projectId, '/memory/observe', { body: { text: 'I am vegetarian. ok thanks', userId: 'u-async' } })).json();
    expect(res).toMatchObject({ saved: [], candidateCount: 0 });
    expect(res.queued.jobId).toBeTruthy();
    await expect
      .poll(async () => (await h.call('GET', p.projectId, '/admin/memory?subjectKind=user&subjectExternalId=u-async')).json().map((m: { content: string }) => m.content), { timeout: 60_000 })
      .toEqual(['I am vegetarian.']);
  });
});
