// The findings of the hostile-body run, through real HTTP: each answered 500 before the input guard;
// each must answer 400 naming the field, store nothing, and leave the server healthy.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createHarness, type Harness } from '../helpers/harness.js';
import { connectMcp } from '../helpers/mcp-client.js';

/** JSON text of an object nested `depth` deep, built as text (a JS stack cannot stringify it). */
const deep = (depth: number): string => '{"a":'.repeat(depth) + '{"leaf":true}' + '}'.repeat(depth);
const JSON_TEXT = { 'content-type': 'application/json' };

describe('hostile input answers 400, never 500', () => {
  let h: Harness;
  let project: { projectId: string; apiKey: string };
  beforeAll(async () => {
    h = await createHarness();
    project = await h.project();
  });
  afterAll(async () => {
    await h?.close();
  });

  const stored = async () => {
    const memories = await h.db.query<{ n: string }>('SELECT count(*) AS n FROM memories WHERE project_id = $1', [project.projectId]);
    const events = await h.db.query<{ n: string }>('SELECT count(*) AS n FROM events WHERE project_id = $1', [project.projectId]);
    return Number(memories.rows[0]!.n) + Number(events.rows[0]!.n);
  };

  const cases: { name: string; method: 'POST' | 'GET'; path: string; body?: unknown; field: RegExp }[] = [
    // Bodies given as text go as they are.
    { name: 'a NUL in content', method: 'POST', path: '/admin/memory', body: { content: 'Likes tea\u0000' }, field: /body\.content .*NUL/ },
    { name: 'a NUL in a metadata key', method: 'POST', path: '/admin/memory', body: { content: 'Likes tea', metadata: { 'k\u0000': 1 } }, field: /body\.metadata.*key.*NUL/ },
    { name: 'an unpaired surrogate in metadata', method: 'POST', path: '/admin/memory', body: { content: 'Likes tea', metadata: { note: 'x\uD83D' } }, field: /body\.metadata\.note .*unpaired/ },
    { name: 'metadata nested 5,000 deep', method: 'POST', path: '/admin/memory', body: `{"content":"Likes tea","metadata":${deep(5000)}}`, field: /body\.metadata.* nests deeper/ },
    { name: 'a payload nested 5,000 deep', method: 'POST', path: '/lattice/events/emit', body: `{"eventType":"deep","payload":${deep(5000)}}`, field: /body\.payload.* nests deeper/ },
    { name: 'payloadJson nested 5,000 deep', method: 'POST', path: '/lattice/events/emit', body: { eventType: 'deep', payloadJson: deep(5000) }, field: /body\.payloadJson.* nests deeper/ },
    { name: 'a NUL inside payloadJson', method: 'POST', path: '/lattice/events/emit', body: { eventType: 'nul', payloadJson: '{"a":"\\u0000"}' }, field: /body\.payloadJson\.a .*NUL/ },
    { name: 'a leap second', method: 'POST', path: '/admin/memory', body: { content: 'Likes tea', validFrom: '2016-12-31T23:59:60Z' }, field: /body\.validFrom/ },
    { name: 'year 0000', method: 'POST', path: '/memory/observe', body: { text: 'I like tea.', occurredAt: '0000-06-01T00:00:00Z' }, field: /body\.occurredAt/ },
    { name: 'asOf with a leap second', method: 'GET', path: '/admin/memory?asOf=2016-12-31T23:59:60Z', field: /querystring\.asOf/ },
    { name: 'asOf in year 0000', method: 'GET', path: '/admin/memory?asOf=0000-01-01T00:00:00Z', field: /querystring\.asOf/ },
    { name: 'a NUL in a query string', method: 'GET', path: '/admin/memory?category=a%00b', field: /querystring\.category .*NUL/ },
  ];

  for (const c of cases) {
    it(c.name, async () => {
      const before = await stored();
      const res = await h.call(c.method, project.projectId, c.path, c.body === undefined ? {} : { body: c.body, headers: JSON_TEXT });
      expect(res.statusCode, res.body).toBe(400);
      expect(res.json()).toMatchObject({ statusCode: 400, code: 'VALIDATION_ERROR' });
      expect(res.json().message).toMatch(c.field);
      expect(await stored()).toBe(before);
    });
  }

  it('stays healthy after all of them', async () => {
    expect((await h.app.inject({ method: 'GET', url: '/readyz' })).statusCode).toBe(200);
    const ok = await h.call('POST', project.projectId, '/admin/memory', { body: { content: 'Likes green tea', validFrom: '2016-12-31T23:59:59Z' } });
    expect(ok.statusCode).toBe(201);
  });

  it('refuses the same through MCP tool arguments, as a clear error', async () => {
    const client = await connectMcp(h.app, project, 'hostile');
    try {
      const before = await stored();
      const nul = await client.callTool({ name: 'memory_save', arguments: { content: 'Likes tea\u0000' } }).catch((e: unknown) => e);
      expect(String(nul instanceof Error ? nul.message : JSON.stringify(nul))).toMatch(/NUL/);
      const leap = (await client.callTool({ name: 'memory_save', arguments: { content: 'Likes tea', occurredAt: '2016-12-31T23:59:60Z' } })) as { isError?: boolean; content: { text: string }[] };
      expect(leap.isError).toBe(true);
      expect(leap.content[0]!.text).toMatch(/occurredAt/);
      expect(await stored()).toBe(before);
    } finally {
      await client.close();
    }
  });
});
