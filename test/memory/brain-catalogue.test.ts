// Brains beyond their project: the catalogue of published public brains (GET /brain-catalog), a
// brain's own MCP endpoint (/brains/{brainId}/mcp-server/http, driven by the SDK's real MCP client),
// and metadata.brainId on writes naming a brain of the writer's own project only.
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createHarness, type Harness } from '../helpers/harness.js';
import { listeningBase } from '../helpers/mcp-client.js';

type Project = { projectId: string; apiKey: string };

describe('brains beyond their project', () => {
  let h: Harness;
  let owner: Project;
  let reader: Project;
  const brains: Record<string, string> = {};
  let inBrain: string;

  const brain = async (p: Project, externalId: string, patch: Record<string, unknown>, domain = 'tax') => {
    const created = await h.call('POST', p.projectId, '/brains', { body: { externalId, name: `Brain ${externalId}`, domain } });
    expect(created.statusCode, created.body).toBe(201);
    if (Object.keys(patch).length > 0) expect((await h.call('PATCH', p.projectId, `/brains/${created.json().id}`, { body: patch })).statusCode).toBe(200);
    return created.json().id as string;
  };
  const published = { status: 'PUBLISHED', rightsAttested: true };

  beforeAll(async () => {
    h = await createHarness();
    owner = await h.project();
    reader = await h.project();
    brains.public = await brain(owner, 'vat-pt', { ...published, visibility: 'PUBLIC', card: { provenance: [{ source: 'Portal das Finanças', license: 'public-domain' }] } });
    brains.unlisted = await brain(owner, 'vat-unlisted', { ...published, visibility: 'UNLISTED' });
    brains.private = await brain(owner, 'vat-private', { ...published, visibility: 'PRIVATE' });
    brains.draft = await brain(owner, 'vat-draft', { visibility: 'PUBLIC' });
    brains.medicine = await brain(reader, 'drug-labels', { ...published, visibility: 'PUBLIC' }, 'Medicine');
    const saved = await h.call('POST', owner.projectId, '/admin/memory', { body: { content: 'The VAT rate on books in Portugal is 6 percent', metadata: { brainId: brains.public } } });
    expect(saved.statusCode, saved.body).toBe(201);
    inBrain = saved.json().id;
    await h.call('POST', owner.projectId, '/admin/memory', { body: { content: 'Our internal VAT note: books at 6 percent pending review' } });
  });
  afterAll(async () => h?.close());

  it('lists every project\'s published public brains, newest first, with their card and not their owner', async () => {
    const res = await h.call('GET', reader.projectId, '/brain-catalog');
    expect(res.statusCode, res.body).toBe(200);
    const page = res.json();
    const ids = page.data.map((b: { id: string }) => b.id);
    // Other test files share the database: only this file's brains are checked, in their order.
    const mine = ids.filter((id: string) => Object.values(brains).includes(id));
    expect(mine).toEqual([brains.medicine, brains.public]);
    const entry = page.data.find((b: { id: string }) => b.id === brains.public);
    expect(entry).toMatchObject({ externalId: 'vat-pt', status: 'PUBLISHED', visibility: 'PUBLIC', card: { provenance: [{ source: 'Portal das Finanças' }] } });
    expect(entry.projectId).toBeUndefined();
    expect(entry.rightsAttested).toBeUndefined();
    expect(JSON.stringify(page)).not.toContain(owner.projectId);

    // By domain, case-insensitively; paged with cursors.
    const medicine = (await h.call('GET', reader.projectId, '/brain-catalog?domain=medicine&limit=100')).json();
    expect(medicine.data.map((b: { id: string }) => b.id)).toContain(brains.medicine);
    expect(medicine.data.every((b: { domain: string }) => b.domain.toLowerCase() === 'medicine')).toBe(true);
    const first = (await h.call('GET', owner.projectId, '/brain-catalog?limit=1')).json();
    expect(first.data).toHaveLength(1);
    expect(first.previous).toBeNull();
    const second = (await h.call('GET', owner.projectId, `/brain-catalog?limit=1&cursor=${first.next}`)).json();
    expect(second.data[0].id < first.data[0].id).toBe(true);
    expect((await h.call('GET', owner.projectId, `/brain-catalog?limit=1&cursor=${second.previous}`)).json().data).toEqual(first.data);

    expect((await h.call('GET', reader.projectId, '/brain-catalog?cursor=nonsense')).statusCode).toBe(400);
    expect((await h.call('GET', reader.projectId, '/brain-catalog?limit=0')).statusCode).toBe(400);
    expect((await h.call('GET', reader.projectId, '/brain-catalog', { apiKey: 'lt_not_a_key_at_all_000000000000' })).statusCode).toBe(401);
  });

  const connect = async (p: Project, brainId: string) => {
    const client = new Client({ name: 'brain-consumer', version: '1.0.0' });
    await client.connect(
      new StreamableHTTPClientTransport(new URL(`${await listeningBase(h.app)}/api/v1/projects/${p.projectId}/brains/${brainId}/mcp-server/http`), {
        requestInit: { headers: { Authorization: `Bearer ${p.apiKey}` } },
      }),
    );
    return client;
  };
  const text = (result: unknown) => JSON.parse(((result as { content: { text: string }[] }).content[0]!).text);

  it("serves a readable brain over MCP: its card, and search and context over its memories alone, read-only", async () => {
    for (const p of [reader, owner]) {
      const client = await connect(p, brains.public!);
      try {
        const tools = (await client.listTools()).tools.map((t) => t.name).sort();
        expect(tools).toEqual(['brain_info', 'memory_context', 'memory_search']);
        expect(text(await client.callTool({ name: 'brain_info', arguments: {} }))).toMatchObject({ id: brains.public, externalId: 'vat-pt', status: 'PUBLISHED' });
        const hits = text(await client.callTool({ name: 'memory_search', arguments: { query: 'VAT rate on books' } }));
        expect(hits.map((x: { id: string }) => x.id)).toEqual([inBrain]);
        const context = text(await client.callTool({ name: 'memory_context', arguments: { turns: [{ role: 'user', content: 'What VAT applies to books?' }] } }));
        expect(context.memoryIds).toEqual([inBrain]);
        expect(context.context).toContain('6 percent');
        // Nothing that writes.
        const save = await client.callTool({ name: 'memory_save', arguments: { content: 'x' } });
        expect(save.isError).toBe(true);
      } finally {
        await client.close();
      }
    }
    // Invalid arguments are an error result, not a crash.
    const client = await connect(reader, brains.unlisted!);
    try {
      const invalid = await client.callTool({ name: 'memory_search', arguments: { query: '' } });
      expect(invalid.isError).toBe(true);
      expect(JSON.stringify(invalid.content)).toMatch(/query/);
    } finally {
      await client.close();
    }
  });

  it("answers 404 for a brain the caller may not read, and needs a key; the project's own draft serves its owner", async () => {
    const base = await listeningBase(h.app);
    const post = (p: Project, brainId: string, apiKey = p.apiKey) =>
      fetch(`${base}/api/v1/projects/${p.projectId}/brains/${brainId}/mcp-server/http`, {
        method: 'POST',
        headers: { authorization: `Bearer ${apiKey}`, 'content-type': 'application/json', accept: 'application/json, text/event-stream' },
        body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/list' }),
      });
    for (const key of ['private', 'draft']) {
      const res = await post(reader, brains[key]!);
      expect(res.status, key).toBe(404);
      expect((await res.json()).code).toBe('NOT_FOUND');
    }
    expect((await post(reader, 'brn_none_such')).status).toBe(404);
    expect((await post(owner, brains.draft!)).status).toBe(200);
    // The reader's key on the owner's path: as if the project did not exist.
    expect((await post({ projectId: owner.projectId, apiKey: reader.apiKey }, brains.public!)).status).toBe(404);
    expect((await post(reader, brains.public!, 'lt_not_a_key_at_all_000000000000')).status).toBe(401);
    const get = await fetch(`${base}/api/v1/projects/${reader.projectId}/brains/${brains.public}/mcp-server/http`, { headers: { authorization: `Bearer ${reader.apiKey}` } });
    expect(get.status).toBe(405);
  });

  it("refuses a write whose metadata.brainId names no brain of the writer's project", async () => {
    // Another project's brain, however public, is not the writer's to fill.
    const foreign = await h.call('POST', reader.projectId, '/admin/memory', { body: { content: 'I claim to be in their brain', metadata: { brainId: brains.public } } });
    expect(foreign.statusCode).toBe(400);
    expect(foreign.json()).toMatchObject({ code: 'VALIDATION_ERROR', params: { errors: [{ path: 'body.metadata.brainId' }] } });
    expect(foreign.json().message).toContain(brains.public);
    expect((await h.call('POST', owner.projectId, '/admin/memory', { body: { content: 'No such brain', metadata: { brainId: 'brn_missing' } } })).statusCode).toBe(400);
    expect((await h.call('POST', owner.projectId, '/admin/memory', { body: { content: 'A number for a brain', metadata: { brainId: 7 } } })).statusCode).toBe(400);
    // Nothing was written.
    const listed = (await h.call('GET', reader.projectId, '/admin/memory?limit=500')).json();
    expect(listed.some((m: { content: string }) => m.content === 'I claim to be in their brain')).toBe(false);
    // An edit is held to the same rule; its own brain is fine.
    const edited = await h.call('PATCH', owner.projectId, `/admin/memory/${inBrain}`, { body: { metadata: { brainId: brains.medicine } } });
    expect(edited.statusCode).toBe(400);
    const mine = await h.call('PATCH', owner.projectId, `/admin/memory/${inBrain}`, { body: { metadata: { brainId: brains.unlisted } } });
    expect(mine.statusCode, mine.body).toBe(200);
    expect((await h.call('PATCH', owner.projectId, `/admin/memory/${inBrain}`, { body: { metadata: { brainId: brains.public } } })).statusCode).toBe(200);
  });
});
