// Compliance benchmark: what the audit log costs an audited read, and how long the data-subject
// rights take on a large subject. Everything timed goes through the HTTP API (app.inject on the app
// buildApp makes, with the key of an enterprise project); the bulk memories are written straight
// into the table with insertMemories (src/memory/store.ts, not embedded), since the write path is not
// what is measured. On PGlite in memory (in-process queue) and, when DATABASE_URL is set, on Postgres
// (a throwaway lattice_bench_* database; with REDIS_URL also set, BullMQ under a throwaway
// QUEUE_PREFIX). Markdown tables go to stdout (one per backend), progress to stderr.
//
// Each backend runs two Lattices over the same database, side by side in this process: one as
// configured (COMPLIANCE_AUDIT_ENABLED on, the default; it runs the job consumers) and one with
// COMPLIANCE_AUDIT_ENABLED=false (no consumers; it only answers the calls of part 1), each with its
// own app. On Postgres each has its own connection pool (as two processes would); on PGlite they
// share the one in-memory database. So "on" and "off" answer the same rows, in one run.
//
//   1. Audit cost on the hot path. A project of BENCH_COMPLIANCE_AUDIT_MEMORIES memories (4,000) of
//      80 subjects (user-00 ... user-79, 50 each; seeded realistic texts), then ANALYZE memories. Two
//      audited routes: GET /admin/memory/{id} (read.memory; a random memory of the project, seeded)
//      and POST /memory/search {query, subject: user-07, limit: 10} (read.search; seeded realistic
//      questions, each Lattice sees each question once, so every search embeds its query on its
//      Lattice's own worker pool; the memories have no embedding, so the candidates come from the
//      words, BM25). For each route, with the audit log on and off:
//        - one at a time: 30 warm-up calls, then BENCH_COMPLIANCE_CALLS (300) timed calls around
//          app.inject, on and off interleaved call by call (which one goes first alternates), so both
//          see the same load and the same data: p50 / p95 / p99 and their on / off ratios;
//        - 16 calls in flight (BENCH_COMPLIANCE_CONCURRENCY): BENCH_COMPLIANCE_CONCURRENT_CALLS
//          (1,000) calls per setting, in four phases of half of them each, off, on, on, off (so
//          that a drift over the run weighs on both alike): calls/s over the phases' wall time, and
//          the on / off ratio. Under this load, the mean number of rows per audit INSERT: the
//          statements `INSERT INTO compliance_audit` the "on" Lattice sent (counted, and timed around
//          the driver, by a thin wrapper around its database handle) against the rows
//          compliance_audit gained (SELECT count(*)); beside it the mean time of one such INSERT.
//          One at a time it is 1 (nothing else in flight); under load it shows the group commit
//          (src/compliance/audit-log.ts: one INSERT for every record that arrived while the previous
//          one was written). Checked: every "on" call added exactly one row, every "off" call none.
//   2. Export and hard delete of a large subject. Project export-bench: one subject (user:big-subject)
//      with BENCH_COMPLIANCE_MEMORIES memories (20,000 on Postgres, 5,000 on PGlite), written with
//      insertMemories (subjectKind / subjectExternalId set); 2,000 typed observations of it through
//      POST /memory-typed/observations in batches of 500, after POST /memory-typed/attributes
//      {attributeKey: heart_rate, dataType: numeric} (each accepted numeric observation also appends
//      a typed.observation event and folds into its accumulator); 200 events of it through
//      POST /lattice/events/emit {eventType, subject, payload} one at a time. Beside it, in the same
//      project, BENCH_COMPLIANCE_OTHERS memories (100,000 on Postgres, 20,000 on PGlite) of 1,000
//      other subjects (other-0000 ... other-0999, equal shares). Then ANALYZE of memories,
//      typed_observations and events. Timed:
//        - POST /memory-compliance/export {subject}: the wall time of app.inject until the streamed
//          answer's last byte (read with payloadAsStream, counted and dropped, so the bench holds no
//          copy), the time to the first byte, the answer's size in MB, rows per second (the sum of
//          its `counts`, read from the end of the stream) and the process memory: rss and heapUsed
//          sampled every 50 ms during the export (by a timer, and as chunks arrive: on PGlite the
//          stream advances on promises alone and the timer may not fire), the largest sample minus
//          the value just before (the service pages 500 rows at a time, so this should stay well
//          below the answer's size; app.inject without payloadAsStream would itself hold the whole
//          answer). A full GC runs
//          just before (so "before" holds no garbage), none during. Garbage the export leaves
//          (each page's rows and JSON text) counts until V8 collects it, so the same export is run
//          once more, untimed, with a full GC before each sample: its peak heapUsed minus before is
//          what the export holds live. Checked: the counts against the rows written. Shown: the
//          export's audit row (read.export; resultCount, and the memoryIds it names).
//        - POST /memory-compliance/hard-delete {subject, reason, dryRun: true}: wall time and the
//          counts it reports; checked: the subject's memories are all still there afterwards.
//        - POST /memory-compliance/hard-delete {subject, reason}: wall time and the counts. Checked
//          after it: SELECT count(*) FROM memories WHERE project_id = $1 AND subject_external_id = $2
//          is 0, the other subjects' memories are all there, no typed observation or event of the
//          subject is left, and the tombstone (subject.hard_delete) is in compliance_audit.
//
// Schedules removed from the queue for the whole run (on both backends): memory.embed-sweep (it
// would embed the bulk memories in the background, competing with the timed calls) and
// graph.extract-sweep. Mining is held off (see below) so that no background job writes the large
// subject while it is exported or erased.
//
// Run after a build (the worker pool loads dist/workers/index.js):
//   npm run bench:compliance
//   BENCH_SKIP_PGLITE=1 DATABASE_URL=postgres://postgres@127.0.0.1:5432/postgres REDIS_URL=redis://127.0.0.1:6379 npm run bench:compliance
// Settings: BENCH_COMPLIANCE_PARTS (1,2: the parts to run), BENCH_COMPLIANCE_AUDIT_MEMORIES (4000),
// BENCH_COMPLIANCE_CALLS (300), BENCH_COMPLIANCE_CONCURRENT_CALLS (1000; even),
// BENCH_COMPLIANCE_CONCURRENCY (16), BENCH_COMPLIANCE_MEMORIES (20000 / 5000),
// BENCH_COMPLIANCE_OTHERS (100000 / 20000), BENCH_SKIP_PGLITE=1 (Postgres only), BENCH_KEEP_DB=1
// (keep the Postgres database). This bench sets in its own environment, before the contexts read
// their config: BEHAVIOR_MINING_DEBOUNCE_MS and BEHAVIOR_MINING_MAX_WAIT_MS to a day (the subject's
// observations and events queue it for mining; mining it would write patterns beside the timed
// export and erase), REQUEST_TIMEOUT_MS 600000 and RATE_LIMIT_PER_MINUTE 10000000.
import { cpus, loadavg } from 'node:os';
import { performance } from 'node:perf_hooks';
import { setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';
import type { FastifyInstance } from 'fastify';
import { buildApp } from '../src/app.js';
import { insertMemories, type NewMemory } from '../src/memory/store.js';
import { createLattice, type Lattice } from '../src/modules.js';
import { createPgliteDb } from '../src/platform/db-pglite.js';
import type { Db } from '../src/platform/db.js';
import { newId } from '../src/platform/ids.js';
import { createLogger } from '../src/platform/logger.js';
import { openDatabase } from '../src/platform/runtime.js';
import {
  configFor, makeTexts, markdownTable, memoryTemplates, ms, mulberry32, optionalInt, perSecond, positiveInt, progress, queryTemplates, runBench, summarise,
  withThrowawayPostgres, type Summary,
  check, latency, megabytes, seconds, thousands,
  recordingDb,
} from './support.js';

// A full GC on demand, to take process memory before the export (and, in its second run, at every sample).
setFlagsFromString('--expose-gc');
const gc = runInNewContext('gc') as () => void;

process.env.BEHAVIOR_MINING_DEBOUNCE_MS = '86400000';
process.env.BEHAVIOR_MINING_MAX_WAIT_MS = '86400000';
process.env.REQUEST_TIMEOUT_MS ??= '600000';
process.env.RATE_LIMIT_PER_MINUTE ??= '10000000';


const PARTS = new Set((process.env.BENCH_COMPLIANCE_PARTS ?? '1,2').split(',').map((s) => s.trim()));
const AUDIT_MEMORIES = positiveInt('BENCH_COMPLIANCE_AUDIT_MEMORIES', 4000);
const AUDIT_SUBJECTS = 80;
const CALLS = positiveInt('BENCH_COMPLIANCE_CALLS', 300);
const WARMUP = 30;
const CONCURRENT_CALLS = positiveInt('BENCH_COMPLIANCE_CONCURRENT_CALLS', 1000);
if (CONCURRENT_CALLS % 2 !== 0) throw new Error('BENCH_COMPLIANCE_CONCURRENT_CALLS must be even (two phases per setting)');
const CONCURRENCY = positiveInt('BENCH_COMPLIANCE_CONCURRENCY', 16);
const MEMORIES_OVERRIDE = optionalInt('BENCH_COMPLIANCE_MEMORIES');
const OTHERS_OVERRIDE = optionalInt('BENCH_COMPLIANCE_OTHERS');
const SIZES = { postgres: { memories: 20_000, others: 100_000 }, pglite: { memories: 5000, others: 20_000 } };
const OTHER_SUBJECTS = 1000;
const OBSERVATIONS = 2000;
const OBSERVATION_BATCH = 500;
const EVENTS = 200;
const SAMPLE_EVERY_MS = 50;
const INSERT_BATCH = 5000;
const SEARCH_SUBJECT = { kind: 'user', externalId: 'user-07' };
const BIG_SUBJECT = { kind: 'user', externalId: 'big-subject' };
const ATTRIBUTE = 'heart_rate';
/** Schedules removed for the run (see the header). */
const PAUSED_SCHEDULES = ['memory.embed-sweep', 'graph.extract-sweep'];
const DAY_MS = 86_400_000;

const log = createLogger('warn');
const out: string[] = [];
const write = (text = '') => out.push(text);

const ratio = (a: number, b: number) => `×${(a / b).toFixed(2)}`;
const load = () =>
  loadavg()
    .map((x) => x.toFixed(2))
    .join(' / ');

// ---------------------------------------------------------------------------------------------
// Two Lattices over one database: the audit log on (counted) and off

/** Counts the audit log's INSERT statements sent through a Db, and their time around the driver. */
function countingDb(db: Db): { db: Db; auditInserts: () => number; auditInsertMs: () => number } {
  const recorded = recordingDb(db, (sql) => /^\s*INSERT INTO compliance_audit\b/.test(sql));
  return {
    db: recorded.db,
    auditInserts: () => recorded.statements.length,
    auditInsertMs: () => recorded.statements.reduce((sum, st) => sum + (st.ms ?? 0), 0),
  };
}

interface Pair {
  on: Lattice;
  off: Lattice;
  /** INSERT INTO compliance_audit statements the "on" Lattice has sent so far, and their time in all. */
  auditInserts: () => number;
  auditInsertMs: () => number;
  setup: string;
  postgres: boolean;
  machine: string;
}

async function withPglitePair(fn: (pair: Pair) => Promise<void>): Promise<void> {
  const db = await createPgliteDb();
  const counted = countingDb(db);
  let on: Lattice | undefined;
  let off: Lattice | undefined;
  try {
    on = await createLattice(configFor({}), { log, db: counted.db });
    off = await createLattice(configFor({ COMPLIANCE_AUDIT_ENABLED: 'false' }), { log, db, skipMigrations: true });
    await on.startConsumers();
    await fn({ on, off, auditInserts: counted.auditInserts,
        auditInsertMs: counted.auditInsertMs, setup: `PGlite (memory), ${on.runtime.queue.kind} queue`, postgres: false, machine: '' });
  } finally {
    await off?.close();
    await on?.close();
    await db.close();
  }
}

async function withPostgresPair(serverUrl: string, redisUrl: string | undefined, fn: (pair: Pair) => Promise<void>): Promise<void> {
  await withThrowawayPostgres(serverUrl, redisUrl, async ({ databaseUrl, queuePrefix }) => {
    const env = { DATABASE_URL: databaseUrl, REDIS_URL: redisUrl, QUEUE_PREFIX: queuePrefix };
    const onConfig = configFor(env);
    const offConfig = configFor({ ...env, COMPLIANCE_AUDIT_ENABLED: 'false' });
    const onDb = await openDatabase(onConfig);
    const offDb = await openDatabase(offConfig);
    const counted = countingDb(onDb);
    let on: Lattice | undefined;
    let off: Lattice | undefined;
    try {
      on = await createLattice(onConfig, { log, db: counted.db });
      off = await createLattice(offConfig, { log, db: offDb, skipMigrations: true });
      await on.startConsumers();
      const { rows } = await onDb.query<{ pg: string }>(`SELECT current_setting('server_version') AS pg`);
      await fn({
        on,
        off,
        auditInserts: counted.auditInserts,
        auditInsertMs: counted.auditInsertMs,
        setup: `Postgres, ${on.runtime.queue.kind} queue`,
        postgres: true,
        machine: `Postgres ${rows[0]!.pg}; ${onConfig.workerConcurrency} job consumer(s) (WORKER_CONCURRENCY). `,
      });
    } finally {
      await off?.close();
      await on?.close();
      await offDb.close();
      await onDb.close();
    }
  });
}

// ---------------------------------------------------------------------------------------------
// HTTP

interface Row {
  measure: string;
  n?: number;
  on: string;
  off?: string;
  ratio?: string;
  notes?: string;
}

interface Run {
  pair: Pair;
  appOn: FastifyInstance;
  appOff: FastifyInstance;
  rows: Row[];
}

interface Client {
  app: FastifyInstance;
  projectId: string;
  apiKey: string;
}

async function call(client: Client, method: 'GET' | 'POST', path: string, body?: unknown): Promise<string> {
  const response = await client.app.inject({
    method,
    url: `/api/v1/projects/${client.projectId}${path}`,
    headers: { authorization: `Bearer ${client.apiKey}` },
    ...(body === undefined ? {} : { payload: body as object }),
  });
  if (response.statusCode >= 300) throw new Error(`${method} ${path} answered ${response.statusCode}: ${response.body.slice(0, 300)}`);
  return response.body;
}

const post = async <T>(client: Client, path: string, body: unknown): Promise<T> => JSON.parse(await call(client, 'POST', path, body)) as T;

/** A project on the enterprise plan and a key, as a client of each app. */
async function openProject(run: Run, projectId: string): Promise<{ on: Client; off: Client }> {
  await run.pair.on.apis.tenancy.createProject(projectId, { plan: 'enterprise' });
  const { apiKey } = await run.pair.on.apis.tenancy.createKey(projectId, ['READ_MEMORY', 'WRITE_MEMORY'], 'compliance-bench');
  return { on: { app: run.appOn, projectId, apiKey }, off: { app: run.appOff, projectId, apiKey } };
}

async function count(run: Run, sql: string, params: unknown[] = []): Promise<number> {
  return Number((await run.pair.on.runtime.db.query<{ n: string | number }>(sql, params)).rows[0]!.n);
}

const auditRows = (run: Run, projectId: string) => count(run, `SELECT count(*) AS n FROM compliance_audit WHERE project_id = $1`, [projectId]);

async function insertInBatches(run: Run, label: string, rows: readonly NewMemory[]): Promise<number> {
  let inserted = 0;
  for (let from = 0; from < rows.length; from += INSERT_BATCH) {
    const batch = rows.slice(from, from + INSERT_BATCH);
    inserted += (await insertMemories(run.pair.on.runtime.db, batch)).length;
    progress(`[${run.pair.setup}] ${label}: ${thousands(from + batch.length)} of ${thousands(rows.length)}`);
  }
  if (inserted !== rows.length) throw new Error(`${label}: insertMemories wrote ${inserted} of ${rows.length} memories`);
  return inserted;
}

/** Runs `fn(0 .. total-1)` with `lanes` calls in flight; answers the wall time. */
async function inFlight(lanes: number, total: number, fn: (i: number) => Promise<void>): Promise<number> {
  let next = 0;
  const t0 = performance.now();
  await Promise.all(
    Array.from({ length: Math.min(lanes, total) }, async () => {
      while (next < total) await fn(next++);
    }),
  );
  return performance.now() - t0;
}

// ---------------------------------------------------------------------------------------------
// 1. Audit cost on the hot path

interface Route {
  label: string;
  /** The i-th call (the same i means the same request on and off). */
  send: (client: Client, i: number) => Promise<unknown>;
}

async function benchAuditCost(run: Run): Promise<void> {
  const { setup } = run.pair;
  const projectId = 'audit-bench';
  const clients = await openProject(run, projectId);
  const texts = makeTexts(AUDIT_MEMORIES, 1401, memoryTemplates);
  const random = mulberry32(1402);
  const perSubject = Math.ceil(AUDIT_MEMORIES / AUDIT_SUBJECTS);
  const memories: NewMemory[] = texts.map((content, i) => ({
    id: newId('mem'),
    projectId,
    content,
    subjectKind: 'user',
    subjectExternalId: `user-${String(Math.floor(i / perSubject)).padStart(2, '0')}`,
    importance: 1 + Math.floor(random() * 10),
    validFrom: new Date(Date.now() - random() * 365 * DAY_MS),
  }));
  const t0 = performance.now();
  await insertInBatches(run, 'audit-bench memories', memories);
  await run.pair.on.runtime.db.exec('ANALYZE memories');
  const loadMs = performance.now() - t0;
  const subjectSize = memories.filter((m) => m.subjectExternalId === SEARCH_SUBJECT.externalId).length;
  run.rows.push({
    measure: `1. Data: ${thousands(AUDIT_MEMORIES)} memories of ${AUDIT_SUBJECTS} subjects (insertMemories, not embedded), then ANALYZE memories`,
    n: AUDIT_MEMORIES,
    on: seconds(loadMs),
    notes: `${SEARCH_SUBJECT.kind}:${SEARCH_SUBJECT.externalId}, the searched subject, holds ${subjectSize} memories`,
  });

  // The same requests on and off: random memories, and questions each Lattice sees once (uncached).
  const ids = memories.map((m) => m.id);
  const totalCalls = WARMUP + CALLS + CONCURRENT_CALLS;
  const pick = mulberry32(1403);
  const getIds = Array.from({ length: totalCalls }, () => ids[Math.floor(pick() * ids.length)]!);
  const questions = makeTexts(totalCalls, 1404, queryTemplates);
  const routes: Route[] = [
    { label: 'GET /admin/memory/{id} (read.memory)', send: (c, i) => call(c, 'GET', `/admin/memory/${getIds[i]!}`) },
    {
      label: `POST /memory/search {query, subject, limit: 10} (read.search)`,
      send: (c, i) => post<unknown[]>(c, '/memory/search', { query: questions[i]!, subject: SEARCH_SUBJECT, limit: 10 }),
    },
  ];

  for (const route of routes) {
    // One at a time, interleaved call by call.
    const samples = { on: [] as number[], off: [] as number[] };
    const rowsBefore = await auditRows(run, projectId);
    const insertsBefore = run.pair.auditInserts();
    const insertMsBefore = run.pair.auditInsertMs();
    for (let i = 0; i < WARMUP + CALLS; i++) {
      const order = i % 2 === 0 ? (['on', 'off'] as const) : (['off', 'on'] as const);
      for (const which of order) {
        const t = performance.now();
        await route.send(clients[which], i);
        const took = performance.now() - t;
        if (i >= WARMUP) samples[which].push(took);
      }
      if ((i + 1) % 100 === 0) progress(`[${setup}] ${route.label}, one at a time: ${i + 1} of ${WARMUP + CALLS} call pairs`);
    }
    const sequentialRows = (await auditRows(run, projectId)) - rowsBefore;
    const sequentialInserts = run.pair.auditInserts() - insertsBefore;
    const sequentialInsertMs = run.pair.auditInsertMs() - insertMsBefore;
    const on = summarise(samples.on);
    const off = summarise(samples.off);
    run.rows.push({
      measure: `1. ${route.label}, one at a time`,
      n: on.n,
      on: latency(on),
      off: latency(off),
      ratio: `p50 ${ratio(on.p50, off.p50)}, p95 ${ratio(on.p95, off.p95)}, p99 ${ratio(on.p99, off.p99)}`,
      notes:
        `latency on / off; mean on ${ms(on.mean)}, off ${ms(off.mean)} (${ms(on.mean - off.mean)} added); after ${WARMUP} warm-up calls each; on and off interleaved call by call; ` +
        `${(sequentialRows / Math.max(1, sequentialInserts)).toFixed(2)} rows per audit INSERT (${thousands(sequentialInserts)} INSERTs, ${thousands(sequentialRows)} rows), ` +
        `${ms(sequentialInsertMs / Math.max(1, sequentialInserts))} per INSERT on average (around the driver); ` +
        check(sequentialRows === WARMUP + CALLS, `${thousands(sequentialRows)} audit rows for ${thousands(WARMUP + CALLS)} "on" calls (and the "off" calls none)`),
    });

    // CONCURRENCY in flight: phases off, on, on, off of half the calls each.
    const half = CONCURRENT_CALLS / 2;
    const base = WARMUP + CALLS;
    const wall = { on: 0, off: 0 };
    const rows = { on: 0, off: 0 };
    let inserts = 0;
    let insertMs = 0;
    const phases = [
      ['off', 0],
      ['on', 0],
      ['on', half],
      ['off', half],
    ] as const;
    for (const [which, offset] of phases) {
      const r0 = await auditRows(run, projectId);
      const s0 = run.pair.auditInserts();
      const m0 = run.pair.auditInsertMs();
      wall[which] += await inFlight(CONCURRENCY, half, async (k) => void (await route.send(clients[which], base + offset + k)));
      rows[which] += (await auditRows(run, projectId)) - r0;
      if (which === 'on') {
        inserts += run.pair.auditInserts() - s0;
        insertMs += run.pair.auditInsertMs() - m0;
      }
      progress(`[${setup}] ${route.label}, ${CONCURRENCY} in flight: ${half} calls with the audit log ${which} in ${seconds(wall[which])} so far`);
    }
    const onRate = perSecond(CONCURRENT_CALLS, wall.on);
    const offRate = perSecond(CONCURRENT_CALLS, wall.off);
    run.rows.push({
      measure: `1. ${route.label}, ${CONCURRENCY} in flight`,
      n: CONCURRENT_CALLS,
      on: `${onRate.toFixed(0)} calls/s (${seconds(wall.on)})`,
      off: `${offRate.toFixed(0)} calls/s (${seconds(wall.off)})`,
      ratio: `${ratio(onRate, offRate)} throughput`,
      notes:
        `phases of ${half} calls: off, on, on, off; ${(rows.on / Math.max(1, inserts)).toFixed(2)} rows per audit INSERT on average under this load (${thousands(inserts)} INSERTs, ${thousands(rows.on)} rows), ` +
        `${ms(insertMs / Math.max(1, inserts))} per INSERT on average; ` +
        check(rows.on === CONCURRENT_CALLS && rows.off === 0, `${thousands(rows.on)} audit rows for ${thousands(CONCURRENT_CALLS)} "on" calls, ${rows.off} for the "off" calls`),
    });
  }
}

// ---------------------------------------------------------------------------------------------
// 2. Export and hard delete of a large subject

type Counts = Record<string, number>;
type Report = Record<string, unknown> & { durationMs: number; auditEventId: string | null };

/** A hard delete's counts, by kind (the fields ending in Deleted, without the suffix). */
const deleted = (report: Report): Counts =>
  Object.fromEntries(Object.entries(report).flatMap(([k, n]) => (k.endsWith('Deleted') && typeof n === 'number' ? [[k.slice(0, -'Deleted'.length), n]] : [])));
const total = (counts: Counts) => Object.values(counts).reduce((a, b) => a + b, 0);

/** The non-zero counts, as "memories 20,000, events 2,200". */
const nonZero = (counts: Counts) =>
  Object.entries(counts)
    .filter(([, n]) => n !== 0)
    .map(([k, n]) => `${k} ${thousands(n)}`)
    .join(', ') || 'nothing';

interface Sample {
  rss: number;
  heapUsed: number;
}

/**
 * POST /memory-compliance/export through app.inject with payloadAsStream: the bytes are counted and
 * dropped (only the first and the last few KB are kept, to check the bundle and read its counts),
 * and process memory is sampled every SAMPLE_EVERY_MS; with `collect`, after a full GC each time.
 */
async function streamExport(run: Run, client: Client, subject: typeof BIG_SUBJECT, collect: boolean) {
  gc();
  const before: Sample = process.memoryUsage();
  const peak: Sample = { rss: before.rss, heapUsed: before.heapUsed };
  let samples = 0;
  let sampledAt = performance.now();
  const sample = () => {
    if (collect) gc();
    const m = process.memoryUsage();
    peak.rss = Math.max(peak.rss, m.rss);
    peak.heapUsed = Math.max(peak.heapUsed, m.heapUsed);
    samples++;
    sampledAt = performance.now();
  };
  // A timer, and a look at each chunk received: PGlite runs its queries on this thread and the
  // stream moves on promises alone, so there the timer may not fire until the export ends.
  const due = () => performance.now() - sampledAt >= SAMPLE_EVERY_MS;
  const sampler = setInterval(() => due() && sample(), SAMPLE_EVERY_MS / 5);
  let bytes = 0;
  let head: Buffer | undefined;
  const tail: Buffer[] = [];
  let tailBytes = 0;
  let firstByteMs = NaN;
  let exportMs: number;
  const t0 = performance.now();
  try {
    const response = await run.appOn.inject({
      method: 'POST',
      url: `/api/v1/projects/${client.projectId}/memory-compliance/export`,
      headers: { authorization: `Bearer ${client.apiKey}` },
      payload: { subject },
      payloadAsStream: true,
    });
    if (response.statusCode !== 200) throw new Error(`export answered ${response.statusCode}`);
    for await (const chunk of response.stream() as AsyncIterable<Buffer>) {
      if (bytes === 0) firstByteMs = performance.now() - t0;
      bytes += chunk.length;
      if (due()) sample();
      head ??= chunk.subarray(0, 200);
      tail.push(chunk);
      tailBytes += chunk.length;
      while (tail.length > 1 && tailBytes - tail[0]!.length >= 8192) tailBytes -= tail.shift()!.length;
    }
    exportMs = performance.now() - t0;
  } finally {
    clearInterval(sampler);
  }
  sample();
  const start = head?.toString('utf8') ?? '';
  const end = Buffer.concat(tail).toString('utf8');
  const counted = end.lastIndexOf('"counts":');
  if (!start.startsWith('{"subject":') || counted < 0) throw new Error(`the export is not the bundle: starts ${start.slice(0, 80)}, ends ${end.slice(-200)}`);
  const bundleEnd = JSON.parse(`{${end.slice(counted)}`) as { counts: Counts; durationMs: number };
  return { exportMs, firstByteMs, bytes, bundleEnd, before, peak, samples };
}

async function benchSubjectRights(run: Run, bigMemories: number, otherMemories: number): Promise<void> {
  const { setup } = run.pair;
  const projectId = 'export-bench';
  const { on: client } = await openProject(run, projectId);
  const textCount = Math.max(bigMemories, Math.ceil(otherMemories / OTHER_SUBJECTS));
  const texts = makeTexts(textCount, 2401, memoryTemplates);
  const random = mulberry32(2402);
  const memory = (content: string, externalId: string): NewMemory => ({
    id: newId('mem'),
    projectId,
    content,
    subjectKind: 'user',
    subjectExternalId: externalId,
    importance: 1 + Math.floor(random() * 10),
    validFrom: new Date(Date.now() - random() * 365 * DAY_MS),
  });

  // The data: memories by SQL, observations and events through the API.
  const perOther = Math.ceil(otherMemories / OTHER_SUBJECTS);
  const others = Array.from({ length: otherMemories }, (_, i) => memory(texts[i % textCount]!, `other-${String(Math.floor(i / perOther)).padStart(4, '0')}`));
  const big = Array.from({ length: bigMemories }, (_, i) => memory(texts[i]!, BIG_SUBJECT.externalId));
  const t0 = performance.now();
  await insertInBatches(run, 'other subjects\' memories', others);
  await insertInBatches(run, 'the subject\'s memories', big);
  const memoriesMs = performance.now() - t0;

  await post(client, '/memory-typed/attributes', { attributeKey: ATTRIBUTE, dataType: 'numeric' });
  const t1 = performance.now();
  const start = Date.now() - OBSERVATIONS * 60_000;
  let accepted = 0;
  for (let from = 0; from < OBSERVATIONS; from += OBSERVATION_BATCH) {
    const observations = Array.from({ length: Math.min(OBSERVATION_BATCH, OBSERVATIONS - from) }, (_, k) => ({
      attributeKey: ATTRIBUTE,
      subjectKind: BIG_SUBJECT.kind,
      subjectExternalId: BIG_SUBJECT.externalId,
      valueNumeric: Math.round(50 + random() * 70),
      observedAt: new Date(start + (from + k) * 60_000).toISOString(),
    }));
    const report = await post<{ accepted: number; quarantined: number; duplicates: number }>(client, '/memory-typed/observations', { observations });
    accepted += report.accepted;
    progress(`[${setup}] observations: ${from + observations.length} of ${OBSERVATIONS} sent, ${accepted} accepted`);
  }
  const observationsMs = performance.now() - t1;
  if (accepted !== OBSERVATIONS) throw new Error(`${accepted} of ${OBSERVATIONS} observations accepted`);
  const t2 = performance.now();
  let emitted = 0;
  for (let i = 0; i < EVENTS; i++) {
    const answer = await post<{ emitted: boolean }>(client, '/lattice/events/emit', { eventType: i % 2 === 0 ? 'app.login' : 'app.purchase', subject: BIG_SUBJECT, payload: { n: i } });
    if (answer.emitted) emitted++;
  }
  const eventsMs = performance.now() - t2;
  if (emitted !== EVENTS) throw new Error(`${emitted} of ${EVENTS} events emitted`);
  const t3 = performance.now();
  await run.pair.on.runtime.db.exec('ANALYZE memories, typed_observations, events');
  const analyzeMs = performance.now() - t3;
  const subjectMemories = () =>
    count(run, `SELECT count(*) AS n FROM memories WHERE project_id = $1 AND subject_external_id = $2`, [projectId, BIG_SUBJECT.externalId]);
  const otherCount = () =>
    count(run, `SELECT count(*) AS n FROM memories WHERE project_id = $1 AND subject_external_id <> $2`, [projectId, BIG_SUBJECT.externalId]);
  const subjectEvents = () =>
    count(run, `SELECT count(*) AS n FROM events WHERE project_id = $1 AND subject_kind = $2 AND subject_external_id = $3`, [projectId, BIG_SUBJECT.kind, BIG_SUBJECT.externalId]);
  const subjectObservations = () =>
    count(run, `SELECT count(*) AS n FROM typed_observations WHERE project_id = $1 AND subject_kind = $2 AND subject_external_id = $3`, [
      projectId,
      BIG_SUBJECT.kind,
      BIG_SUBJECT.externalId,
    ]);
  const eventsWritten = await subjectEvents();
  run.rows.push({
    measure:
      `2. Data: ${BIG_SUBJECT.kind}:${BIG_SUBJECT.externalId} with ${thousands(bigMemories)} memories, ${thousands(OBSERVATIONS)} observations and ${EVENTS} events; ` +
      `${thousands(otherMemories)} memories of ${thousands(OTHER_SUBJECTS)} other subjects`,
    n: bigMemories + otherMemories + OBSERVATIONS + EVENTS,
    on:
      `${seconds(memoriesMs)} memories (${thousands(perSecond(bigMemories + otherMemories, memoriesMs))}/s); ${seconds(observationsMs)} observations (${thousands(perSecond(OBSERVATIONS, observationsMs))}/s); ` +
      `${seconds(eventsMs)} events (${perSecond(EVENTS, eventsMs).toFixed(0)}/s)`,
    notes:
      `memories by insertMemories in batches of ${thousands(INSERT_BATCH)} (not embedded); observations through POST /memory-typed/observations, ${OBSERVATION_BATCH} a call; events through POST /lattice/events/emit one at a time; ` +
      `the subject has ${thousands(eventsWritten)} events (${thousands(OBSERVATIONS)} typed.observation + ${EVENTS} emitted); then ANALYZE memories, typed_observations, events: ${seconds(analyzeMs)}`,
  });

  // The export, streamed: bytes counted and dropped, memory sampled. Then once more, untimed, with
  // a full garbage collection before each sample: what the export holds live, garbage aside.
  const { exportMs, firstByteMs, bytes, bundleEnd, before, peak, samples } = await streamExport(run, client, BIG_SUBJECT, false);
  const live = await streamExport(run, client, BIG_SUBJECT, true);
  const exported = total(bundleEnd.counts);
  const exportAudit = (
    await run.pair.on.runtime.db.query<{ result_count: number; ids: number }>(
      `SELECT result_count, cardinality(memory_ids) AS ids FROM compliance_audit WHERE project_id = $1 AND event_type = 'read.export' ORDER BY created_at, id LIMIT 1`,
      [projectId],
    )
  ).rows[0];
  const countsOk = bundleEnd.counts.memories === bigMemories && bundleEnd.counts.observations === OBSERVATIONS && bundleEnd.counts.events === eventsWritten;
  run.rows.push({
    measure: `2. POST /memory-compliance/export {subject}, streamed`,
    n: exported,
    on: `${seconds(exportMs)}, ${megabytes(bytes)}`,
    notes:
      `${thousands(perSecond(exported, exportMs))} rows/s, ${(bytes / 1_048_576 / (exportMs / 1000)).toFixed(1)} MB/s; first byte after ${ms(firstByteMs)}; service durationMs ${seconds(bundleEnd.durationMs)}; ` +
      `process memory during the export (every ${SAMPLE_EVERY_MS} ms, ${samples} samples, peak − before): rss +${megabytes(peak.rss - before.rss)} (before ${megabytes(before.rss)}), heapUsed +${megabytes(peak.heapUsed - before.heapUsed)} (before ${megabytes(before.heapUsed)}); ` +
      `the same export again (untimed) with a full GC before each sample: heapUsed +${megabytes(live.peak.heapUsed - live.before.heapUsed)}, rss +${megabytes(live.peak.rss - live.before.rss)} (${live.samples} samples, ${seconds(live.exportMs)}); ` +
      `its audit row (read.export): resultCount ${exportAudit ? thousands(exportAudit.result_count) : 'none'}, ${exportAudit ? thousands(Number(exportAudit.ids)) : 0} memoryIds; ` +
      `counts: ${nonZero(bundleEnd.counts)}; ${check(countsOk, `memories ${thousands(bigMemories)}, observations ${thousands(OBSERVATIONS)}, events ${thousands(eventsWritten)} as written`)}`,
  });

  // The dry run, then the erase.
  const reason = 'benchmark: erasure request';
  const t5 = performance.now();
  const dry = await post<Report>(client, '/memory-compliance/hard-delete', { subject: BIG_SUBJECT, reason, dryRun: true });
  const dryMs = performance.now() - t5;
  const afterDry = await subjectMemories();
  run.rows.push({
    measure: '2. POST /memory-compliance/hard-delete {subject, reason, dryRun: true}',
    n: total(deleted(dry)),
    on: seconds(dryMs),
    ratio: '–',
    notes: `service durationMs ${seconds(dry.durationMs)}; reported: ${nonZero(deleted(dry))}; ${check(afterDry === bigMemories && dry.auditEventId === null, `rolled back: the subject still has ${thousands(afterDry)} memories, no tombstone`)}`,
  });

  progress(`[${setup}] hard delete of ${BIG_SUBJECT.kind}:${BIG_SUBJECT.externalId}`);
  const t6 = performance.now();
  const real = await post<Report>(client, '/memory-compliance/hard-delete', { subject: BIG_SUBJECT, reason });
  const deleteMs = performance.now() - t6;
  const [left, othersLeft, eventsLeft, observationsLeft, tombstones] = await Promise.all([
    subjectMemories(),
    otherCount(),
    subjectEvents(),
    subjectObservations(),
    count(run, `SELECT count(*) AS n FROM compliance_audit WHERE project_id = $1 AND event_type = 'subject.hard_delete' AND id = $2`, [projectId, real.auditEventId]),
  ]);
  const dryCounts = deleted(dry);
  const realCounts = deleted(real);
  const sameCounts = Object.keys(realCounts).every((k) => dryCounts[k] === realCounts[k]);
  run.rows.push({
    measure: '2. POST /memory-compliance/hard-delete {subject, reason}',
    n: total(deleted(real)),
    on: seconds(deleteMs),
    ratio: '–',
    notes: `service durationMs ${seconds(real.durationMs)}; reported: ${nonZero(deleted(real))}; ${check(sameCounts, 'the same counts as the dry run')}`,
  });
  const erased = left === 0 && eventsLeft === 0 && observationsLeft === 0;
  run.rows.push({
    measure: '2. Check after the hard delete',
    on: check(erased && othersLeft === otherMemories && tombstones === 1, erased && othersLeft === otherMemories ? 'erased, others intact' : 'see notes'),
    ratio: '–',
    notes:
      `SELECT count(*) FROM memories WHERE project_id = $1 AND subject_external_id = $2: ${left} (${check(left === 0, 'expected 0')}); ` +
      `other subjects' memories: ${thousands(othersLeft)} of ${thousands(otherMemories)} (${check(othersLeft === otherMemories, 'all there')}); ` +
      `the subject's events ${eventsLeft}, typed observations ${observationsLeft} (${check(eventsLeft === 0 && observationsLeft === 0, 'expected 0')}); ` +
      `tombstone ${real.auditEventId ?? 'null'} in compliance_audit: ${check(tombstones === 1, tombstones === 1 ? 'present' : 'missing')}`,
  });
}

// ---------------------------------------------------------------------------------------------
// Backends

async function runBackend(pair: Pair): Promise<void> {
  const { on, off, setup, postgres } = pair;
  const sizes = postgres ? SIZES.postgres : SIZES.pglite;
  const bigMemories = MEMORIES_OVERRIDE ?? sizes.memories;
  const otherMemories = OTHERS_OVERRIDE ?? sizes.others;
  const keep = on.modules.flatMap((m) => m.schedules ?? []).map((s) => s.id).filter((id) => !PAUSED_SCHEDULES.includes(id));
  const removed = await on.runtime.queue.unscheduleOthers(keep);
  progress(`[${setup}] removed the schedules ${removed.join(', ')} for this run`);
  const appOn = await buildApp(on, { logger: false });
  const appOff = await buildApp(off, { logger: false });
  await Promise.all([appOn.ready(), appOff.ready()]);
  const run: Run = { pair, appOn, appOff, rows: [] };
  const started = performance.now();
  const loadBefore = load();
  try {
    if (PARTS.has('1')) await benchAuditCost(run);
    if (PARTS.has('2')) await benchSubjectRights(run, bigMemories, otherMemories);
  } finally {
    await appOff.close();
    await appOn.close();
    write(`### ${setup}`);
    write();
    write(
      `Settings: part 1 ${thousands(AUDIT_MEMORIES)} memories, ${CALLS} calls one at a time (after ${WARMUP} warm-up calls) and ${thousands(CONCURRENT_CALLS)} with ${CONCURRENCY} in flight, per route and setting; ` +
        `part 2 ${thousands(bigMemories)} memories of the subject (BENCH_COMPLIANCE_MEMORIES) beside ${thousands(otherMemories)} of other subjects (BENCH_COMPLIANCE_OTHERS); parts ${[...PARTS].sort().join(',')}. ` +
        `Schedules removed for the run: ${removed.join(', ') || 'none'}.`,
    );
    write();
    write(
      markdownTable(
        ['Measurement', 'n', 'Audit log on', 'Audit log off', 'On / off', 'Notes'],
        run.rows.map((r) => [r.measure, r.n === undefined ? '–' : thousands(r.n), r.on, r.off ?? '–', r.ratio ?? '–', r.notes ?? '–']),
        (i) => i >= 1 && i <= 4,
      ),
    );
    write();
    write(`${pair.machine}Load average (1 / 5 / 15 min) ${loadBefore} before, ${load()} after this backend's ${seconds(performance.now() - started)} on ${cpus().length} CPU(s).`);
    write();
  }
}

async function main(): Promise<void> {
  const cpu = cpus()[0]?.model.trim() ?? 'unknown CPU';
  const started = new Date().toISOString().slice(0, 16).replace('T', ' ');
  try {
    if (process.env.BENCH_SKIP_PGLITE === '1') progress('BENCH_SKIP_PGLITE=1: skipping the PGlite run');
    else await withPglitePair(runBackend);
    if (process.env.DATABASE_URL) await withPostgresPair(process.env.DATABASE_URL, process.env.REDIS_URL, runBackend);
    else progress('DATABASE_URL is not set: skipping the Postgres run');
  } finally {
    if (out.length > 0) {
      process.stdout.write(
        `\nCompliance benchmark, ${started} UTC: Node ${process.version}, ${cpus().length} × ${cpu}. ` +
          'Through the HTTP API (app.inject); part 1 on two Lattices over the same database, COMPLIANCE_AUDIT_ENABLED on and off; part 2 with the audit log on.\n\n',
      );
      process.stdout.write(`${out.join('\n')}\n`);
    }
  }
}

runBench(main);
