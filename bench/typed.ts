// Typed ingest and event benchmark. Measures through the service layer (ctx.apis.typed, ctx.apis.events,
// ctx.apis.alerts; no HTTP) and prints one markdown table per backend to stdout: PGlite in memory (in-process
// queue) and, when DATABASE_URL is set, Postgres (a throwaway lattice_bench_* database; with REDIS_URL
// also set, BullMQ under a throwaway QUEUE_PREFIX):
//   1. sync ingest (typed.ingest) throughput, observations/s, and p50/p95 batch latency, in batches of
//      1,000 and of 10,000 rows: one numeric attribute with minValid/maxValid, ~1,000 subjects (so
//      each batch folds hundreds of accumulators), observedAt increasing, ~2% of the values out of
//      range (quarantined). Each batch size runs in its own project after one untimed warm-up batch.
//      Then late data: 10,000-row batches into the 10,000-row project whose observedAt lies before
//      everything stored, so every touched accumulator rebuilds its EWMA from its whole series.
//   2. queued ingest (typed.enqueue): rows/s from the first enqueue until typed_ingest_batches holds
//      none of the project's batches, 10,000 rows per batch.
//   3. emit latency (events.emit, distinct dedupeKeys) with 0, 10 and 100 enabled matching rules whose
//      channel is a webhook to a local node:http receiver answering 204 (the first attempt is made
//      before emit returns), and with 10 rules writing back to memory.
//   4. where the time of a 10,000-row sync batch goes: the same ingest through a TypedService whose
//      database handle times every statement (forward and late batches, in a project of its own).
// Progress goes to stderr.
//
// Run after a build:
//   npm run bench:typed
//   DATABASE_URL=postgres://postgres@127.0.0.1:5432/postgres REDIS_URL=redis://127.0.0.1:6379 npm run bench:typed
// Settings: BENCH_TYPED_ROWS (rows per sync batch size and for the queued run on Postgres, default
// 100000; the late run takes half), BENCH_TYPED_PGLITE_ROWS (the same on PGlite, default 20000),
// BENCH_TYPED_SUBJECTS (1000), BENCH_TYPED_EMITS (300 per rule setup), BENCH_TYPED_PROFILE_BATCHES
// (3 forward and as many late 10,000-row batches, 0 to skip), BENCH_SKIP_PGLITE=1 (Postgres only).
// Webhook rules need WEBHOOK_ALLOW_PRIVATE_TARGETS=true (the receiver is on 127.0.0.1): this bench
// sets it in its own environment before the contexts read their config.
import { cpus, loadavg } from 'node:os';
import { performance } from 'node:perf_hooks';
import type { Lattice } from '../src/modules.js';
import type { CreateRuleBody } from '../src/alerts/schemas.js';
import { createAlertsModule } from '../src/alerts/index.js';
import { createEventsModule } from '../src/events/index.js';
import type { Db, Queryable } from '../src/platform/db.js';
import { createLogger } from '../src/platform/logger.js';
import type { Principal } from '../src/tenancy/index.js';
import type { IngestReport, ObservationInput } from '../src/typed/schemas.js';
import { createTypedModule } from '../src/typed/index.js';
import { markdownTable, ms, mulberry32, perSecond, progress, msUntil, runBench, sleep, startReceiver, summarise, withPgliteContext, withPostgresContext, type Receiver } from './support.js';

process.env.WEBHOOK_ALLOW_PRIVATE_TARGETS = 'true';

const positiveInt = (key: string, fallback: number, min = 1): number => {
  const value = Number(process.env[key] ?? fallback);
  if (!Number.isInteger(value) || value < min) throw new Error(`${key} must be an integer of at least ${min}`);
  return value;
};

const PG_ROWS = positiveInt('BENCH_TYPED_ROWS', 100_000);
const PGLITE_ROWS = positiveInt('BENCH_TYPED_PGLITE_ROWS', 20_000);
const SUBJECTS = positiveInt('BENCH_TYPED_SUBJECTS', 1000);
const EMITS = positiveInt('BENCH_TYPED_EMITS', 300);
const EMIT_WARMUP = 20;
const PROFILE_BATCHES = positiveInt('BENCH_TYPED_PROFILE_BATCHES', 3, 0);
const SYNC_BATCHES = [1000, 10_000];
const BIG_BATCH = 10_000;
const RULE_COUNTS = [0, 10, 100];
const MEMORY_RULES = 10;

const ATTRIBUTE = 'heart_rate';
const MIN_VALID = 20;
const MAX_VALID = 250;
const OUT_OF_RANGE = 0.02;
const STEP_MS = 100;
/** observedAt of row 0 of every project; forward rows go after it, late rows before. */
const T0 = Date.parse('2025-01-01T00:00:00Z');

const TARGET_ROWS_PER_SECOND = 20_000;

const log = createLogger('warn');

// ---------------------------------------------------------------------------------------------
// The tables

interface Row {
  measure: string;
  n?: number;
  p50?: number;
  p95?: number;
  result?: string;
  target?: string;
}
interface Table {
  setup: string;
  rows: Row[];
  notes: string[];
}
const tables: Table[] = [];

function printTable(table: Table): void {
  const header = ['Measure', 'n', 'p50', 'p95', 'Result', 'Target (Postgres)'];
  const cells = table.rows.map((r) => [
    r.measure,
    r.n === undefined ? '–' : r.n.toLocaleString('en-US'),
    r.p50 === undefined ? '–' : ms(r.p50),
    r.p95 === undefined ? '–' : ms(r.p95),
    r.result ?? '–',
    r.target ?? '–',
  ]);
  process.stdout.write(`\n### ${table.setup}\n\n`);
  for (const note of table.notes) process.stdout.write(`${note}\n`);
  if (table.notes.length > 0) process.stdout.write('\n');
  process.stdout.write(`${markdownTable(header, cells, (i) => i >= 1 && i <= 3)}\n`);
}

const thousands = (n: number) => Math.round(n).toLocaleString('en-US');
const seconds = (elapsedMs: number) => `${(elapsedMs / 1000).toFixed(1)} s`;
const check = (ok: boolean, text: string) => `${ok ? '✅' : '❌'} ${text}`;

interface Run {
  ctx: Lattice;
  setup: string;
  postgres: boolean;
  /** Rows per sync batch size and for the queued run. */
  rows: number;
  table: Table;
  receiver: Receiver;
}

// ---------------------------------------------------------------------------------------------
// Data

/**
 * Rows `start` .. `start + count - 1` of a stream: row i of the batch is observed at
 * T0 + (timeStart + i) × 100 ms (timeStart defaults to start: forward rows after T0; late batches pass a
 * negative one). Subject and value come from a generator seeded by the row index.
 */
function makeRows(start: number, count: number, timeStart = start): ObservationInput[] {
  const rows: ObservationInput[] = new Array(count);
  for (let i = 0; i < count; i++) {
    const g = start + i;
    const random = mulberry32(g * 2654435761);
    const subject = Math.floor(random() * SUBJECTS);
    const bad = random() < OUT_OF_RANGE;
    const value = bad ? (random() < 0.5 ? MIN_VALID - 1 - Math.floor(random() * 15) : MAX_VALID + 1 + Math.floor(random() * 200)) : 40 + Math.round(random() * 1400) / 10;
    rows[i] = {
      attributeKey: ATTRIBUTE,
      subjectKind: 'patient',
      subjectExternalId: `p-${String(subject).padStart(5, '0')}`,
      valueNumeric: value,
      observedAt: new Date(T0 + (timeStart + i) * STEP_MS).toISOString(),
      source: 'bench-monitor',
    };
  }
  return rows;
}

/** A project on the enterprise plan (unlimited events-ingested and active-triggers), its key's principal, the attribute. */
async function openProject(ctx: Lattice, projectId: string): Promise<Principal> {
  const key = await ctx.apis.tenancy.createProjectWithKey(projectId, 'enterprise', ['READ_MEMORY', 'WRITE_MEMORY'], 'bench');
  if (!key) throw new Error(`project ${projectId} already exists`);
  const principal = await ctx.apis.tenancy.authenticate(key.apiKey, projectId);
  await ctx.apis.typed.defineAttribute(projectId, { attributeKey: ATTRIBUTE, dataType: 'numeric', unit: 'bpm', minValid: MIN_VALID, maxValid: MAX_VALID });
  return principal;
}

function assertReport(report: IngestReport, rows: number, what: string): void {
  if (report.accepted + report.quarantined !== rows || report.duplicates !== 0) {
    throw new Error(`${what}: ${rows} rows answered ${JSON.stringify({ accepted: report.accepted, quarantined: report.quarantined, duplicates: report.duplicates })}`);
  }
}

async function countRows(ctx: Lattice, projectId: string) {
  const { rows } = await ctx.runtime.db.query<{ accepted: number; quarantined: number; accumulators: number; events: number }>(
    `SELECT (SELECT count(*) FROM typed_observations WHERE project_id = $1 AND status = 'accepted')::int AS accepted,
            (SELECT count(*) FROM typed_observations WHERE project_id = $1 AND status = 'quarantined')::int AS quarantined,
            (SELECT count(*) FROM typed_accumulators WHERE project_id = $1)::int AS accumulators,
            (SELECT count(*) FROM events WHERE project_id = $1)::int AS events`,
    [projectId],
  );
  return rows[0]!;
}

// ---------------------------------------------------------------------------------------------
// 1. Sync ingest

interface SyncResult {
  rows: number;
  elapsedMs: number;
  samples: number[];
  accepted: number;
  quarantined: number;
}

/** `batches` timed batches of `size` rows, each from `rowsOf` (made before its timer starts). */
async function syncBatches(
  run: Run,
  label: string,
  principal: Principal,
  size: number,
  batches: number,
  rowsOf: (batch: number) => ObservationInput[],
): Promise<SyncResult> {
  const samples: number[] = [];
  let accepted = 0;
  let quarantined = 0;
  let elapsedMs = 0;
  let lastReport = performance.now();
  for (let b = 0; b < batches; b++) {
    const rows = rowsOf(b);
    const t0 = performance.now();
    const report = await run.ctx.apis.typed.ingest(principal, rows);
    const took = performance.now() - t0;
    assertReport(report, rows.length, label);
    samples.push(took);
    elapsedMs += took;
    accepted += report.accepted;
    quarantined += report.quarantined;
    if (performance.now() - lastReport > 2000 || b === batches - 1) {
      lastReport = performance.now();
      progress(`[${run.setup}] ${label}: ${b + 1}/${batches} batches, ${thousands(perSecond((b + 1) * size, elapsedMs))} rows/s, last batch ${ms(took)}`);
    }
  }
  return { rows: batches * size, elapsedMs, samples, accepted, quarantined };
}

function syncRow(run: Run, measure: string, result: SyncResult, extra: string, targeted: boolean): Row {
  const s = summarise(result.samples);
  const rate = perSecond(result.rows, result.elapsedMs);
  return {
    measure,
    n: s.n,
    p50: s.p50,
    p95: s.p95,
    result:
      `${thousands(rate)} rows/s (${thousands(result.rows)} rows in ${seconds(result.elapsedMs)}); ` +
      `${thousands(result.quarantined)} quarantined (${((100 * result.quarantined) / result.rows).toFixed(1)}%)${extra}`,
    target: targeted && run.postgres ? check(rate >= TARGET_ROWS_PER_SECOND, `≥ ${thousands(TARGET_ROWS_PER_SECOND)} rows/s`) : undefined,
  };
}

async function benchSync(run: Run): Promise<void> {
  const { ctx, setup } = run;
  for (const size of SYNC_BATCHES) {
    const projectId = `typed-sync-${size}`;
    const principal = await openProject(ctx, projectId);
    const batches = Math.max(1, Math.floor(run.rows / size));
    // Warm-up: creates the accumulators, so the timed batches see the steady state.
    assertReport(await ctx.apis.typed.ingest(principal, makeRows(0, size)), size, 'warm-up');
    progress(`[${setup}] sync ingest, ${thousands(size)}-row batches: ${batches} batches into ${projectId}`);
    const result = await syncBatches(run, `sync ${thousands(size)}`, principal, size, batches, (b) => makeRows((b + 1) * size, size));
    const counted = await countRows(ctx, projectId);
    run.table.rows.push(
      syncRow(
        run,
        `sync ingest, ${thousands(size)}-row batches, observedAt increasing`,
        result,
        `; project now ${thousands(counted.accepted + counted.quarantined)} observations, ${thousands(counted.accumulators)} accumulators, ${thousands(counted.events)} events`,
        size === BIG_BATCH,
      ),
    );
    if (size !== BIG_BATCH) continue;

    // Late data into the same project: each batch lies wholly before everything stored.
    const lateBatches = Math.max(1, Math.floor(batches / 2));
    const history = counted.accepted;
    progress(`[${setup}] late ingest: ${lateBatches} batches of ${thousands(size)} into ${projectId} (${thousands(history)} accepted points stored)`);
    const late = await syncBatches(run, 'late 10,000', principal, size, lateBatches, (b) => makeRows(10_000_000 + b * size, size, -(b + 1) * size));
    const after = await countRows(ctx, projectId);
    run.table.rows.push(
      syncRow(
        run,
        `sync ingest, ${thousands(size)}-row batches, observedAt before everything stored (late data)`,
        late,
        `; every batch rebuilds the EWMA of ~${thousands(Math.min(SUBJECTS, size))} accumulators from their whole series ` +
          `(${thousands(history)} → ${thousands(after.accepted)} accepted points in the project)`,
        false,
      ),
    );
  }
}

// ---------------------------------------------------------------------------------------------
// 2. Queued ingest

async function benchEnqueue(run: Run): Promise<void> {
  const { ctx, setup } = run;
  const projectId = 'typed-queued';
  const principal = await openProject(ctx, projectId);
  const batches = Math.max(1, Math.floor(run.rows / BIG_BATCH));
  const prepared = Array.from({ length: batches }, (_, b) => makeRows(b * BIG_BATCH, BIG_BATCH));
  const pending = async () =>
    (await ctx.runtime.db.query<{ n: number }>('SELECT count(*)::int AS n FROM typed_ingest_batches WHERE project_id = $1', [projectId])).rows[0]!.n;

  progress(`[${setup}] queued ingest: ${batches} batches of ${thousands(BIG_BATCH)} into ${projectId} (${ctx.runtime.queue.kind} queue, ${ctx.runtime.config.workerConcurrency} consumers)`);
  const enqueueSamples: number[] = [];
  const start = performance.now();
  for (const rows of prepared) {
    const t0 = performance.now();
    const queued = await ctx.apis.typed.enqueue(principal, rows);
    enqueueSamples.push(performance.now() - t0);
    if (queued !== rows.length) throw new Error(`enqueue answered ${queued} for ${rows.length} rows`);
  }
  const enqueuedMs = performance.now() - start;
  progress(`[${setup}] queued ingest: all ${batches} batches enqueued in ${seconds(enqueuedMs)}; waiting for the jobs`);
  let lastReport = performance.now();
  const deadline = performance.now() + 30 * 60_000;
  for (;;) {
    const left = await pending();
    if (left === 0) break;
    if (performance.now() > deadline) throw new Error(`queued ingest: ${left} batch(es) still queued after 30 minutes`);
    if (performance.now() - lastReport > 2000) {
      lastReport = performance.now();
      progress(`[${setup}] queued ingest: ${left}/${batches} batches still queued after ${seconds(performance.now() - start)}`);
    }
    await sleep(20);
  }
  const elapsedMs = performance.now() - start;
  const counted = await countRows(ctx, projectId);
  const total = batches * BIG_BATCH;
  if (counted.accepted + counted.quarantined !== total) throw new Error(`queued ingest: ${counted.accepted + counted.quarantined} of ${total} rows stored`);
  const s = summarise(enqueueSamples);
  run.table.rows.push({
    measure: `queued ingest (enqueue → typed.ingest jobs), ${thousands(BIG_BATCH)}-row batches, first enqueue until none queued`,
    n: s.n,
    p50: s.p50,
    p95: s.p95,
    result:
      `${thousands(perSecond(total, elapsedMs))} rows/s (${thousands(total)} rows in ${seconds(elapsedMs)}); ` +
      `p50/p95 are of the enqueue call; all enqueued after ${seconds(enqueuedMs)} (${thousands(perSecond(total, enqueuedMs))} rows/s accepted); ` +
      `${thousands(counted.quarantined)} quarantined`,
  });
}

// ---------------------------------------------------------------------------------------------
// 3. Emit latency


async function benchEmit(run: Run, rules: number, channel: 'webhook' | 'memory'): Promise<void> {
  const { ctx, setup, receiver } = run;
  const projectId = `typed-emit-${channel}-${rules}`;
  const principal = await openProject(ctx, projectId);
  for (let r = 0; r < rules; r++) {
    const body: CreateRuleBody = {
      name: `bench rule ${r}`,
      trigger: { kind: 'engine-event', eventTypes: ['reading.*'] },
      notify:
        channel === 'webhook'
          ? [{ kind: 'webhook', url: receiver.url }]
          : [{ kind: 'memory', writeAs: { content: '{{rule.name}}: {{event.eventType}} for {{subject.externalId}} at {{event.payload.value}} bpm ({{event.payload.seq}})', scope: 'project', importance: 3 } }],
    };
    await ctx.apis.alerts.create(projectId, body, principal.entitlements['active-triggers']);
  }
  const label = `emit, ${rules} ${channel} rule${rules === 1 ? '' : 's'}`;
  const emitOne = async (seq: number) => {
    const result = await ctx.apis.events.emit(projectId, {
      eventType: 'reading.high',
      subject: { kind: 'patient', externalId: `p-${String(seq % SUBJECTS).padStart(5, '0')}` },
      severity: 'warn',
      payload: { value: 180 + (seq % 50), seq },
      dedupeKey: `bench-${seq}`,
    });
    if (!result.emitted || result.alertDispatches !== rules) throw new Error(`${label}: emit ${seq} answered emitted=${result.emitted}, ${result.alertDispatches} dispatches`);
  };
  const receivedBefore = receiver.received();
  for (let i = 0; i < EMIT_WARMUP; i++) await emitOne(i);
  progress(`[${setup}] ${label}: ${EMITS} emits`);
  const samples: number[] = [];
  for (let i = 0; i < EMITS; i++) {
    const t0 = performance.now();
    await emitOne(EMIT_WARMUP + i);
    samples.push(performance.now() - t0);
    if ((i + 1) % 100 === 0) progress(`[${setup}] ${label}: ${i + 1}/${EMITS}`);
  }
  const s = summarise(samples);
  const emitted = EMIT_WARMUP + EMITS;
  let delivered: string;
  if (channel === 'webhook') {
    const lag = await msUntil(() => receiver.received() - receivedBefore >= rules * emitted);
    const got = receiver.received() - receivedBefore;
    delivered = rules === 0 ? 'no rules, nothing delivered' : `receiver got ${thousands(got)} of ${thousands(rules * emitted)} webhooks${lag === undefined ? ' (the rest not within 60 s)' : `, the last ${ms(lag)} after the last emit answered`}`;
  } else {
    const written = async () => (await ctx.runtime.db.query<{ n: number }>('SELECT count(*)::int AS n FROM memories WHERE project_id = $1', [projectId])).rows[0]!.n;
    const lag = await msUntil(async () => (await written()) >= rules * emitted);
    delivered = `${thousands(await written())} of ${thousands(rules * emitted)} memories written${lag === undefined ? ' (the rest not within 60 s)' : `, the last ${ms(lag)} after the last emit answered`} (embedding runs behind, in jobs)`;
  }
  run.table.rows.push({ measure: `${label} matching each event`, n: s.n, p50: s.p50, p95: s.p95, result: `mean ${ms(s.mean)}, p99 ${ms(s.p99)}; ${delivered}` });
}

// ---------------------------------------------------------------------------------------------
// 4. Where the time of a 10,000-row batch goes

/** What a statement is, from its text. */
function statementName(sql: string): string {
  const text = sql.replace(/\s+/g, ' ').trim();
  const known: [RegExp, string][] = [
    [/^SELECT \* FROM typed_attributes/, 'loadRules (SELECT typed_attributes)'],
    [/^INSERT INTO typed_observations/, 'insertObservations (INSERT … unnest; ON CONFLICT only on a retry)'],
    [/^WITH u AS MATERIALIZED/, 'appendUnfolded (points for the fold, new accumulator rows, the event outbox row)'],
    [/^SELECT dedupe_hash FROM typed_observations/, 'existingHashes'],
    [/^INSERT INTO typed_accumulators/, 'lockAccumulators: INSERT missing accumulators'],
    [/^SELECT a\.\* FROM typed_accumulators/, 'lockAccumulators: SELECT … FOR UPDATE'],
    [/^SELECT o\.subject_kind/, 'loadSeries (late data: whole series of the touched keys)'],
    [/^UPDATE typed_accumulators/, 'writeAccumulators (UPDATE … unnest)'],
    [/^WITH clock AS/, 'appendEvents (event clock + INSERT events; typed.events job only)'],
    [/FROM alert_rules/, 'alerts.evaluate: list enabled rules'],
  ];
  return known.find(([pattern]) => pattern.test(text))?.[1] ?? text.slice(0, 60);
}

/** A Db whose transactions time every statement into `timings` (name → total ms, calls). */
function timingDb(db: Db, timings: Map<string, { ms: number; calls: number }>): Db {
  const wrap = (q: Queryable): Queryable => ({
    query: async (sql, params) => {
      const t0 = performance.now();
      try {
        return await q.query(sql, params);
      } finally {
        const name = statementName(sql);
        const entry = timings.get(name) ?? { ms: 0, calls: 0 };
        entry.ms += performance.now() - t0;
        entry.calls += 1;
        timings.set(name, entry);
      }
    },
    exec: (sql) => q.exec(sql),
  });
  return {
    kind: db.kind,
    query: (sql, params) => db.query(sql, params),
    exec: (sql) => db.exec(sql),
    transaction: async (fn, options) => {
      const t0 = performance.now();
      try {
        return await db.transaction((tx) => fn(wrap(tx)), options);
      } finally {
        const entry = timings.get('(transaction)') ?? { ms: 0, calls: 0 };
        entry.ms += performance.now() - t0;
        entry.calls += 1;
        timings.set('(transaction)', entry);
      }
    },
    withAdvisoryLock: (key, fn) => db.withAdvisoryLock(key, fn),
    withAdvisoryLockIfFree: (key, fn) => db.withAdvisoryLockIfFree(key, fn),
    close: () => db.close(),
  };
}

async function profileIngest(run: Run): Promise<void> {
  if (PROFILE_BATCHES === 0) return;
  const { ctx, setup } = run;
  const projectId = 'typed-profile';
  const principal = await openProject(ctx, projectId);
  const timings = new Map<string, { ms: number; calls: number }>();
  const timed = timingDb(ctx.runtime.db, timings);
  // The same modules over the timed database: events, the alert rules subscribed to them, typed.
  const runtime = { ...ctx.runtime, db: timed };
  const events = createEventsModule(runtime).api;
  createAlertsModule(runtime, { events, memory: ctx.apis.memory });
  const typed = createTypedModule(runtime, { tenancy: ctx.apis.tenancy, events }).api;
  const size = BIG_BATCH;
  // Warm-up (creates the accumulators), then a history as deep as the sync run's, untimed, through ctx.apis.typed.
  const historyBatches = Math.max(1, Math.floor(run.rows / size));
  for (let b = 0; b < historyBatches; b++) assertReport(await ctx.apis.typed.ingest(principal, makeRows(b * size, size)), size, 'profile history');
  progress(`[${setup}] profile: ${historyBatches} untimed batches stored; ${PROFILE_BATCHES} forward and ${PROFILE_BATCHES} late batches timed per statement`);

  const phase = async (label: string, rowsOf: (b: number) => ObservationInput[]) => {
    timings.clear();
    let total = 0;
    for (let b = 0; b < PROFILE_BATCHES; b++) {
      const rows = rowsOf(b);
      const t0 = performance.now();
      assertReport(await typed.ingest(principal, rows), size, `profile ${label}`);
      total += performance.now() - t0;
    }
    const perBatch = (x: number) => x / PROFILE_BATCHES;
    const transaction = timings.get('(transaction)')?.ms ?? 0;
    const statements = [...timings.entries()].filter(([name]) => name !== '(transaction)').sort((a, b) => b[1].ms - a[1].ms);
    const inStatements = statements.reduce((sum, [, t]) => sum + t.ms, 0);
    const parts = statements.map(([name, t]) => `${name} ${ms(perBatch(t.ms))} (${((100 * t.ms) / total).toFixed(0)}%)`);
    parts.push(`rest of the transaction (checkRows, hashing, folding, BEGIN/COMMIT) ${ms(perBatch(transaction - inStatements))} (${((100 * (transaction - inStatements)) / total).toFixed(0)}%)`);
    parts.push(`outside it (meter consume, dispatch) ${ms(perBatch(total - transaction))} (${((100 * (total - transaction)) / total).toFixed(0)}%)`);
    run.table.rows.push({
      measure: `profile: one ${thousands(size)}-row sync batch, ${label}, mean per batch`,
      n: PROFILE_BATCHES,
      result: `${ms(perBatch(total))} per batch (${thousands(perSecond(PROFILE_BATCHES * size, total))} rows/s): ${parts.join('; ')}`,
    });
  };
  await phase('observedAt increasing', (b) => makeRows((historyBatches + b) * size, size));
  await phase('late data', (b) => makeRows(20_000_000 + b * size, size, -(b + 1) * size));

  if (run.postgres) {
    const { rows } = await ctx.runtime.db.query<{ name: string; size: string }>(
      `SELECT c.relname AS name, pg_size_pretty(pg_relation_size(c.oid)) AS size
         FROM pg_class c WHERE c.relname IN ('typed_observations', 'events', 'typed_accumulators') OR c.oid IN (
           SELECT indexrelid FROM pg_index WHERE indrelid IN ('typed_observations'::regclass, 'events'::regclass))
        ORDER BY pg_relation_size(c.oid) DESC`,
    );
    run.table.rows.push({ measure: 'profile: table and index sizes at the end', result: rows.map((r) => `${r.name} ${r.size}`).join(', ') });
  }
}

// ---------------------------------------------------------------------------------------------
// Backends

async function benchAll(run: Run): Promise<void> {
  await benchSync(run);
  await benchEnqueue(run);
  for (const rules of RULE_COUNTS) await benchEmit(run, rules, 'webhook');
  await profileIngest(run);
  // Last: the write-backs schedule embedding jobs, which keep the CPU busy for a while.
  await benchEmit(run, MEMORY_RULES, 'memory');
}

const load = () => loadavg().map((x) => x.toFixed(2)).join(' / ');

async function runBackend(ctx: Lattice, setup: string, postgres: boolean, rows: number, receiver: Receiver, notes: string[]): Promise<void> {
  const table: Table = { setup, rows: [], notes };
  tables.push(table);
  const startedAt = performance.now();
  const loadBefore = load();
  try {
    await benchAll({ ctx, setup, postgres, rows, table, receiver });
  } finally {
    // Other processes on the machine skew these numbers: say how busy it was.
    notes.push(`Load average (1 / 5 / 15 min) ${loadBefore} before, ${load()} after this backend's ${seconds(performance.now() - startedAt)} on ${cpus().length} CPU(s).`);
  }
}

async function main(): Promise<void> {
  const cpu = cpus()[0]?.model.trim() ?? 'unknown CPU';
  const started = new Date().toISOString().slice(0, 16).replace('T', ' ');
  const receiver = await startReceiver();
  try {
    if (process.env.BENCH_SKIP_PGLITE === '1') progress('BENCH_SKIP_PGLITE=1: skipping the PGlite run');
    else {
      await withPgliteContext(log, (ctx, setup) =>
        runBackend(ctx, setup, false, PGLITE_ROWS, receiver, [`${thousands(PGLITE_ROWS)} rows per sync batch size and for the queued run (BENCH_TYPED_PGLITE_ROWS).`]),
      );
    }
    if (process.env.DATABASE_URL) {
      await withPostgresContext(process.env.DATABASE_URL, process.env.REDIS_URL, log, async (ctx, setup) => {
        const { rows } = await ctx.runtime.db.query<{ pg: string }>(`SELECT current_setting('server_version') AS pg`);
        await runBackend(ctx, setup, true, PG_ROWS, receiver, [
          `Postgres ${rows[0]!.pg}; ${thousands(PG_ROWS)} rows per sync batch size and for the queued run (BENCH_TYPED_ROWS); ` +
            `${ctx.runtime.config.workerConcurrency} job consumer(s) (WORKER_CONCURRENCY).`,
        ]);
      });
    } else progress('DATABASE_URL is not set: skipping the Postgres run');
  } finally {
    await receiver.close();
    if (tables.some((t) => t.rows.length > 0)) {
      process.stdout.write(
        `\nTyped ingest and event benchmark, ${started} UTC: Node ${process.version}, ${cpus().length} × ${cpu}. ` +
          `Service level (the typed and events apis: ingest, enqueue, emit), no HTTP. ` +
          `One numeric attribute (minValid ${MIN_VALID}, maxValid ${MAX_VALID}), ${thousands(SUBJECTS)} subjects, ~${OUT_OF_RANGE * 100}% of values out of range; ` +
          `one untimed warm-up batch per sync project; ${EMITS} emits per rule setup after ${EMIT_WARMUP} warm-up; webhooks go to a node:http receiver on 127.0.0.1 answering 204.\n`,
      );
      for (const table of tables) printTable(table);
    }
  }
}

runBench(main);
