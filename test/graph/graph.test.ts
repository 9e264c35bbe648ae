// The knowledge graph through the API: entity resolution and merge, bi-temporal reads before and
// after retire, functional predicates, the graph query, traversal, stats, validation, permissions
// and cross-project isolation.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createHarness, type Harness } from '../helpers/harness.js';

type Project = { projectId: string; apiKey: string };

describe('knowledge graph', () => {
  let h: Harness;
  let a: Project;
  let b: Project;

  const entity = async (p: Project, body: Record<string, unknown>) => h.call('POST', p.projectId, '/admin/memory/entities', { body });
  const edge = async (p: Project, body: Record<string, unknown>) => h.call('POST', p.projectId, '/admin/memory/edges', { body });
  const idOf = async (p: Project, type: string, canonicalName: string, extra: Record<string, unknown> = {}) => (await entity(p, { type, canonicalName, ...extra })).json().id as string;

  beforeAll(async () => {
    h = await createHarness();
    a = await h.project();
    b = await h.project();
  });
  afterAll(async () => h?.close());

  it('resolves names that normalise alike to one entity, and adds the new spellings as aliases', async () => {
    const created = await entity(a, { type: 'person', canonicalName: 'Dr. Sarah Chen', aliases: ['S. Chen'] });
    expect(created.statusCode).toBe(201);
    expect(created.json()).toMatchObject({ id: expect.stringMatching(/^ent_/), type: 'person', canonicalName: 'Sarah Chen', aliases: ['S. Chen'], validTo: null, supersededById: null, resolved: false });
    for (const name of ['sarah chen', "Sarah Chen's", 'SARAH  CHEN', 'Ms Sarah Chen']) {
      const again = await entity(a, { type: 'person', canonicalName: name });
      expect(again.statusCode, name).toBe(200);
      expect(again.json()).toMatchObject({ id: created.json().id, resolved: true });
    }
    // An alias resolves too; a company form and "the" do not make a second entity.
    expect((await entity(a, { type: 'person', canonicalName: 's chen' })).json().id).toBe(created.json().id);
    const acme = await idOf(a, 'org', 'Acme, Inc.');
    expect(await idOf(a, 'org', 'The ACME')).toBe(acme);
    const listed = (await h.call('GET', a.projectId, '/admin/memory/entities?search=chen')).json();
    expect(listed.map((e: { id: string }) => e.id)).toEqual([created.json().id]);
    expect(listed[0].aliases).toEqual(expect.arrayContaining(['S. Chen', 'sarah chen']));
  });

  it('creates one entity when the same name is written concurrently', async () => {
    const answers = await Promise.all(Array.from({ length: 12 }, () => entity(a, { type: 'org', canonicalName: 'Concurrent Widgets Ltd' })));
    expect(answers.map((r) => r.statusCode).sort()).toEqual([200, 200, 200, 200, 200, 200, 200, 200, 200, 200, 200, 201]);
    expect(new Set(answers.map((r) => r.json().id)).size).toBe(1);
    expect((await h.call('GET', a.projectId, '/admin/memory/entities?search=concurrent')).json()).toHaveLength(1);
  });

  it('keeps a functional predicate single-valued and answers the past as it was', async () => {
    const maria = await idOf(a, 'person', 'Maria Lopez');
    const globex = await idOf(a, 'org', 'Globex');
    const initech = await idOf(a, 'org', 'Initech');
    const first = await edge(a, { subjectId: maria, predicate: 'Works At', objectId: globex, validFrom: '2020-01-01T00:00:00Z', weight: 0.8 });
    expect(first.statusCode).toBe(201);
    expect(first.json()).toMatchObject({ predicate: 'works_at', objectId: globex, objectLiteral: null, weight: 0.8, validTo: null, created: true });
    // The same fact again strengthens it rather than repeating it.
    const repeat = await edge(a, { subjectId: maria, predicate: 'works_at', objectId: globex, validFrom: '2021-01-01T00:00:00Z', weight: 0.9 });
    expect(repeat.statusCode).toBe(200);
    expect(repeat.json()).toMatchObject({ id: first.json().id, weight: 0.9, created: false });
    const moved = await edge(a, { subjectId: maria, predicate: 'works_at', objectId: initech, validFrom: '2023-06-01T00:00:00Z' });
    expect(moved.statusCode).toBe(201);
    // An older fact arriving late is kept as history, closed where the current one begins.
    const older = await edge(a, { subjectId: maria, predicate: 'works_at', objectLiteral: 'a bakery', validFrom: '2018-01-01T00:00:00Z' });
    expect(older.json()).toMatchObject({ validTo: '2020-01-01T00:00:00.000Z' });
    const query = async (asOf?: string) => (await h.call('POST', a.projectId, '/lattice/graph/query', { body: { subjectId: maria, predicate: 'works_at', ...(asOf ? { asOf } : {}) } })).json().edges;
    expect((await query()).map((e: { objectId: string }) => e.objectId)).toEqual([initech]);
    expect((await query('2022-01-01T00:00:00Z')).map((e: { objectId: string }) => e.objectId)).toEqual([globex]);
    expect((await query('2019-01-01T00:00:00Z')).map((e: { objectLiteral: string }) => e.objectLiteral)).toEqual(['a bakery']);
    expect(await query('2017-01-01T00:00:00Z')).toEqual([]);
    // A non-functional predicate keeps every current value.
    await edge(a, { subjectId: maria, predicate: 'prefers', objectLiteral: 'tea' });
    await edge(a, { subjectId: maria, predicate: 'prefers', objectLiteral: 'oat milk' });
    expect((await h.call('POST', a.projectId, '/lattice/graph/query', { body: { subjectId: maria, predicate: 'prefers' } })).json().edges).toHaveLength(2);
  });

  it('retires edges and entities bi-temporally: reads before validTo still see them, nothing is deleted', async () => {
    const tom = await idOf(a, 'person', 'Tom Baker');
    const club = await idOf(a, 'org', 'Riverside Chess Club');
    const member = (await edge(a, { subjectId: tom, predicate: 'member_of', objectId: club, validFrom: '2024-01-01T00:00:00Z' })).json();
    const retired = await h.call('POST', a.projectId, `/admin/memory/edges/${member.id}/retire`, { body: { at: '2025-01-01T00:00:00Z' } });
    expect(retired.json()).toMatchObject({ id: member.id, validTo: '2025-01-01T00:00:00.000Z' });
    const page = async (id: string, asOf?: string) => (await h.call('GET', a.projectId, `/admin/memory/entities/${id}${asOf ? `?asOf=${asOf}` : ''}`)).json();
    expect((await page(tom)).edges).toEqual([]);
    expect((await page(tom, '2024-06-01T00:00:00Z')).edges).toEqual([expect.objectContaining({ id: member.id, hop: 1, predicate: 'member_of', object: expect.objectContaining({ id: club }) })]);
    // Retiring an entity closes its current edges and frees its name.
    const lives = (await edge(a, { subjectId: tom, predicate: 'lives_in', objectLiteral: 'Leeds', validFrom: '2024-01-01T00:00:00Z' })).json();
    const gone = await h.call('POST', a.projectId, `/admin/memory/entities/${tom}/retire`, { body: { at: '2025-06-01T00:00:00Z' } });
    expect(gone.json()).toMatchObject({ id: tom, validTo: '2025-06-01T00:00:00.000Z' });
    expect(await page(tom)).toEqual({ entity: null, edges: [] });
    expect((await page(tom, '2024-06-01T00:00:00Z')).edges.map((e: { id: string }) => e.id).sort()).toEqual([lives.id, member.id].sort());
    const stats = (await h.call('GET', a.projectId, '/admin/memory/graph/stats')).json();
    expect(stats.retiredEntities).toBeGreaterThanOrEqual(1);
    expect(stats.retiredEdges).toBeGreaterThanOrEqual(2);
    // A new mention of the name makes a new entity; edges to a retired entity are refused.
    expect(await idOf(a, 'person', 'Tom Baker')).not.toBe(tom);
    expect((await edge(a, { subjectId: tom, predicate: 'likes', objectLiteral: 'x' })).statusCode).toBe(409);
  });

  it('merges a duplicate: names, edges and history move to the survivor, a twin edge closes', async () => {
    const bob = await idOf(a, 'person', 'Robert Smith');
    const bobby = await idOf(a, 'person', 'Bobby Smith');
    const acme = await idOf(a, 'org', 'Merge Acme');
    const other = await idOf(a, 'org', 'Merge Other');
    await edge(a, { subjectId: bob, predicate: 'prefers', objectId: acme, weight: 0.5 });
    await edge(a, { subjectId: bobby, predicate: 'prefers', objectId: acme, weight: 0.9 });
    await edge(a, { subjectId: bobby, predicate: 'works_at', objectId: other, validFrom: '2024-01-01T00:00:00Z' });
    // Both have a current works_at: after the merge the functional predicate keeps the newer one.
    const older = await idOf(a, 'org', 'Merge Older Employer');
    const olderJob = (await edge(a, { subjectId: bob, predicate: 'works_at', objectId: older, validFrom: '2022-01-01T00:00:00Z' })).json();
    const merged = await h.call('POST', a.projectId, `/admin/memory/entities/${bobby}/merge`, { body: { intoEntityId: bob } });
    expect(merged.statusCode).toBe(200);
    expect(merged.json().aliases).toContain('Bobby Smith');
    expect((await entity(a, { type: 'person', canonicalName: 'bobby smith' })).json().id).toBe(bob);
    const page = (await h.call('GET', a.projectId, `/admin/memory/entities/${bob}`)).json();
    expect(page.edges.map((e: { predicate: string; object: { id: string } }) => `${e.predicate} ${e.object.id}`).sort()).toEqual([`prefers ${acme}`, `works_at ${other}`].sort());
    expect(page.edges.find((e: { predicate: string }) => e.predicate === 'prefers').weight).toBe(0.9);
    expect((await h.call('GET', a.projectId, `/admin/memory/entities/${bob}?asOf=2023-01-01T00:00:00Z`)).json().edges.map((e: { id: string }) => e.id)).toEqual([olderJob.id]);
    // The type and scope filters of the entity list.
    expect((await h.call('GET', a.projectId, '/admin/memory/entities?search=merge&type=org')).json().map((e: { id: string }) => e.id).sort()).toEqual([acme, other, older].sort());
    expect((await h.call('GET', a.projectId, '/admin/memory/entities?search=merge&type=person')).json()).toEqual([]);
    expect((await h.call('GET', a.projectId, '/admin/memory/entities?search=merge&scope=user')).json()).toEqual([]);
    const dup = (await h.call('GET', a.projectId, `/admin/memory/entities/${bobby}?asOf=2000-01-01T00:00:00Z`)).json();
    expect(dup.entity).toBeNull();
    const all = (await h.call('GET', a.projectId, '/admin/memory/entities?search=bobby&includeRetired=true')).json();
    expect(all.find((e: { id: string }) => e.id === bobby)).toMatchObject({ supersededById: bob, validTo: expect.any(String) });
  });

  it('traverses up to three hops, cycle-safe, with hop numbers and a predicate filter', async () => {
    const p = await h.project();
    const [x, y, z, w] = await Promise.all(['Hop X', 'Hop Y', 'Hop Z', 'Hop W'].map((n) => idOf(p, 'org', n)));
    await edge(p, { subjectId: x!, predicate: 'part_of', objectId: y! });
    await edge(p, { subjectId: y!, predicate: 'part_of', objectId: z! });
    await edge(p, { subjectId: z!, predicate: 'part_of', objectId: x! });
    await edge(p, { subjectId: z!, predicate: 'based_in', objectId: w! });
    const traverse = async (body: Record<string, unknown>) => (await h.call('POST', p.projectId, '/admin/memory/graph/traverse', { body })).json();
    const three = await traverse({ entityId: x, hops: 3 });
    expect(three.map((e: { subject: { id: string }; hop: number }) => [e.subject.id, e.hop])).toEqual([[x, 1], [y, 2], [z, 3], [z, 3]]);
    expect(await traverse({ entityId: x, hops: 3, predicates: ['part_of'] })).toHaveLength(3);
    expect(await traverse({ entityId: x, hops: 1 })).toHaveLength(1);
    expect(await traverse({ entityId: x, hops: 99 })).toHaveLength(4);
    expect(await traverse({ entityId: w, hops: 1, direction: 'both' })).toEqual([expect.objectContaining({ predicate: 'based_in', hop: 1 })]);
    // The limit caps the answer; the hop that passes it takes the strongest edges.
    expect((await traverse({ entityId: x, hops: 3, limit: 2 })).map((e: { hop: number }) => e.hop)).toEqual([1, 2]);
    expect(await traverse({ entityId: x, hops: 3, limit: 0 })).toHaveLength(1);
    expect((await h.call('GET', p.projectId, '/admin/memory/graph/edges?limit=2')).json()).toHaveLength(2);
  });

  it('refuses bad input with the one error shape', async () => {
    const p = await h.project();
    const one = await idOf(p, 'org', 'Valid One');
    const cases: [string, string, Record<string, unknown>][] = [
      ['POST', '/admin/memory/entities', { type: 'spaceship', canonicalName: 'x' }],
      ['POST', '/admin/memory/entities', { type: 'org', canonicalName: '...' }],
      ['POST', '/admin/memory/entities', { type: 'org' }],
      ['POST', '/admin/memory/edges', { subjectId: one, predicate: 'knows' }],
      ['POST', '/admin/memory/edges', { subjectId: one, predicate: 'knows', objectId: one }],
      ['POST', '/admin/memory/edges', { subjectId: one, predicate: 'knows', objectLiteral: 'x', objectId: one }],
      ['POST', '/admin/memory/edges', { subjectId: one, predicate: '!!', objectLiteral: 'x' }],
      ['POST', '/admin/memory/edges', { subjectId: one, predicate: 'knows', objectLiteral: 'x', weight: 2 }],
      ['POST', '/admin/memory/edges', { subjectId: one, predicate: 'knows', objectLiteral: 'x', validFrom: '2024-01-02T00:00:00Z', validTo: '2024-01-01T00:00:00Z' }],
      ['POST', '/admin/memory/graph/traverse', { hops: 2 }],
      ['POST', '/lattice/graph/query', { asOf: 'yesterday' }],
    ];
    for (const [method, path, body] of cases) {
      const res = await h.call(method as 'POST', p.projectId, path, { body });
      expect(res.statusCode, JSON.stringify(body)).toBe(400);
      expect(res.json()).toMatchObject({ code: 'VALIDATION_ERROR', message: expect.any(String) });
    }
    expect((await h.call('POST', p.projectId, '/admin/memory/edges', { body: { subjectId: 'ent_nope', predicate: 'knows', objectLiteral: 'x' } })).statusCode).toBe(404);
    // Nothing half-written: no edge came of the refused writes.
    expect((await h.call('GET', p.projectId, '/admin/memory/graph/stats')).json()).toMatchObject({ entityCount: 1, edgeCount: 0 });
  });

  it('clamps the query limit and answers edges newest first', async () => {
    const p = await h.project();
    const s = await idOf(p, 'person', 'Clamp Person');
    for (let i = 0; i < 5; i++) await edge(p, { subjectId: s, predicate: 'visited', objectLiteral: `place ${i}`, validFrom: `2024-01-0${i + 1}T00:00:00Z` });
    const q = async (limit: number) => (await h.call('POST', p.projectId, '/lattice/graph/query', { body: { limit } })).json().edges;
    expect(await q(0)).toHaveLength(1);
    expect((await q(5000)).map((e: { objectLiteral: string }) => e.objectLiteral)).toEqual(['place 4', 'place 3', 'place 2', 'place 1', 'place 0']);
  });

  it('needs WRITE_MEMORY for the admin routes and READ_MEMORY for the query', async () => {
    const readOnly = await h.key(a.projectId, ['READ_MEMORY']);
    const denied = await h.call('GET', a.projectId, '/admin/memory/entities', { apiKey: readOnly });
    expect(denied.statusCode).toBe(403);
    expect(denied.json()).toMatchObject({ code: 'AUTHORIZATION_ERROR' });
    expect((await h.call('POST', a.projectId, '/lattice/graph/query', { apiKey: readOnly, body: {} })).statusCode).toBe(200);
    const writeOnly = await h.key(a.projectId, ['WRITE_MEMORY']);
    expect((await h.call('POST', a.projectId, '/lattice/graph/query', { apiKey: writeOnly, body: {} })).statusCode).toBe(403);
  });

  it("never shows one project's graph to another", async () => {
    const secret = await idOf(b, 'person', 'Secret Person');
    const secretOrg = await idOf(b, 'org', 'Secret Org');
    const secretEdge = (await edge(b, { subjectId: secret, predicate: 'works_at', objectId: secretOrg })).json().id;
    expect((await h.call('GET', a.projectId, `/admin/memory/entities/${secret}`)).statusCode).toBe(404);
    expect((await h.call('POST', a.projectId, `/admin/memory/entities/${secret}/retire`, { body: {} })).statusCode).toBe(404);
    expect((await h.call('POST', a.projectId, `/admin/memory/edges/${secretEdge}/retire`, { body: {} })).statusCode).toBe(404);
    expect((await h.call('POST', a.projectId, '/admin/memory/graph/traverse', { body: { entityId: secret } })).statusCode).toBe(404);
    expect((await edge(a, { subjectId: secret, predicate: 'knows', objectLiteral: 'x' })).statusCode).toBe(404);
    expect((await h.call('POST', a.projectId, '/lattice/graph/query', { body: { subjectId: secret } })).json().edges).toEqual([]);
    expect(JSON.stringify((await h.call('GET', a.projectId, '/admin/memory/graph/edges')).json())).not.toContain('Secret');
    expect((await h.call('GET', a.projectId, '/admin/memory/entities?search=secret')).json()).toEqual([]);
    // The same name in another project is another entity.
    expect(await idOf(a, 'person', 'Secret Person')).not.toBe(secret);
  });
});
