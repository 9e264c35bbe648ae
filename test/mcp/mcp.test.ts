// The MCP endpoint through the SDK's real client over HTTP.
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { AuditRecord, AuditResult } from '../../src/tenancy/index.js';
import { createHarness, type Harness } from '../helpers/harness.js';
import { connectMcp, listeningBase } from '../helpers/mcp-client.js';

/** The start of an audited call's record, completed by its outcome (as the audit log keeps it). */
type Recorded = AuditRecord & Partial<AuditResult>;

type Project = { projectId: string; apiKey: string };
type ToolResult = { isError?: boolean; content: { type: string; text: string }[] };

describe('MCP endpoint', () => {
  let h: Harness;
  let base: string;
  let a: Project;
  let b: Project;
  const clients: Client[] = [];

  async function connect(projectId: string, apiKey: string): Promise<Client> {
    const client = await connectMcp(h.app, { projectId, apiKey });
    clients.push(client);
    return client;
  }

  async function call(client: Client, name: string, args: Record<string, unknown>): Promise<{ isError: boolean; body: any }> {
    const result = (await client.callTool({ name, arguments: args })) as ToolResult;
    return { isError: result.isError === true, body: JSON.parse(result.content[0]!.text) };
  }

  beforeAll(async () => {
    h = await createHarness();
    base = await listeningBase(h.app);
    a = await h.project();
    b = await h.project();
  });
  afterAll(async () => {
    await Promise.all(clients.map((c) => c.close()));
    await h?.close();
  });

  it('lists the memory tools', async () => {
    const client = await connect(a.projectId, a.apiKey);
    const { tools } = await client.listTools();
    expect(tools.map((t) => t.name)).toEqual(expect.arrayContaining(['memory_observe', 'memory_save', 'memory_search', 'memory_list', 'memory_recall', 'memory_context', 'memory_feedback']));
  });

  it('saves, lists, recalls and searches through the same services as REST', async () => {
    const client = await connect(a.projectId, a.apiKey);
    const saved = await call(client, 'memory_save', { content: 'Prefers tea over coffee', type: 'preference', scope: 'user', userId: 'u7' });
    expect(saved.isError).toBe(false);
    expect(saved.body).toMatchObject({ content: 'Prefers tea over coffee', type: 'preference', scope: 'user', created: true, subject: { kind: 'user', externalId: 'u7' } });

    const viaRest = await h.call('GET', a.projectId, `/admin/memory/${saved.body.id}`);
    expect(viaRest.json().content).toBe('Prefers tea over coffee');

    const listed = await call(client, 'memory_list', { scope: 'user' });
    expect(listed.body.map((m: { id: string }) => m.id)).toContain(saved.body.id);

    const recalled = await call(client, 'memory_recall', { id: saved.body.id });
    expect(recalled.body.lastAccessedAt).not.toBeNull();

    const found = await call(client, 'memory_search', { query: 'hot drinks tea', scope: 'user' });
    expect(found.body[0]).toMatchObject({ id: saved.body.id });
    expect(typeof found.body[0].score).toBe('number');

    // Within a subject, and with the time the query names read against referenceTime.
    expect((await call(client, 'memory_save', { content: 'Drank green tea in Kyoto', type: 'event', scope: 'user', userId: 'u8', validFrom: '2026-04-10T00:00:00Z' })).isError).toBe(false);
    const mine = await call(client, 'memory_search', { query: 'tea in April', subject: { kind: 'user', externalId: 'u8' }, referenceTime: '2026-11-01T00:00:00Z' });
    expect(mine.body.map((x: { content: string }) => x.content)).toEqual(['Drank green tea in Kyoto']);
    expect(mine.body[0].scoreParts.time).toBeGreaterThan(0);
    expect(((await client.callTool({ name: 'memory_search', arguments: { query: 'tea', referenceTime: 'soon' } })) as ToolResult).isError).toBe(true);

    const replay = await call(client, 'memory_save', { content: 'Prefers tea over coffee', kind: 'preference', scope: 'user', userId: 'u7' });
    expect(replay.body).toMatchObject({ id: saved.body.id, created: false });
  });

  it('observes through memory_observe: text or the legacy content, filler saves nothing, repeats save nothing new', async () => {
    const client = await connect(a.projectId, a.apiKey);
    const first = await call(client, 'memory_observe', { text: 'I am allergic to peanuts. ok thanks', userId: 'u-mcp' });
    expect(first.isError).toBe(false);
    expect(first.body.saved.map((m: { content: string }) => m.content)).toEqual(['I am allergic to peanuts.']);
    expect(first.body.candidateCount).toBeGreaterThanOrEqual(2);
    const repeat = await call(client, 'memory_observe', { content: 'I am allergic to peanuts.', userId: 'u-mcp' });
    expect(repeat.body.saved).toEqual([]);
    // The conversation context of the observed user, as the REST route answers it.
    const context = await call(client, 'memory_context', { turns: [{ role: 'user', content: 'Anything I cannot eat?' }], userId: 'u-mcp', tokenBudget: 300 });
    expect(context.isError).toBe(false);
    expect(context.body).toMatchObject({ subject: { kind: 'user', externalId: 'u-mcp', origin: 'user' }, tokenBudget: 300 });
    expect(context.body.context).toContain('peanuts');
    const filler = await call(client, 'memory_observe', { text: 'lol', role: 'user' });
    expect(filler.body.saved).toEqual([]);
    const missing = await call(client, 'memory_observe', { role: 'user' });
    expect(missing).toMatchObject({ isError: true, body: { code: 'VALIDATION_ERROR' } });
  });

  it('rates a memory: three negative ratings flag it for review, a repeated response counts once', async () => {
    const client = await connect(a.projectId, a.apiKey);
    const saved = await call(client, 'memory_save', { content: 'The customer prefers phone calls', type: 'preference', scope: 'project' });
    const memoryId = saved.body.id as string;
    const rate = (responseId: string) => call(client, 'memory_feedback', { memoryId, rating: 'negative', responseId });
    expect(await rate('r1')).toEqual({ isError: false, body: { counted: true } });
    expect(await rate('r2')).toEqual({ isError: false, body: { counted: true } });
    // A retry of the same response counts once.
    expect(await rate('r2')).toEqual({ isError: false, body: { counted: false } });
    expect(await rate('r3')).toEqual({ isError: false, body: { counted: true } });
    const rest = (await h.call('GET', a.projectId, `/admin/memory/${memoryId}`)).json();
    expect(rest).toMatchObject({ negativeRatingCount: 3, reviewReason: 'flagged' });
    expect((await h.call('GET', a.projectId, `/admin/memory/${memoryId}/feedback`)).json()).toHaveLength(3);
    const missing = await call(client, 'memory_feedback', { memoryId: 'mem_not_here', rating: 'positive' });
    expect(missing).toMatchObject({ isError: true, body: { code: 'NOT_FOUND' } });
    // Project B's client cannot rate A's memory.
    const other = await connect(b.projectId, b.apiKey);
    expect(await call(other, 'memory_feedback', { memoryId, rating: 'negative' })).toMatchObject({ isError: true, body: { code: 'NOT_FOUND' } });
    const reader = await connect(a.projectId, await h.key(a.projectId, ['READ_MEMORY']));
    expect((await call(reader, 'memory_feedback', { memoryId, rating: 'positive' })).isError).toBe(true);
  });

  it('answers tool errors with our codes, not transport failures', async () => {
    const client = await connect(a.projectId, a.apiKey);
    const missing = await call(client, 'memory_recall', { id: 'mem_does_not_exist' });
    expect(missing).toMatchObject({ isError: true, body: { code: 'NOT_FOUND', statusCode: 404 } });
    const noType = await call(client, 'memory_save', { content: 'x', scope: 'user' });
    expect(noType).toMatchObject({ isError: true, body: { code: 'VALIDATION_ERROR' } });
    const badScope = (await client.callTool({ name: 'memory_save', arguments: { content: 'x', type: 'fact', scope: 'moon' } })) as ToolResult;
    expect(badScope.isError).toBe(true);
  });

  it('bounds a subject as REST does: kind up to 100 characters, externalId up to 256', async () => {
    const client = await connect(a.projectId, a.apiKey);
    // Refused by the tool's argument schema, which the SDK reports as a tool error of its own words.
    const save = async (subject: { kind: string; externalId: string }) =>
      (await client.callTool({ name: 'memory_save', arguments: { content: `Bounded subject ${subject.kind.length}/${subject.externalId.length}`, type: 'fact', scope: 'user', subject } })) as ToolResult;
    expect((await save({ kind: 'k'.repeat(100), externalId: 'e'.repeat(256) })).isError).toBeFalsy();
    const longKind = await save({ kind: 'k'.repeat(101), externalId: 'e' });
    const longId = await save({ kind: 'user', externalId: 'e'.repeat(257) });
    expect([longKind.isError, JSON.stringify(longKind.content)]).toEqual([true, expect.stringMatching(/kind/)]);
    expect([longId.isError, JSON.stringify(longId.content)]).toEqual([true, expect.stringMatching(/externalId/)]);
    const rest = await h.call('POST', a.projectId, '/admin/memory', { body: { content: 'REST bound', subject: { kind: 'k'.repeat(101), externalId: 'e' } } });
    expect(rest.statusCode).toBe(400);
  });

  it('refuses writes to a READ_MEMORY key as a tool error, and lets it read', async () => {
    const reader = await h.key(a.projectId, ['READ_MEMORY']);
    const client = await connect(a.projectId, reader);
    const denied = await call(client, 'memory_save', { content: 'should not land', type: 'fact', scope: 'project' });
    expect(denied).toMatchObject({ isError: true, body: { code: 'AUTHORIZATION_ERROR' } });
    expect((await call(client, 'memory_list', {})).isError).toBe(false);
  });

  it("keeps projects apart: B's key never sees A's memories, and A's key on B's endpoint is 404", async () => {
    const clientA = await connect(a.projectId, a.apiKey);
    const secret = await call(clientA, 'memory_save', { content: 'A private fact about budgets', type: 'fact', scope: 'project' });
    const clientB = await connect(b.projectId, b.apiKey);
    expect((await call(clientB, 'memory_recall', { id: secret.body.id })).body.code).toBe('NOT_FOUND');
    const searched = await call(clientB, 'memory_search', { query: 'budgets' });
    expect(searched.body).toEqual([]);
    await expect(connect(b.projectId, a.apiKey)).rejects.toThrow();
    const raw = await fetch(`${base}/api/v1/projects/${b.projectId}/mcp-server`, {
      method: 'POST',
      headers: { authorization: `Bearer ${a.apiKey}`, 'content-type': 'application/json', accept: 'application/json, text/event-stream' },
      body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/list' }),
    });
    expect(raw.status).toBe(404);
  });

  it('finds what memory_save stored by its meaning in the very next memory_search', async () => {
    const client = await connect(a.projectId, a.apiKey);
    const saved = await call(client, 'memory_save', { content: 'Favourite colour is teal', type: 'preference', scope: 'user', userId: 'rw1' });
    expect(saved.body).toMatchObject({ created: true, hasEmbedding: true });
    const found = await call(client, 'memory_search', { query: 'what shade do they like best', userId: 'rw1', limit: 5 });
    expect(found.body.map((hit: { id: string }) => hit.id)).toContain(saved.body.id);
  });

  it('audits each tool call that touches subject data, as the REST route would', async () => {
    // Through the service, so that only the tool calls below are audited.
    const tea = (await h.apis.memory.save(a.projectId, { content: 'Drinks green tea every morning', type: 'preference' })).memory;
    const records: Recorded[] = [];
    h.apis.tenancy.onAudit((record) => {
      // The start of the call's record, completed by its outcome (as the audit log keeps it).
      const entry: Recorded = { ...record };
      records.push(entry);
      return { durable: Promise.resolve(), end: (result) => Object.assign(entry, result) };
    });
    const client = await connect(a.projectId, a.apiKey);
    await call(client, 'memory_search', { query: 'tea' });
    await call(client, 'memory_recall', { id: 'mem_missing' });
    await expect.poll(() => records.filter((r) => r.projectId === a.projectId).map((r) => `${r.method} ${r.route} ${r.eventType} ${r.statusCode}`), { timeout: 60_000 }).toEqual([
      'MCP memory_search read.search 200',
      'MCP memory_recall read.memory 404',
    ]);
    // The tool's arguments and answer fill the record as a route's do.
    const search = records.find((r) => r.projectId === a.projectId && r.route === 'memory_search')!;
    expect(search).toMatchObject({ query: 'tea', keyName: null, metadata: { method: 'MCP', statusCode: 200 } });
    expect(search.memoryIds).toContain(tea.id);
    expect(search.resultCount).toBe(search.memoryIds?.length);
  });

  it('requires a key', async () => {
    const res = await fetch(`${base}/api/v1/projects/${a.projectId}/mcp-server`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', accept: 'application/json, text/event-stream' },
      body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/list' }),
    });
    expect(res.status).toBe(401);
  });
});
