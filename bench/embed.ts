// Embedding benchmark. Measures, and prints to stdout as one markdown table:
//   1. memories embedded per second through the real backfill path
//      (backfillEmbeddings -> queue job -> worker pool -> database), on PGlite in memory and, when
//      DATABASE_URL is set, on Postgres (a throwaway lattice_bench_* database; with REDIS_URL also
//      set, through BullMQ under a throwaway QUEUE_PREFIX);
//   2. single-query embedding latency (p50/p95/p99), uncached and through the query cache;
//   3. the worker pool's own per-task cost (noop tasks), one at a time and 32 in flight;
//   4. the encoder alone in the pool, texts per second at batches of 1, 32 and 128 with two batches
//      per thread in flight (and batch 1 with one per thread), beside the same texts through the
//      TF.js encoder it replaced (bench/embed-reference-worker.ts), in a pool of as many threads, in
//      the same run.
// Progress goes to stderr.
//
// Run after a build (the pool loads dist/workers/index.js):
//   npm run build && npx tsx bench/embed.ts
//   DATABASE_URL=postgres://postgres@127.0.0.1:5432/postgres REDIS_URL=redis://127.0.0.1:6379 npx tsx bench/embed.ts
// BENCH_MEMORIES sets how many memories to backfill (default 2000). Other settings
// (POOL_MAX_THREADS, WORKER_CONCURRENCY, EMBEDDING_PROVIDER, ...) are read as the service reads them.
import { cpus } from 'node:os';
import { performance } from 'node:perf_hooks';
import { fileURLToPath } from 'node:url';
import { Piscina } from 'piscina';
import type { Lattice } from '../src/modules.js';
import { countEmbedded, insertMemories, type NewMemory } from '../src/memory/store.js';
import { newId } from '../src/platform/ids.js';
import { createLogger } from '../src/platform/logger.js';
import { makeTexts, markdownTable, memoryTemplates, ms, progress, queryTemplates, rate, runBench, summarise, withPgliteContext, withPostgresContext } from './support.js';

const MEMORIES = Number(process.env.BENCH_MEMORIES ?? 2000);
const BACKFILL_BATCH = 500;
const QUERIES = 200;
const CACHED_CALLS = 2000;
const NOOP_CALLS = 2000;
const NOOP_WARMUP = 200;
const NOOP_PARALLEL_TASKS = 10_000;
const IN_FLIGHT = 32;
const PROJECT = 'bench';
const ENCODER_BATCHES = [1, 32, 128];
const ENCODER_TEXTS = 1024;

if (!Number.isInteger(MEMORIES) || MEMORIES < 1) throw new Error('BENCH_MEMORIES must be a positive integer');

const log = createLogger('warn');

// ---------------------------------------------------------------------------------------------
// The table

interface Row {
  measure: string;
  setup: string;
  n: number;
  p50?: string;
  p95?: string;
  p99?: string;
  rate?: string;
}
const rows: Row[] = [];

function printTable(): void {
  const header = ['Measure', 'Setup', 'n', 'p50', 'p95', 'p99', 'Throughput'];
  const cells = rows.map((r) => [r.measure, r.setup, String(r.n), r.p50 ?? '–', r.p95 ?? '–', r.p99 ?? '–', r.rate ?? '–']);
  process.stdout.write(`${markdownTable(header, cells, (i) => i >= 2)}\n`);
}

// ---------------------------------------------------------------------------------------------
// Measurements

/** Starts every pool thread and loads the model in each, so later timings exclude the cold start. */
async function warmUp(ctx: Lattice, setup: string): Promise<void> {
  const threads = ctx.runtime.config.poolMaxThreads;
  progress(`[${setup}] warming up ${threads} pool thread(s)`);
  const start = performance.now();
  const outputs = await Promise.all(Array.from({ length: threads }, (_, i) => ctx.apis.embeddings.embed([`warm-up sentence ${i}`, `and another ${i}`])));
  for (const vectors of outputs) {
    if (vectors.length !== 2 || vectors.some((v) => v?.length !== ctx.apis.embeddings.dimensions)) {
      throw new Error(
        `the embedder returned ${vectors.length} vector(s) of length ${vectors[0]?.length ?? '-'} for 2 texts ` +
          `(expected 2 of ${ctx.apis.embeddings.dimensions}); the backfill cannot work, so there is nothing to measure`,
      );
    }
  }
  rows.push({ measure: 'cold start: first embed on every thread', setup, n: threads, rate: `${((performance.now() - start) / 1000).toFixed(2)} s` });
}

async function benchBackfill(ctx: Lattice, setup: string): Promise<void> {
  await ctx.apis.tenancy.createProject(PROJECT, { name: 'Embedding benchmark' });
  const texts = makeTexts(MEMORIES, 1, memoryTemplates);
  const memories: NewMemory[] = texts.map((content, i) => ({ id: newId('mem'), projectId: PROJECT, content, importance: 1 + (i % 10) }));
  const insertStart = performance.now();
  for (let i = 0; i < memories.length; i += 1000) await insertMemories(ctx.runtime.db, memories.slice(i, i + 1000));
  progress(`[${setup}] inserted ${MEMORIES} memories in ${((performance.now() - insertStart) / 1000).toFixed(2)} s`);

  await warmUp(ctx, setup);
  let total = 0;
  let batches = 0;
  const start = performance.now();
  for (;;) {
    const { embedded } = await ctx.apis.memory.backfillEmbeddings(PROJECT, BACKFILL_BATCH);
    if (embedded === 0) break;
    total += embedded;
    batches++;
    progress(`[${setup}] embedded ${total}/${MEMORIES} (${((performance.now() - start) / 1000).toFixed(1)} s)`);
  }
  const elapsed = performance.now() - start;
  const counts = await countEmbedded(ctx.runtime.db, PROJECT);
  if (total !== MEMORIES || counts.embedded !== MEMORIES) {
    throw new Error(`backfill embedded ${total} (database: ${counts.embedded}/${counts.total}); expected ${MEMORIES}`);
  }
  rows.push({ measure: `backfill, batches of ${BACKFILL_BATCH} (${batches} jobs)`, setup, n: total, rate: rate(total, elapsed, 'memories') });
}

async function benchQueryLatency(ctx: Lattice, setup: string): Promise<void> {
  const queries = makeTexts(QUERIES + 1, 2, queryTemplates);
  await ctx.apis.embeddings.embed([queries.pop()!]);
  const samples: number[] = [];
  for (const [i, text] of queries.entries()) {
    const start = performance.now();
    await ctx.apis.embeddings.embed([text]);
    samples.push(performance.now() - start);
    if ((i + 1) % 50 === 0) progress(`[${setup}] query latency ${i + 1}/${QUERIES}`);
  }
  const s = summarise(samples);
  rows.push({ measure: 'one query, embeddings.embed([text])', setup, n: s.n, p50: ms(s.p50), p95: ms(s.p95), p99: ms(s.p99) });

  const repeated = 'What does Priya prefer when reviewing pull requests?';
  await ctx.apis.embeddings.embedQuery(repeated);
  const cached: number[] = [];
  for (let i = 0; i < CACHED_CALLS; i++) {
    const start = performance.now();
    await ctx.apis.embeddings.embedQuery(repeated);
    cached.push(performance.now() - start);
  }
  const c = summarise(cached);
  rows.push({ measure: 'one query, cached (embeddings.embedQuery)', setup, n: c.n, p50: ms(c.p50), p95: ms(c.p95), p99: ms(c.p99) });
}

async function benchPool(ctx: Lattice, setup: string): Promise<void> {
  for (let i = 0; i < NOOP_WARMUP; i++) await ctx.runtime.pool.run('noop', { value: i });
  progress(`[${setup}] pool noop: ${NOOP_CALLS} sequential calls`);
  const samples: number[] = [];
  for (let i = 0; i < NOOP_CALLS; i++) {
    const start = performance.now();
    await ctx.runtime.pool.run('noop', { value: i });
    samples.push(performance.now() - start);
  }
  const s = summarise(samples);
  rows.push({ measure: 'pool noop task, one at a time', setup, n: s.n, p50: ms(s.p50), p95: ms(s.p95), p99: ms(s.p99) });

  progress(`[${setup}] pool noop: ${NOOP_PARALLEL_TASKS} tasks, ${IN_FLIGHT} in flight`);
  let next = 0;
  const start = performance.now();
  await Promise.all(
    Array.from({ length: IN_FLIGHT }, async () => {
      while (next < NOOP_PARALLEL_TASKS) await ctx.runtime.pool.run('noop', { value: next++ });
    }),
  );
  const elapsed = performance.now() - start;
  rows.push({ measure: `pool noop tasks, ${IN_FLIGHT} in flight`, setup, n: NOOP_PARALLEL_TASKS, rate: rate(NOOP_PARALLEL_TASKS, elapsed, 'tasks') });
}

/**
 * Texts per second of one encoder: `inFlight` batches in flight until ENCODER_TEXTS are embedded,
 * timed on a second pass over the same texts. The first pass warms the encoder for every shape
 * these batches have (ONNX Runtime plans a run's memory once per input shape; at batch 1 an
 * untimed first pass of 256 texts ran at half the rate of a later one). With one batch per thread,
 * a thread waits idle while its answer goes back and the next batch comes; with two per thread
 * (what the service's embedder and backfill keep in the pool, WorkerPool.feedLimit), the next
 * batch is already queued.
 */
async function encoderRate(run: (texts: string[]) => Promise<unknown>, inFlight: number, batch: number, texts: readonly string[]): Promise<{ n: number; elapsed: number }> {
  const n = Math.min(ENCODER_TEXTS, texts.length);
  const pass = async () => {
    let next = 0;
    const start = performance.now();
    await Promise.all(
      Array.from({ length: inFlight }, async () => {
        while (next < n) {
          const from = next;
          next += batch;
          await run(texts.slice(from, Math.min(from + batch, n)));
        }
      }),
    );
    return performance.now() - start;
  };
  await pass();
  return { n, elapsed: await pass() };
}

async function benchEncoder(ctx: Lattice, setup: string): Promise<void> {
  const threads = ctx.runtime.config.poolMaxThreads;
  const texts = makeTexts(ENCODER_TEXTS, 3, memoryTemplates);
  const reference = new Piscina({
    filename: fileURLToPath(new URL('./embed-reference-worker.ts', import.meta.url)),
    minThreads: threads,
    maxThreads: threads,
    maxQueue: 4 * threads,
  });
  // Every batch size with two batches per thread in flight, and batch 1 with one per thread too.
  const measures = [...ENCODER_BATCHES.map((batch) => ({ batch, perThread: 2 })), { batch: 1, perThread: 1 }];
  try {
    for (const { batch, perThread } of measures) {
      progress(`[${setup}] encoder at batch ${batch}, ${perThread} per thread in flight: ONNX Runtime, then TF.js`);
      const inFlight = perThread * threads;
      const onnx = await encoderRate((chunk) => ctx.runtime.pool.run('embed', { texts: chunk }), inFlight, batch, texts);
      const tfjs = await encoderRate((chunk) => reference.run({ texts: chunk }), inFlight, batch, texts);
      const ratio = (tfjs.elapsed / tfjs.n / (onnx.elapsed / onnx.n)).toFixed(2);
      const how = `batch ${batch}, ${perThread} per thread in flight`;
      rows.push({ measure: `encoder, ${how}, ONNX Runtime (${ratio}× TF.js)`, setup, n: onnx.n, rate: rate(onnx.n, onnx.elapsed, 'texts') });
      rows.push({ measure: `encoder, ${how}, TF.js WASM (reference)`, setup, n: tfjs.n, rate: rate(tfjs.n, tfjs.elapsed, 'texts') });
    }
  } finally {
    await reference.destroy();
  }
}

// ---------------------------------------------------------------------------------------------
// Backends

async function runPglite(): Promise<void> {
  await withPgliteContext(log, async (ctx, setup) => {
    await benchBackfill(ctx, setup);
    const workerSetup = `${ctx.apis.embeddings.model}, ${ctx.runtime.config.poolMaxThreads} pool thread(s)`;
    await benchEncoder(ctx, workerSetup);
    await benchQueryLatency(ctx, workerSetup);
    await benchPool(ctx, workerSetup);
  });
}

async function runPostgres(serverUrl: string, redisUrl: string | undefined): Promise<void> {
  await withPostgresContext(serverUrl, redisUrl, log, (ctx, setup) => benchBackfill(ctx, setup));
}

async function main(): Promise<void> {
  const cpu = cpus()[0]?.model.trim() ?? 'unknown CPU';
  const started = new Date().toISOString().slice(0, 16).replace('T', ' ');
  try {
    await runPglite();
    if (process.env.DATABASE_URL) await runPostgres(process.env.DATABASE_URL, process.env.REDIS_URL);
    else progress('DATABASE_URL is not set: skipping the Postgres run');
  } finally {
    // On failure, still print what was measured.
    if (rows.length > 0) {
      process.stdout.write(`\nEmbedding benchmark, ${started} UTC: Node ${process.version}, ${cpus().length} × ${cpu}, ${MEMORIES} memories\n\n`);
      printTable();
    }
  }
}

runBench(main);
