// Hybrid search: relevance first, explained; full-text fallback; filters; bi-temporal slices;
// threshold; isolation.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createHarness, type Harness } from '../../helpers/harness.js';

type Project = { projectId: string; apiKey: string };

const CORPUS: [string, Record<string, unknown>?][] = [
  ['The customer prefers oat milk in coffee', { type: 'preference', category: 'food' }],
  ['Flies to Lisbon every March for a conference', { type: 'event', category: 'travel' }],
  ['Allergic to penicillin', { category: 'health', importance: 9 }],
  ['Works as a nurse on night shifts', {}],
  ['Has two cats named Miso and Tofu', {}],
  ['Pays the electricity bill by direct debit', { category: 'finance' }],
  ['Favourite football team is Benfica', { type: 'preference' }],
  ['Asked for invoices to be sent as PDF', { type: 'preference', scope: 'agent' }],
  ['Is learning to play the cello', {}],
  ['Lives on the third floor without a lift', {}],
];

describe('hybrid search', () => {
  let h: Harness;
  let a: Project;
  let b: Project;
  const search = (p: Project, body: Record<string, unknown>) => h.call('POST', p.projectId, '/admin/memory/search', { body });

  beforeAll(async () => {
    h = await createHarness();
    a = await h.project();
    b = await h.project();
    for (const [content, extra] of CORPUS) {
      const res = await h.call('POST', a.projectId, '/admin/memory', { body: { content, subject: { kind: 'user', externalId: 'u1' }, ...extra } });
      expect(res.statusCode).toBe(201);
    }
    await h.call('POST', b.projectId, '/admin/memory', { body: { content: 'Project B also likes oat milk' } });
    for (const p of [a, b]) {
      while ((await h.call('POST', p.projectId, '/admin/memory/embeddings/backfill', { body: {} })).json().embedded > 0);
    }
  });
  afterAll(() => h?.close());

  it('ranks the relevant memory first for a paraphrase and explains its score', async () => {
    const res = await search(a, { query: 'what milk does the customer like' });
    expect(res.statusCode).toBe(200);
    const [top, second] = res.json();
    expect(top.content).toBe('The customer prefers oat milk in coffee');
    expect(top.score).toBeGreaterThan(second.score);
    expect(top.scoreParts.semantic).toBeGreaterThan(0.4);
    expect(top.scoreParts.vectorRank).toBe(1);
    expect(top.similarity).toBe(top.scoreParts.relevance);
    expect(top.explanation).toMatch(/^score [0-9.]+ = 0\.85 x relevance [0-9.]+ \(0\.75 x \(?cosine [0-9.]+ #1( [-+] hubness [0-9.]+\))? \+ 0\.25 x words [0-9.]+ #\d+\)/);
  });

  it.each([
    ['which medicine must be avoided', 'Allergic to penicillin'],
    ['pets at home', 'Has two cats named Miso and Tofu'],
    ['musical instrument', 'Is learning to play the cello'],
    ['soccer club', 'Favourite football team is Benfica'],
  ])('finds %j', async (query, expected) => {
    const [top] = (await search(a, { query })).json();
    expect(top.content).toBe(expected);
  });

  it('filters by scope, type, category and subject', async () => {
    const byScope = (await search(a, { query: 'invoices', scope: 'agent' })).json();
    expect(byScope.map((x: { content: string }) => x.content)).toEqual(['Asked for invoices to be sent as PDF']);
    const byType = (await search(a, { query: 'travel', type: 'event' })).json();
    expect(byType.every((x: { type: string }) => x.type === 'event')).toBe(true);
    expect(byType[0].content).toMatch(/Lisbon/);
    const byCategory = (await search(a, { query: 'money', category: 'finance', limit: 50 })).json();
    expect(byCategory.map((x: { content: string }) => x.content)).toEqual(['Pays the electricity bill by direct debit']);
    expect((await search(a, { query: 'milk', subject: { kind: 'user', externalId: 'nobody' } })).json()).toEqual([]);
  });

  it('drops hits below minScore', async () => {
    const all = (await search(a, { query: 'oat milk', limit: 50 })).json();
    const threshold = (all[0].score + all[all.length - 1].score) / 2;
    const some = (await search(a, { query: 'oat milk', limit: 50, minScore: threshold })).json();
    expect(some.length).toBeGreaterThan(0);
    expect(some.length).toBeLessThan(all.length);
    expect(some.every((x: { score: number }) => x.score >= threshold)).toBe(true);
  });

  it('finds memories not yet embedded through full text', async () => {
    const p = await h.project();
    await h.call('POST', p.projectId, '/admin/memory', { body: { content: 'Collects vintage typewriters' } });
    const [hit] = (await search(p, { query: 'typewriters' })).json();
    expect(hit.content).toBe('Collects vintage typewriters');
    expect(hit.scoreParts.semantic === null || hit.scoreParts.semantic > 0).toBe(true);
    expect(hit.scoreParts.lexical).toBeGreaterThan(0);
  });

  it('searches the bi-temporal slice with asOf, superseded memories included', async () => {
    const p = await h.project();
    const jan = '2026-01-01T00:00:00.000Z';
    const jun = '2026-06-01T00:00:00.000Z';
    const paris = (await h.call('POST', p.projectId, '/admin/memory', { body: { content: 'Lives in Paris', validFrom: jan } })).json();
    const berlin = (await h.call('POST', p.projectId, '/admin/memory', { body: { content: 'Lives in Berlin', validFrom: jun } })).json();
    expect(await h.apis.memory.supersede(p.projectId, [paris.id], berlin.id)).toBe(1);
    const superseded = (await h.call('GET', p.projectId, `/admin/memory/${paris.id}`)).json();
    expect(superseded).toMatchObject({ status: 'superseded', supersededById: berlin.id, validTo: jun });

    const contents = async (body: Record<string, unknown>) => (await search(p, { query: 'where does the user live', ...body })).json().map((x: { content: string }) => x.content);
    expect(await contents({})).toEqual(['Lives in Berlin']);
    expect(await contents({ asOf: '2026-03-01T00:00:00Z' })).toEqual(['Lives in Paris']);
    expect(await contents({ asOf: '2026-07-01T00:00:00Z' })).toEqual(['Lives in Berlin']);
    expect(await contents({ asOf: '2025-07-01T00:00:00Z' })).toEqual([]);
    const listed = (await h.call('GET', p.projectId, '/admin/memory?asOf=2026-03-01T00:00:00Z')).json();
    expect(listed.map((m: { id: string }) => m.id)).toEqual([paris.id]);
  });

  it('reads the time a query names against referenceTime, and shows the boost in scoreParts.time', async () => {
    const p = await h.project();
    const subject = { kind: 'user', externalId: 'u-time' };
    const save = async (content: string, validFrom: string) =>
      (await h.call('POST', p.projectId, '/admin/memory', { body: { content, subject, validFrom } })).json();
    const march = await save('Went hiking in the Alps with my brother', '2026-03-14T10:00:00.000Z');
    const june = await save('Went hiking in the Pyrenees with my sister', '2026-06-20T10:00:00.000Z');
    while ((await h.call('POST', p.projectId, '/admin/memory/embeddings/backfill', { body: {} })).json().embedded > 0);
    const top = async (query: string, referenceTime?: string) => (await search(p, { query, subject, ...(referenceTime ? { referenceTime } : {}) })).json();
    const inMarch = await top('where did I go hiking in March', '2026-11-27T00:00:00Z');
    expect(inMarch[0].id).toBe(march.id);
    expect(inMarch[0].scoreParts.time).toBeCloseTo(0.1, 6);
    expect(inMarch[0].explanation).toContain('+ time 0.100');
    expect(inMarch.find((x: { id: string }) => x.id === june.id).scoreParts.time).toBe(0);
    // "last month" read in July 2026 is June.
    expect((await top('where did I go hiking last month', '2026-07-10T00:00:00Z'))[0].id).toBe(june.id);
    // No time named: no boost to anyone.
    expect((await top('hiking')).every((x: { scoreParts: { time: number } }) => x.scoreParts.time === 0)).toBe(true);
    const bad = await search(p, { query: 'hiking', referenceTime: 'last week' });
    expect(bad.statusCode).toBe(400);
    expect(bad.json().params.errors.map((e: { path: string }) => e.path)).toContain('body.referenceTime');
  });

  it('ranks the newer of two live memories holding one fact with different values first, and says why', async () => {
    const p = await h.project();
    const subject = { kind: 'customer', externalId: 'c-plan' };
    const old = (await h.call('POST', p.projectId, '/admin/memory', { body: { content: 'Customer plan: Enterprise', subject, validFrom: '2026-01-01T00:00:00.000Z' } })).json();
    const now = (await h.call('POST', p.projectId, '/admin/memory', { body: { content: 'Customer plan: Pro', subject, validFrom: '2026-05-01T00:00:00.000Z' } })).json();
    await h.call('POST', p.projectId, '/admin/memory', { body: { content: 'Customer prefers email over phone calls', subject } });
    while ((await h.call('POST', p.projectId, '/admin/memory/embeddings/backfill', { body: {} })).json().embedded > 0);
    const hits = (await search(p, { query: 'which enterprise plan is the customer on', subject })).json();
    const ids = hits.map((x: { id: string }) => x.id);
    expect(ids.indexOf(now.id)).toBeLessThan(ids.indexOf(old.id));
    const stale = hits.find((x: { id: string }) => x.id === old.id);
    expect(stale.scoreParts.stale).toBeGreaterThan(0);
    expect(stale.explanation).toContain(`to rank under ${now.id}`);
    // Another subject's newer value changes nothing.
    const other = (await h.call('POST', p.projectId, '/admin/memory', { body: { content: 'Customer plan: Basic', subject: { kind: 'customer', externalId: 'c-other' }, validFrom: '2026-09-01T00:00:00.000Z' } })).json();
    const again = (await search(p, { query: 'which enterprise plan is the customer on', subject })).json();
    expect(again.map((x: { id: string }) => x.id)).not.toContain(other.id);
  });

  it('matches related forms by words alone, below the query\'s own words ("allergies" finds "allergic")', async () => {
    const p = await h.project();
    const allergic = (await h.call('POST', p.projectId, '/admin/memory', { body: { content: 'I am allergic to peanuts and I live in Lisbon.' } })).json();
    const allergies = (await h.call('POST', p.projectId, '/admin/memory', { body: { content: 'Seasonal allergies every spring.' } })).json();
    await h.call('POST', p.projectId, '/admin/memory', { body: { content: 'We organised a party for the team.' } });
    const byWords = async (query: string, relatedForms = true) =>
      (await h.apis.memory.search(p.projectId, { query, features: { vector: false, relatedForms } })).map((x) => x.memory.id);
    expect(await byWords('food allergies')).toEqual([allergies.id, allergic.id]);
    expect(await byWords('food allergies', false)).toEqual([allergies.id]);
    // A short word ("organic", organ) has no related forms: no match with "organised".
    expect(await byWords('organic food')).toEqual([]);
  });

  it('refuses bad input with VALIDATION_ERROR', async () => {
    for (const body of [{}, { query: '' }, { query: 'x', limit: 51 }, { query: 'x', asOf: 'soon' }, { query: 'x', scope: 'moon' }, { query: 'x', minScore: 2 }, { query: 'x', referenceTime: 'tomorrow' }, { query: 'x', subject: { kind: 'user' } }]) {
      const res = await search(a, body);
      expect(res.statusCode, JSON.stringify(body)).toBe(400);
      expect(res.json().code).toBe('VALIDATION_ERROR');
    }
  });

  it("never returns another project's memories, and answers 404 to a foreign key", async () => {
    const hits = (await search(b, { query: 'oat milk', limit: 50 })).json();
    expect(hits.map((x: { content: string }) => x.content)).toEqual(['Project B also likes oat milk']);
    expect((await h.call('POST', b.projectId, '/admin/memory/search', { apiKey: a.apiKey, body: { query: 'milk' } })).statusCode).toBe(404);
  });

  it('serves agents with READ_MEMORY on /memory/search, and keeps the admin route for WRITE_MEMORY', async () => {
    const reader = await h.key(a.projectId, ['READ_MEMORY']);
    const res = await h.call('POST', a.projectId, '/memory/search', { apiKey: reader, body: { query: 'oat milk' } });
    expect(res.statusCode).toBe(200);
    expect(res.json()[0].content).toBe('The customer prefers oat milk in coffee');
    expect((await h.call('POST', a.projectId, '/admin/memory/search', { apiKey: reader, body: { query: 'oat milk' } })).statusCode).toBe(403);
  });
});
