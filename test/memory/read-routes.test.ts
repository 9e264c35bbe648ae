// GET /memory and GET /memory/{memoryId}: the list and one memory for a READ_MEMORY key (the console,
// an agent that only reads), the same answers as their /admin/memory twins.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createHarness, type Harness } from '../helpers/harness.js';

describe('the read surface of memories', () => {
  let h: Harness;
  let a: { projectId: string; apiKey: string };
  let b: { projectId: string; apiKey: string };
  let reader: string;
  let saved: { id: string };

  beforeAll(async () => {
    h = await createHarness({ consumers: false });
    a = await h.project();
    b = await h.project();
    reader = await h.key(a.projectId, ['READ_MEMORY']);
    saved = (await h.call('POST', a.projectId, '/admin/memory', { body: { content: 'Prefers aisle seats', type: 'preference' } })).json();
    await h.call('POST', a.projectId, '/admin/memory', { body: { content: 'Works from Lisbon', type: 'fact' } });
    await h.call('POST', b.projectId, '/admin/memory', { body: { content: 'Project B only', type: 'fact' } });
  });
  afterAll(() => h?.close());

  it('lists with a READ_MEMORY key what the admin list answers, filters included', async () => {
    const read = await h.call('GET', a.projectId, '/memory?type=preference', { apiKey: reader });
    expect(read.statusCode, read.body).toBe(200);
    const admin = await h.call('GET', a.projectId, '/admin/memory?type=preference');
    expect(read.json()).toEqual(admin.json());
    expect(read.json().map((m: { content: string }) => m.content)).toEqual(['Prefers aisle seats']);
    expect((await h.call('GET', a.projectId, '/memory?limit=1&offset=1', { apiKey: reader })).json()).toHaveLength(1);
  });

  it('lists the memories built on a memory (derivedFrom)', async () => {
    const insight = (await h.call('POST', a.projectId, '/admin/memory', { body: { content: 'Likes window-free quiet seats', type: 'insight', sourceMemoryIds: [saved.id] } })).json();
    await h.call('POST', a.projectId, '/admin/memory', { body: { content: 'Unrelated derived note', type: 'insight', sourceMemoryIds: ['mem_other'] } });
    const res = await h.call('GET', a.projectId, `/memory?derivedFrom=${saved.id}`, { apiKey: reader });
    expect(res.statusCode, res.body).toBe(200);
    expect(res.json().map((m: { id: string }) => m.id)).toEqual([insight.id]);
    expect((await h.call('GET', b.projectId, `/memory?derivedFrom=${saved.id}`)).json()).toEqual([]);
    expect((await h.call('GET', a.projectId, '/memory?derivedFrom=', { apiKey: reader })).statusCode).toBe(400);
  });

  it('answers the review queue with a READ_MEMORY key, as the admin queue does', async () => {
    const pending = (await h.call('POST', a.projectId, '/admin/memory', { body: { content: 'Maybe allergic to nuts', status: 'pending' } })).json();
    const read = await h.call('GET', a.projectId, '/memory/review', { apiKey: reader });
    expect(read.statusCode, read.body).toBe(200);
    expect(read.json()).toEqual((await h.call('GET', a.projectId, '/admin/memory/review')).json());
    expect(read.json().map((m: { id: string; reviewReason: string }) => [m.id, m.reviewReason])).toEqual([[pending.id, 'pending']]);
    expect((await h.call('GET', b.projectId, '/memory/review')).json()).toEqual([]);
    expect((await h.call('GET', a.projectId, '/memory/review?limit=501', { apiKey: reader })).statusCode).toBe(400);
    expect((await h.call('GET', a.projectId, '/memory/review', { apiKey: await h.key(a.projectId, ['WRITE_MEMORY']) })).statusCode).toBe(403);
  });

  it('fetches one memory with a READ_MEMORY key', async () => {
    const res = await h.call('GET', a.projectId, `/memory/${saved.id}`, { apiKey: reader });
    expect(res.statusCode).toBe(200);
    expect(res.json()).toMatchObject({ id: saved.id, content: 'Prefers aisle seats', projectId: a.projectId });
  });

  it('refuses bad input in the one error shape', async () => {
    for (const query of ['limit=501', 'type=nonsense', 'asOf=yesterday', 'unknown=1']) {
      const res = await h.call('GET', a.projectId, `/memory?${query}`, { apiKey: reader });
      expect(res.statusCode, query).toBe(400);
      expect(res.json()).toMatchObject({ statusCode: 400, code: 'VALIDATION_ERROR' });
    }
    expect((await h.call('GET', a.projectId, '/memory/not-an-id', { apiKey: reader })).statusCode).toBe(404);
  });

  it('needs READ_MEMORY, and a key at all', async () => {
    const writer = await h.key(a.projectId, ['WRITE_MEMORY']);
    const res = await h.call('GET', a.projectId, '/memory', { apiKey: writer });
    expect(res.statusCode).toBe(403);
    expect(res.json().code).toBe('AUTHORIZATION_ERROR');
    const anonymous = await h.app.inject({ url: `/api/v1/projects/${a.projectId}/memory` });
    expect(anonymous.statusCode).toBe(401);
  });

  it('never shows one project\'s memories to another project\'s key', async () => {
    expect((await h.call('GET', b.projectId, `/memory/${saved.id}`)).statusCode).toBe(404);
    expect((await h.call('GET', b.projectId, '/memory')).json().map((m: { content: string }) => m.content)).toEqual(['Project B only']);
    // A's key on B's path: 404, as for every project route.
    expect((await h.call('GET', b.projectId, '/memory', { apiKey: reader })).statusCode).toBe(404);
  });
});
