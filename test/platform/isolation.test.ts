// Every project route, found by walking the app's routes: project A's key on project B's path is a
// 404 (never 403, never data), and no key at all is a 401.
import type { RouteOptions } from 'fastify';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createHarness, type Harness } from '../helpers/harness.js';

describe('cross-project isolation on every route', () => {
  let h: Harness;
  const routes: { method: string; url: string }[] = [];
  beforeAll(async () => {
    h = await createHarness({
      build: {
        onRoute: (route: RouteOptions) => {
          if (!route.url.startsWith('/api/v1/projects/:projectId/')) return;
          for (const method of [route.method].flat()) if (method !== 'HEAD') routes.push({ method, url: route.url });
        },
      },
    });
  });
  afterAll(() => h?.close());

  it('finds the project routes', () => {
    expect(routes.length).toBeGreaterThan(15);
  });

  it("answers 404 to another project's key and 401 without a key, on each of them", async () => {
    const a = await h.project();
    const b = await h.project();
    const m = (await h.call('POST', b.projectId, '/admin/memory', { body: { content: 'B secret' } })).json();
    for (const { method, url } of routes) {
      const path = url.replace(':projectId', b.projectId).replace(/:\w+/g, m.id);
      const body = method === 'GET' || method === 'DELETE' ? undefined : {};
      const foreign = await h.app.inject({ method: method as 'GET', url: path, headers: { authorization: `Bearer ${a.apiKey}` }, ...(body ? { payload: body } : {}) });
      expect(foreign.statusCode, `${method} ${url}`).toBe(404);
      expect(foreign.body).not.toContain('B secret');
      const anonymous = await h.app.inject({ method: method as 'GET', url: path, ...(body ? { payload: body } : {}) });
      expect(anonymous.statusCode, `${method} ${url}`).toBe(401);
    }
    expect((await h.call('GET', b.projectId, `/admin/memory/${m.id}`)).json().content).toBe('B secret');
  });
});

// Generated from the OpenAPI document: every project operation, called on project A's own path with
// A's key but with project B's resource ids (in the path, or as references in the body), answers
// 404 or a 4xx and never B's data, and B's resources are unchanged. An operation with an id
// parameter or an id reference this test does not know fails it, so a new route is covered the
// day it lands.
describe("another project's ids on a project's own routes", () => {
  let h: Harness;
  beforeAll(async () => {
    h = await createHarness();
  });
  afterAll(() => h?.close());

  type Operation = { method: string; path: string; operationId: string; body?: unknown };
  /** Body fields that name another resource: the operations that take them, and a body that names B's. */
  const KINDS = 'Memory|Alert|Pattern|Event|Decision|Outcome|Entity|Edge|Prediction|Brain';
  const REFERENCE = new RegExp(`^(${KINDS.toLowerCase()})Ids?$|[a-z](${KINDS})Ids?$|^supersededById$`);

  it('answers 404 (or a 4xx) and nothing of B for every id parameter and reference', async () => {
    const a = await h.project();
    const b = await h.project();
    const secret = 'B secret 7f3a';
    const bMemory = (await h.call('POST', b.projectId, '/admin/memory', { body: { content: secret } })).json();
    const bAlert = (
      await h.call('POST', b.projectId, '/memory-alerts', {
        body: { name: `${secret} rule`, trigger: { kind: 'engine-event', eventTypes: ['iso.x'] }, notify: [{ kind: 'memory', writeAs: { content: secret, scope: 'project' } }] },
      })
    ).json();
    expect(bMemory.id).toMatch(/^mem_/);
    expect(bAlert.id).toBeTruthy();
    const aMemory = (await h.call('POST', a.projectId, '/admin/memory', { body: { content: 'A own memory' } })).json();

    // A mined pattern of B's, about B's contact.
    const [bPattern] = await h.apis.memory.upsertKeyed(b.projectId, [
      {
        key: 'recurring_event:iso',
        subjectKind: 'customer',
        subjectExternalId: 'b-contact',
        type: 'behavior_pattern',
        content: `${secret} recurs weekly`,
        confidence: 0.9,
        metadata: { patternKind: 'recurring_event', confidence: 0.9, hits: 9, misses: 0, active: true, lastObservedAt: new Date().toISOString(), observationCount: 10, observationWindowDays: 60 },
        source: 'mining',
        sourceMemoryIds: [bMemory.id],
        validFrom: new Date(),
        validTo: null,
      },
    ]);

    // A decision of B's, citing B's pattern.
    const bDecision = (
      await h.call('POST', b.projectId, '/lattice/decisions', {
        body: { subject: { kind: 'customer', externalId: 'b-contact' }, actionType: `${secret} action`, informedBy: [{ memoryId: bPattern!.id, refType: 'pattern' }] },
      })
    ).json();
    expect(bDecision.decisionId).toMatch(/^dec_/);

    // B's graph: an entity and an edge from it; A's own entity to merge into B's.
    const bEntity = (await h.call('POST', b.projectId, '/admin/memory/entities', { body: { type: 'person', canonicalName: `${secret} person` } })).json();
    const bEdge = (await h.call('POST', b.projectId, '/admin/memory/edges', { body: { subjectId: bEntity.id, predicate: 'knows', objectLiteral: secret, sourceMemoryId: bMemory.id } })).json();
    const aEntity = (await h.call('POST', a.projectId, '/admin/memory/entities', { body: { type: 'person', canonicalName: 'A own person' } })).json();
    expect(bEdge.id).toMatch(/^edge_/);

    // A brain of B's (a private draft) holding a memory of B's.
    const bBrain = (await h.call('POST', b.projectId, '/brains', { body: { externalId: 'iso-brain', name: `${secret} brain` } })).json();
    expect(bBrain.id).toMatch(/^brn_/);
    expect((await h.call('POST', b.projectId, '/admin/memory', { body: { content: `${secret} in the brain`, metadata: { brainId: bBrain.id } } })).statusCode).toBe(201);

    const foreign: Record<string, string> = {
      memoryId: bMemory.id,
      alertId: bAlert.id,
      patternId: bPattern!.id,
      contactId: 'b-contact',
      entityId: bEntity.id,
      edgeId: bEdge.id,
      packId: 'healthcare',
      brainId: bBrain.id,
    };
    /**
     * Parameters that name something of the deployment, not of a project (a pack): A's call acts on
     * A's own setting for it (the status here), and B's setting stays as it is (checked below).
     */
    expect((await h.call('POST', b.projectId, '/memory-compliance-packs', { body: { packId: 'healthcare', enabled: false, config: { note: secret } } })).statusCode).toBe(200);
    const deploymentParams: Record<string, number> = { 'DELETE /memory-compliance-packs/{packId}': 204 };
    /**
     * Parameters that name a subject rather than a resource: a list under another project's subject
     * is this project's (empty) list, not a 404.
     */
    const subjectLists: Record<string, (body: any) => unknown[]> = { 'GET /lattice/contacts/{contactId}/patterns': (body) => body.data };
    /** Bodies for the writes that take an id parameter, so that the call passes validation and meets the lookup. */
    const writeBodies: Record<string, unknown> = {
      'PATCH /memory-alerts/{alertId}': { enabled: false },
      'PATCH /admin/memory/{memoryId}': { content: 'overwritten by A' },
      'POST /admin/memory/{memoryId}/promote': { targetScope: 'user' },
      'POST /admin/memory/{memoryId}/confirm': { status: 'rejected' },
      'POST /admin/memory/entities/{entityId}/merge': { intoEntityId: 'ent_nowhere' },
      'PATCH /brains/{brainId}': { name: 'taken by A' },
    };
    /** For each (operation, body reference): a body naming B's resource. */
    const referenceBodies: Record<string, { path?: string; body: unknown }> = {
      'POST /admin/memory sourceMemoryIds': { body: { content: 'A derived memory', sourceMemoryIds: [bMemory.id] } },
      'PATCH /admin/memory/{memoryId} sourceMemoryIds': { path: `/admin/memory/${aMemory.id}`, body: { sourceMemoryIds: [bMemory.id] } },
      'PATCH /admin/memory/{memoryId} supersededById': { path: `/admin/memory/${aMemory.id}`, body: { supersededById: bMemory.id } },
      'POST /lattice/events/emit sourceMemoryIds': { body: { eventType: 'iso.ref', sourceMemoryIds: [bMemory.id] } },
      'POST /lattice/events/emit sourcePatternId': { body: { eventType: 'iso.pattern', sourcePatternId: bMemory.id } },
      'POST /lattice/decisions memoryId': { body: { subject: { kind: 'customer', externalId: 'a-1' }, informedBy: [{ memoryId: bPattern!.id, refType: 'pattern' }] } },
      'POST /lattice/outcomes decisionId': { body: { decisionId: bDecision.decisionId, result: 'success' } },
      'POST /admin/memory/edges sourceMemoryId': { body: { subjectId: aEntity.id, predicate: 'knows', objectLiteral: 'x', sourceMemoryId: bMemory.id } },
      'POST /admin/memory/entities/{entityId}/merge intoEntityId': { path: `/admin/memory/entities/${aEntity.id}/merge`, body: { intoEntityId: bEntity.id } },
      'POST /admin/memory/graph/traverse entityId': { body: { entityId: bEntity.id } },
      'POST /memory/graph/traverse entityId': { body: { entityId: bEntity.id } },
      'POST /admin/memory/prefetch-related seedMemoryIds': { body: { seedMemoryIds: [bMemory.id] } },
      'POST /memory/feedback memoryId': { body: { memoryId: bMemory.id, rating: 'negative' } },
      'POST /memory/search brainId': { body: { query: 'secret brain', brainId: bBrain.id } },
      'POST /admin/memory/search brainId': { body: { query: 'secret brain', brainId: bBrain.id } },
      'POST /memory/context brainId': { body: { conversation: 'user: what is in the brain?', brainId: bBrain.id } },
    };

    const doc = (await h.app.inject({ method: 'GET', url: '/openapi.json' })).json();
    const prefix = '/api/v1/projects/{projectId}';
    const operations: Operation[] = [];
    const references: string[] = [];
    const resolve = (schema: unknown): unknown => {
      const ref = (schema as { $ref?: string } | undefined)?.$ref;
      return ref ? doc.components.schemas[ref.split('/').pop()!] : schema;
    };
    const fieldsOf = (schema: unknown, out = new Set<string>()): Set<string> => {
      const s = resolve(schema) as Record<string, unknown> | undefined;
      if (!s || typeof s !== 'object') return out;
      for (const [name, sub] of Object.entries((s.properties as Record<string, unknown>) ?? {})) {
        out.add(name);
        fieldsOf(sub, out);
      }
      for (const key of ['items', 'additionalProperties']) if (s[key] && typeof s[key] === 'object') fieldsOf(s[key], out);
      for (const key of ['anyOf', 'oneOf', 'allOf']) for (const sub of (s[key] as unknown[]) ?? []) fieldsOf(sub, out);
      return out;
    };
    for (const [path, item] of Object.entries(doc.paths as Record<string, Record<string, { operationId: string; requestBody?: { content?: Record<string, { schema: unknown }> } }>>)) {
      if (!path.startsWith(`${prefix}/`)) continue;
      for (const [method, op] of Object.entries(item)) {
        const route = `${method.toUpperCase()} ${path.slice(prefix.length)}`;
        operations.push({ method: method.toUpperCase(), path: path.slice(prefix.length), operationId: op.operationId });
        const schema = op.requestBody?.content?.['application/json']?.schema;
        for (const field of fieldsOf(schema)) if (REFERENCE.test(field)) references.push(`${route} ${field}`);
      }
    }
    expect(operations.length).toBeGreaterThan(20);

    // Every id parameter is known, and every operation that takes one is called with B's id.
    const withIds = operations.filter((o) => /\{\w+\}/.test(o.path));
    expect(withIds.length).toBeGreaterThan(5);
    for (const op of withIds) {
      const route = `${op.method} ${op.path}`;
      const path = op.path.replace(/\{(\w+)\}/g, (_, name: string) => {
        expect(foreign, `${route}: no foreign id known for {${name}}; add one to this test`).toHaveProperty(name);
        return foreign[name]!;
      });
      const body = op.method === 'GET' || op.method === 'DELETE' ? undefined : (writeBodies[route] ?? {});
      const res = await h.call(op.method as 'GET', a.projectId, path, body === undefined ? {} : { body });
      const list = subjectLists[route];
      if (deploymentParams[route] !== undefined) {
        expect(res.statusCode, route).toBe(deploymentParams[route]);
      } else if (list) {
        expect(res.statusCode, `${route} with B's subject`).toBe(200);
        expect(list(res.json()), route).toEqual([]);
      } else {
        expect(res.statusCode, `${route} with B's id`).toBe(404);
      }
      expect(res.body, route).not.toContain(secret);
    }

    // Every body field that names a resource is known, and naming B's answers no B data.
    expect(references.sort()).toEqual(Object.keys(referenceBodies).sort());
    for (const [reference, { path, body }] of Object.entries(referenceBodies)) {
      const [method, route] = reference.split(' ');
      const res = await h.call(method as 'POST', a.projectId, path ?? route!, { body });
      expect(res.statusCode, `${reference}: ${res.body}`).toBeLessThan(500);
      expect(res.body, reference).not.toContain(secret);
    }
    // What A's calls named stays B's and unchanged; A cannot reach it through its own project.
    expect((await h.call('GET', a.projectId, `/admin/memory/${bMemory.id}`)).statusCode).toBe(404);
    const stillB = await h.call('GET', b.projectId, `/admin/memory/${bMemory.id}`);
    expect(stillB.json()).toMatchObject({ content: secret, status: 'confirmed' });
    expect((await h.call('GET', b.projectId, `/memory-alerts/${bAlert.id}`)).json()).toMatchObject({ enabled: true });
    expect(stillB.json().negativeRatingCount).toBe(0);
    expect((await h.call('GET', b.projectId, `/brains/${bBrain.id}`)).json()).toMatchObject({ name: `${secret} brain`, status: 'DRAFT' });
    expect((await h.call('GET', b.projectId, '/memory-compliance-packs')).json()).toEqual([expect.objectContaining({ packId: 'healthcare', enabled: false })]);
  });
});
