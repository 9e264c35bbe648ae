// Knowledge-graph benchmark. The reads go through the HTTP API (app.inject on the app buildApp
// makes, with the key of an enterprise project); the graph and the memories the reads need are
// written straight into the tables with SQL, since the write path is not what is measured here. On
// PGlite in memory (in-process queue) and, when DATABASE_URL is set, on Postgres (a throwaway
// lattice_bench_* database; with REDIS_URL also set, BullMQ under a throwaway QUEUE_PREFIX).
// Markdown tables go to stdout, progress to stderr.
//
//   1. Bulk load, SQL only (batched INSERT ... SELECT FROM unnest of 10,000 rows): BENCH_GRAPH_EDGES
//      edges (100,000 on Postgres, 20,000 on PGlite) among N = edges / 25 entities (types person,
//      org, location in 6 : 2 : 2, their name keys in graph_entity_names as resolution would write
//      them). Each entity has 25 outgoing edges to distinct other entities drawn at random (seeded,
//      mulberry32): 20 current ones (valid_from uniform over the last 3 years, valid_to null; the
//      first a works_at, functional, so one current per entity; the other 19 from member_of,
//      part_of, knows, prefers) and 5 retired ones (20% of the edges; any of the five predicates;
//      valid_from 3 years to 60 days ago, valid_to 30 days later up to 30 days ago). Weights uniform
//      in (0, 1]. So a traversal at now meets fan-out 20 at every entity (below the service's bound
//      of 50), and one at an instant in the past meets a different graph (about half the current
//      edges had not begun, some retired ones still held). Reported: the load time, rows, and
//      pg_total_relation_size of graph_edges and graph_entities (indexes and TOAST included). On
//      Postgres the graph tables (and, after part 3, graph_mentions and memories) are ANALYZEd
//      after the load; PGlite runs no autovacuum and by default the bench runs no ANALYZE there
//      (BENCH_GRAPH_ANALYZE=all does), so its planner has no statistics, as in a PGlite deployment
//      before the maintenance job's first run (it analyzes every 5 minutes).
//   2. Traversal: POST /admin/memory/graph/traverse {entityId, hops} from random seed entities
//      (seeded), BENCH_GRAPH_CALLS (200) calls each at hops 1, 2 and 3, and at hops 3 with asOf 18
//      months ago, after 20 warm-up calls each; timed one at a time around app.inject (routing,
//      auth, the service, JSON; no socket): p50 / p95 / p99, the mean number of edges answered and
//      the mean size of the answer as JSON. At 3 hops fan-out 20 reaches 20 + 400 + 8,000 edges,
//      so the traversal's default limit of 500 edges answered applies. Target: 3-hop p95 <= 50 ms
//      on Postgres. Beside it, the same 3-hop calls on the domain's face (lattice.apis.graph.traverse:
//      the SQL and the assembly, no HTTP and no JSON), to show where the time goes, and EXPLAIN
//      (ANALYZE, BUFFERS) of the last hop's statement and of the entities' fetch of one 3-hop
//      traversal, recorded as the service sent them (same SQL, same parameters).
//   3. Prefetch: M memories (BENCH_GRAPH_MEMORIES: 20,000 on Postgres, 5,000 on PGlite; seeded
//      realistic texts) written with insertMemories (src/memory/store.ts, as
//      test/reliability/limits.test.ts does; not embedded) and graph_mentions linking each to 3
//      distinct random entities of the graph (seeded); then BENCH_GRAPH_CALLS calls of POST
//      /admin/memory/prefetch-related {seedMemoryIds: 3 random memories, limit: 10} after 20
//      warm-up calls: p50 / p95 / p99 and the mean number of memories answered. Target: p95 <= 30 ms
//      on Postgres. Then EXPLAIN (ANALYZE, BUFFERS) of one prefetch's ranking query, as it was sent.
//   4. Extraction: a second project opted in (POST /admin/memory/graph/extraction/toggle {enabled:
//      true}); K memories (BENCH_GRAPH_EXTRACT_MEMORIES: 2,000 on Postgres, 500 on PGlite) saved one
//      at a time through POST /admin/memory, realistic sentences from seeded templates naming people,
//      organisations, places, products and dates ("Maria Lopez works at Globex in Lisbon."); once
//      every one is embedded (so no embedding runs beside it), POST /admin/memory/graph/backfill
//      {limit: 2000} until it answers remaining 0: memories/s over the calls' wall time (and the
//      service's durationMs), entities linked and edges created, and the graph's counts after.
//
// Two schedules are removed from the queue for the whole run, on both backends: memory.embed-sweep
// (it would embed the M memories written by SQL in the background, competing with the timed
// calls) and graph.extract-sweep (it would extract the opted-in project's memories beside the
// timed backfill). The other schedules keep running. The embedding of the memories part 4 saves
// through the API is not affected (each save schedules its own drain job).
//
// Run after a build (the worker pool loads dist/workers/index.js):
//   npm run bench:graph
//   BENCH_SKIP_PGLITE=1 DATABASE_URL=postgres://postgres@127.0.0.1:5432/postgres REDIS_URL=redis://127.0.0.1:6379 npm run bench:graph
// Settings: BENCH_GRAPH_EDGES (edges of part 1; default 100000 on Postgres, 20000 on PGlite),
// BENCH_GRAPH_CALLS (200 timed calls per measurement), BENCH_GRAPH_MEMORIES (part 3; 20000 / 5000),
// BENCH_GRAPH_EXTRACT_MEMORIES (part 4; 2000 / 500), BENCH_GRAPH_PARTS (1,2,3,4: the parts to run;
// 2 and 3 need 1's graph, so 1 always runs with them), BENCH_SKIP_PGLITE=1 (Postgres only),
// BENCH_GRAPH_ANALYZE (postgres: ANALYZE after the bulk loads on Postgres only, the default; all:
// on PGlite too; none), BENCH_GRAPH_EXPLAIN=1 (print the plans behind the EXPLAIN rows to stderr),
// BENCH_KEEP_DB=1 (keep the Postgres database to study plans by hand). This bench sets in its own
// environment, before the contexts read their config: REQUEST_TIMEOUT_MS 600000 (a 2,000-memory
// backfill is one request) and RATE_LIMIT_PER_MINUTE 10000000.
import { cpus, loadavg } from 'node:os';
import { performance } from 'node:perf_hooks';
import type { FastifyInstance } from 'fastify';
import { buildApp } from '../src/app.js';
import { nameKey } from '../src/graph/names.js';
import { GraphRecall } from '../src/graph/recall.js';
import type { TraversalEdge } from '../src/graph/schemas.js';
import { GraphService } from '../src/graph/service.js';
import { insertMemories } from '../src/memory/store.js';
import type { Lattice } from '../src/modules.js';
import { newId } from '../src/platform/ids.js';
import { createLogger } from '../src/platform/logger.js';
import {
  makeTexts, markdownTable, memoryTemplates, ms, mulberry32, optionalInt, perSecond, positiveInt, progress, recordingDb, runBench, sleep, summarise,
  onEachBackend, ProjectClient, type Statement, type Summary,
  check, latency, megabytes, seconds, thousands,
} from './support.js';

process.env.REQUEST_TIMEOUT_MS ??= '600000';
process.env.RATE_LIMIT_PER_MINUTE ??= '10000000';


const EDGES_OVERRIDE = optionalInt('BENCH_GRAPH_EDGES');
const MEMORIES_OVERRIDE = optionalInt('BENCH_GRAPH_MEMORIES');
const EXTRACT_OVERRIDE = optionalInt('BENCH_GRAPH_EXTRACT_MEMORIES');
const CALLS = positiveInt('BENCH_GRAPH_CALLS', 200);
const PARTS = new Set((process.env.BENCH_GRAPH_PARTS ?? '1,2,3,4').split(',').map((s) => s.trim()));
if (PARTS.has('2') || PARTS.has('3')) PARTS.add('1');
const SIZES = {
  postgres: { edges: 100_000, memories: 20_000, extract: 2000 },
  pglite: { edges: 20_000, memories: 5000, extract: 500 },
};

const WARMUP = 20;
const FAN_OUT = 20;
const RETIRED_PER_ENTITY = 5;
const EDGES_PER_ENTITY = FAN_OUT + RETIRED_PER_ENTITY;
const OTHER_PREDICATES = ['member_of', 'part_of', 'knows', 'prefers'] as const;
const ALL_PREDICATES = ['works_at', ...OTHER_PREDICATES] as const;
const MENTIONS_PER_MEMORY = 3;
const PREFETCH_SEEDS = 3;
const PREFETCH_LIMIT = 10;
const BACKFILL_LIMIT = 2000;
const BATCH = 10_000;
const TARGET_TRAVERSE_P95_MS = 50;
const TARGET_PREFETCH_P95_MS = 30;
const EMBED_WAIT_MS = 900_000;
/** Schedules removed for the run (see the header). */
const PAUSED_SCHEDULES = ['memory.embed-sweep', 'graph.extract-sweep'];
const DAY_MS = 86_400_000;
const AS_OF_DAYS_AGO = 548;
const EXPLAIN = process.env.BENCH_GRAPH_EXPLAIN === '1';
/** Where the bench runs ANALYZE after its bulk loads: postgres (the default), all, none. */
const ANALYZE = process.env.BENCH_GRAPH_ANALYZE ?? 'postgres';
if (!['postgres', 'all', 'none'].includes(ANALYZE)) throw new Error('BENCH_GRAPH_ANALYZE must be postgres, all or none');

const log = createLogger('warn');
const out: string[] = [];
const write = (text = '') => out.push(text);

const mean = (xs: readonly number[]) => xs.reduce((a, b) => a + b, 0) / Math.max(1, xs.length);

interface Row {
  operation: string;
  n?: number;
  value: string;
  throughput?: string;
  notes?: string;
}

interface Run {
  ctx: Lattice;
  app: FastifyInstance;
  setup: string;
  postgres: boolean;
  rows: Row[];
}

async function openProject(run: Run, projectId: string): Promise<ProjectClient> {
  await run.ctx.apis.tenancy.createProject(projectId, { plan: 'enterprise' });
  const { apiKey } = await run.ctx.apis.tenancy.createKey(projectId, ['READ_MEMORY', 'WRITE_MEMORY']);
  return new ProjectClient(run.app, projectId, apiKey);
}

async function count(run: Run, sql: string, params: unknown[] = []): Promise<number> {
  return Number((await run.ctx.runtime.db.query<{ n: string | number }>(sql, params)).rows[0]!.n);
}

async function relationSize(run: Run, table: string): Promise<number> {
  return count(run, `SELECT pg_total_relation_size($1::regclass) AS n`, [table]);
}

/** ANALYZE of the tables (timed) where BENCH_GRAPH_ANALYZE says (by default on Postgres only). Answers a note for the table. */
async function analyze(run: Run, tables: readonly string[]): Promise<string> {
  if (ANALYZE === 'none' || (ANALYZE === 'postgres' && !run.postgres)) return `no ANALYZE (${run.postgres ? 'BENCH_GRAPH_ANALYZE=none; autovacuum may or may not have run' : 'PGlite runs no autovacuum: no statistics'})`;
  progress(`[${run.setup}] ANALYZE ${tables.join(', ')}`);
  const t0 = performance.now();
  await run.ctx.runtime.db.exec(`ANALYZE ${tables.join(', ')}`);
  return `then ANALYZE ${tables.join(', ')}: ${seconds(performance.now() - t0)}`;
}


/** A plan's nodes, top down, each as "node (rows x loops)": the shape of the plan on one line. */
function planShape(plan: string, max = 8): string {
  const nodes = plan
    .split('\n')
    .filter((line, i) => i === 0 || line.includes('->'))
    .map((line) => {
      const node = line.replace(/^\s*(->\s*)?/, '').replace(/\s+\(cost=.*$/, '').replace(/\s+\(actual.*$/, '');
      const actual = /actual time=[\d.]+\.\.[\d.]+ rows=([\d.]+) loops=(\d+)/.exec(line);
      return actual ? `${node} (${Math.round(Number(actual[1]))}${actual[2] === '1' ? '' : ` × ${actual[2]} loops`})` : node;
    });
  return nodes.slice(0, max).join(' → ') + (nodes.length > max ? ' → ...' : '');
}

/** EXPLAIN (ANALYZE, BUFFERS) of a statement with its parameters: the plan, and its execution time. */
async function explain(run: Run, label: string, statement: Statement | undefined): Promise<{ plan: string; executionMs: number }> {
  if (!statement) throw new Error(`${label}: the statement was not seen`);
  const { rows } = await run.ctx.runtime.db.query<{ 'QUERY PLAN': string }>(`EXPLAIN (ANALYZE, BUFFERS) ${statement.sql}`, statement.params);
  const plan = rows.map((r) => r['QUERY PLAN']).join('\n');
  if (EXPLAIN) progress(`[${run.setup}] ${label}:\n${statement.sql}\n${plan}\n`);
  return { plan, executionMs: Number(/Execution Time: ([\d.]+) ms/.exec(plan)?.[1] ?? NaN) };
}

// ---------------------------------------------------------------------------------------------
// 1. The graph, written by SQL

interface Graph {
  projectId: string;
  client: ProjectClient;
  entityIds: string[];
  edges: number;
  retired: number;
}

const pad = (i: number) => String(i).padStart(6, '0');
const ENTITY_TYPES = ['person', 'person', 'person', 'person', 'person', 'person', 'org', 'org', 'location', 'location'] as const;
const TYPE_NAME = { person: 'Person', org: 'Organisation', location: 'Place' } as const;

/** `k` distinct integers in [0, n) other than `except`. */
function distinctOthers(random: () => number, n: number, k: number, except: number): number[] {
  const picked = new Set<number>();
  while (picked.size < k) {
    const j = Math.floor(random() * n);
    if (j !== except) picked.add(j);
  }
  return [...picked];
}

async function insertInBatches(run: Run, label: string, total: number, insert: (from: number, to: number) => Promise<void>): Promise<void> {
  for (let from = 0; from < total; from += BATCH) {
    const to = Math.min(total, from + BATCH);
    await insert(from, to);
    progress(`[${run.setup}] ${label}: ${thousands(to)} of ${thousands(total)}`);
  }
}

async function buildGraph(run: Run, totalEdges: number): Promise<Graph> {
  const { db } = run.ctx.runtime;
  const projectId = 'graph-bench';
  const client = await openProject(run, projectId);
  const n = Math.max(EDGES_PER_ENTITY + 1, Math.round(totalEdges / EDGES_PER_ENTITY));
  const now = Date.now();
  const random = mulberry32(1101);
  progress(`[${run.setup}] planning ${thousands(n)} entities and ${thousands(n * EDGES_PER_ENTITY)} edges`);

  const entityIds = Array.from({ length: n }, () => newId('ent'));
  const types = entityIds.map((_, i) => ENTITY_TYPES[i % ENTITY_TYPES.length]!);
  const names = types.map((t, i) => `${TYPE_NAME[t]} ${pad(i)}`);
  const entityFrom = new Date(now - 4 * 365 * DAY_MS).toISOString();

  const edge = { id: [] as string[], subject: [] as string[], predicate: [] as string[], object: [] as string[], weight: [] as number[], from: [] as string[], to: [] as (string | null)[] };
  for (let i = 0; i < n; i++) {
    const targets = distinctOthers(random, n, EDGES_PER_ENTITY, i);
    targets.forEach((j, slot) => {
      const current = slot < FAN_OUT;
      edge.id.push(newId('edge'));
      edge.subject.push(entityIds[i]!);
      edge.object.push(entityIds[j]!);
      edge.predicate.push(
        current ? (slot === 0 ? 'works_at' : OTHER_PREDICATES[Math.floor(random() * OTHER_PREDICATES.length)]!) : ALL_PREDICATES[Math.floor(random() * ALL_PREDICATES.length)]!,
      );
      edge.weight.push(1 - random());
      if (current) {
        edge.from.push(new Date(now - random() * 3 * 365 * DAY_MS).toISOString());
        edge.to.push(null);
      } else {
        const from = now - 60 * DAY_MS - random() * (3 * 365 - 60) * DAY_MS;
        const to = from + 30 * DAY_MS + random() * (now - 30 * DAY_MS - (from + 30 * DAY_MS));
        edge.from.push(new Date(from).toISOString());
        edge.to.push(new Date(to).toISOString());
      }
    });
  }

  const t0 = performance.now();
  await insertInBatches(run, 'graph_entities', n, (from, to) =>
    db.query(
      `INSERT INTO graph_entities (project_id, id, type, canonical_name, valid_from, created_at, updated_at)
       SELECT $1, v.id, v.type, v.name, $5::timestamptz, $5::timestamptz, $5::timestamptz FROM unnest($2::text[], $3::text[], $4::text[]) AS v(id, type, name)`,
      [projectId, entityIds.slice(from, to), types.slice(from, to), names.slice(from, to), entityFrom],
    ).then(() => undefined),
  );
  await insertInBatches(run, 'graph_entity_names', n, (from, to) =>
    db.query(
      `INSERT INTO graph_entity_names (project_id, name_key, entity_id) SELECT $1, v.k, v.id FROM unnest($2::text[], $3::text[]) AS v(k, id)`,
      [projectId, names.slice(from, to).map(nameKey), entityIds.slice(from, to)],
    ).then(() => undefined),
  );
  const total = edge.id.length;
  await insertInBatches(run, 'graph_edges', total, (from, to) =>
    db.query(
      `INSERT INTO graph_edges (project_id, id, subject_id, predicate, object_id, weight, valid_from, valid_to, created_at, retired_at)
       SELECT $1, v.id, v.s, v.p, v.o, v.w, v.f, v.t, v.f, v.t
         FROM unnest($2::text[], $3::text[], $4::text[], $5::text[], $6::float8[], $7::timestamptz[], $8::timestamptz[]) AS v(id, s, p, o, w, f, t)`,
      [projectId, edge.id.slice(from, to), edge.subject.slice(from, to), edge.predicate.slice(from, to), edge.object.slice(from, to), edge.weight.slice(from, to), edge.from.slice(from, to), edge.to.slice(from, to)],
    ).then(() => undefined),
  );
  const loadMs = performance.now() - t0;
  const analyzed = await analyze(run, ['graph_entities', 'graph_entity_names', 'graph_edges']);

  const edgeRows = await count(run, `SELECT count(*) AS n FROM graph_edges WHERE project_id = $1`, [projectId]);
  const retiredRows = await count(run, `SELECT count(*) AS n FROM graph_edges WHERE project_id = $1 AND valid_to IS NOT NULL`, [projectId]);
  const entityRows = await count(run, `SELECT count(*) AS n FROM graph_entities WHERE project_id = $1`, [projectId]);
  if (edgeRows !== total || entityRows !== n) throw new Error(`bulk load: ${edgeRows} edges and ${entityRows} entities in the tables, ${total} and ${n} planned`);
  const [edgesSize, entitiesSize, namesSize] = [await relationSize(run, 'graph_edges'), await relationSize(run, 'graph_entities'), await relationSize(run, 'graph_entity_names')];

  run.rows.push({
    operation: `1. Bulk load by SQL: ${thousands(n)} entities (and their name keys), ${thousands(total)} edges`,
    n: n * 2 + total,
    value: seconds(loadMs),
    throughput: `${thousands(perSecond(n * 2 + total, loadMs))} rows/s`,
    notes: `batched INSERT ... SELECT FROM unnest (${thousands(BATCH)} rows); ${thousands(total - retiredRows)} current (${FAN_OUT} per entity), ${thousands(retiredRows)} retired; ${analyzed}`,
  });
  run.rows.push({
    operation: '1. Table sizes after the load (pg_total_relation_size: table, indexes, TOAST)',
    value: `graph_edges ${megabytes(edgesSize)}, graph_entities ${megabytes(entitiesSize)}`,
    notes: `rows: graph_edges ${thousands(edgeRows)}, graph_entities ${thousands(entityRows)}; graph_entity_names ${megabytes(namesSize)} (${thousands(n)} rows); ${(edgesSize / edgeRows).toFixed(0)} bytes an edge`,
  });
  return { projectId, client, entityIds, edges: total, retired: retiredRows };
}

// ---------------------------------------------------------------------------------------------
// 2. Traversal

async function benchTraverse(run: Run, graph: Graph): Promise<void> {
  const asOf = new Date(Date.now() - AS_OF_DAYS_AGO * DAY_MS).toISOString();
  const cases: { label: string; hops: number; asOf?: string; seed: number }[] = [
    { label: '1 hop', hops: 1, seed: 201 },
    { label: '2 hops', hops: 2, seed: 202 },
    { label: '3 hops', hops: 3, seed: 203 },
    { label: `3 hops, asOf ${AS_OF_DAYS_AGO} days ago`, hops: 3, asOf, seed: 204 },
  ];
  for (const c of cases) {
    const pick = mulberry32(c.seed);
    const samples: number[] = [];
    const answered: number[] = [];
    const bytes: number[] = [];
    const byHop = [0, 0, 0, 0];
    for (let k = 0; k < WARMUP + CALLS; k++) {
      const entityId = graph.entityIds[Math.floor(pick() * graph.entityIds.length)]!;
      const body = { entityId, hops: c.hops, ...(c.asOf === undefined ? {} : { asOf: c.asOf }) };
      const t0 = performance.now();
      const edges = await graph.client.post<TraversalEdge[]>('/admin/memory/graph/traverse', body);
      const took = performance.now() - t0;
      if ((k + 1) % 50 === 0) progress(`[${run.setup}] traverse ${c.label}: call ${k + 1} of ${WARMUP + CALLS}`);
      if (k < WARMUP) continue;
      samples.push(took);
      answered.push(edges.length);
      bytes.push(JSON.stringify(edges).length);
      for (const e of edges) byHop[e.hop] = (byHop[e.hop] ?? 0) + 1;
    }
    const s = summarise(samples);
    const target = c.hops === 3 && c.asOf === undefined && run.postgres ? `; ${check(s.p95 <= TARGET_TRAVERSE_P95_MS, `p95 ≤ ${TARGET_TRAVERSE_P95_MS} ms`)}` : '';
    const perHop = byHop
      .slice(1, c.hops + 1)
      .map((x, i) => `hop ${i + 1}: ${(x / Math.max(1, samples.length)).toFixed(0)}`)
      .join(', ');
    run.rows.push({
      operation: `2. Traverse, POST /admin/memory/graph/traverse {hops: ${c.hops}${c.asOf === undefined ? '' : ', asOf'}}, ${c.label}`,
      n: s.n,
      value: latency(s),
      throughput: `${perSecond(s.n, samples.reduce((a, b) => a + b, 0)).toFixed(0)} calls/s (sequential)`,
      notes: `mean ${mean(answered).toFixed(0)} edges answered (${perHop}), mean answer ${(mean(bytes) / 1024).toFixed(0)} KB as JSON; random seed entities after ${WARMUP} warm-up calls${target}`,
    });
  }

  // The same 3-hop calls on the domain's face: SQL and assembly, no HTTP, no JSON.
  const pick = mulberry32(203);
  const samples: number[] = [];
  for (let k = 0; k < WARMUP + CALLS; k++) {
    const entityId = graph.entityIds[Math.floor(pick() * graph.entityIds.length)]!;
    const t0 = performance.now();
    await run.ctx.apis.graph.traverse(graph.projectId, { entityId, hops: 3 });
    if (k >= WARMUP) samples.push(performance.now() - t0);
  }
  progress(`[${run.setup}] traverse 3 hops on lattice.apis.graph.traverse: done`);
  const s = summarise(samples);
  run.rows.push({
    operation: '2. Traverse, 3 hops, lattice.apis.graph.traverse (the service alone: SQL and assembly, no HTTP, no JSON)',
    n: s.n,
    value: latency(s),
    notes: 'the same seeds as the 3-hop API row; the difference is routing, auth, audit and serialising the answer',
  });

  // One 3-hop traversal again, its statements recorded, and the heaviest EXPLAINed as it ran.
  const recorder = recordingDb(run.ctx.runtime.db);
  const seed = graph.entityIds[Math.floor(mulberry32(205)() * graph.entityIds.length)]!;
  await new GraphService(recorder.db, { platformExtraction: true }).traverse(graph.projectId, { entityId: seed, hops: 3 });
  const hops = recorder.statements.filter((st) => st.sql.includes('CROSS JOIN LATERAL') && st.sql.includes('FROM graph_edges g'));
  const lastHop = hops.at(-1);
  const frontier = (lastHop?.params?.[1] as string[] | undefined)?.length ?? 0;
  const hop3 = await explain(run, `traverse, hop ${hops.length} (frontier ${frontier} entities)`, lastHop);
  const entities = await explain(
    run,
    'traverse, the entities of the answer',
    recorder.statements.filter((st) => st.sql.includes('FROM graph_entities WHERE project_id = $1 AND id = ANY')).at(-1),
  );
  const asSent = recorder.statements.map((st) => `${ms(st.ms ?? NaN)} (${st.rows ?? 0} rows)`).join(', ');
  run.rows.push({
    operation: '2. EXPLAIN ANALYZE of one 3-hop traversal\'s statements, as the service ran them',
    n: 1,
    value: `hop ${hops.length}: ${ms(hop3.executionMs)}; entities: ${ms(entities.executionMs)}`,
    notes:
      `hop ${hops.length} over a frontier of ${frontier} entities: ${planShape(hop3.plan)}; entities fetch: ${planShape(entities.plan)}. ` +
      `The traversal's ${recorder.statements.length} statements as sent (seed check, hops 1 to 3, entities), each timed around the driver: ${asSent}` +
      (EXPLAIN ? '' : ' (BENCH_GRAPH_EXPLAIN=1 prints the plans to stderr)'),
  });
}

// ---------------------------------------------------------------------------------------------
// 3. Prefetch

async function benchPrefetch(run: Run, graph: Graph, memories: number): Promise<void> {
  const { db } = run.ctx.runtime;
  progress(`[${run.setup}] writing ${thousands(memories)} memories and ${thousands(memories * MENTIONS_PER_MEMORY)} mentions`);
  const texts = makeTexts(memories, 3101, memoryTemplates);
  const ids = texts.map(() => newId('mem'));
  const random = mulberry32(3102);
  const t0 = performance.now();
  let inserted = 0;
  await insertInBatches(run, 'memories', memories, async (from, to) => {
    const rows = await insertMemories(
      db,
      texts.slice(from, to).map((content, i) => ({ id: ids[from + i]!, projectId: graph.projectId, content, validFrom: new Date(Date.now() - random() * 365 * DAY_MS) })),
    );
    inserted += rows.length;
  });
  const memoriesMs = performance.now() - t0;
  if (inserted !== memories) throw new Error(`insertMemories wrote ${inserted} of ${memories} memories`);
  const mentionMemory: string[] = [];
  const mentionEntity: string[] = [];
  for (const id of ids) {
    for (const j of distinctOthers(random, graph.entityIds.length, MENTIONS_PER_MEMORY, -1)) {
      mentionMemory.push(id);
      mentionEntity.push(graph.entityIds[j]!);
    }
  }
  const t1 = performance.now();
  await insertInBatches(run, 'graph_mentions', mentionMemory.length, (from, to) =>
    db.query(`INSERT INTO graph_mentions (project_id, memory_id, entity_id) SELECT $1, v.m, v.e FROM unnest($2::text[], $3::text[]) AS v(m, e)`, [
      graph.projectId,
      mentionMemory.slice(from, to),
      mentionEntity.slice(from, to),
    ]).then(() => undefined),
  );
  const mentionsMs = performance.now() - t1;
  const analyzed = await analyze(run, ['graph_mentions', 'memories']);
  const mentionsSize = await relationSize(run, 'graph_mentions');
  run.rows.push({
    operation: `3. Prefetch data by SQL: ${thousands(memories)} memories (insertMemories), ${thousands(mentionMemory.length)} graph_mentions (${MENTIONS_PER_MEMORY} distinct random entities each)`,
    n: memories + mentionMemory.length,
    value: `${seconds(memoriesMs)} + ${seconds(mentionsMs)}`,
    throughput: `${thousands(perSecond(memories, memoriesMs))} memories/s, ${thousands(perSecond(mentionMemory.length, mentionsMs))} mentions/s`,
    notes: `about ${((memories * MENTIONS_PER_MEMORY) / graph.entityIds.length).toFixed(1)} memories mention each entity; graph_mentions ${megabytes(mentionsSize)}; not embedded; ${analyzed}`,
  });

  const pick = mulberry32(3103);
  const samples: number[] = [];
  const answered: number[] = [];
  for (let k = 0; k < WARMUP + CALLS; k++) {
    const seeds = distinctOthers(pick, ids.length, PREFETCH_SEEDS, -1).map((i) => ids[i]!);
    const t0 = performance.now();
    const related = await graph.client.post<unknown[]>('/admin/memory/prefetch-related', { seedMemoryIds: seeds, limit: PREFETCH_LIMIT });
    const took = performance.now() - t0;
    if ((k + 1) % 50 === 0) progress(`[${run.setup}] prefetch: call ${k + 1} of ${WARMUP + CALLS}`);
    if (k < WARMUP) continue;
    samples.push(took);
    answered.push(related.length);
  }
  const s = summarise(samples);
  run.rows.push({
    operation: `3. Prefetch, POST /admin/memory/prefetch-related {seedMemoryIds: ${PREFETCH_SEEDS} random, limit: ${PREFETCH_LIMIT}}`,
    n: s.n,
    value: latency(s),
    throughput: `${perSecond(s.n, samples.reduce((a, b) => a + b, 0)).toFixed(0)} calls/s (sequential)`,
    notes: `mean ${mean(answered).toFixed(1)} memories answered; after ${WARMUP} warm-up calls${run.postgres ? `; ${check(s.p95 <= TARGET_PREFETCH_P95_MS, `p95 ≤ ${TARGET_PREFETCH_P95_MS} ms`)}` : ''}`,
  });

  const recorder = recordingDb(run.ctx.runtime.db);
  const seeds = distinctOthers(mulberry32(3104), ids.length, PREFETCH_SEEDS, -1).map((i) => ids[i]!);
  await new GraphRecall(recorder.db, run.ctx.apis.memory, run.ctx.runtime.pool).prefetch(graph.projectId, seeds, PREFETCH_LIMIT);
  const ranked = await explain(run, 'prefetch, the ranking query', recorder.statements.find((st) => st.sql.includes('WITH seed_entities')));
  run.rows.push({
    operation: '3. EXPLAIN ANALYZE of one prefetch\'s ranking query, as the service ran it',
    n: 1,
    value: ms(ranked.executionMs),
    notes: `${planShape(ranked.plan)}${EXPLAIN ? '' : ' (BENCH_GRAPH_EXPLAIN=1 prints the plan to stderr)'}`,
  });
}

// ---------------------------------------------------------------------------------------------
// 4. Extraction

const people = {
  first: ['Maria', 'Kenji', 'Aisha', 'Tom', 'Priya', 'Lucas', 'Olga', 'Diego', 'Fatima', 'Jonas', 'Chen', 'Samuel', 'Lena', 'Yuki', 'Marco', 'Ingrid', 'Tariq', 'Nadia', 'Pablo', 'Grace'],
  last: ['Lopez', 'Sato', 'Khan', 'Becker', 'Nair', 'Moreau', 'Petrova', 'Alvarez', 'Haddad', 'Berg', 'Wei', 'Okafor', 'Fischer', 'Tanaka', 'Rossi', 'Larsen', 'Aziz', 'Novak', 'Ortega', 'Walsh'],
};
const orgs = ['Globex', 'Initech', 'Hooli', 'Stark Logistics', 'Umbrella Health', 'Wayne Retail', 'Acme Corp', 'Blue Bottle Coffee', 'Northwind Traders', 'Contoso Bank', 'Vandelay Industries', 'Soylent Foods', 'Cyberdyne Systems', 'Tyrell Labs', 'Massive Dynamic'];
const cities = ['Lisbon', 'Porto', 'Berlin', 'Madrid', 'Toronto', 'Oslo', 'Nairobi', 'Osaka', 'Chicago', 'Dublin', 'Lyon', 'Melbourne', 'Seoul', 'Bogota', 'Warsaw'];
const clubs = ['Chess Club', 'Running Club', 'Photography Society', 'Book Club', 'Rowing Club', 'Choir'];
const products = ['Oatly', 'the Kindle Paperwhite', 'a Pixel 8', 'Notion', 'a ThinkPad X1', 'Spotify', 'the Moka pot', 'Figma'];
const months = ['January', 'February', 'March', 'April', 'May', 'June', 'July', 'August', 'September', 'October', 'November', 'December'];

function extractionTexts(count: number, seed: number): string[] {
  const random = mulberry32(seed);
  const one = <T>(xs: readonly T[]) => xs[Math.floor(random() * xs.length)]!;
  const person = () => `${one(people.first)} ${one(people.last)}`;
  const date = () => `${one(months)} ${1 + Math.floor(random() * 28)}, ${2019 + Math.floor(random() * 6)}`;
  const templates: (() => string)[] = [
    () => `${person()} works at ${one(orgs)} in ${one(cities)}.`,
    () => `${person()} lives in ${one(cities)} and works for ${one(orgs)}.`,
    () => `${person()} is a member of the ${one(cities)} ${one(clubs)}.`,
    () => `${person()} prefers ${one(products)} when working from home.`,
    () => `${person()} met ${person()} at ${one(orgs)} in ${one(cities)} on ${date()}.`,
    () => `${person()} started at ${one(orgs)} in ${one(cities)} on ${date()}, reporting to ${person()}.`,
    () => `${person()} moved to ${one(cities)} last year and still prefers ${one(products)}.`,
    () => `On ${date()} ${person()} and ${person()} visited the ${one(orgs)} office in ${one(cities)}.`,
  ];
  const texts = new Set<string>();
  while (texts.size < count) texts.add(one(templates)());
  return [...texts];
}

interface BackfillAnswer {
  processed: number;
  entitiesLinked: number;
  edgesCreated: number;
  remaining: number;
  durationMs: number;
}

interface StatsAnswer {
  entityCount: number;
  edgeCount: number;
  retiredEdges: number;
  entitiesByType: Record<string, number>;
  extraction: { extractedMemories: number; pendingMemories: number };
}

async function benchExtraction(run: Run, k: number): Promise<void> {
  const client = await openProject(run, 'graph-extract');
  await client.post('/admin/memory/graph/extraction/toggle', { enabled: true });
  const texts = extractionTexts(k, 4101);
  const t0 = performance.now();
  for (let i = 0; i < texts.length; i++) {
    await client.post('/admin/memory', { content: texts[i]! });
    if ((i + 1) % 250 === 0 || i + 1 === texts.length) progress(`[${run.setup}] extraction: saved ${i + 1} of ${texts.length} memories`);
  }
  const saveMs = performance.now() - t0;
  run.rows.push({
    operation: `4. Extraction: ${thousands(k)} memories saved one at a time, POST /admin/memory (project opted in)`,
    n: k,
    value: seconds(saveMs),
    throughput: `${perSecond(k, saveMs).toFixed(0)} memories/s`,
    notes: 'each save embeds before answering when a worker thread is free; sentences from seeded templates naming people, organisations, places, products and dates',
  });

  // Let the embedding finish, so that the backfill runs alone.
  const unembedded = () => count(run, `SELECT count(*) AS n FROM memories WHERE project_id = $1 AND embedding IS NULL`, [client.projectId]);
  const waitStart = performance.now();
  for (let left = await unembedded(); left > 0; left = await unembedded()) {
    if (performance.now() - waitStart > EMBED_WAIT_MS) throw new Error(`${left} memories still unembedded after ${seconds(EMBED_WAIT_MS)}`);
    progress(`[${run.setup}] extraction: waiting for ${left} memories to be embedded`);
    await sleep(1000);
  }

  let processed = 0;
  let entitiesLinked = 0;
  let edgesCreated = 0;
  let wallMs = 0;
  let serviceMs = 0;
  let calls = 0;
  let remaining = Infinity;
  while (remaining > 0) {
    const t1 = performance.now();
    const answer = await client.post<BackfillAnswer>('/admin/memory/graph/backfill', { limit: BACKFILL_LIMIT });
    wallMs += performance.now() - t1;
    serviceMs += answer.durationMs;
    calls++;
    processed += answer.processed;
    entitiesLinked += answer.entitiesLinked;
    edgesCreated += answer.edgesCreated;
    remaining = answer.remaining;
    progress(`[${run.setup}] extraction: backfill call ${calls}: ${answer.processed} processed in ${seconds(answer.durationMs)}, ${answer.remaining} remaining`);
    if (answer.processed === 0 && remaining > 0) throw new Error(`backfill processed nothing with ${remaining} remaining`);
  }
  const stats = await client.get<StatsAnswer>('/admin/memory/graph/stats');
  const byType = Object.entries(stats.entitiesByType).map(([t, x]) => `${t} ${x}`).join(', ');
  run.rows.push({
    operation: `4. Extraction: POST /admin/memory/graph/backfill {limit: ${BACKFILL_LIMIT}} until remaining 0`,
    n: calls,
    value: seconds(wallMs),
    throughput: `${perSecond(processed, wallMs).toFixed(0)} memories/s`,
    notes:
      `${thousands(processed)} memories processed (service durationMs ${seconds(serviceMs)}, ${perSecond(processed, serviceMs).toFixed(0)} memories/s); ` +
      `${thousands(entitiesLinked)} entity links, ${thousands(edgesCreated)} edges written; the graph after: ${thousands(stats.entityCount)} entities (${byType}), ` +
      `${thousands(stats.edgeCount)} current edges, ${thousands(stats.retiredEdges)} retired (functional predicates closed by later facts); ${stats.extraction.extractedMemories} extracted, ${stats.extraction.pendingMemories} pending` +
      (processed === k ? '' : ` ❌ ${k} memories saved, ${processed} processed by the backfill`),
  });
}

// ---------------------------------------------------------------------------------------------
// Backends

const load = () =>
  loadavg()
    .map((x) => x.toFixed(2))
    .join(' / ');

async function runBackend(ctx: Lattice, setup: string, postgres: boolean, extra: string): Promise<void> {
  const sizes = postgres ? SIZES.postgres : SIZES.pglite;
  const edges = EDGES_OVERRIDE ?? sizes.edges;
  const memories = MEMORIES_OVERRIDE ?? sizes.memories;
  const extract = EXTRACT_OVERRIDE ?? sizes.extract;
  const keep = ctx.modules.flatMap((m) => m.schedules ?? []).map((s) => s.id).filter((id) => !PAUSED_SCHEDULES.includes(id));
  const removed = await ctx.runtime.queue.unscheduleOthers(keep);
  progress(`[${setup}] removed the schedules ${removed.join(', ')} for this run`);
  const app = await buildApp(ctx, { logger: false });
  await app.ready();
  const run: Run = { ctx, app, setup, postgres, rows: [] };
  const started = performance.now();
  const loadBefore = load();
  try {
    if (PARTS.has('1')) {
      const graph = await buildGraph(run, edges);
      if (PARTS.has('2')) await benchTraverse(run, graph);
      if (PARTS.has('3')) await benchPrefetch(run, graph, memories);
    }
    if (PARTS.has('4')) await benchExtraction(run, extract);
  } finally {
    await app.close();
    write(`### ${setup}`);
    write();
    write(
      `Settings: ${thousands(edges)} edges (BENCH_GRAPH_EDGES), ${thousands(memories)} prefetch memories, ${thousands(extract)} extraction memories, ` +
        `${CALLS} timed calls per latency row (after ${WARMUP} warm-up calls), parts ${[...PARTS].sort().join(',')}. Schedules removed for the run: ${removed.join(', ') || 'none'}.`,
    );
    write();
    write(
      markdownTable(
        ['Operation', 'n', 'Time', 'Throughput', 'Notes'],
        run.rows.map((r) => [r.operation, r.n === undefined ? '–' : thousands(r.n), r.value, r.throughput ?? '–', r.notes ?? '–']),
        (i) => i >= 1 && i <= 3,
      ),
    );
    write();
    write(`${extra}Load average (1 / 5 / 15 min) ${loadBefore} before, ${load()} after this backend's ${seconds(performance.now() - started)} on ${cpus().length} CPU(s).`);
    write();
  }
}

async function main(): Promise<void> {
  await onEachBackend(log, (ctx, setup, postgres, machine) => runBackend(ctx, setup, postgres, machine), {
    title: 'Graph benchmark',
    description: `Targets on Postgres: 3-hop traversal p95 ≤ ${TARGET_TRAVERSE_P95_MS} ms, prefetch p95 ≤ ${TARGET_PREFETCH_P95_MS} ms.`,
    out,
  });
}

runBench(main);
