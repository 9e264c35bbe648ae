// Dedup and consolidation over HTTP, with deterministic vectors so that similarities are known.
// Near-duplicates say the same words (near-duplicate.ts): similarity = 0.75 x lexical + 0.25 x cosine.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createHarness, type Harness } from '../../helpers/harness.js';
import { seed } from './seed.js';

type Project = { projectId: string; apiKey: string };


describe('dedup', () => {
  let h: Harness;
  let p: Project;
  let ids: string[];
  beforeAll(async () => {
    h = await createHarness();
    p = await h.project();
    ids = await seed(h, p.projectId, [
      { content: 'Prefers oat milk in coffee', vector: [1, 0, 0], importance: 5 },
      { content: 'Prefers oat milk in the coffee.', vector: [0.99, 0.05, 0], importance: 8 },
      { content: 'In coffee, prefers oat milk', vector: [0.98, 0.1, 0], importance: 8, confidence: 0.5 },
      { content: 'Lives in Porto', vector: [0, 1, 0] },
      { content: 'Prefers oat milk in coffee', vector: [1, 0, 0], subjectKind: 'user', subjectExternalId: 'other' },
      // A look-alike: one word differs, so it is another fact, however close its vector.
      { content: 'Prefers soy milk in coffee', vector: [1, 0, 0] },
    ]);
  });
  afterAll(() => h?.close());

  it('reports the groups on a dry run and changes nothing', async () => {
    const res = await h.call('POST', p.projectId, '/admin/memory/dedup', { body: { threshold: 0.95, dryRun: true } });
    expect(res.statusCode).toBe(200);
    expect(res.json()).toMatchObject({ scanned: 6, groups: 1, superseded: 2, dryRun: true });
    const live = (await h.call('GET', p.projectId, '/admin/memory')).json();
    expect(live).toHaveLength(6);
  });

  it('keeps the strongest of each group, supersedes the rest by it, and deletes nothing', async () => {
    const res = (await h.call('POST', p.projectId, '/admin/memory/dedup', { body: { threshold: 0.95 } })).json();
    expect(res).toMatchObject({ scanned: 6, groups: 1, superseded: 2, dryRun: false });
    // Importance 8 beats 5; of the two 8s, confidence 1 beats 0.5.
    expect(res.groupsDetail).toEqual([{ keptId: ids[1], supersededIds: expect.arrayContaining([ids[0], ids[2]]) }]);
    for (const id of [ids[0], ids[2]]) {
      const m = (await h.call('GET', p.projectId, `/admin/memory/${id}`)).json();
      expect(m).toMatchObject({ status: 'superseded', supersededById: ids[1], validTo: null });
    }
    const other = (await h.call('GET', p.projectId, `/admin/memory/${ids[4]}`)).json();
    expect(other.status).toBe('confirmed'); // another subject is never a duplicate
    expect((await h.call('GET', p.projectId, `/admin/memory/${ids[5]}`)).json().status).toBe('confirmed');
    expect((await h.call('GET', p.projectId, '/admin/memory/stats')).json().total).toBe(6);
    const again = (await h.call('POST', p.projectId, '/admin/memory/dedup', { body: { threshold: 0.95 } })).json();
    expect(again).toMatchObject({ scanned: 4, groups: 0, superseded: 0 });
  });

  it('refuses bad input, READ keys, and other projects', async () => {
    for (const body of [{ threshold: 2 }, { threshold: 0.1 }, { scanLimit: 0 }, { scanLimit: 10_001 }, { unknown: 1 }]) {
      expect((await h.call('POST', p.projectId, '/admin/memory/dedup', { body })).statusCode, JSON.stringify(body)).toBe(400);
    }
    const reader = await h.key(p.projectId, ['READ_MEMORY']);
    expect((await h.call('POST', p.projectId, '/admin/memory/dedup', { apiKey: reader, body: {} })).statusCode).toBe(403);
    const q = await h.project();
    const foreign = await h.call('POST', p.projectId, '/admin/memory/dedup', { apiKey: q.apiKey, body: {} });
    expect(foreign.statusCode).toBe(404);
    expect((await h.call('POST', q.projectId, '/admin/memory/dedup', { body: { threshold: 0.95 } })).json()).toMatchObject({ scanned: 0, groups: 0 });
  });
});

describe('consolidate', () => {
  let h: Harness;
  afterAll(() => h?.close());

  it('dedups, decays the importance of idle memories, and flags those that reach the floor as stale', async () => {
    h = await createHarness();
    const p = await h.project();
    const day = 86_400_000;
    const old = new Date(Date.now() - 60 * day);
    const [idle, faded, fresh] = await seed(h, p.projectId, [
      { content: 'Idle for two months', vector: [1, 0, 0], importance: 6, validFrom: old },
      { content: 'Almost forgotten', vector: [0, 1, 0], importance: 1.05, validFrom: old },
      { content: 'Said yesterday', vector: [0, 0, 1], importance: 6, validFrom: new Date(Date.now() - day) },
      { content: 'Yesterday, said', vector: [0, 0.01, 1], importance: 2, validFrom: new Date(Date.now() - day) },
    ]);
    const res = await h.call('POST', p.projectId, '/admin/memory/consolidate', { body: { windowDays: 30, threshold: 0.99 } });
    expect(res.statusCode).toBe(200);
    expect(res.json()).toMatchObject({ dedup: { groups: 1, superseded: 1 }, decayed: 2, flaggedStale: 1 });
    const get = async (id: string) => (await h.call('GET', p.projectId, `/admin/memory/${id}`)).json();
    expect((await get(idle!)).importance).toBeCloseTo(5.4, 5);
    expect(await get(faded!)).toMatchObject({ importance: 1, reviewReason: 'stale' });
    expect((await get(fresh!)).importance).toBe(6);
    const review = (await h.call('GET', p.projectId, '/admin/memory/review')).json();
    expect(review.map((m: { id: string }) => m.id)).toEqual([faded]);
  });

  it("tolerates the Python client's body and narrows to a subject", async () => {
    const p = await h.project();
    await seed(h, p.projectId, [{ content: 'Someone else', vector: [1, 0, 0], importance: 6, validFrom: new Date('2020-01-01') }]);
    const res = await h.call('POST', p.projectId, '/admin/memory/consolidate', { body: { subject: { kind: 'user', externalId: 'u1' }, windowDays: 7 } });
    expect(res.statusCode).toBe(200);
    expect(res.json()).toMatchObject({ decayed: 0 });
  });

  it('consolidates every project from the nightly job', async () => {
    const p = await h.project();
    const [idle] = await seed(h, p.projectId, [{ content: 'Idle in a third project', vector: [1, 0, 0], importance: 8, validFrom: new Date('2020-01-01') }]);
    const result = await h.apis.memory.consolidateAll();
    expect(result.projects).toBe(3);
    await expect
      .poll(async () => (await h.call('GET', p.projectId, `/admin/memory/${idle}`)).json().importance, { timeout: 60_000, interval: 200 })
      .toBeCloseTo(7.2, 5);
  });
});
