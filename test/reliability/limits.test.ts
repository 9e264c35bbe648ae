// Limits, each enforced as documented and answered in the one error body ({ statusCode, code,
// message, params? }): the body size (BODY_LIMIT_BYTES), batch sizes and list `limit` maxima (the
// OpenAPI schema's), the request timeout (REQUEST_TIMEOUT_MS) and the per-key rate limit
// (RATE_LIMIT_PER_MINUTE), and what Node refuses before routing (oversized headers, bytes that are
// not HTTP). Batch fields, limit parameters and MCP tool limits are collected from the
// published OpenAPI document and tools/list, so a new one fails here until it is covered.
//
// Covered elsewhere, not repeated: 413 by inject on one route (test/platform/errors-http.test.ts,
// '413 PAYLOAD_TOO_LARGE past the body limit'); 429 with Retry-After for one key while a second key
// of the same project goes on (errors-http.test.ts, 'rate limiting'); the events-ingested quota
// (test/typed/typed-routes.test.ts, test/tenancy/auth.test.ts); nesting depth and NULs
// (test/reliability/hostile-input.test.ts).
import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import type { FastifyInstance, LightMyRequestResponse } from 'fastify';
import { request as httpRequest } from 'node:http';
import { connect, type AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildApp } from '../../src/app.js';
import { insertMemories } from '../../src/memory/store.js';
import { newId } from '../../src/platform/ids.js';
import { MAX_OBSERVATIONS_PER_REQUEST } from '../../src/typed/schemas.js';
import { createHarness, REDIS_URL, type Harness } from '../helpers/harness.js';
import { connectMcp } from '../helpers/mcp-client.js';

const PREFIX = '/api/v1/projects/{projectId}';
type Project = { projectId: string; apiKey: string };
type Operation = { description?: string; parameters?: { in: string; name: string; schema: JsonSchema }[]; requestBody?: { content: Record<string, { schema: JsonSchema }> } };
type JsonSchema = { type?: string; maximum?: number; minimum?: number; maxItems?: number; default?: number; properties?: Record<string, JsonSchema> };
type OpenApi = { paths: Record<string, Record<string, Operation>> };

function expectErrorShape(res: { statusCode: number; json(): any }, statusCode: number, code: string): void {
  expect(res.statusCode).toBe(statusCode);
  const body = res.json();
  expect(body).toMatchObject({ statusCode, code });
  expect(typeof body.message).toBe('string');
  expect(Object.keys(body).every((k) => ['statusCode', 'code', 'message', 'params'].includes(k))).toBe(true);
}

/** A 400 that names `path` among the failing fields. */
function expectRefusedField(res: LightMyRequestResponse, path: string): void {
  expectErrorShape(res, 400, 'VALIDATION_ERROR');
  expect(res.json().params.errors.map((e: { path: string }) => e.path)).toContain(path);
}

async function openApi(app: FastifyInstance): Promise<OpenApi> {
  return (await app.inject({ method: 'GET', url: '/openapi.json' })).json() as OpenApi;
}

/** `METHOD /path` relative to the project prefix, for every operation. */
function operations(document: OpenApi): { key: string; method: string; path: string; operation: Operation }[] {
  return Object.entries(document.paths).flatMap(([path, ops]) =>
    Object.entries(ops).map(([method, operation]) => ({ key: `${method.toUpperCase()} ${path.replace(PREFIX, '')}`, method: method.toUpperCase(), path, operation })),
  );
}

const bodySchema = (operation: Operation) => operation.requestBody?.content['application/json']?.schema;

/** One HTTP request over a real socket; the answer whatever its status. */
function send(port: number, options: { method: string; path: string; headers?: Record<string, string | number>; chunks?: string[] }): Promise<{ statusCode: number; headers: Record<string, unknown>; body: string; json(): any }> {
  return new Promise((resolve, reject) => {
    const req = httpRequest({ host: '127.0.0.1', port, method: options.method, path: options.path, headers: options.headers }, (res) => {
      let body = '';
      res.setEncoding('utf8');
      res.on('data', (chunk: string) => (body += chunk));
      res.on('end', () => resolve({ statusCode: res.statusCode!, headers: res.headers, body, json: () => JSON.parse(body) }));
    });
    req.on('error', reject);
    for (const chunk of options.chunks ?? []) req.write(chunk);
    req.end();
  });
}

describe('batch and list maxima', () => {
  let h: Harness;
  let p: Project;
  let document: OpenApi;
  let mcp: Client;

  beforeAll(async () => {
    h = await createHarness();
    p = await h.project();
    document = await openApi(h.app);
    mcp = await connectMcp(h.app, p, 'limits');
    for (const [attributeKey, dataType] of [['w', 'numeric'], ['c', 'categorical']]) {
      expect((await h.call('POST', p.projectId, '/memory-typed/attributes', { body: { attributeKey, dataType } })).statusCode).toBe(201);
    }
    evidenceId = (await h.call('POST', p.projectId, '/admin/memory', { body: { content: 'Evidence the decisions cite' } })).json().id;
    graphEntityId = (await h.call('POST', p.projectId, '/admin/memory/entities', { body: { type: 'org', canonicalName: 'Limits Org' } })).json().id;
  });
  afterAll(async () => {
    await mcp?.close();
    await h?.close();
  });

  const count = async (sql: string, params: unknown[]) => Number((await h.db.query<{ n: string }>(sql, params)).rows[0]!.n);
  const at = (i: number) => new Date(Date.UTC(2024, 0, 1) + i * 60_000).toISOString();
  let ruleId: string;
  let graphEntityId: string;
  /** A memory of the project that decisions may cite. */
  let evidenceId: string;
  const memoryChannel = () => ({ kind: 'memory', writeAs: { content: 'noted {{event.eventType}}', scope: 'project' } });
  const rule = (notify: unknown[]) => ({ name: 'limits', trigger: { kind: 'engine-event', eventTypes: ['limits.never'] }, notify });

  /**
   * Every batch field (a top-level array with maxItems in a request body): a body holding `n` items,
   * and what a call with exactly the maximum must have done.
   */
  const batches: Record<string, { field: string; body: (n: number) => unknown; accepted: number; afterMax?: (n: number) => Promise<void> }> = {
    'POST /memory-typed/observations observations': {
      field: 'observations',
      body: (n) => ({ observations: Array.from({ length: n }, (_, i) => ({ attributeKey: 'w', subjectKind: 'user', subjectExternalId: `u${i % 100}`, valueNumeric: i, observedAt: at(i), source: 's' })) }),
      accepted: 200,
      afterMax: async (n) => expect(await count("SELECT count(*) AS n FROM typed_observations WHERE project_id = $1 AND attribute_key = 'w' AND status = 'accepted'", [p.projectId])).toBe(n),
    },
    'POST /memory-typed/observations/enqueue observations': {
      field: 'observations',
      body: (n) => ({ observations: Array.from({ length: n }, (_, i) => ({ attributeKey: 'c', subjectKind: 'user', subjectExternalId: `u${i % 100}`, valueText: `v${i}`, observedAt: at(i), source: 's' })) }),
      accepted: 202,
      afterMax: async (n) => {
        const deadline = Date.now() + 30_000;
        while ((await count('SELECT count(*) AS n FROM typed_ingest_batches WHERE project_id = $1', [p.projectId])) > 0) {
          if (Date.now() > deadline) throw new Error('the queued batch was not ingested within 30 s');
          await new Promise((resolve) => setTimeout(resolve, 50));
        }
        expect(await count("SELECT count(*) AS n FROM typed_observations WHERE project_id = $1 AND attribute_key = 'c' AND status = 'accepted'", [p.projectId])).toBe(n);
      },
    },
    'POST /lattice/events/emit sourceMemoryIds': {
      field: 'sourceMemoryIds',
      body: (n) => ({ eventType: 'limits.sources', dedupeKey: `sources-${n}`, sourceMemoryIds: Array.from({ length: n }, (_, i) => `mem_${i}`) }),
      accepted: 200,
    },
    'POST /admin/memory sourceMemoryIds': {
      field: 'sourceMemoryIds',
      body: (n) => ({ content: `Summary of ${n} notes`, type: 'summary', sourceMemoryIds: Array.from({ length: n }, (_, i) => `mem_${i}`) }),
      accepted: 201,
    },
    'POST /admin/memory/search scopes': { field: 'scopes', body: (n) => ({ query: 'garden', scopes: scopes(n) }), accepted: 200 },
    'POST /memory/search scopes': { field: 'scopes', body: (n) => ({ query: 'garden', scopes: scopes(n) }), accepted: 200 },
    'POST /memory-alerts notify': { field: 'notify', body: (n) => rule(Array.from({ length: n }, memoryChannel)), accepted: 201 },
    'PATCH /memory-alerts/{alertId} notify': { field: 'notify', body: (n) => ({ notify: Array.from({ length: n }, memoryChannel) }), accepted: 200 },
    'POST /lattice/context include': { field: 'include', body: (n) => ({ subject: limitsSubject, include: sections(n) }), accepted: 200 },
    'POST /lattice/context excludeCategories': { field: 'excludeCategories', body: (n) => ({ subject: limitsSubject, excludeCategories: categories(n) }), accepted: 200 },
    'POST /lattice/context/batch subjects': {
      field: 'subjects',
      body: (n) => ({ subjects: Array.from({ length: n }, (_, i) => ({ kind: 'user', externalId: `batch${i}` })), include: ['profile'] }),
      accepted: 200,
    },
    'POST /lattice/context/batch include': { field: 'include', body: (n) => ({ subjects: [limitsSubject], include: sections(n) }), accepted: 200 },
    'POST /lattice/context/batch excludeCategories': { field: 'excludeCategories', body: (n) => ({ subjects: [limitsSubject], excludeCategories: categories(n) }), accepted: 200 },
    'POST /memory/context turns': { field: 'turns', body: (n) => ({ turns: Array.from({ length: n }, (_, i) => ({ role: 'user', content: `turn ${i}` })) }), accepted: 200 },
    'POST /memory/context excludeCategories': { field: 'excludeCategories', body: (n) => ({ conversation: 'user: garden', excludeCategories: categories(n) }), accepted: 200 },
    'PUT /admin/memory/precedence defaultOrder': {
      field: 'defaultOrder',
      body: (n) => ({ defaultOrder: Array.from({ length: n }, (_, i) => TIERS[i % TIERS.length]), scopeNearestWins: true, overrides: [] }),
      accepted: 200,
    },
    'PUT /admin/memory/precedence overrides': {
      field: 'overrides',
      body: (n) => ({ defaultOrder: TIERS, scopeNearestWins: true, overrides: Array.from({ length: n }, (_, i) => ({ category: `category${i}`, winningTier: 'local' })) }),
      accepted: 200,
    },
    'POST /admin/memory/entities aliases': {
      field: 'aliases',
      body: (n) => ({ type: 'person', canonicalName: `Alias holder ${n}`, aliases: Array.from({ length: n }, (_, i) => `Alias ${n} ${i}`) }),
      accepted: 201,
    },
    'POST /admin/memory/graph/traverse predicates': { field: 'predicates', body: (n) => ({ entityId: graphEntityId, predicates: Array.from({ length: n }, (_, i) => `p${i}`) }), accepted: 200 },
    'POST /memory/graph/traverse predicates': { field: 'predicates', body: (n) => ({ entityId: graphEntityId, predicates: Array.from({ length: n }, (_, i) => `p${i}`) }), accepted: 200 },
    // One seed named many times: the maximum is of the array as sent.
    'POST /admin/memory/prefetch-related seedMemoryIds': { field: 'seedMemoryIds', body: (n) => ({ seedMemoryIds: Array.from({ length: n }, () => evidenceId) }), accepted: 200 },
    'POST /lattice/decisions informedBy': {
      field: 'informedBy',
      body: (n) => ({ subject: limitsSubject, informedBy: Array.from({ length: n }, () => ({ memoryId: evidenceId, refType: 'collective' })) }),
      accepted: 201,
      afterMax: async (n) => expect(await count("SELECT jsonb_array_length(informed_by) AS n FROM learning_decisions WHERE project_id = $1", [p.projectId])).toBe(n),
    },
  };
  const limitsSubject = { kind: 'user', externalId: 'limits' };
  const TIERS = ['human_verified', 'local', 'licensed_brain', 'base'];
  const SECTIONS = ['profile', 'patterns', 'predictions', 'memories', 'observations'];
  const sections = (n: number) => Array.from({ length: n }, (_, i) => SECTIONS[i % SECTIONS.length]);
  const categories = (n: number) => Array.from({ length: n }, (_, i) => `category${i}`);
  const SCOPES = ['platform', 'project', 'location', 'agent', 'user', 'session'];
  const scopes = (n: number) => Array.from({ length: n }, (_, i) => SCOPES[i % SCOPES.length]);

  it('knows every batch field the OpenAPI document declares, and the typed rows maximum is the documented one', () => {
    const declared = operations(document).flatMap(({ key, operation }) =>
      Object.entries(bodySchema(operation)?.properties ?? {})
        .filter(([, schema]) => schema.type === 'array' && schema.maxItems !== undefined)
        .map(([field]) => `${key} ${field}`),
    );
    expect(declared.sort()).toEqual(Object.keys(batches).sort());
    const ingest = document.paths[`${PREFIX}/memory-typed/observations`]!.post!;
    expect(bodySchema(ingest)!.properties!.observations!.maxItems).toBe(MAX_OBSERVATIONS_PER_REQUEST);
    expect(ingest.description).toContain(`Up to ${MAX_OBSERVATIONS_PER_REQUEST} rows per call`);
  });

  it('refuses a batch one over its documented maximum with 400 naming the field and takes nothing; accepts exactly the maximum', async () => {
    ruleId = (await h.call('POST', p.projectId, '/memory-alerts', { body: rule([memoryChannel()]) })).json().id;
    const stored = async () =>
      (await count('SELECT count(*) AS n FROM typed_observations WHERE project_id = $1', [p.projectId])) +
      (await count('SELECT count(*) AS n FROM events WHERE project_id = $1', [p.projectId])) +
      (await count('SELECT count(*) AS n FROM memories WHERE project_id = $1', [p.projectId])) +
      (await count('SELECT count(*) AS n FROM alert_rules WHERE project_id = $1', [p.projectId])) +
      (await count('SELECT count(*) AS n FROM typed_ingest_batches WHERE project_id = $1', [p.projectId]));
    for (const [name, batch] of Object.entries(batches)) {
      const [method, path] = name.split(' ') as ['POST' | 'PATCH', string];
      const max = bodySchema(document.paths[`${PREFIX}${path}`]![method.toLowerCase()]!)!.properties![batch.field]!.maxItems!;
      const url = path.replace('{alertId}', ruleId);

      const before = await stored();
      const over = await h.call(method, p.projectId, url, { body: batch.body(max + 1) });
      expectRefusedField(over, `body.${batch.field}`);
      expect(over.json().message, name).toContain(String(max));
      expect(await stored(), name).toBe(before);

      const exact = await h.call(method, p.projectId, url, { body: batch.body(max) });
      expect(exact.statusCode, `${name}: ${exact.body.slice(0, 300)}`).toBe(batch.accepted);
      await batch.afterMax?.(max);
    }
  });

  // Before the list routes are seeded: the backfill at its maximum then has little to embed.
  it('bounds every limit-like body field (limit, scanLimit, batch): max+1 is a 400 naming it, the maximum is accepted', async () => {
    const fields = operations(document).flatMap(({ key, method, path, operation }) =>
      Object.entries(bodySchema(operation)?.properties ?? {})
        .filter(([name, schema]) => /limit|batch/i.test(name) && schema.maximum !== undefined)
        .map(([name, schema]) => ({ key, method, path: path.replace(PREFIX, ''), name, max: schema.maximum! })),
    );
    expect(fields.map((f) => `${f.key} ${f.name}`).sort()).toEqual([
      'POST /admin/memory/dedup scanLimit',
      'POST /admin/memory/embeddings/backfill batch',
      'POST /admin/memory/search limit',
      'POST /lattice/context memoryLimit',
      'POST /lattice/context predictionLimit',
      'POST /lattice/context/batch memoryLimit',
      'POST /lattice/context/batch predictionLimit',
      'POST /lattice/predict limit',
      'POST /memory/search limit',
    ]);
    const base: Record<string, object> = {
      '/admin/memory/search': { query: 'garden' },
      '/memory/search': { query: 'garden' },
      '/lattice/predict': { subject: { kind: 'user', externalId: 'limits' } },
      '/lattice/context': { subject: { kind: 'user', externalId: 'limits' } },
      '/lattice/context/batch': { subjects: [{ kind: 'user', externalId: 'limits' }] },
    };
    const rowsOf = (path: string, body: any): unknown[] => (path === '/lattice/predict' ? body.predictions : body);
    for (const f of fields) {
      const over = await h.call('POST', p.projectId, f.path, { body: { ...base[f.path], [f.name]: f.max + 1 } });
      expectRefusedField(over, `body.${f.name}`);
      const exact = await h.call('POST', p.projectId, f.path, { body: { ...base[f.path], [f.name]: f.max } });
      expect(exact.statusCode, `${f.key} ${f.name}: ${exact.body.slice(0, 300)}`).toBe(200);
      if (f.name === 'limit') expect(rowsOf(f.path, exact.json()).length).toBeLessThanOrEqual(f.max);
    }
  });

  describe('list limits', () => {
    /** How to read the rows of each list route's answer, for every GET with a bounded `limit`. */
    const lists: Record<string, (body: any) => unknown[]> = {
      'GET /admin/memory': (body) => body,
      'GET /memory': (body) => body,
      'GET /memory/mine': (body) => body,
      'GET /admin/memory/platform': (body) => body,
      'GET /admin/memory/review': (body) => body,
      'GET /memory/review': (body) => body,
      'GET /admin/memory/insights': (body) => body.subjects,
      'GET /memory-events': (body) => body,
      'GET /memory-typed/attributes': (body) => body,
      'GET /memory-typed/observations': (body) => body,
      'GET /lattice/contacts/{contactId}/patterns': (body) => body.data,
      'GET /lattice/predictions/upcoming': (body) => body.predictions,
      'GET /lattice/outcomes': (body) => body.outcomes,
      'GET /admin/memory/entities': (body) => body,
      'GET /memory/entities': (body) => body,
      'GET /admin/memory/graph/edges': (body) => body,
      'GET /memory-compliance/audit': (body) => body,
      'GET /brains': (body) => body.data,
      'GET /brain-catalog': (body) => body.data,
    };
    /** A route's path with its parameters filled in. */
    const concrete = (path: string) => path.replace('{contactId}', 'limits-contact');

    const limitParameter = (operation: Operation) => operation.parameters?.find((q) => q.in === 'query' && q.name === 'limit')?.schema;

    beforeAll(async () => {
      // More rows than any maximum: observations and their events (the batch test stored 10,000;
      // run alone, this stores 1,001), 501 pending platform memories about 501 subjects, 1,001 attributes.
      if ((await count("SELECT count(*) AS n FROM typed_observations WHERE project_id = $1 AND attribute_key = 'w'", [p.projectId])) <= 1000) {
        const seeded = await h.call('POST', p.projectId, '/memory-typed/observations', { body: batches['POST /memory-typed/observations observations']!.body(1001) });
        expect(seeded.json().accepted).toBe(1001);
      }
      // Through the store, not the service: the service would have all 501 embedded, seconds of
      // worker time the list routes do not need.
      await insertMemories(
        h.db,
        Array.from({ length: 501 }, (_, i) => ({
          id: newId('mem'),
          projectId: p.projectId,
          content: `Note ${i} about the garden`,
          scope: 'platform' as const,
          status: 'pending' as const,
          subjectKind: 'user',
          subjectExternalId: `s${i}`,
        })),
      );
      // 501 of the project's own memories (no subject, no end user): GET /memory/mine lists them.
      await insertMemories(
        h.db,
        Array.from({ length: 501 }, (_, i) => ({ id: newId('mem'), projectId: p.projectId, content: `Shared note ${i} about the garden`, scope: 'project' as const })),
      );
      // 1,001 audit rows (more than the audit listing's maximum), written as the log writes them.
      await h.db.query(
        `INSERT INTO compliance_audit (project_id, id, key_id, event_type, result_count)
         SELECT $1, 'aud_limits_' || lpad(i::text, 5, '0'), 'key_limits', 'read.search', 1 FROM generate_series(1, 1001) i
         ON CONFLICT DO NOTHING`,
        [p.projectId],
      );
      // 201 active patterns of one contact, each due tomorrow: more than either pattern list's maximum.
      const tomorrow = new Date(Date.now() + 86_400_000).toISOString();
      await h.apis.memory.upsertKeyed(
        p.projectId,
        Array.from({ length: 201 }, (_, i) => ({
          key: `recurring_event:limit${i}`,
          subjectKind: 'customer',
          subjectExternalId: 'limits-contact',
          type: 'behavior_pattern' as const,
          content: `limit${i} recurs weekly`,
          confidence: 0.9,
          metadata: { patternKind: 'recurring_event', eventType: `limit${i}`, confidence: 0.9, hits: 9, misses: 0, active: true, nextExpectedAt: tomorrow, lastObservedAt: tomorrow, observationCount: 10, observationWindowDays: 60 },
          source: 'mining',
          sourceMemoryIds: [],
          validFrom: new Date(),
          validTo: null,
        })),
      );
      // 1,001 outcomes of one decision, through SQL: more than the outcome list's maximum.
      await h.db.query(
        `INSERT INTO learning_decisions (project_id, id, subject_kind, subject_external_id, status, occurred_at, memory_id)
         VALUES ($1, 'dec_limits', 'user', 'limits', 'executed', now(), 'mem_limits_decision')`,
        [p.projectId],
      );
      await h.db.query(
        `INSERT INTO learning_outcomes (project_id, id, decision_id, subject_kind, subject_external_id, result, realized_at, attributed, memory_id)
         SELECT $1, 'out_limits' || i, 'dec_limits', 'user', 'limits', 'success', now(), true, 'mem_limits_outcome' || i FROM generate_series(1, 1001) AS i`,
        [p.projectId],
      );
      // 501 entities and 10,001 current edges, through SQL: more than the graph lists' maxima.
      await h.db.query(
        `INSERT INTO graph_entities (project_id, id, type, canonical_name, valid_from)
         SELECT $1, 'ent_limits' || i, 'concept', 'limits concept ' || i, now() - interval '1 day' FROM generate_series(1, 501) AS i`,
        [p.projectId],
      );
      await h.db.query(
        `INSERT INTO graph_edges (project_id, id, subject_id, predicate, object_literal, valid_from)
         SELECT $1, 'edge_limits' || i, 'ent_limits1', 'mentions', 'value ' || i, now() - interval '1 day' FROM generate_series(1, 10001) AS i`,
        [p.projectId],
      );
      // 101 brains, through SQL, published for all: more than the brain list's and the catalogue's maximum.
      await h.db.query(
        `INSERT INTO brains (project_id, id, external_id, name, brain_interface, version, visibility, status, rights_attested)
         SELECT $1, 'brn_limits' || lpad(i::text, 4, '0'), 'limits-' || i, 'Limits ' || i, 'v1', '1.0.0', 'PUBLIC', 'PUBLISHED', true FROM generate_series(1, 101) AS i
         ON CONFLICT DO NOTHING`,
        [p.projectId],
      );
      for (let start = 0; start < 1001; start += 50) {
        await Promise.all(
          Array.from({ length: Math.min(50, 1001 - start) }, (_, i) => h.apis.typed.defineAttribute(p.projectId, { attributeKey: `a${start + i}`, dataType: 'numeric' })),
        );
      }
    });

    it('knows every list route with a bounded limit', () => {
      const bounded = operations(document)
        .filter(({ method, operation }) => method === 'GET' && limitParameter(operation)?.maximum !== undefined)
        .map(({ key }) => key);
      expect(bounded.sort()).toEqual(Object.keys(lists).sort());
    });

    it('returns exactly the maximum at limit=max and the default without a limit, and refuses max+1 and 0 with 400 naming querystring.limit', async () => {
      for (const [key, rowsOf] of Object.entries(lists)) {
        const template = key.slice('GET '.length);
        const schema = limitParameter(document.paths[`${PREFIX}${template}`]!.get!)!;
        const path = concrete(template);
        const max = schema.maximum!;
        const atMax = await h.call('GET', p.projectId, `${path}?limit=${max}`);
        expect(atMax.statusCode, key).toBe(200);
        expect(rowsOf(atMax.json()), key).toHaveLength(max);
        const byDefault = await h.call('GET', p.projectId, path);
        expect(rowsOf(byDefault.json()), key).toHaveLength(schema.default!);
        expectRefusedField(await h.call('GET', p.projectId, `${path}?limit=${max + 1}`), 'querystring.limit');
        expectRefusedField(await h.call('GET', p.projectId, `${path}?limit=0`), 'querystring.limit');
      }
      // The description of the memory list says so in words too.
      expect(document.paths[`${PREFIX}/admin/memory`]!.get!.description).toMatch(/limit.*above 500 is refused/);
    });

    it('bounds the limit of every MCP tool that takes one: the maximum lists that many, max+1 is refused', async () => {
      const { tools } = await mcp.listTools();
      const bounded = tools
        .map((t) => ({ name: t.name, max: (t.inputSchema.properties?.limit as JsonSchema | undefined)?.maximum }))
        .filter((t): t is { name: string; max: number } => t.max !== undefined);
      expect(bounded.map((t) => t.name).sort()).toEqual(['memory_extract_pending', 'memory_list', 'memory_search']);
      for (const { name, max } of bounded) {
        // Without a query both lists answer newest first, and the project holds more memories than
        // any maximum, none extracted; the pending list answers a summary, then its JSON.
        const exact = (await mcp.callTool({ name, arguments: { limit: max } })) as { isError?: boolean; content: { text: string }[] };
        expect(exact.isError, exact.content[0]?.text).not.toBe(true);
        expect(JSON.parse(exact.content.at(-1)!.text), name).toHaveLength(max);
        const over = await mcp
          .callTool({ name, arguments: { limit: max + 1 } })
          .then((r) => r as { isError?: boolean; content: { text: string }[] })
          .catch((error: unknown) => ({ isError: true, content: [{ text: String(error) }] }));
        expect(over.isError, name).toBe(true);
        expect(over.content[0]!.text, name).toMatch(/limit/);
      }
    });
  });
});

describe('over HTTP: body size, request timeout, per-key rate limit', () => {
  const BODY_LIMIT = 4096;
  const RATE_LIMIT = 10;
  let h: Harness;
  let port: number;
  beforeAll(async () => {
    // One deployment with all three set small; every test gets its own project, so its key has the
    // whole rate budget.
    h = await createHarness({ env: { BODY_LIMIT_BYTES: String(BODY_LIMIT), REQUEST_TIMEOUT_MS: '1000', RATE_LIMIT_PER_MINUTE: String(RATE_LIMIT) } });
    await h.app.listen({ port: 0, host: '127.0.0.1' });
    port = (h.app.server.address() as AddressInfo).port;
  });
  afterAll(() => h?.close());

  const headers = (apiKey: string) => ({ authorization: `Bearer ${apiKey}`, 'content-type': 'application/json' });
  const observeUrl = (p: Project) => `/api/v1/projects/${p.projectId}/memory/observe`;
  /** Valid JSON of exactly `bytes` bytes: an observe body padded with whitespace. */
  const observeBody = (bytes: number, text = 'I like green tea.') => {
    const json = JSON.stringify({ text });
    return json + ' '.repeat(bytes - Buffer.byteLength(json));
  };
  const stored = async (p: Project, like: string) =>
    Number((await h.db.query<{ n: string }>('SELECT count(*) AS n FROM memories WHERE project_id = $1 AND content LIKE $2', [p.projectId, like])).rows[0]!.n);

  /**
   * Writes `head` at once, then one character of `drip` every `everyMs` until the server closes
   * the socket or `giveUpMs` passes. Answers what the server sent and when it closed.
   */
  function trickle(head: string, drip: string, everyMs: number, giveUpMs = 8000): Promise<{ response: string; closedAfterMs: number }> {
    return new Promise((resolve) => {
      const started = Date.now();
      let response = '';
      let sent = 0;
      const socket = connect(port, '127.0.0.1', () => socket.write(head));
      const timer = setInterval(() => {
        if (sent < drip.length && !socket.destroyed) socket.write(drip[sent++]!);
      }, everyMs);
      const giveUp = setTimeout(() => socket.destroy(), giveUpMs);
      socket.setEncoding('utf8');
      socket.on('data', (chunk: string) => (response += chunk));
      socket.on('error', () => {});
      socket.on('close', () => {
        clearInterval(timer);
        clearTimeout(giveUp);
        resolve({ response, closedAfterMs: Date.now() - started });
      });
    });
  }

  describe('body size', () => {
    it('answers 413 in the one error shape on every write operation, the MCP endpoint included', async () => {
      const p = await h.project();
      const writes = operations(await openApi(h.app)).filter(({ method }) => ['POST', 'PUT', 'PATCH'].includes(method));
      expect(writes.length).toBeGreaterThanOrEqual(15);
      const padding = JSON.stringify({ padding: 'x'.repeat(BODY_LIMIT) });
      for (const { key, method, path } of writes) {
        // A key per call: the rate limit (counted before the body is read) must not answer first.
        const apiKey = await h.key(p.projectId, ['READ_MEMORY', 'WRITE_MEMORY']);
        const url = path.replace('{projectId}', p.projectId).replace(/\{\w+\}/g, 'id_0123456789');
        const res = await h.app.inject({ method: method as 'POST', url, headers: headers(apiKey), payload: padding });
        expect(res.statusCode, key).toBe(413);
        expectErrorShape(res, 413, 'PAYLOAD_TOO_LARGE');
      }
    });

    it('takes a body of exactly BODY_LIMIT_BYTES; one byte more is 413, by Content-Length or chunked', async () => {
      const p = await h.project();
      const exact = await send(port, { method: 'POST', path: observeUrl(p), headers: headers(p.apiKey), chunks: [observeBody(BODY_LIMIT)] });
      expect(exact.statusCode, exact.body).toBe(200);
      expect(exact.json().saved).toHaveLength(1);

      const over = observeBody(BODY_LIMIT + 1, 'I like black coffee.');
      const sized = await send(port, { method: 'POST', path: observeUrl(p), headers: { ...headers(p.apiKey), 'content-length': BODY_LIMIT + 1 }, chunks: [over] });
      expectErrorShape(sized, 413, 'PAYLOAD_TOO_LARGE');
      // Without a Content-Length the limit is counted as the body streams in.
      const chunked = await send(port, {
        method: 'POST',
        path: observeUrl(p),
        headers: { ...headers(p.apiKey), 'transfer-encoding': 'chunked' },
        chunks: [over.slice(0, 2000), over.slice(2000)],
      });
      expectErrorShape(chunked, 413, 'PAYLOAD_TOO_LARGE');
      expect(await stored(p, '%coffee%')).toBe(0);
      expect((await send(port, { method: 'GET', path: '/healthz' })).statusCode).toBe(200);
    });
  });

  describe('request timeout', () => {
    function expectTimedOut({ response, closedAfterMs }: { response: string; closedAfterMs: number }): void {
      // Cut off once REQUEST_TIMEOUT_MS (1 s) has passed, and soon after: Node checks every quarter of it.
      expect(closedAfterMs).toBeGreaterThanOrEqual(900);
      expect(closedAfterMs).toBeLessThan(2500);
      expect(response).toMatch(/^HTTP\/1\.1 408 /);
      const body = JSON.parse(response.slice(response.indexOf('\r\n\r\n') + 4));
      expectErrorShape({ statusCode: 408, json: () => body }, 408, 'REQUEST_TIMEOUT');
    }

    const head = (p: Project, body: string, extra = '') =>
      `POST ${observeUrl(p)} HTTP/1.1\r\nHost: lattice\r\nAuthorization: Bearer ${p.apiKey}\r\nContent-Type: application/json\r\nContent-Length: ${Buffer.byteLength(body)}\r\n${extra}\r\n`;

    it('cuts off a client that trickles the body slower than REQUEST_TIMEOUT_MS with 408, stores nothing, and stays healthy', async () => {
      const p = await h.project();
      const body = JSON.stringify({ text: `I collect ${'very '.repeat(20)}old stamps.` });
      // A character every 100 ms: the body would take over 10 s.
      expectTimedOut(await trickle(head(p, body), body, 100));
      expect(await stored(p, '%stamps%')).toBe(0);

      // The server goes on: readiness, and the same request sent at once.
      expect((await send(port, { method: 'GET', path: '/readyz' })).statusCode).toBe(200);
      const prompt = await send(port, { method: 'POST', path: observeUrl(p), headers: headers(p.apiKey), chunks: [body] });
      expect(prompt.statusCode, prompt.body).toBe(200);
      expect(prompt.json().saved).toHaveLength(1);
    });

    it('cuts off a client that trickles its headers, and lets a slow body that arrives in time through', async () => {
      expectTimedOut(await trickle(`GET /healthz HTTP/1.1\r\nHost: lattice\r\n`, `X-Slow: ${'a'.repeat(200)}`, 100));

      // The last ten characters 50 ms apart: all there well within the timeout.
      const p = await h.project();
      const body = JSON.stringify({ text: 'I play chess.' });
      const { response } = await trickle(head(p, body, 'Connection: close\r\n') + body.slice(0, -10), body.slice(-10), 50);
      expect(response).toMatch(/^HTTP\/1\.1 200 /);
      expect(await stored(p, '%chess%')).toBe(1);
    });
  });

  it('answers what Node refuses before routing (oversized headers, bytes that are not HTTP) in the one error shape, and closes the connection', async () => {
    const cases = [
      { head: `GET /healthz HTTP/1.1\r\nHost: lattice\r\nX-Big: ${'a'.repeat(20_000)}\r\n\r\n`, status: 431, code: 'HEADERS_TOO_LARGE' },
      { head: 'NOT HTTP AT ALL\r\n\r\n', status: 400, code: 'BAD_REQUEST' },
    ];
    for (const c of cases) {
      const { response, closedAfterMs } = await trickle(c.head, '', 1000);
      expect(closedAfterMs).toBeLessThan(5000);
      expect(response).toMatch(new RegExp(`^HTTP/1\\.1 ${c.status} `));
      const body = JSON.parse(response.slice(response.indexOf('\r\n\r\n') + 4));
      expectErrorShape({ statusCode: c.status, json: () => body }, c.status, c.code);
    }
    expect((await send(port, { method: 'GET', path: '/healthz' })).statusCode).toBe(200);
  });

  describe('per-key rate limit', () => {
    const count = async (p: Project) => Number((await h.db.query<{ n: string }>('SELECT count(*) AS n FROM memories WHERE project_id = $1', [p.projectId])).rows[0]!.n);

    it("counts a key across every route; past the limit it gets 429 with Retry-After and does nothing, while another project's key and the probes go on", async () => {
      const a = await h.project();
      const b = await h.project();
      const calls = [
        () => h.call('GET', a.projectId, '/admin/memory'),
        () => h.call('POST', a.projectId, '/admin/memory', { body: { content: 'Likes jazz' } }),
        () => h.call('GET', a.projectId, '/memory-events'),
        () => h.call('POST', a.projectId, '/memory/search', { body: { query: 'jazz' } }),
        () => h.call('GET', a.projectId, '/memory-alerts'),
      ];
      for (let i = 0; i < RATE_LIMIT; i++) expect((await calls[i % calls.length]!()).statusCode).toBeLessThan(300);

      for (const limited of [
        await h.call('POST', a.projectId, '/admin/memory', { body: { content: 'Likes blues' } }),
        await h.call('GET', a.projectId, '/memory-typed/attributes'),
        await h.call('POST', a.projectId, '/mcp-server', { body: { jsonrpc: '2.0', id: 1, method: 'tools/list' }, headers: { accept: 'application/json, text/event-stream' } }),
      ]) {
        expectErrorShape(limited, 429, 'RATE_LIMIT');
        const retryAfter = Number(limited.headers['retry-after']);
        expect(Number.isInteger(retryAfter) && retryAfter >= 1 && retryAfter <= 60).toBe(true);
      }
      expect(await count(a)).toBe(1);

      for (let i = 0; i < RATE_LIMIT; i++) expect((await h.call('POST', b.projectId, '/admin/memory', { body: { content: `Likes jazz ${i}` } })).statusCode).toBe(201);
      expect(await count(b)).toBe(RATE_LIMIT);
      for (const url of ['/healthz', '/readyz']) expect((await h.app.inject({ method: 'GET', url })).statusCode).toBe(200);
    });

    it.skipIf(!REDIS_URL)('with Redis, shares one budget per key between API processes', async () => {
      const second = await buildApp(h.lattice, { logger: false });
      try {
        await second.ready();
        const c = await h.project();
        const via = (app: FastifyInstance) => app.inject({ method: 'GET', url: `/api/v1/projects/${c.projectId}/admin/memory`, headers: { authorization: `Bearer ${c.apiKey}` } });
        const codes = [];
        for (let i = 0; i <= RATE_LIMIT; i++) codes.push((await via(i % 2 === 0 ? h.app : second)).statusCode);
        expect(codes.join(" ")).toEqual([...Array<number>(RATE_LIMIT).fill(200), 429].join(" "));
        expect((await via(h.app)).statusCode).toBe(429);
      } finally {
        await second.close();
      }
    });
  });
});
