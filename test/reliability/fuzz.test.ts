
// The fuzz suite: every project operation in /openapi.json and every MCP tool, driven by requests
// generated from their own schemas (fast-check, fixed seed): valid, broken in one place, or hostile
// (NUL, lone surrogates, bidi and zero-width characters, SQL-ish text, timestamps past what Postgres
// or JS hold, 1e308, deep nesting, broken JSON, wrong content types and credentials). Whatever
// arrives, the service answers below 500; a refusal carries the one error body and writes nothing;
// what the schema refuses is refused; and the service still works afterwards.
// FUZZ_RUNS (default 20 per operation and tool) and FUZZ_SEED for longer or other runs; FUZZ_REPORT=1
// prints the answers per operation. A failure prints the request as sent, to replay it.
import { StreamableHTTPError } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { ErrorCode, McpError } from '@modelcontextprotocol/sdk/types.js';
import { Queue } from 'bullmq';
import fc from 'fast-check';
import type { LightMyRequestResponse, RouteOptions } from 'fastify';
import { Redis } from 'ioredis';
import { spawnSync } from 'node:child_process';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { projectRoot } from '../../src/platform/project-root.js';
import { InProcessQueue } from '../../src/platform/queue-inprocess.js';
import { changed, clip, errorShapeProblem, isJsonRpcError, jsonRpcOutcome, parsed, reachedHandler, SNAPSHOT, type Snapshot } from '../helpers/fuzz-oracles.js';
import { buildRequest, jsonRpcBodies, projectOperations, requestArbitrary, type BuiltRequest, type Operation, type Target, type Tool } from '../helpers/fuzz-requests.js';
import { startGateway, type GatewayServer } from '../helpers/gateway-server.js';
import { createHarness, REDIS_URL, type Harness } from '../helpers/harness.js';
import { connectMcp } from '../helpers/mcp-client.js';
import { assertGeneratable, satisfies, SchemaFuzzer } from '../helpers/schema-arbitrary.js';

const RUNS = Number(process.env.FUZZ_RUNS ?? 20);
const SEED = Number(process.env.FUZZ_SEED ?? 20_240_917);
const MCP_OPERATION = 'POST /mcp-server';
/** The MCP endpoints: the project's, and a brain's (whose tools share the project endpoint's names). */
const MCP_OPERATIONS = new Set([MCP_OPERATION, 'POST /brains/{brainId}/mcp-server/http']);
/** Routes kept out of the OpenAPI document on purpose (the stateless MCP endpoints' 405 answers). */
const HIDDEN = ['GET /mcp-server', 'DELETE /mcp-server', 'GET /brains/{brainId}/mcp-server/http', 'DELETE /brains/{brainId}/mcp-server/http'];

interface Failure {
  where: string;
  problem: string;
  request: string;
  answer: string;
}

/** A stable seed per operation, so one operation's failure replays without the others. */
const seedFor = (key: string) => [...key].reduce((h, c) => (Math.imul(h, 31) + c.charCodeAt(0)) | 0, SEED);

const describeRequest = (r: BuiltRequest) =>
  `${r.method} ${clip(r.url, 600)}\n  headers: ${JSON.stringify({ ...r.headers, authorization: r.headers.authorization ? '…' : undefined })}` +
  `\n  body: ${r.payload === undefined ? '(none)' : clip(JSON.stringify(Buffer.isBuffer(r.payload) ? `<bytes> ${r.payload.toString('latin1')}` : r.payload))}`;

describe('fuzzing every operation and MCP tool from its schema', () => {
  let h: Harness;
  let gateway: GatewayServer;
  let operations: Operation[];
  let tools: Tool[];
  let target: Target;
  let foreign: { memoryId: string; alertId: string };
  let bull: Queue | undefined;
  const served: RouteOptions[] = [];

  const snapshot = async (): Promise<Snapshot> => (await h.db.query<Snapshot>(SNAPSHOT)).rows[0]!;

  /** Waits until no job is queued or running, so what a job writes is never taken for the request's doing. */
  async function settle(): Promise<void> {
    const queue = h.lattice.runtime.queue;
    if (queue instanceof InProcessQueue) return queue.whenIdle();
    for (const deadline = Date.now() + 30_000; Date.now() < deadline; await new Promise((r) => setTimeout(r, 10))) {
      const counts = await bull!.getJobCounts('waiting', 'active', 'prioritized', 'waiting-children');
      if (Object.values(counts).every((n) => n === 0)) return;
    }
    throw new Error('the queue did not settle within 30 s');
  }

  beforeAll(async () => {
    // A local model gateway, so that the routes that need one (reflection, media) are fuzzed past
    // their configuration: it answers structured requests with an empty insight list, and text.
    gateway = await startGateway();
    gateway.chat = (body) => (body.response_format ? { insights: [] } : 'I like green tea.');
    gateway.transcribe = () => 'I like green tea.';
    h = await createHarness({
      // Webhooks may target loopback (a closed port) so that a valid rule can be created without
      // DNS; one attempt, briefly; no rate limit in the way of the run.
      env: {
        WEBHOOK_ALLOW_PRIVATE_TARGETS: 'true',
        WEBHOOK_MAX_ATTEMPTS: '1',
        WEBHOOK_TIMEOUT_MS: '300',
        RATE_LIMIT_PER_MINUTE: '10000000',
        MODEL_GATEWAY_URL: gateway.url,
        MEMORY_REFLECTION_ENABLED: 'true',
        MEMORY_MULTIMODAL_ENABLED: 'true',
      },
      build: { onRoute: (route) => served.push(route) },
    });
    if (REDIS_URL) {
      // The BullMQ queue's name inside the harness's prefix (QUEUE_NAME in src/platform/queue-bullmq.ts).
      bull = new Queue('jobs', { connection: new Redis(REDIS_URL, { maxRetriesPerRequest: null }), prefix: h.config.queuePrefix });
    }
    const main = await h.project();
    const other = await h.project();
    target = { ...main, readOnlyKey: await h.key(main.projectId, ['READ_MEMORY']), otherApiKey: other.apiKey };

    // Something of every kind to point path parameters at, in the project and in another one.
    const save = async (projectId: string, body: object) => {
      const res = await h.call('POST', projectId, '/admin/memory', { body });
      expect(res.statusCode, res.body).toBe(201);
      return res.json().id as string;
    };
    await save(main.projectId, { content: 'Prefers green tea in the morning', type: 'preference', scope: 'user', subject: { kind: 'user', externalId: 'u1' } });
    await save(main.projectId, { content: 'Works from Lisbon on Fridays', type: 'fact', scope: 'project' });
    await save(main.projectId, { content: 'Asked to be called Sam', type: 'preference', scope: 'user', status: 'pending' });
    await save(main.projectId, { content: 'Renewed the annual plan in March', type: 'event', scope: 'user', validFrom: '2024-03-01T10:00:00Z' });
    await save(main.projectId, { content: 'Keeps a cat called Miso', type: 'fact', scope: 'user', status: 'pending' });
    const foreignMemoryId = await save(other.projectId, { content: 'Belongs to another project', type: 'fact', scope: 'project' });
    const alert = async (projectId: string) => {
      const res = await h.call('POST', projectId, '/memory-alerts', {
        body: { name: 'fuzz', trigger: { kind: 'engine-event', eventTypes: [] }, notify: [{ kind: 'memory', writeAs: { content: 'Saw {{event.eventType}}', scope: 'project' } }] },
      });
      expect(res.statusCode, res.body).toBe(201);
      return res.json().id as string;
    };
    await alert(main.projectId);
    await alert(main.projectId);
    const foreignAlertId = await alert(other.projectId);
    for (const [attributeKey, dataType] of [['fuzz_metric', 'numeric'], ['fuzz_flag', 'boolean'], ['fuzz_tier', 'categorical']] as const) {
      const res = await h.call('POST', main.projectId, '/memory-typed/attributes', { body: { attributeKey, dataType } });
      expect(res.statusCode, res.body).toBeLessThan(300);
    }
    const observed = await h.call('POST', main.projectId, '/memory-typed/observations', {
      body: { observations: [1, 2, 3].map((n) => ({ attributeKey: 'fuzz_metric', subjectKind: 'user', subjectExternalId: 'u1', valueNumeric: n, observedAt: `2024-01-0${n}T00:00:00Z` })) },
    });
    expect(observed.statusCode, observed.body).toBeLessThan(300);
    await settle();
    if (bull) expect(Object.values(await bull.getJobCounts('completed', 'failed', 'delayed')).reduce((a, b) => a + b, 0), 'settle() watches the queue the app uses').toBeGreaterThan(0);

    foreign = { memoryId: foreignMemoryId, alertId: foreignAlertId };

    const doc = (await h.app.inject({ method: 'GET', url: '/openapi.json' })).json();
    operations = projectOperations(doc);
    const listed = await h.call('POST', main.projectId, '/mcp-server', {
      body: { jsonrpc: '2.0', id: 1, method: 'tools/list' },
      headers: { accept: 'application/json, text/event-stream' },
    });
    tools = (listed.json() as { result: { tools: Tool[] } }).result.tools;
  });

  afterAll(async () => {
    await bull?.close();
    await h?.close();
    await gateway?.close();
  });

  /**
   * A generator whose hints are what exists now: the project's memories and alert rules (deletes
   * and writes earlier in the run change them) and one of another project's, which must stay out
   * of reach.
   */
  async function currentFuzzer(): Promise<SchemaFuzzer> {
    const ids = async (table: 'memories' | 'alert_rules') =>
      (await h.db.query<{ id: string }>(`SELECT id FROM ${table} WHERE project_id = $1 ORDER BY id DESC LIMIT 12`, [target.projectId])).rows.map((r) => r.id);
    const memoryIds = [...(await ids('memories')), foreign.memoryId];
    const alertIds = [...(await ids('alert_rules')), foreign.alertId];
    return new SchemaFuzzer({
      hints: {
        memoryId: memoryIds,
        id: memoryIds,
        alertId: alertIds,
        attributeKey: ['fuzz_metric', 'fuzz_flag', 'fuzz_tier'],
        attribute: ['fuzz_metric'],
        subjectKind: ['user'],
        subjectExternalId: ['u1'],
        subject: ['user:u1', { kind: 'user', externalId: 'u1' }],
        url: ['http://127.0.0.1:9/hook'],
        eventType: ['fuzz.event'],
        // A brain page's cursor is one the API gave (an opaque token); a pattern page's, a pattern id.
        cursor: [Buffer.from(JSON.stringify({ after: 'brn_~' })).toString('base64url'), Buffer.from(JSON.stringify({ before: 'brn_0' })).toString('base64url'), 'mem_~'],
        // Free text the service parses as JSON.
        payloadJson: ['{"category":"tea","order":{"total":100}}', '{"a":[1,2,{"b":null}]}', '{}'],
      },
    });
  }

  it('has a generator for every project operation the app serves, and for every MCP tool', () => {
    const documented = operations.map((op) => op.key).sort();
    const routes = served
      .filter((route) => route.url.startsWith('/api/v1/projects/:projectId/'))
      .flatMap((route) => [route.method].flat().filter((m) => m !== 'HEAD').map((m) => `${m} ${route.url.slice('/api/v1/projects/:projectId'.length).replace(/:(\w+)/g, '{$1}')}`));
    expect([...new Set(routes)].sort()).toEqual([...documented, ...HIDDEN].sort());
    expect(documented.length).toBeGreaterThan(20);
    for (const op of operations) {
      assertGeneratable(op.pathSchema, `${op.key} path`);
      assertGeneratable(op.querySchema, `${op.key} query`);
      if (['POST', 'PATCH', 'PUT'].includes(op.method)) {
        expect(op.body, `${op.key} documents no JSON body`).toBeDefined();
        // A body that takes anything is fuzzed only through a generator of its own.
        if (Object.keys(op.body!).filter((k) => k !== 'description').length === 0) expect(MCP_OPERATIONS.has(op.key), op.key).toBe(true);
        else assertGeneratable(op.body, `${op.key} body`);
      }
    }
    expect(tools.length).toBeGreaterThan(0);
    for (const tool of tools) assertGeneratable(tool.inputSchema, `MCP ${tool.name}`);
  });

  it('answers every generated request below 500; refusals carry the error body and write nothing; what the schema refuses is refused', async () => {
    const failures: Failure[] = [];
    const reached = new Map<string, number>();
    const statuses = new Map<string, Record<string, number>>();
    // Writes and reads first, deletes last, so the fixtures live through most of the run.
    const order = (op: Operation) => ({ POST: 0, GET: 1, PATCH: 2, PUT: 2, DELETE: 3 })[op.method];
    const fuzzed = [...operations].sort((a, b) => order(a) - order(b));
    const hidden = HIDDEN.map((key): Operation => {
      const [method, path] = key.split(' ') as [Operation['method'], string];
      return { key, method, path, pathSchema: { type: 'object', properties: {} }, querySchema: { type: 'object', properties: {} } };
    });

    for (const op of [...fuzzed, ...hidden]) {
      const fuzzer = await currentFuzzer();
      const bodyOverride = MCP_OPERATIONS.has(op.key) ? jsonRpcBodies(tools, fuzzer) : undefined;
      const samples = fc.sample(requestArbitrary(op, { fuzzer, bodyOverride }), { seed: seedFor(op.key), numRuns: RUNS });
      reached.set(op.key, 0);
      for (const sample of samples) {
        const request = buildRequest(op, sample, target);
        const toolRefusal = sample.body.toolRefusal;
        const fail = (problem: string, res?: LightMyRequestResponse) =>
          failures.push({ where: op.key, problem, request: describeRequest(request), answer: res ? `${res.statusCode} ${clip(res.body, 600)}` : '(none)' });

        await settle();
        const before = await snapshot();
        let res: LightMyRequestResponse;
        try {
          res = await h.app.inject({ method: request.method, url: request.url, headers: request.headers, ...(request.payload === undefined ? {} : { payload: request.payload }) });
        } catch (error) {
          fail(`inject threw: ${String(error)}`);
          continue;
        }
        const status = res.statusCode;
        const tally = statuses.get(op.key) ?? {};
        const label = `${status}${status >= 400 ? ` ${String((parsed(res) as { code?: unknown } | undefined)?.code ?? '')}` : ''}`;
        tally[label] = (tally[label] ?? 0) + 1;
        statuses.set(op.key, tally);
        if (status >= 500) {
          fail(`answered ${status}`, res);
          continue;
        }
        if (status < 400 && request.refusals.length > 0) fail(`accepted although ${request.refusals.join('; ')}`, res);

        let refused = status >= 400;
        if (status >= 400) {
          const jsonRpc = MCP_OPERATIONS.has(op.key) && isJsonRpcError(parsed(res));
          const shape = jsonRpc ? undefined : errorShapeProblem(res);
          if (shape) fail(shape, res);
        } else if (MCP_OPERATIONS.has(op.key) && status === 200) {
          const outcome = jsonRpcOutcome(res.json());
          if (outcome.crash) fail(outcome.crash, res);
          if (toolRefusal && !outcome.refused) fail(`the tool accepted although ${toolRefusal}`, res);
          refused = outcome.refused;
        } else if (status !== 204 && /json/.test(String(res.headers['content-type']))) {
          try {
            res.json();
          } catch {
            fail('a success answer is not JSON', res);
          }
        }
        if (reachedHandler(res)) reached.set(op.key, reached.get(op.key)! + 1);
        if (refused) {
          await settle();
          const tables = changed(before, await snapshot());
          if (tables.length > 0) fail(`refused (${status}) but changed ${tables.join(', ')}`, res);
        }
      }
    }

    if (process.env.FUZZ_REPORT) for (const [key, tally] of statuses) console.log(`${key.padEnd(48)} ${JSON.stringify(tally)}`);
    const shallow = [...reached].filter(([, n]) => n === 0).map(([key]) => key).filter((key) => !HIDDEN.includes(key));
    expect(failures.map((f) => `${f.where}: ${f.problem}\n  ${f.request}\n  -> ${f.answer}`)).toEqual([]);
    // A generator that never gets past validation fuzzes nothing behind it (with few runs, chance decides).
    if (RUNS >= 20) expect(shallow, 'operations no generated request got past validation in (raise FUZZ_RUNS or add hints)').toEqual([]);
    expect([...reached.keys()].sort()).toEqual([...operations.map((op) => op.key), ...HIDDEN].sort());
    // 20 generated requests for every operation, each after the queue settles: about 21 s alone on
    // 2 cores, three times that beside another file's fork (65.6 s in a CI run), past the default 60 s.
  }, 240_000);

  it('answers every MCP tool call from a real client with a result or a clear error, never a crash', async () => {
    const client = await connectMcp(h.app, target, 'fuzz');
    const failures: string[] = [];
    try {
      const listed = (await client.listTools()).tools as Tool[];
      expect(listed.map((t) => t.name).sort()).toEqual(tools.map((t) => t.name).sort());
      for (const tool of listed) {
        const fuzzer = await currentFuzzer();
        const samples = fc.sample(fuzzer.value(tool.inputSchema), { seed: seedFor(`MCP ${tool.name}`), numRuns: RUNS });
        for (const args of samples) {
          const invalid = !satisfies(tool.inputSchema, args);
          const where = `${tool.name}(${clip(JSON.stringify(args) ?? 'undefined')})`;
          await settle();
          const before = await snapshot();
          let refused: boolean;
          try {
            const result = (await client.callTool({ name: tool.name, arguments: args as Record<string, unknown> })) as { isError?: boolean; content: { text?: string }[] };
            const outcome = jsonRpcOutcome({ result });
            if (outcome.crash) failures.push(`${where}: ${outcome.crash}`);
            if (invalid && !outcome.refused) failures.push(`${where}: accepted arguments that break the inputSchema`);
            refused = outcome.refused;
          } catch (error) {
            refused = true;
            if (error instanceof McpError) {
              if (error.code === ErrorCode.InternalError) failures.push(`${where}: MCP internal error ${error.message}`);
            } else if (error instanceof StreamableHTTPError) {
              if (!(typeof error.code === 'number' && error.code >= 400 && error.code < 500)) failures.push(`${where}: HTTP ${String(error.code)} ${error.message}`);
            } else {
              failures.push(`${where}: transport failure ${String(error)}`);
            }
          }
          if (refused) {
            await settle();
            const tables = changed(before, await snapshot());
            if (tables.length > 0) failures.push(`${where}: refused but changed ${tables.join(', ')}`);
          }
        }
      }
      // The client and the endpoint still work.
      expect((await client.listTools()).tools.length).toBe(tools.length);
    } finally {
      await client.close();
    }
    expect(failures).toEqual([]);
  });

  it('answers what earlier runs of this suite found the way it should now, whatever the seed', async () => {
    const rpc = (params: object) =>
      h.call('POST', target.projectId, '/mcp-server', {
        body: { jsonrpc: '2.0', id: 7, method: 'tools/call', params },
        headers: { accept: 'application/json, text/event-stream' },
      });
    // The router's refusals (a path parameter past its length limit, an escape that does not
    // decode) came in Fastify's own body and codes: 414 FST_ERR_MAX_PARAM_LENGTH, 400 FST_ERR_BAD_URL.
    for (const url of [`/api/v1/projects/${target.projectId}/admin/memory/${'x'.repeat(101)}`, `/api/v1/projects/${target.projectId}/admin/memory/%ED%A0%80`]) {
      const res = await h.app.inject({ method: 'GET', url, headers: { authorization: `Bearer ${target.apiKey}` } });
      expect(res.statusCode, res.body).toBe(400);
      expect(errorShapeProblem(res), res.body).toBeUndefined();
      expect(res.json().code).toBe('VALIDATION_ERROR');
    }
    // JS reads "0015-08-12 02:01:17Z" (a space for the T) as no date at all (500 on toISOString),
    // and "0050-08-12 02:01:17Z" as 1950: both are refused as the date-time they do not name.
    const noDate = await h.call('POST', target.projectId, '/memory/search', { body: { query: 'tea', asOf: '0015-08-12 02:01:17Z' } });
    expect(noDate.statusCode, noDate.body).toBe(400);
    const shifted = await h.call('POST', target.projectId, '/admin/memory', { body: { content: 'Visited Rome', validFrom: '0050-08-12 02:01:17Z' } });
    expect(shifted.statusCode, shifted.body).toBe(400);
    expect(shifted.json().message).toMatch(/validFrom/);
    // A statement observed as said after year 4000 overflowed the stack of the date library: 500.
    const late = await h.call('POST', target.projectId, '/memory/observe', { body: { text: 'I met Ana last friday.', occurredAt: '9630-12-02T02:51:12Z' } });
    expect(late.statusCode, late.body).toBeLessThan(300);
    // tools/call with arguments that are not an object was -32603 Internal error (the SDK's parse failure).
    const notObject = (await rpc({ name: 'memory_list', arguments: 'x' })).json();
    expect(notObject.error?.code, JSON.stringify(notObject)).toBe(ErrorCode.InvalidParams);
    // A number a `real` column cannot hold was a tool error with statusCode 500; REST answered 400.
    const tiny = (await rpc({ name: 'memory_save', arguments: { content: 'Rates tea highly', type: 'preference', scope: 'project', importance: 1e-300 } })).json();
    expect(tiny.result?.isError, JSON.stringify(tiny)).toBe(true);
    expect(JSON.parse(tiny.result.content[0].text)).toMatchObject({ statusCode: 400, code: 'VALIDATION_ERROR' });
  });

  it('reads dates in statements that reach year 4000 without hanging (the date library loops there)', async () => {
    // In a child process, so that a regression fails here instead of freezing the test runner.
    const script = `
      import { extractCandidates } from ${JSON.stringify(join(projectRoot(), 'src/memory/extract/extract.ts'))};
      const cases = [['We met on 3999-12-31', '2024-01-01T00:00:00Z'], ['I will see her in 721,700 days', '2024-01-01T00:00:00Z'],
        ['I will see her in 1000 years', '2999-12-31T12:00:00Z'], ['I met Ana last friday', '3999-12-20T00:00:00Z'], ['I was born in 1985', '2024-01-01T00:00:00Z']];
      console.log(JSON.stringify(cases.map(([text, now]) => extractCandidates(text, { role: 'user', now: new Date(now) }).candidates.map((c) => c.occurredAt ?? null))));`;
    const { status, stdout, stderr, error } = spawnSync(process.execPath, ['--import', 'tsx', '--input-type=module', '-e', script], {
      cwd: projectRoot(),
      encoding: 'utf8',
      timeout: 45_000,
    });
    expect(error, 'the extractor did not answer within 45 s').toBeUndefined();
    expect(status, stderr).toBe(0);
    const dates = JSON.parse(stdout.trim().split('\n').at(-1)!) as (string | null)[][];
    expect(dates.slice(0, 4).flat().every((d) => d === null)).toBe(true);
    // Ordinary dates are still read.
    expect(dates[4]).toEqual(['1985-01-01T00:00:00.000Z']);
  }, 60_000);

  it('stays healthy: /readyz answers 200, and a save then a search still work', async () => {
    expect((await h.app.inject({ method: 'GET', url: '/readyz' })).statusCode).toBe(200);
    const content = 'After the fuzzing, still prefers oolong tea';
    const saved = await h.call('POST', target.projectId, '/admin/memory', { body: { content, type: 'preference', scope: 'project' } });
    expect(saved.statusCode, saved.body).toBe(201);
    const found = await h.call('POST', target.projectId, '/memory/search', { body: { query: 'oolong tea', limit: 50 } });
    expect(found.statusCode, found.body).toBe(200);
    expect(JSON.stringify(found.json())).toContain(saved.json().id);
  });
});
