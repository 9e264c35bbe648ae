// Fifty concurrent identical requests for every idempotent write: every one answers success, they
// all name the same record, and the database holds exactly one row.
//
// The idempotent writes (src/*/routes.ts, src/memory/*/routes.ts, the MCP tools in src/memory/mcp.ts,
// first-start provisioning in src/tenancy/bootstrap.ts), what makes a repeat a repeat, and what a
// repeat answers:
//   POST /lattice/events/emit with a dedupeKey   (project, dedupeKey)                      200 { emitted: false, event: the stored one }; fires nothing
//   POST /lattice/events/emit without one         sha256 of type, subject, severity, payload, sources: the same
//   POST /admin/memory                            the live (scope, type, subject, content hash)    201 first, 200 with the same memory after
//   POST /admin/memory with a client id           the id (and the content)                  201 first, 200 with the same memory after
//   POST /memory/observe                          each statement's content hash, and its words  200 { saved: [] }: only the first saves
//                                                 within the subject (one turn per subject at a time)
//   POST /memory-typed/attributes                 (project, attributeKey)                   201 first, 200 with the same id after
//   POST /memory-typed/observations               a row's dedupe hash (subject, attribute, observedAt, value, source), and its client id
//                                                                                           200 { accepted: 0, duplicates: 1 }
//   POST /memory-typed/observations/enqueue       the same, when the job ingests the batch  202 { enqueued: 1 } each; one row once the jobs ran
//   POST /lattice/decisions with an idempotencyKey (project, idempotencyKey)                201 first, 200 with the same decision after
//   POST /lattice/outcomes with an idempotencyKey  (project, idempotencyKey)                201 first, 200 with the same answer (and
//                                                                                           the same ref updates, made once) after
//   MCP memory_save                               as POST /admin/memory                     { created: false } with the same id
//   MCP memory_observe                            as POST /memory/observe                   { saved: [] }
//   bootstrap (LATTICE_BOOTSTRAP_PROJECT and _API_KEY, or the demo project)   project id / key hash: one project, one key
// Not idempotent, by design: POST /memory-alerts (it takes no key: each call is a new rule); PATCH,
// DELETE, confirm and promote act on an existing row; dedup, consolidate and the embedding backfill
// are maintenance runs; the searches read; a decision or outcome without an idempotencyKey is a new
// record each time. The last test fails when an operation or tool whose description speaks of
// idempotency or deduplication is not in this file.
//
// Other files race fewer requests at some of these (test/events/events.test.ts 10 emits,
// test/alerts/alerts.test.ts 8, test/typed/typed-routes.test.ts 5 ingests); this one holds every
// idempotent write to the same standard. On Postgres the harness's pool has 5 connections, so
// five transactions at a time race; PGlite runs them one after another through one connection.
import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import type { LightMyRequestResponse } from 'fastify';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createLogger } from '../../src/platform/logger.js';
import { migrate } from '../../src/platform/migrations.js';
import { DEMO_PROJECT } from '../../src/tenancy/bootstrap.js';
import { createTenancyModule } from '../../src/tenancy/index.js';
import { appendAllTypedEvents, createHarness, createTestDatabase, testConfig, uniqueName, type Harness } from '../helpers/harness.js';
import { connectMcp } from '../helpers/mcp-client.js';

const N = 50;
const PREFIX = '/api/v1/projects/{projectId}';
type Project = { projectId: string; apiKey: string };
type ToolResult = { isError?: boolean; content: { type: string; text: string }[] };

/** Operations and tools this file races, filled as the tests are declared. */
const coveredOperations = new Set<string>();
const coveredTools = new Set<string>();

const statuses = (answers: readonly LightMyRequestResponse[]) => answers.map((a) => a.statusCode).sort();
/** One `first`, then N-1 `repeat`. */
const firstThenRepeats = (first: number, repeat: number) => [first, ...Array<number>(N - 1).fill(repeat)].sort();
const times = <T>(n: number, make: () => Promise<T>) => Promise.all(Array.from({ length: n }, make));

describe('50 concurrent identical idempotent writes make exactly one row', () => {
  let h: Harness;
  let mcp: Client;
  let mcpProject: Project;

  beforeAll(async () => {
    h = await createHarness();
    mcpProject = await h.project();
    mcp = await connectMcp(h.app, mcpProject, 'races');
  });
  afterAll(async () => {
    await mcp?.close();
    await h?.close();
  });

  const count = async (sql: string, params: unknown[]) => Number((await h.db.query<{ n: string }>(sql, params)).rows[0]!.n);
  const fifty = (projectId: string, method: 'POST', path: string, body: unknown) => times(N, () => h.call(method, projectId, path, { body }));

  /** 201 for one answer and 200 for the rest, all naming one id, and the project's only row in `table`; answers the id. */
  async function expectCreatedOnce(answers: readonly LightMyRequestResponse[], table: 'memories' | 'typed_attributes', projectId: string): Promise<string> {
    expect(statuses(answers)).toEqual(firstThenRepeats(201, 200));
    const ids = [...new Set(answers.map((a) => a.json().id as string))];
    expect(ids).toHaveLength(1);
    const { rows } = await h.db.query<{ id: string }>(`SELECT id FROM ${table} WHERE project_id = $1`, [projectId]);
    expect(rows.map((r) => r.id)).toEqual(ids);
    return ids[0]!;
  }

  function race(operation: string, name: string, test: () => Promise<void>): void {
    coveredOperations.add(operation);
    it(`${operation}: ${name}`, test);
  }
  function raceTool(tool: string, name: string, test: () => Promise<void>): void {
    coveredTools.add(tool);
    it(`MCP ${tool}: ${name}`, test);
  }

  async function callTool(name: string, args: Record<string, unknown>): Promise<{ isError: boolean; body: any }> {
    const result = (await mcp.callTool({ name, arguments: args })) as ToolResult;
    return { isError: result.isError === true, body: JSON.parse(result.content[0]!.text) };
  }

  describe('the event log', () => {
    const EMIT = '/lattice/events/emit';

    async function expectOneEvent(p: Project, body: Record<string, unknown>, ruleId: string): Promise<void> {
      const answers = await fifty(p.projectId, 'POST', EMIT, body);
      expect(statuses(answers)).toEqual(Array(N).fill(200));
      const bodies = answers.map((a) => a.json());
      expect(bodies.filter((b) => b.emitted === true)).toHaveLength(1);
      expect(bodies.filter((b) => b.emitted === false)).toHaveLength(N - 1);
      const ids = new Set(bodies.map((b) => b.event.id));
      expect(ids.size).toBe(1);
      // Only the emit that appended fires the rule.
      expect(bodies.reduce((sum, b) => sum + b.alertDispatches, 0)).toBe(1);

      const { rows } = await h.db.query<{ id: string }>('SELECT id FROM events WHERE project_id = $1 AND event_type = $2', [p.projectId, body.eventType]);
      expect(rows.map((r) => r.id)).toEqual([...ids]);
      expect(await count('SELECT count(*) AS n FROM alert_fires WHERE alert_rule_id = $1', [ruleId])).toBe(1);
      // The rule's memory channel ran once, for the one fire.
      expect(await count("SELECT count(*) AS n FROM memories WHERE project_id = $1 AND content LIKE 'fired %'", [p.projectId])).toBe(1);
    }

    async function projectWithRule(eventType: string): Promise<{ p: Project; ruleId: string }> {
      const p = await h.project();
      const rule = await h.call('POST', p.projectId, '/memory-alerts', {
        body: {
          name: 'race',
          trigger: { kind: 'engine-event', eventTypes: [eventType] },
          notify: [{ kind: 'memory', writeAs: { content: 'fired {{event.eventType}} for {{subject.externalId}}', scope: 'project' } }],
        },
      });
      expect(rule.statusCode, rule.body).toBe(201);
      return { p, ruleId: rule.json().id };
    }

    race('POST /lattice/events/emit', 'with a dedupeKey: one event, one alert fire; a repeat answers 200 emitted false', async () => {
      const { p, ruleId } = await projectWithRule('race.keyed');
      await expectOneEvent(p, { eventType: 'race.keyed', subject: { kind: 'user', externalId: 'u1' }, payloadJson: '{"n":1}', dedupeKey: 'race-key-1' }, ruleId);
    });

    race('POST /lattice/events/emit', 'without a dedupeKey (the content hash is the key): one event, one alert fire', async () => {
      const { p, ruleId } = await projectWithRule('race.hashed');
      await expectOneEvent(p, { eventType: 'race.hashed', subject: { kind: 'user', externalId: 'u1' }, severity: 'warn', payload: { n: 1, nested: { b: 2, a: 1 } } }, ruleId);
    });
  });

  describe('memories', () => {
    const SAVE = '/admin/memory';

    async function expectOneMemory(p: Project, body: Record<string, unknown>): Promise<string> {
      return expectCreatedOnce(await fifty(p.projectId, 'POST', SAVE, body), 'memories', p.projectId);
    }

    race('POST /admin/memory', 'the same content: one memory; the first answers 201, every repeat 200 with it', async () => {
      const p = await h.project();
      await expectOneMemory(p, { content: 'Prefers window seats on long flights', type: 'preference', scope: 'user', subject: { kind: 'user', externalId: 'u1' } });
    });

    race('POST /admin/memory', 'with a client id: one memory under that id', async () => {
      const p = await h.project();
      const id = `mem_race_${'x'.repeat(20)}`;
      expect(await expectOneMemory(p, { id, content: 'Works at the Porto office on Tuesdays' })).toBe(id);
    });

    /** Every statement of `text` is stored once, and is reported saved by exactly one of the calls. */
    async function expectEachStatementOnce(projectId: string, saved: { id: string; content: string }[][]): Promise<void> {
      const reported = saved.flat();
      expect(reported.length).toBeGreaterThanOrEqual(2);
      // A repeat saves nothing: no statement is reported saved twice.
      expect(new Set(reported.map((m) => m.id)).size).toBe(reported.length);
      expect(new Set(reported.map((m) => m.content)).size).toBe(reported.length);
      const { rows } = await h.db.query<{ id: string }>('SELECT id FROM memories WHERE project_id = $1 ORDER BY id', [projectId]);
      expect(rows.map((r) => r.id)).toEqual(reported.map((m) => m.id).sort());
    }

    race('POST /memory/observe', 'the same turn: each statement once; repeats answer 200 with saved []', async () => {
      const p = await h.project();
      const answers = await fifty(p.projectId, 'POST', '/memory/observe', { text: 'I am allergic to peanuts. I live in Lisbon. ok thanks', userId: 'u1' });
      expect(statuses(answers)).toEqual(Array(N).fill(200));
      const saved = answers.map((a) => a.json().saved as { id: string; content: string }[]);
      expect(saved.filter((s) => s.length === 0).length).toBeGreaterThanOrEqual(N - 2);
      await expectEachStatementOnce(p.projectId, saved);
    });

    race('POST /memory/observe', 'the same fact in other words (articles, punctuation, case, inflection): stored once', async () => {
      const p = await h.project();
      const variants = [
        'I prefer the window seat on long flights.',
        'I prefer window seat on long flights!',
        'i prefer the window seats on long flights',
        'I prefer the window seat on long flights, ok?',
        'I PREFER THE WINDOW SEAT ON LONG FLIGHTS',
      ];
      let next = 0;
      const answers = await times(N, () => h.call('POST', p.projectId, '/memory/observe', { body: { text: variants[next++ % variants.length], userId: 'u-paraphrase' } }));
      expect(statuses(answers)).toEqual(Array(N).fill(200));
      const saved = answers.flatMap((a) => a.json().saved as { id: string }[]);
      expect(saved).toHaveLength(1);
      const { rows } = await h.db.query<{ id: string }>(`SELECT id FROM memories WHERE project_id = $1 AND status IN ('pending', 'confirmed')`, [p.projectId]);
      expect(rows.map((r) => r.id)).toEqual([saved[0]!.id]);
    });

    raceTool('memory_save', 'the same content: one memory, created once, the same id for all', async () => {
      const args = { content: 'Prefers oat milk in coffee', type: 'preference', scope: 'user', userId: 'u-mcp' };
      const results = await times(N, () => callTool('memory_save', args));
      expect(results.filter((r) => r.isError).map((r) => r.body)).toEqual([]);
      expect(results.filter((r) => r.body.created === true)).toHaveLength(1);
      const ids = new Set(results.map((r) => r.body.id));
      expect(ids.size).toBe(1);
      const { rows } = await h.db.query<{ id: string }>('SELECT id FROM memories WHERE project_id = $1 AND content = $2', [mcpProject.projectId, args.content]);
      expect(rows.map((r) => r.id)).toEqual([...ids]);
    });

    raceTool('memory_save', 'with a client id: one memory under that id', async () => {
      const id = `mem_mcp_race_${'y'.repeat(20)}`;
      const results = await times(N, () => callTool('memory_save', { id, content: 'Has a standing desk at home', type: 'fact', scope: 'project' }));
      expect(results.filter((r) => r.isError).map((r) => r.body)).toEqual([]);
      expect(results.filter((r) => r.body.created === true)).toHaveLength(1);
      expect(new Set(results.map((r) => r.body.id))).toEqual(new Set([id]));
      expect(await count('SELECT count(*) AS n FROM memories WHERE project_id = $1 AND id = $2', [mcpProject.projectId, id])).toBe(1);
    });

    raceTool('memory_observe', 'the same turn: each statement once; repeats save nothing', async () => {
      const userId = 'u-mcp-observe';
      const results = await times(N, () => callTool('memory_observe', { text: 'I drink green tea every morning. My sister lives in Berlin.', userId }));
      expect(results.filter((r) => r.isError).map((r) => r.body)).toEqual([]);
      const saved = results.map((r) => r.body.saved as { id: string; content: string }[]);
      const reported = saved.flat();
      expect(reported.length).toBeGreaterThanOrEqual(2);
      expect(new Set(reported.map((m) => m.id)).size).toBe(reported.length);
      const { rows } = await h.db.query<{ id: string }>('SELECT id FROM memories WHERE project_id = $1 AND user_id = $2 ORDER BY id', [mcpProject.projectId, userId]);
      expect(rows.map((r) => r.id)).toEqual(reported.map((m) => m.id).sort());
    });
  });

  describe('typed attributes and observations', () => {
    const ATTRIBUTES = '/memory-typed/attributes';
    const weight = { attributeKey: 'body.weight', dataType: 'numeric', unit: 'kg', minValid: 1, maxValid: 500 };
    const row = { attributeKey: 'body.weight', subjectKind: 'user', subjectExternalId: 'u1', valueNumeric: 70.5, observedAt: '2024-05-01T10:00:00.000Z', source: 'scale' };

    async function projectWithAttribute(): Promise<Project> {
      const p = await h.project();
      expect((await h.call('POST', p.projectId, ATTRIBUTES, { body: weight })).statusCode).toBe(201);
      return p;
    }

    /** One stored observation, one accumulator point, one typed.observation event. */
    async function expectOneObservation(projectId: string, id?: string): Promise<void> {
      const { rows } = await h.db.query<{ id: string }>('SELECT id FROM typed_observations WHERE project_id = $1', [projectId]);
      expect(rows).toHaveLength(1);
      if (id !== undefined) expect(rows[0]!.id).toBe(id);
      const accumulator = await h.call('GET', projectId, '/memory-typed/accumulator?subjectKind=user&subjectExternalId=u1&attributeKey=body.weight');
      expect(accumulator.json()).toMatchObject({ count: 1, sum: 70.5 });
      // The event follows the ingest (the typed.events job): counted once every one waiting is appended.
      await appendAllTypedEvents(h);
      expect(await count("SELECT count(*) AS n FROM events WHERE project_id = $1 AND event_type = 'typed.observation'", [projectId])).toBe(1);
    }

    race('POST /memory-typed/attributes', 'the same definition: one attribute; 201 first, every repeat 200 with the same id', async () => {
      const p = await h.project();
      await expectCreatedOnce(await fifty(p.projectId, 'POST', ATTRIBUTES, weight), 'typed_attributes', p.projectId);
    });

    const ingestCases = [
      { name: 'a row with a client id', rows: [{ id: 'obs-race-1', ...row }], id: 'obs-race-1' },
      { name: 'a row without an id (its dedupe hash is the key)', rows: [row], id: undefined },
    ];

    for (const c of ingestCases) {
      race('POST /memory-typed/observations', `${c.name}: one row, accepted once; repeats answer 200 as duplicates`, async () => {
        const p = await projectWithAttribute();
        const answers = await fifty(p.projectId, 'POST', '/memory-typed/observations', { observations: c.rows });
        expect(statuses(answers)).toEqual(Array(N).fill(200));
        const reports = answers.map((a) => a.json());
        expect(reports.filter((r) => r.accepted === 1 && r.duplicates === 0)).toHaveLength(1);
        expect(reports.filter((r) => r.accepted === 0 && r.duplicates === 1)).toHaveLength(N - 1);
        expect(reports.every((r) => r.quarantined === 0)).toBe(true);
        await expectOneObservation(p.projectId, c.id);
      });

      race('POST /memory-typed/observations/enqueue', `${c.name}: every call 202, one row once the jobs ran`, async () => {
        const p = await projectWithAttribute();
        const answers = await fifty(p.projectId, 'POST', '/memory-typed/observations/enqueue', { observations: c.rows });
        expect(statuses(answers)).toEqual(Array(N).fill(202));
        expect(answers.every((a) => a.json().enqueued === 1)).toBe(true);
        const deadline = Date.now() + 30_000;
        while ((await count('SELECT count(*) AS n FROM typed_ingest_batches WHERE project_id = $1', [p.projectId])) > 0) {
          if (Date.now() > deadline) throw new Error('the queued batches were not ingested within 30 s');
          await new Promise((resolve) => setTimeout(resolve, 50));
        }
        await expectOneObservation(p.projectId, c.id);
      });
    }
  });

  describe('decisions and outcomes', () => {
    race('POST /lattice/decisions', 'with an idempotencyKey: one decision and one decision memory; 201 first, every repeat 200 with it', async () => {
      const p = await h.project();
      const answers = await fifty(p.projectId, 'POST', '/lattice/decisions', { subject: { kind: 'user', externalId: 'u1' }, actionType: 'nudge', idempotencyKey: 'race-decision' });
      expect(statuses(answers)).toEqual(firstThenRepeats(201, 200));
      const ids = new Set(answers.map((a) => a.json().decisionId as string));
      expect(ids.size).toBe(1);
      const { rows } = await h.db.query<{ id: string }>('SELECT id FROM learning_decisions WHERE project_id = $1', [p.projectId]);
      expect(rows.map((r) => r.id)).toEqual([...ids]);
      expect(await count("SELECT count(*) AS n FROM memories WHERE project_id = $1 AND type = 'decision'", [p.projectId])).toBe(1);
    });

    race('POST /lattice/outcomes', "with an idempotencyKey: one outcome, its refs updated once; every repeat answers the first's updates", async () => {
      const p = await h.project();
      const evidence = (await h.call('POST', p.projectId, '/admin/memory', { body: { content: 'the evidence', confidence: 0.5 } })).json();
      const decision = (
        await h.call('POST', p.projectId, '/lattice/decisions', { body: { subject: { kind: 'user', externalId: 'u1' }, informedBy: [{ memoryId: evidence.id, refType: 'collective' }] } })
      ).json();
      const answers = await fifty(p.projectId, 'POST', '/lattice/outcomes', { decisionId: decision.decisionId, result: 'success', idempotencyKey: 'race-outcome' });
      expect(statuses(answers)).toEqual(firstThenRepeats(201, 200));
      expect(new Set(answers.map((a) => JSON.stringify(a.json()))).size).toBe(1);
      expect(answers[0]!.json().updates).toEqual([expect.objectContaining({ refId: evidence.id, hits: 1, misses: 0 })]);
      expect(await count('SELECT count(*) AS n FROM learning_outcomes WHERE project_id = $1', [p.projectId])).toBe(1);
      expect(await count("SELECT count(*) AS n FROM memories WHERE project_id = $1 AND type = 'outcome'", [p.projectId])).toBe(1);
      const evidenceRows = await h.db.query<{ hits: number; misses: number }>('SELECT hits, misses FROM learning_ref_evidence WHERE project_id = $1', [p.projectId]);
      expect(evidenceRows.rows).toEqual([{ hits: 1, misses: 0 }]);
    });
  });

  describe('pack settings and feedback', () => {
    race('POST /memory-compliance-packs', 'the same pack: one row per project and pack, every answer 200 naming it', async () => {
      const p = await h.project();
      const answers = await fifty(p.projectId, 'POST', '/memory-compliance-packs', { packId: 'healthcare', enabled: false });
      expect(statuses(answers)).toEqual(Array<number>(N).fill(200));
      expect(new Set(answers.map((a) => a.json().id)).size).toBe(1);
      expect(await count('SELECT count(*) AS n FROM tenancy_packs WHERE project_id = $1', [p.projectId])).toBe(1);
    });

    race('POST /memory/feedback', 'the same rating of one response: one row, one negative counted; every answer 204', async () => {
      const p = await h.project();
      const memory = (await h.call('POST', p.projectId, '/admin/memory', { body: { content: 'rated under load' } })).json();
      const answers = await fifty(p.projectId, 'POST', '/memory/feedback', { memoryId: memory.id, rating: 'negative', responseId: 'resp-race' });
      expect(statuses(answers)).toEqual(Array<number>(N).fill(204));
      expect(await count('SELECT count(*) AS n FROM memory_feedback WHERE project_id = $1', [p.projectId])).toBe(1);
      expect((await h.call('GET', p.projectId, `/admin/memory/${memory.id}`)).json()).toMatchObject({ negativeRatingCount: 1, reviewReason: null });
    });
  });

  describe('first-start provisioning', () => {
    const log = createLogger('silent');

    it('bootstrap: 50 processes starting at once with the same bootstrap project and key make one project and one key', async () => {
      const projectId = uniqueName('boot').toLowerCase();
      const apiKey = `deploy-key-${uniqueName('k')}`;
      const config = testConfig(h.database, { LATTICE_BOOTSTRAP_PROJECT: projectId, LATTICE_BOOTSTRAP_API_KEY: apiKey });
      const results = await times(N, () => createTenancyModule({ config, db: h.db, log }).api.bootstrap());
      expect(results.filter((r) => r.bootstrapProjectCreated)).toHaveLength(1);
      expect(results.filter((r) => r.bootstrapKeyCreated)).toHaveLength(1);
      expect(await count('SELECT count(*) AS n FROM projects WHERE id = $1', [projectId])).toBe(1);
      expect(await count('SELECT count(*) AS n FROM api_keys WHERE project_id = $1', [projectId])).toBe(1);
      await expect(h.apis.tenancy.authenticate(apiKey, projectId)).resolves.toMatchObject({ projectId });
    });

    it('bootstrap: 50 processes starting at once on an empty database make one demo project with one key, shown once', async () => {
      const database = await createTestDatabase();
      try {
        const db = await database.open();
        await migrate(db);
        const config = testConfig(database);
        const results = await times(N, () => createTenancyModule({ config, db, log }).api.bootstrap());
        const shown = results.filter((r) => r.demo !== undefined);
        expect(shown).toHaveLength(1);
        const projects = await db.query<{ id: string }>('SELECT id FROM projects');
        expect(projects.rows.map((r) => r.id)).toEqual([DEMO_PROJECT]);
        const keys = await db.query<{ n: string }>('SELECT count(*) AS n FROM api_keys');
        expect(Number(keys.rows[0]!.n)).toBe(1);
        await expect(createTenancyModule({ config, db, log }).api.authenticate(shown[0]!.demo!.apiKey, DEMO_PROJECT)).resolves.toMatchObject({ projectId: DEMO_PROJECT });
      } finally {
        await database.drop();
      }
    });
  });

  describe('the financial pack', () => {
    race('POST /lattice/financial/reconcile', 'fifty at once over due calls: each call scored by one of them, once', async () => {
      const p = await h.project();
      const at = (day: number) => new Date(Date.UTC(2025, 0, 1, 21) + day * 86_400_000).toISOString();
      const price = (ticker: string, close: number, day: number) =>
        h.call('POST', p.projectId, '/admin/memory', { body: { content: `${ticker} close ${close} @ ${at(day)}`, category: 'financial', metadata: { price: { ticker, close, asOf: at(day) } } } });
      for (const ticker of ['AAA', 'BBB', 'CCC'])
        for (let day = 0; day < 40; day++) expect((await price(ticker, 100 + day + (day % 3), day)).statusCode).toBe(201);
      for (const ticker of ['AAA', 'BBB', 'CCC']) {
        const made = await h.call('POST', p.projectId, '/lattice/financial/predict', { body: { subject: { kind: 'ticker', externalId: ticker }, horizonDays: 2 } });
        expect(made.json().signals, made.body).toHaveLength(1);
        expect((await price(ticker, 150, 45)).statusCode).toBe(201);
      }
      const answers = await fifty(p.projectId, 'POST', '/lattice/financial/reconcile', {});
      expect(statuses(answers)).toEqual(Array(N).fill(200));
      expect(answers.reduce((sum, a) => sum + (a.json().scored as number), 0)).toBe(3);
      expect(answers.every((a) => a.json().stillPending === 0)).toBe(true);
      expect(await count('SELECT count(*) AS n FROM financial_predictions WHERE project_id = $1 AND resolved_at IS NOT NULL', [p.projectId])).toBe(3);
    });
  });

  it('covers every operation and MCP tool whose description speaks of idempotency or deduplication', async () => {
    const document = (await h.app.inject({ method: 'GET', url: '/openapi.json' })).json() as {
      paths: Record<string, Record<string, { description?: string; summary?: string }>>;
    };
    // Writes only: a read is idempotent by nature (GET .../fires mentions the fires' dedupe keys).
    const idempotent = Object.entries(document.paths).flatMap(([path, operations]) =>
      Object.entries(operations)
        .filter(([method, operation]) => method !== 'get' && /idempot|dedupe/i.test(`${operation.summary ?? ''} ${operation.description ?? ''}`))
        .map(([method]) => `${method.toUpperCase()} ${path.replace(PREFIX, '')}`),
    );
    expect(idempotent.length).toBeGreaterThanOrEqual(4);
    expect(idempotent.filter((operation) => !coveredOperations.has(operation))).toEqual([]);

    const { tools } = await mcp.listTools();
    const idempotentTools = tools.filter((t) => /idempot|dedupe/i.test(t.description ?? '')).map((t) => t.name);
    expect(idempotentTools).toEqual(expect.arrayContaining(['memory_save', 'memory_observe']));
    expect(idempotentTools.filter((tool) => !coveredTools.has(tool))).toEqual([]);
  });
});
