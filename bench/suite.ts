// The bench suite (`npm run bench`): every headline figure beside its reference, measured in the same
// run on the same machine, as one markdown table on stdout (progress on stderr) and the same rows as
// JSON in bench/results/<UTC timestamp>.json. On PGlite in memory (in-process queue) always, unless
// BENCH_SKIP_PGLITE=1, and on a throwaway Postgres database (lattice_bench_*; BullMQ under a throwaway
// QUEUE_PREFIX when REDIS_URL is set too) when DATABASE_URL is set. Each row:
//   - memory search at 100k memories (bench/corpus.ts: realistic texts, 512-d vectors clustered around
//     1,000 topic centroids, written straight into the table with the vector index dropped, which the
//     service's boot path, createEmbeddingsModule, then builds; 10k on PGlite): retrieval with the query
//     vector cached and whole search (query embedding included), each against the vector candidate
//     statement the service sent for the same query (recorded with recordingDb, replayed alone with
//     its session settings: whatever the index is, this is its raw pgvector query); and how much of
//     the exact top 10 the HNSW vector candidates hold, against exact search;
//   - saveMany in batches of 500 against a raw COPY ... FROM STDIN of the same rows (pg-copy-streams
//     on Postgres, a blob on PGlite);
//   - typed ingest in 10,000-row batches against a raw INSERT ... SELECT FROM unnest of the same
//     observations;
//   - GET /memory-typed/attributes with an API key through the app against bare fastify answering
//     the same path and body, both through app.inject;
//   - emit with 10 matching webhook alert rules against emit with none;
//   - a 3-hop traversal at 100k edges through the API against a raw recursive CTE;
//   - predict, profile and context at 10k subjects with 50 purchases each (2,000 on PGlite) through
//     the API, each against the plainest SQL read of the same subject's rows, and discovery against
//     grouping the same subjects by RFM segment in SQL.
// Ratios are figure ÷ reference. Each row names the goal its issue set; goals are checked on Postgres
// only (the issues set them there). A part that fails becomes a row saying so; the others still run.
//
// Run after a build (the pool loads dist/workers/index.js):
//   npm run bench
//   DATABASE_URL=postgres://postgres@127.0.0.1:5432/postgres REDIS_URL=redis://127.0.0.1:6379 npm run bench
// Settings (Postgres default / PGlite default; the PGlite key is BENCH_SUITE_PGLITE_*):
//   BENCH_SUITE_MEMORIES (100000 / 10000) search corpus; BENCH_SUITE_SEARCHES (300) per search measure;
//   BENCH_SUITE_SAVE_MEMORIES (10000 / 10000); BENCH_SUITE_TYPED_ROWS (100000 / 20000);
//   BENCH_SUITE_ROUTE_CALLS (2000 / 2000); BENCH_SUITE_EMITS (300 / 300); BENCH_SUITE_EDGES (100000 / 100000);
//   BENCH_SUITE_SUBJECTS (10000 / 2000); BENCH_SUITE_CALLS (200 / 200) per behaviour operation and for
//   the traversal; BENCH_SUITE_DISCOVER_CALLS (3); BENCH_SUITE_EMBED_WAIT_S (600: the longest wait for
//   the pattern memories' embeddings before timing); BENCH_SUITE_PARTS (search,save,typed,route,emit,graph,behavior);
//   BENCH_SKIP_PGLITE=1 (Postgres only).
// With CITUS_URL (the coordinator of scripts/citus/cluster.sh) the same parts run a third time, on a
// throwaway database of the cluster, distributed as `lattice citus distribute` does
// (BENCH_CITUS_SHARDS shards per table, 32 by default), with the Postgres settings: its rows sit
// beside plain Postgres's in the one table. Its goals are checked as Postgres's are.
// This suite sets in its own environment, before the contexts read their config:
// WEBHOOK_ALLOW_PRIVATE_TARGETS=true (the webhook receiver is on 127.0.0.1), BEHAVIOR_MINING_DEBOUNCE_MS
// and BEHAVIOR_MINING_MAX_WAIT_MS to a day (no mining in the background while measuring), and unless
// set, REQUEST_TIMEOUT_MS 600000 (a whole-project mining call is awaited), RATE_LIMIT_PER_MINUTE and
// PATTERN_EXTRACT_PER_MINUTE 10000000.
import { mkdirSync, writeFileSync } from 'node:fs';
import { cpus, loadavg } from 'node:os';
import { performance } from 'node:perf_hooks';
import type { FastifyBaseLogger } from 'fastify';
import { pino } from 'pino';
import { buildApp } from '../src/app.js';
import type { Lattice } from '../src/modules.js';
import { citusServer, markdownTable, positiveInt, progress, runBench, seconds, startReceiver, thousands, withCitusContext, withPgliteContext, withPostgresContext } from './support.js';
import { benchBehavior } from './suite/behavior.js';
import { goalCell, part, ratioText, sized, type Run, type SuiteRow } from './suite/common.js';
import { benchGraph } from './suite/graph.js';
import { benchRoute } from './suite/http.js';
import { benchSave, benchSearch } from './suite/memory.js';
import { benchEmit, benchTyped } from './suite/writes.js';

process.env.WEBHOOK_ALLOW_PRIVATE_TARGETS = 'true';
process.env.BEHAVIOR_MINING_DEBOUNCE_MS = '86400000';
process.env.BEHAVIOR_MINING_MAX_WAIT_MS = '86400000';
process.env.REQUEST_TIMEOUT_MS ??= '600000';
process.env.RATE_LIMIT_PER_MINUTE ??= '10000000';
process.env.PATTERN_EXTRACT_PER_MINUTE ??= '10000000';

const PARTS = ['search', 'save', 'typed', 'route', 'emit', 'graph', 'behavior'] as const;
type Part = (typeof PARTS)[number];
const chosen = new Set((process.env.BENCH_SUITE_PARTS ?? PARTS.join(',')).split(',').map((s) => s.trim()).filter(Boolean));
for (const p of chosen) if (!(PARTS as readonly string[]).includes(p)) throw new Error(`BENCH_SUITE_PARTS: unknown part ${p}; parts are ${PARTS.join(', ')}`);

const settingsFor = (postgres: boolean) => ({
  memories: sized(postgres, 'BENCH_SUITE_MEMORIES', 100_000, 10_000),
  searches: positiveInt('BENCH_SUITE_SEARCHES', 300),
  saveMemories: sized(postgres, 'BENCH_SUITE_SAVE_MEMORIES', 10_000, 10_000),
  typedRows: sized(postgres, 'BENCH_SUITE_TYPED_ROWS', 100_000, 20_000),
  routeCalls: sized(postgres, 'BENCH_SUITE_ROUTE_CALLS', 2000, 2000),
  emits: sized(postgres, 'BENCH_SUITE_EMITS', 300, 300),
  edges: sized(postgres, 'BENCH_SUITE_EDGES', 100_000, 100_000),
  subjects: sized(postgres, 'BENCH_SUITE_SUBJECTS', 10_000, 2000),
  calls: positiveInt('BENCH_SUITE_CALLS', 200),
  discoverCalls: positiveInt('BENCH_SUITE_DISCOVER_CALLS', 3),
  embedWaitS: positiveInt('BENCH_SUITE_EMBED_WAIT_S', 600),
});
type Settings = ReturnType<typeof settingsFor>;

// The service's warnings (a job's failed attempt, ...) go to stderr beside the progress: stdout holds the table alone.
const log = pino({ name: 'lattice', level: 'warn' }, pino.destination(2)) as unknown as FastifyBaseLogger;
const rows: SuiteRow[] = [];
const backends: { setup: string; server?: string; settings: Settings; parts: Part[]; elapsedMs: number; loadBefore: number[]; loadAfter: number[] }[] = [];

async function runBackend(ctx: Lattice, setup: string, postgres: boolean, receiver: Awaited<ReturnType<typeof startReceiver>>): Promise<void> {
  const settings = settingsFor(postgres);
  const parts = PARTS.filter((p) => chosen.has(p));
  let server: string | undefined;
  if (postgres) {
    const { rows: v } = await ctx.runtime.db.query<{ pg: string; vector: string }>(
      `SELECT current_setting('server_version') AS pg, (SELECT extversion FROM pg_extension WHERE extname = 'vector') AS vector`,
    );
    server = `Postgres ${v[0]!.pg}, pgvector ${v[0]!.vector}`;
    if (setup.startsWith('Citus')) server += `, ${await citusServer(ctx.runtime.db)}`;
  }
  progress(`[${setup}] settings: ${JSON.stringify(settings)}; parts ${parts.join(',')}`);
  const app = await buildApp(ctx, { logger: false });
  await app.ready();
  const run: Run = { ctx, app, setup, postgres, rows };
  const started = performance.now();
  const loadBefore = loadavg();
  try {
    const steps: Record<Part, () => Promise<void>> = {
      search: () => benchSearch(run, settings.memories, settings.searches),
      save: () => benchSave(run, settings.saveMemories),
      typed: () => benchTyped(run, settings.typedRows),
      route: () => benchRoute(run, settings.routeCalls),
      emit: () => benchEmit(run, settings.emits, receiver),
      graph: () => benchGraph(run, settings.edges, settings.calls),
      behavior: () => benchBehavior(run, settings.subjects, settings.calls, settings.discoverCalls, settings.embedWaitS * 1000),
    };
    for (const p of parts) await part(run, p, steps[p]);
  } finally {
    await app.close();
    backends.push({ setup, server, settings, parts, elapsedMs: performance.now() - started, loadBefore, loadAfter: loadavg() });
  }
}

function report(started: Date): void {
  if (rows.length === 0) return;
  const cpu = cpus()[0]?.model.trim() ?? 'unknown CPU';
  const load = (xs: number[]) => xs.map((x) => x.toFixed(2)).join(' / ');
  const out: string[] = [];
  out.push(`\nBench suite, ${started.toISOString().slice(0, 16).replace('T', ' ')} UTC: Node ${process.version}, ${cpus().length} × ${cpu}. Every reference is measured in the same run; ratio = figure ÷ reference. Goals are checked on Postgres only.`);
  for (const b of backends) {
    const s = b.settings;
    out.push(
      `- ${b.setup}${b.server ? ` (${b.server})` : ''}: ${seconds(b.elapsedMs)}; load average (1 / 5 / 15 min) ${load(b.loadBefore)} before, ${load(b.loadAfter)} after. ` +
        `Settings: ${thousands(s.memories)} memories, ${s.searches} searches per measure, ${thousands(s.saveMemories)} saved, ${thousands(s.typedRows)} typed rows, ` +
        `${thousands(s.routeCalls)} route calls, ${s.emits} emits, ${thousands(s.edges)} edges, ${thousands(s.subjects)} subjects, ${s.calls} calls per behaviour and traversal row, ${s.discoverCalls} discovery calls; parts ${b.parts.join(', ')}.`,
    );
  }
  out.push('');
  const cells = rows.map((r, i) => [
    String(i + 1),
    r.row,
    r.backend,
    r.failed ?? r.figure?.text ?? '–',
    r.reference ? `${r.reference.what}: ${r.reference.text}` : '–',
    ratioText(r.ratio),
    goalCell(r),
  ]);
  out.push(markdownTable(['#', 'Row', 'Backend', 'Figure', 'Reference (same run)', 'Ratio', 'Goal (issue)'], cells, (i) => i === 0 || i === 5));
  const notes = rows.flatMap((r, i) => (r.notes.length > 0 ? [`${i + 1}. ${r.notes.join('; ')}.`] : []));
  if (notes.length > 0) out.push('', 'Notes, by row:', ...notes);
  process.stdout.write(`${out.join('\n')}\n`);

  const dir = new URL('./results/', import.meta.url);
  mkdirSync(dir, { recursive: true });
  const file = new URL(`${started.toISOString().replace(/:/g, '-').replace(/\.\d+Z$/, 'Z')}.json`, dir);
  const json = {
    startedAt: started.toISOString(),
    finishedAt: new Date().toISOString(),
    node: process.version,
    cpus: cpus().length,
    cpu,
    backends,
    rows: rows.map((r, i) => ({ n: i + 1, ...r, checked: r.met === undefined ? 'not checked' : r.met ? 'met' : 'missed' })),
  };
  writeFileSync(file, `${JSON.stringify(json, null, 2)}\n`);
  progress(`wrote ${file.pathname}`);
}

async function main(): Promise<void> {
  const started = new Date();
  const receiver = await startReceiver();
  try {
    if (process.env.BENCH_SKIP_PGLITE === '1') progress('BENCH_SKIP_PGLITE=1: skipping the PGlite run');
    else await withPgliteContext(log, (ctx, setup) => runBackend(ctx, setup, false, receiver));
    if (process.env.DATABASE_URL) await withPostgresContext(process.env.DATABASE_URL, process.env.REDIS_URL, log, (ctx, setup) => runBackend(ctx, setup, true, receiver));
    else progress('DATABASE_URL is not set: skipping the Postgres run');
    if (process.env.CITUS_URL) await withCitusContext(process.env.CITUS_URL, process.env.REDIS_URL, log, (ctx, setup) => runBackend(ctx, setup, true, receiver));
    else progress('CITUS_URL is not set: skipping the Citus run');
  } finally {
    await receiver.close();
    report(started);
  }
}

runBench(main);
