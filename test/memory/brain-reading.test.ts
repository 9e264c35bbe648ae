// Reading a brain: POST /memory/search and /admin/memory/search with brainId search the brain's
// memories (metadata.brainId) alone; another project reads a published PUBLIC or UNLISTED brain
// (read-only), never a private or unpublished one, nor the owner's other memories; POST
// /memory/context with brainId answers from the brain.
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { createHarness, type Harness } from '../helpers/harness.js';

type Project = { projectId: string; apiKey: string };

describe('reading a brain', () => {
  let h: Harness;
  let owner: Project;
  let reader: Project;
  const brains: Record<string, string> = {};
  const inBrain: string[] = [];
  let outside: string;

  const remember = async (content: string, brainId?: string) => {
    const res = await h.call('POST', owner.projectId, '/admin/memory', { body: { content, type: 'fact', ...(brainId ? { metadata: { brainId } } : {}) } });
    expect(res.statusCode, res.body).toBe(201);
    return res.json().id as string;
  };
  const brain = async (externalId: string, patch: Record<string, unknown>) => {
    const created = (await h.call('POST', owner.projectId, '/brains', { body: { externalId, name: `Brain ${externalId}` } })).json();
    if (Object.keys(patch).length > 0) expect((await h.call('PATCH', owner.projectId, `/brains/${created.id}`, { body: patch })).statusCode).toBe(200);
    return created.id as string;
  };
  const search = (p: Project, body: Record<string, unknown>, url = '/memory/search') => h.call('POST', p.projectId, url, { body });

  beforeAll(async () => {
    h = await createHarness();
    owner = await h.project();
    reader = await h.project();
    brains.public = await brain('tax-rules', { status: 'PUBLISHED', rightsAttested: true, visibility: 'PUBLIC' });
    brains.unlisted = await brain('unlisted', { status: 'PUBLISHED', rightsAttested: true, visibility: 'UNLISTED' });
    brains.private = await brain('private', { status: 'PUBLISHED', rightsAttested: true, visibility: 'PRIVATE' });
    brains.draft = await brain('draft', { visibility: 'PUBLIC' });
    inBrain.push(await remember('The VAT rate on books in Portugal is 6 percent', brains.public));
    inBrain.push(await remember('The VAT rate on restaurant meals in Portugal is 13 percent', brains.public));
    outside = await remember('The VAT rate on books in our internal price list is 6 percent');
    for (const key of ['unlisted', 'private', 'draft']) await remember(`The VAT rate on books is kept in the ${key} brain`, brains[key]);
    // A save may answer before its embedding (the encoder busy): rank only once every memory has
    // one, or a search ranks an embedded memory against one that is not yet (seen in CI).
    await vi.waitFor(
      async () =>
        expect((await h.db.query<{ n: number }>('SELECT count(*)::int AS n FROM memories WHERE project_id = $1 AND embedding IS NULL', [owner.projectId])).rows[0]!.n).toBe(0),
      { timeout: 60_000, interval: 50 },
    );
  });
  afterAll(async () => h?.close());

  it("searches the brain's memories alone, for the owner and for another project", async () => {
    for (const [p, url] of [
      [owner, '/memory/search'],
      [reader, '/memory/search'],
      [reader, '/admin/memory/search'],
    ] as const) {
      const res = await search(p, { query: 'VAT rate on books', brainId: brains.public }, url);
      expect(res.statusCode, res.body).toBe(200);
      const ids = res.json().map((x: { id: string }) => x.id);
      expect(ids[0]).toBe(inBrain[0]);
      expect(new Set(ids)).toEqual(new Set(inBrain));
      expect(res.json().every((x: { metadata: { brainId?: string } }) => x.metadata.brainId === brains.public)).toBe(true);
    }
    // Without brainId each project searches its own memories: the reader holds none of these.
    expect((await search(reader, { query: 'VAT rate on books' })).json()).toEqual([]);
    expect((await search(owner, { query: 'VAT rate on books' })).json().map((x: { id: string }) => x.id)).toContain(outside);
  });

  it('lets another project read a published UNLISTED brain, and never a private or unpublished one', async () => {
    const unlisted = await search(reader, { query: 'VAT rate on books', brainId: brains.unlisted });
    expect(unlisted.statusCode).toBe(200);
    expect(unlisted.json()).toHaveLength(1);
    for (const key of ['private', 'draft']) {
      const refused = await search(reader, { query: 'VAT rate on books', brainId: brains[key] });
      expect(refused.statusCode, key).toBe(404);
      expect(refused.json().code).toBe('NOT_FOUND');
      // The owner reads its own, whatever their state.
      expect((await search(owner, { query: 'VAT rate on books', brainId: brains[key] })).json()).toHaveLength(1);
    }
    expect((await search(reader, { query: 'VAT', brainId: 'brn_nothing_here' })).statusCode).toBe(404);
    // Archived: no longer readable by others.
    expect((await h.call('PATCH', owner.projectId, `/brains/${brains.unlisted}`, { body: { status: 'ARCHIVED' } })).statusCode).toBe(200);
    expect((await search(reader, { query: 'VAT rate on books', brainId: brains.unlisted })).statusCode).toBe(404);
    // The reader's hits are the owner's memories: it reads them through the brain, not by id.
    expect((await h.call('GET', reader.projectId, `/admin/memory/${inBrain[0]}`)).statusCode).toBe(404);
  });

  it('answers a conversation context from the brain', async () => {
    const res = await h.call('POST', reader.projectId, '/memory/context', { body: { turns: [{ role: 'user', content: 'What VAT applies to restaurant meals?' }], brainId: brains.public } });
    expect(res.statusCode, res.body).toBe(200);
    expect(res.json()).toMatchObject({ subject: null, reason: null });
    expect(res.json().context).toContain('Brain tax-rules');
    expect(res.json().context).toContain('13 percent');
    expect(res.json().memoryIds[0]).toBe(inBrain[1]);
    expect(res.json().memoryIds).not.toContain(outside);
    const refused = await h.call('POST', reader.projectId, '/memory/context', { body: { conversation: 'user: books?', brainId: brains.private } });
    expect(refused.statusCode).toBe(404);
  });

  it('refuses a brainId that is not a string', async () => {
    const res = await search(reader, { query: 'VAT', brainId: 7 });
    expect(res.statusCode).toBe(400);
    expect(res.json().code).toBe('VALIDATION_ERROR');
  });
});
