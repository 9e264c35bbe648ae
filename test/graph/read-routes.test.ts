// The graph's read surface for a READ_MEMORY key (the console's graph page, an agent that only
// reads): GET /memory/entities, GET /memory/entities/{entityId} and POST /memory/graph/traverse,
// the same answers as their /admin twins; a memory's entities (memoryId); retired edges on request.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createHarness, type Harness } from '../helpers/harness.js';

type Project = { projectId: string; apiKey: string };

describe('the read surface of the graph', () => {
  let h: Harness;
  let a: Project;
  let b: Project;
  let reader: string;
  let ana: string;
  let acme: string;
  let lisbon: string;
  let memoryId: string;

  const idOf = async (p: Project, type: string, canonicalName: string) => {
    const res = await h.call('POST', p.projectId, '/admin/memory/entities', { body: { type, canonicalName } });
    expect(res.statusCode, res.body).toBe(201);
    return res.json().id as string;
  };
  const edge = async (body: Record<string, unknown>) => {
    const res = await h.call('POST', a.projectId, '/admin/memory/edges', { body });
    expect(res.statusCode, res.body).toBe(201);
    return res.json().id as string;
  };

  beforeAll(async () => {
    h = await createHarness({ consumers: false });
    a = await h.project();
    b = await h.project();
    reader = await h.key(a.projectId, ['READ_MEMORY']);
    ana = await idOf(a, 'person', 'Ana Silva');
    acme = await idOf(a, 'org', 'Acme');
    lisbon = await idOf(a, 'location', 'Lisbon');
    const porto = await idOf(a, 'location', 'Porto');
    memoryId = (await h.call('POST', a.projectId, '/admin/memory', { body: { content: 'Ana works at Acme', type: 'fact' } })).json().id;
    await edge({ subjectId: ana, predicate: 'works_at', objectId: acme, weight: 0.9, validFrom: '2024-01-01T00:00:00Z', sourceMemoryId: memoryId });
    await edge({ subjectId: acme, predicate: 'located_in', objectId: lisbon, weight: 0.7, validFrom: '2024-01-01T00:00:00Z' });
    // Ana lived in Porto until mid-2024, then the edge was retired.
    const moved = await edge({ subjectId: ana, predicate: 'lives_in', objectId: porto, validFrom: '2023-01-01T00:00:00Z' });
    expect((await h.call('POST', a.projectId, `/admin/memory/edges/${moved}/retire`, { body: { at: '2024-06-01T00:00:00Z' } })).statusCode).toBe(200);
    await idOf(b, 'person', 'Ana Silva');
  });
  afterAll(() => h?.close());

  it('lists and finds entities with a READ_MEMORY key, as the admin list does', async () => {
    const read = await h.call('GET', a.projectId, '/memory/entities?search=ana', { apiKey: reader });
    expect(read.statusCode, read.body).toBe(200);
    expect(read.json()).toEqual((await h.call('GET', a.projectId, '/admin/memory/entities?search=ana')).json());
    expect(read.json().map((e: { id: string }) => e.id)).toEqual([ana]);
  });

  it("answers a memory's graph entities", async () => {
    const res = await h.call('GET', a.projectId, `/memory/entities?memoryId=${memoryId}`, { apiKey: reader });
    expect(res.statusCode, res.body).toBe(200);
    expect(res.json().map((e: { id: string }) => e.id).sort()).toEqual([acme, ana].sort());
    expect((await h.call('GET', a.projectId, '/memory/entities?memoryId=mem_none', { apiKey: reader })).json()).toEqual([]);
  });

  it("answers an entity's page, and its retired edges only on request", async () => {
    const page = await h.call('GET', a.projectId, `/memory/entities/${ana}`, { apiKey: reader });
    expect(page.statusCode, page.body).toBe(200);
    expect(page.json().edges.map((e: { predicate: string }) => e.predicate)).toEqual(['works_at']);
    expect(page.json().retiredEdges).toBeUndefined();
    const withRetired = (await h.call('GET', a.projectId, `/memory/entities/${ana}?includeRetired=true`, { apiKey: reader })).json();
    expect(withRetired.retiredEdges).toHaveLength(1);
    expect(withRetired.retiredEdges[0]).toMatchObject({ predicate: 'lives_in', validTo: '2024-06-01T00:00:00.000Z', object: { canonicalName: 'Porto' } });
    // Before the retirement the Porto edge was valid, so it is an edge then, not a retired one.
    const before = (await h.call('GET', a.projectId, `/memory/entities/${ana}?includeRetired=true&asOf=2024-03-01T00:00:00Z`, { apiKey: reader })).json();
    expect(before.edges.map((e: { predicate: string }) => e.predicate).sort()).toEqual(['lives_in', 'works_at']);
    expect(before.retiredEdges).toEqual([]);
  });

  it('traverses with a READ_MEMORY key, as the admin traversal does, as of an instant', async () => {
    const body = { entityId: ana, hops: 2 };
    const read = await h.call('POST', a.projectId, '/memory/graph/traverse', { apiKey: reader, body });
    expect(read.statusCode, read.body).toBe(200);
    expect(read.json()).toEqual((await h.call('POST', a.projectId, '/admin/memory/graph/traverse', { body })).json());
    expect(read.json().map((e: { predicate: string; hop: number }) => [e.predicate, e.hop])).toEqual([['works_at', 1], ['located_in', 2]]);
    const past = (await h.call('POST', a.projectId, '/memory/graph/traverse', { apiKey: reader, body: { ...body, asOf: '2023-06-01T00:00:00Z' } })).json();
    expect(past.map((e: { predicate: string }) => e.predicate)).toEqual(['lives_in']);
  });

  it('refuses bad input in the one error shape', async () => {
    for (const [method, url, body] of [
      ['GET', '/memory/entities?type=planet', undefined],
      ['GET', '/memory/entities?limit=501', undefined],
      ['GET', `/memory/entities/${ana}?asOf=yesterday`, undefined],
      ['GET', `/memory/entities/${ana}?includeRetired=perhaps`, undefined],
      ['POST', '/memory/graph/traverse', { hops: 2 }],
      ['POST', '/memory/graph/traverse', { entityId: ana, direction: 'sideways' }],
    ] as const) {
      const res = await h.call(method, a.projectId, url, { apiKey: reader, body });
      expect(res.statusCode, url).toBe(400);
      expect(res.json()).toMatchObject({ statusCode: 400, code: 'VALIDATION_ERROR' });
    }
    expect((await h.call('GET', a.projectId, '/memory/entities/ent_none', { apiKey: reader })).statusCode).toBe(404);
  });

  it('needs READ_MEMORY, and a key at all', async () => {
    const writer = await h.key(a.projectId, ['WRITE_MEMORY']);
    for (const [method, url, body] of [
      ['GET', '/memory/entities', undefined],
      ['GET', `/memory/entities/${ana}`, undefined],
      ['POST', '/memory/graph/traverse', { entityId: ana }],
    ] as const) {
      const res = await h.call(method, a.projectId, url, { apiKey: writer, body });
      expect(res.statusCode, url).toBe(403);
      expect(res.json().code).toBe('AUTHORIZATION_ERROR');
    }
    expect((await h.app.inject({ url: `/api/v1/projects/${a.projectId}/memory/entities` })).statusCode).toBe(401);
  });

  it("never shows one project's graph to another project's key", async () => {
    expect((await h.call('GET', b.projectId, `/memory/entities/${ana}`)).statusCode).toBe(404);
    expect((await h.call('POST', b.projectId, '/memory/graph/traverse', { body: { entityId: ana, hops: 3 } })).statusCode).toBe(404);
    expect((await h.call('GET', b.projectId, `/memory/entities?memoryId=${memoryId}`)).json()).toEqual([]);
    expect((await h.call('GET', b.projectId, '/memory/entities')).json().map((e: { canonicalName: string }) => e.canonicalName)).toEqual(['Ana Silva']);
    expect((await h.call('GET', b.projectId, '/memory/entities', { apiKey: reader })).statusCode).toBe(404);
  });
});
