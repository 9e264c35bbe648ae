// The brain registry through the API: create (a draft, defaults, conflicts), read, change,
// publish only with the rights attested, archive, delete; pages newest first with cursors both
// ways; validation, permission and isolation between projects.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createHarness, type Harness } from '../helpers/harness.js';

type Project = { projectId: string; apiKey: string };

describe('brains', () => {
  let h: Harness;
  let a: Project;
  let b: Project;
  const create = async (p: Project, body: Record<string, unknown>, status = 201) => {
    const res = await h.call('POST', p.projectId, '/brains', { body });
    expect(res.statusCode, res.body).toBe(status);
    return res.json();
  };

  beforeAll(async () => {
    h = await createHarness();
    a = await h.project();
    b = await h.project();
  });
  afterAll(async () => h?.close());

  it('creates a draft with the defaults, reads it back, and refuses a second brain with the same externalId', async () => {
    const brain = await create(a, { externalId: 'sec-filings', name: 'SEC filings', card: { provenance: [{ source: 'EDGAR', license: 'public domain' }], coverage: { facts: 1200 } } });
    expect(brain).toMatchObject({
      projectId: a.projectId,
      externalId: 'sec-filings',
      name: 'SEC filings',
      domain: null,
      brainInterface: 'v1',
      version: '1.0.0',
      visibility: 'PRIVATE',
      status: 'DRAFT',
      rightsAttested: false,
      card: { provenance: [{ source: 'EDGAR', license: 'public domain' }], coverage: { facts: 1200 } },
    });
    expect(brain.id).toMatch(/^brn_/);
    expect((await h.call('GET', a.projectId, `/brains/${brain.id}`)).json()).toEqual(brain);
    const twin = await create(a, { externalId: 'sec-filings', name: 'Again' }, 409);
    expect(twin.code).toBe('CONFLICT');
    // Another project may use the same slug.
    expect((await create(b, { externalId: 'sec-filings', name: 'B filings' })).projectId).toBe(b.projectId);
  });

  it('changes, publishes only with the rights attested, and archives', async () => {
    const brain = await create(a, { externalId: 'recipes', name: 'Recipes', visibility: 'PUBLIC' });
    const patch = (body: Record<string, unknown>) => h.call('PATCH', a.projectId, `/brains/${brain.id}`, { body });
    const refused = await patch({ status: 'PUBLISHED' });
    expect(refused.statusCode).toBe(400);
    expect(refused.json().code).toBe('VALIDATION_ERROR');
    expect(refused.body).toContain('rightsAttested');
    expect((await h.call('GET', a.projectId, `/brains/${brain.id}`)).json().status).toBe('DRAFT');
    const published = await patch({ status: 'PUBLISHED', rightsAttested: true, version: '1.1.0', domain: 'cooking', card: { evaluation: { benchmark: 'recipe-qa', score: 0.82 } } });
    expect(published.statusCode, published.body).toBe(200);
    expect(published.json()).toMatchObject({ status: 'PUBLISHED', rightsAttested: true, version: '1.1.0', domain: 'cooking', card: { evaluation: { benchmark: 'recipe-qa', score: 0.82 } } });
    expect(Date.parse(published.json().updated)).toBeGreaterThanOrEqual(Date.parse(brain.updated));
    // Withdrawing the attestation of a published brain is refused; archiving it is not.
    expect((await patch({ rightsAttested: false })).statusCode).toBe(400);
    expect((await patch({ status: 'ARCHIVED', card: null, domain: null })).json()).toMatchObject({ status: 'ARCHIVED', card: null, domain: null });
  });

  it('pages newest first, with next and previous cursors', async () => {
    const p = await h.project();
    const ids: string[] = [];
    for (let i = 0; i < 5; i++) ids.push((await create(p, { externalId: `b${i}`, name: `Brain ${i}` })).id);
    const newestFirst = [...ids].reverse();
    const page = async (query: string) => {
      const res = await h.call('GET', p.projectId, `/brains${query}`);
      expect(res.statusCode, res.body).toBe(200);
      return res.json();
    };
    const first = await page('?limit=2');
    expect(first.data.map((x: { id: string }) => x.id)).toEqual(newestFirst.slice(0, 2));
    expect(first.previous).toBeNull();
    const second = await page(`?limit=2&cursor=${first.next}`);
    expect(second.data.map((x: { id: string }) => x.id)).toEqual(newestFirst.slice(2, 4));
    const third = await page(`?limit=2&cursor=${second.next}`);
    expect(third.data.map((x: { id: string }) => x.id)).toEqual(newestFirst.slice(4));
    expect(third.next).toBeNull();
    const back = await page(`?limit=2&cursor=${third.previous}`);
    expect(back.data.map((x: { id: string }) => x.id)).toEqual(newestFirst.slice(2, 4));
    expect((await page(`?limit=2&cursor=${back.previous}`)).data.map((x: { id: string }) => x.id)).toEqual(newestFirst.slice(0, 2));
    expect((await page('')).data).toHaveLength(5);
    for (const query of ['?cursor=not-a-cursor', '?limit=0', '?limit=101', '?order=asc']) {
      const res = await h.call('GET', p.projectId, `/brains${query}`);
      expect(res.statusCode, query).toBe(400);
      expect(res.json().code).toBe('VALIDATION_ERROR');
    }
  });

  it('deletes a brain', async () => {
    const brain = await create(a, { externalId: 'scratch', name: 'Scratch' });
    expect((await h.call('DELETE', a.projectId, `/brains/${brain.id}`)).statusCode).toBe(204);
    expect((await h.call('GET', a.projectId, `/brains/${brain.id}`)).statusCode).toBe(404);
    expect((await h.call('DELETE', a.projectId, `/brains/${brain.id}`)).statusCode).toBe(404);
  });

  it('refuses bad input', async () => {
    for (const body of [{ name: 'No slug' }, { externalId: 'Bad Slug', name: 'x' }, { externalId: 'ok', name: '' }, { externalId: 'ok', name: 'x', visibility: 'SECRET' }, { externalId: 'ok', name: 'x', colour: 'red' }, { externalId: 'ok', name: 'x', card: { price: 1 } }]) {
      const res = await h.call('POST', a.projectId, '/brains', { body });
      expect(res.statusCode, JSON.stringify(body)).toBe(400);
      expect(res.json().code).toBe('VALIDATION_ERROR');
    }
    const brain = await create(a, { externalId: 'checked', name: 'Checked' });
    for (const body of [{}, { status: 'LIVE' }, { externalId: 'renamed' }]) {
      expect((await h.call('PATCH', a.projectId, `/brains/${brain.id}`, { body })).statusCode, JSON.stringify(body)).toBe(400);
    }
  });

  it('needs WRITE_MEMORY to change and READ_MEMORY to read, and keeps projects apart', async () => {
    const brain = await create(a, { externalId: 'guarded', name: 'Guarded' });
    const reader = await h.key(a.projectId, ['READ_MEMORY']);
    expect((await h.call('POST', a.projectId, '/brains', { apiKey: reader, body: { externalId: 'x', name: 'x' } })).statusCode).toBe(403);
    expect((await h.call('PATCH', a.projectId, `/brains/${brain.id}`, { apiKey: reader, body: { name: 'y' } })).statusCode).toBe(403);
    expect((await h.call('DELETE', a.projectId, `/brains/${brain.id}`, { apiKey: reader })).statusCode).toBe(403);
    expect((await h.call('GET', a.projectId, `/brains/${brain.id}`, { apiKey: reader })).statusCode).toBe(200);
    const writer = await h.key(a.projectId, ['WRITE_MEMORY']);
    expect((await h.call('GET', a.projectId, '/brains', { apiKey: writer })).statusCode).toBe(403);
    // B's key never sees, changes or deletes A's brains.
    expect((await h.call('GET', b.projectId, `/brains/${brain.id}`)).statusCode).toBe(404);
    expect((await h.call('PATCH', b.projectId, `/brains/${brain.id}`, { body: { name: 'taken' } })).statusCode).toBe(404);
    expect((await h.call('DELETE', b.projectId, `/brains/${brain.id}`)).statusCode).toBe(404);
    expect((await h.call('GET', a.projectId, `/brains/${brain.id}`, { apiKey: b.apiKey })).statusCode).toBe(404);
    const listed = (await h.call('GET', b.projectId, '/brains')).json().data.map((x: { externalId: string }) => x.externalId);
    expect(listed).toEqual(['sec-filings']);
    expect((await h.call('GET', a.projectId, `/brains/${brain.id}`)).json().name).toBe('Guarded');
  });
});
