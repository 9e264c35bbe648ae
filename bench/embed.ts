// Embedding benchmark. Measures, and prints to stdout as one markdown table:
//   1. memories embedded per second through the real backfill path
//      (backfillEmbeddings -> queue job -> worker pool -> database), on PGlite in memory and, when
//      DATABASE_URL is set, on Postgres (a throwaway lattice_bench_* database; with REDIS_URL also
//      set, through BullMQ under a throwaway QUEUE_PREFIX);
//   2. single-query embedding latency (p50/p95/p99), uncached and through the query cache;
//   3. the worker pool's own per-task cost (noop tasks), one at a time and 32 in flight.
// Progress goes to stderr.
//
// Run after a build (the pool loads dist/workers/index.js):
//   npm run build && npx tsx bench/embed.ts
//   DATABASE_URL=postgres://postgres@127.0.0.1:5432/postgres REDIS_URL=redis://127.0.0.1:6379 npx tsx bench/embed.ts
// BENCH_MEMORIES sets how many memories to backfill (default 2000). Other settings
// (POOL_MAX_THREADS, WORKER_CONCURRENCY, EMBEDDING_PROVIDER, ...) are read as the service reads them.
import { randomBytes } from 'node:crypto';
import { cpus } from 'node:os';
import { performance } from 'node:perf_hooks';
import { Redis } from 'ioredis';
import pg from 'pg';
import { loadConfig } from '../src/config.js';
import { createContext, type AppContext } from '../src/context.js';
import { countEmbedded, insertMemories, type NewMemory } from '../src/memory/store.js';
import { createPgliteDb } from '../src/platform/db-pglite.js';
import { newId } from '../src/platform/ids.js';
import { createLogger } from '../src/platform/logger.js';

const MEMORIES = Number(process.env.BENCH_MEMORIES ?? 2000);
const BACKFILL_BATCH = 500;
const QUERIES = 200;
const CACHED_CALLS = 2000;
const NOOP_CALLS = 2000;
const NOOP_WARMUP = 200;
const NOOP_PARALLEL_TASKS = 10_000;
const IN_FLIGHT = 32;
const PROJECT = 'bench';

if (!Number.isInteger(MEMORIES) || MEMORIES < 1) throw new Error('BENCH_MEMORIES must be a positive integer');

const log = createLogger('warn');
const progress = (line: string) => process.stderr.write(`${line}\n`);

// ---------------------------------------------------------------------------------------------
// Statistics and formatting

/** Nearest-rank percentile of an ascending array. */
function percentile(sorted: readonly number[], p: number): number {
  if (sorted.length === 0) return NaN;
  const rank = Math.ceil((p / 100) * sorted.length);
  return sorted[Math.min(sorted.length, Math.max(1, rank)) - 1]!;
}

function summarise(samplesMs: number[]): { n: number; p50: number; p95: number; p99: number } {
  const sorted = [...samplesMs].sort((a, b) => a - b);
  return { n: sorted.length, p50: percentile(sorted, 50), p95: percentile(sorted, 95), p99: percentile(sorted, 99) };
}

function ms(value: number): string {
  if (value < 1) return `${(value * 1000).toFixed(1)} µs`;
  if (value < 100) return `${value.toFixed(2)} ms`;
  return `${value.toFixed(0)} ms`;
}

function rate(count: number, elapsedMs: number, unit: string): string {
  const perSecond = count / (elapsedMs / 1000);
  return `${perSecond >= 100 ? perSecond.toFixed(0) : perSecond.toFixed(1)} ${unit}/s (${(elapsedMs / 1000).toFixed(2)} s)`;
}

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
  const lines = [
    `| ${header.join(' | ')} |`,
    `| ${header.map((_, i) => (i >= 2 ? '--:' : '---')).join(' | ')} |`,
    ...rows.map((r) => `| ${[r.measure, r.setup, String(r.n), r.p50 ?? '–', r.p95 ?? '–', r.p99 ?? '–', r.rate ?? '–'].join(' | ')} |`),
  ];
  process.stdout.write(`${lines.join('\n')}\n`);
}

// ---------------------------------------------------------------------------------------------
// Texts: varied, realistic agent memories and questions, seeded so every run embeds the same ones.

function mulberry32(seed: number): () => number {
  return () => {
    seed = (seed + 0x6d2b79f5) | 0;
    let t = Math.imul(seed ^ (seed >>> 15), 1 | seed);
    t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t;
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

const words = {
  person: ['Alice', 'Bob', 'Priya', 'Marco', 'Yuki', 'Fatima', 'Jonas', 'Chen', 'Olga', 'Samuel', 'Lena', 'Diego'],
  preference: ['dark mode', 'short answers', 'bullet-point summaries', 'metric units', 'Python over JavaScript', 'tabs over spaces', 'morning meetings', 'detailed code comments', 'British spelling', 'email over Slack'],
  activity: ['reviewing pull requests', 'writing reports', 'planning sprints', 'debugging production issues', 'reading release notes', 'pairing with new hires', 'preparing board slides'],
  service: ['billing', 'search', 'auth', 'notifications', 'checkout', 'analytics', 'ingest', 'reporting'],
  day: ['Monday', 'Tuesday', 'Wednesday', 'Thursday', 'Friday', 'the weekend', 'the first of the month'],
  cause: ['a migration timed out', 'the TLS certificate expired', 'a feature flag was left on', 'the connection pool was exhausted', 'a config key was misspelled', 'the disk on the primary filled up', 'a dependency shipped a breaking change'],
  fix: ['rolling back fixed it', 'raising the timeout fixed it', 'the on-call engineer restarted the workers', 'a hotfix went out the same afternoon', 'we pinned the previous version'],
  tech: ['Postgres', 'Redis', 'Kafka', 'SQLite', 'S3', 'a cron job', 'a queue worker', 'server-sent events'],
  purpose: ['session storage', 'the audit log', 'nightly exports', 'rate limiting', 'background retries', 'live dashboards'],
  reason: ['the team already runs it', 'it is cheaper at our scale', 'it keeps operations simple', 'latency matters more than throughput here', 'the vendor contract ends in March'],
  company: ['Acme Corp', 'Globex', 'Initech', 'Umbrella Health', 'Stark Logistics', 'Wayne Retail', 'Hooli'],
  symptom: ['exports are missing the last row', 'logins take over ten seconds', 'invoices show the wrong currency', 'the dashboard stays blank', 'webhooks arrive twice', 'search ignores accented letters'],
  task: ['renewing the domain', 'the quarterly tax filing', 'rotating the API keys', 'booking the offsite venue', 'sending the investor update', 'reviewing the on-call schedule'],
  when: ['every Friday afternoon', 'two weeks before the deadline', 'at the start of each quarter', 'the day before the release', 'every morning at nine'],
  action: ['split the monolith into two services', 'freeze features until the audit', 'move the standup to 10:30', 'hire a second SRE', 'deprecate the v1 API', 'add a staging environment for mobile'],
  dislike: ['long email threads', 'emoji in commit messages', 'meetings without an agenda', 'auto-formatting on save', 'notifications after 6 pm', 'passive voice in docs'],
  topic: ['the deploy pipeline', 'customer onboarding', 'the pricing page', 'database backups', 'the mobile release', 'incident reviews'],
};

type Words = typeof words;
const memoryTemplates: ((w: (k: keyof Words) => string, n: () => number) => string)[] = [
  (w) => `${w('person')} prefers ${w('preference')} when ${w('activity')}.`,
  (w, n) => `The ${w('service')} deploy on ${w('day')} failed because ${w('cause')}; ${w('fix')} (incident #${n()}).`,
  (w) => `${w('person')} asked to be reminded about ${w('task')} ${w('when')}.`,
  (w) => `Decision: use ${w('tech')} for ${w('purpose')}, because ${w('reason')}.`,
  (w, n) => `${w('company')} reported that ${w('symptom')} since upgrading to version ${n() % 9}.${n() % 20}.`,
  (w) => `In the ${w('day')} meeting, ${w('person')} and ${w('person')} agreed to ${w('action')}.`,
  (w) => `${w('person')} dislikes ${w('dislike')} and wants the agent to keep that in mind when ${w('activity')}.`,
  (w, n) => `The ${w('service')} API returns HTTP ${[400, 404, 409, 429, 500, 503][n() % 6]} when ${w('cause')}.`,
  (w) => `${w('person')} owns ${w('topic')}; questions about it should go to them, not to ${w('person')}.`,
  (w, n) => `Ticket ${w('service').toUpperCase()}-${n()} is blocked until ${w('company')} confirms that ${w('symptom')} is fixed.`,
];
const queryTemplates: ((w: (k: keyof Words) => string, n: () => number) => string)[] = [
  (w) => `What does ${w('person')} prefer when ${w('activity')}?`,
  (w) => `Why did the ${w('service')} deploy fail on ${w('day')}?`,
  (w) => `Who decided to use ${w('tech')} for ${w('purpose')}?`,
  (w) => `Has ${w('company')} reported problems where ${w('symptom')}?`,
  (w) => `When should I remind ${w('person')} about ${w('task')}?`,
  (w) => `Who should I ask about ${w('topic')} while ${w('activity')}?`,
  (w, n) => `What happened in incident #${n()} with the ${w('service')} service?`,
];

function makeTexts(count: number, seed: number, templates: typeof memoryTemplates): string[] {
  const random = mulberry32(seed);
  const w = (k: keyof Words) => words[k][Math.floor(random() * words[k].length)]!;
  const n = () => 100 + Math.floor(random() * 9900);
  const texts = new Set<string>();
  while (texts.size < count) texts.add(templates[Math.floor(random() * templates.length)]!(w, n));
  return [...texts];
}

// ---------------------------------------------------------------------------------------------
// Measurements

/** Starts every pool thread and loads the model in each, so later timings exclude the cold start. */
async function warmUp(ctx: AppContext, setup: string): Promise<void> {
  const threads = ctx.config.poolMaxThreads;
  progress(`[${setup}] warming up ${threads} pool thread(s)`);
  const start = performance.now();
  const outputs = await Promise.all(Array.from({ length: threads }, (_, i) => ctx.embedder.embed([`warm-up sentence ${i}`, `and another ${i}`])));
  for (const vectors of outputs) {
    if (vectors.length !== 2 || vectors.some((v) => v?.length !== ctx.embedder.dimensions)) {
      throw new Error(
        `the embedder returned ${vectors.length} vector(s) of length ${vectors[0]?.length ?? '-'} for 2 texts ` +
          `(expected 2 of ${ctx.embedder.dimensions}); the backfill cannot work, so there is nothing to measure`,
      );
    }
  }
  rows.push({ measure: 'cold start: first embed on every thread', setup, n: threads, rate: `${((performance.now() - start) / 1000).toFixed(2)} s` });
}

async function benchBackfill(ctx: AppContext, setup: string): Promise<void> {
  await ctx.tenancy.createProject(PROJECT, { name: 'Embedding benchmark' });
  const texts = makeTexts(MEMORIES, 1, memoryTemplates);
  const memories: NewMemory[] = texts.map((content, i) => ({ id: newId('mem'), projectId: PROJECT, content, importance: 1 + (i % 10) }));
  const insertStart = performance.now();
  for (let i = 0; i < memories.length; i += 1000) await insertMemories(ctx.db, memories.slice(i, i + 1000));
  progress(`[${setup}] inserted ${MEMORIES} memories in ${((performance.now() - insertStart) / 1000).toFixed(2)} s`);

  await warmUp(ctx, setup);
  let total = 0;
  let batches = 0;
  const start = performance.now();
  for (;;) {
    const { embedded } = await ctx.memory.backfillEmbeddings(PROJECT, BACKFILL_BATCH);
    if (embedded === 0) break;
    total += embedded;
    batches++;
    progress(`[${setup}] embedded ${total}/${MEMORIES} (${((performance.now() - start) / 1000).toFixed(1)} s)`);
  }
  const elapsed = performance.now() - start;
  const counts = await countEmbedded(ctx.db, PROJECT);
  if (total !== MEMORIES || counts.embedded !== MEMORIES) {
    throw new Error(`backfill embedded ${total} (database: ${counts.embedded}/${counts.total}); expected ${MEMORIES}`);
  }
  rows.push({ measure: `backfill, batches of ${BACKFILL_BATCH} (${batches} jobs)`, setup, n: total, rate: rate(total, elapsed, 'memories') });
}

async function benchQueryLatency(ctx: AppContext, setup: string): Promise<void> {
  const queries = makeTexts(QUERIES + 1, 2, queryTemplates);
  await ctx.embedder.embed([queries.pop()!]);
  const samples: number[] = [];
  for (const [i, text] of queries.entries()) {
    const start = performance.now();
    await ctx.embedder.embed([text]);
    samples.push(performance.now() - start);
    if ((i + 1) % 50 === 0) progress(`[${setup}] query latency ${i + 1}/${QUERIES}`);
  }
  const s = summarise(samples);
  rows.push({ measure: 'one query, embedder.embed([text])', setup, n: s.n, p50: ms(s.p50), p95: ms(s.p95), p99: ms(s.p99) });

  const repeated = 'What does Priya prefer when reviewing pull requests?';
  await ctx.queryEmbedder.embedQuery(repeated);
  const cached: number[] = [];
  for (let i = 0; i < CACHED_CALLS; i++) {
    const start = performance.now();
    await ctx.queryEmbedder.embedQuery(repeated);
    cached.push(performance.now() - start);
  }
  const c = summarise(cached);
  rows.push({ measure: 'one query, cached (queryEmbedder.embedQuery)', setup, n: c.n, p50: ms(c.p50), p95: ms(c.p95), p99: ms(c.p99) });
}

async function benchPool(ctx: AppContext, setup: string): Promise<void> {
  for (let i = 0; i < NOOP_WARMUP; i++) await ctx.pool.run('noop', { value: i });
  progress(`[${setup}] pool noop: ${NOOP_CALLS} sequential calls`);
  const samples: number[] = [];
  for (let i = 0; i < NOOP_CALLS; i++) {
    const start = performance.now();
    await ctx.pool.run('noop', { value: i });
    samples.push(performance.now() - start);
  }
  const s = summarise(samples);
  rows.push({ measure: 'pool noop task, one at a time', setup, n: s.n, p50: ms(s.p50), p95: ms(s.p95), p99: ms(s.p99) });

  progress(`[${setup}] pool noop: ${NOOP_PARALLEL_TASKS} tasks, ${IN_FLIGHT} in flight`);
  let next = 0;
  const start = performance.now();
  await Promise.all(
    Array.from({ length: IN_FLIGHT }, async () => {
      while (next < NOOP_PARALLEL_TASKS) await ctx.pool.run('noop', { value: next++ });
    }),
  );
  const elapsed = performance.now() - start;
  rows.push({ measure: `pool noop tasks, ${IN_FLIGHT} in flight`, setup, n: NOOP_PARALLEL_TASKS, rate: rate(NOOP_PARALLEL_TASKS, elapsed, 'tasks') });
}

// ---------------------------------------------------------------------------------------------
// Backends

/** Settings come from the environment like the service's, minus the backends this run chooses. */
function configFor(overrides: Record<string, string | undefined>) {
  return loadConfig({ ...process.env, DATABASE_URL: undefined, REDIS_URL: undefined, LOG_LEVEL: 'warn', ...overrides });
}

function describe(ctx: AppContext, backend: string): string {
  return `${backend}, ${ctx.queue.kind} queue`;
}

async function runPglite(): Promise<void> {
  const db = await createPgliteDb();
  const ctx = await createContext(configFor({}), { log, db });
  try {
    await ctx.startConsumers();
    const setup = describe(ctx, 'PGlite (memory)');
    await benchBackfill(ctx, setup);
    const workerSetup = `${ctx.embedder.model}, ${ctx.config.poolMaxThreads} pool thread(s)`;
    await benchQueryLatency(ctx, workerSetup);
    await benchPool(ctx, workerSetup);
  } finally {
    await ctx.close();
    await db.close();
  }
}

async function runPostgres(serverUrl: string, redisUrl: string | undefined): Promise<void> {
  const name = `lattice_bench_${randomBytes(6).toString('hex')}`;
  const adminUrl = new URL(serverUrl);
  adminUrl.pathname = '/postgres';
  const benchUrl = new URL(serverUrl);
  benchUrl.pathname = `/${name}`;
  const queuePrefix = `lattice-bench-${randomBytes(6).toString('hex')}`;

  const admin = new pg.Client({ connectionString: adminUrl.toString() });
  await admin.connect();
  try {
    await admin.query(`CREATE DATABASE ${name}`);
    progress(`[postgres] created database ${name}${redisUrl ? `, queue prefix ${queuePrefix}` : ''}`);
    try {
      const ctx = await createContext(configFor({ DATABASE_URL: benchUrl.toString(), REDIS_URL: redisUrl, QUEUE_PREFIX: queuePrefix }), { log });
      try {
        await ctx.startConsumers();
        await benchBackfill(ctx, describe(ctx, 'Postgres'));
      } finally {
        await ctx.close();
      }
    } finally {
      await admin.query(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`);
      progress(`[postgres] dropped database ${name}`);
      if (redisUrl) await deleteQueueKeys(redisUrl, queuePrefix);
    }
  } finally {
    await admin.end();
  }
}

/** Removes what the run left in Redis (completed jobs are kept for an hour by default). */
async function deleteQueueKeys(redisUrl: string, prefix: string): Promise<void> {
  const redis = new Redis(redisUrl);
  try {
    let deleted = 0;
    for await (const keys of redis.scanStream({ match: `${prefix}:*`, count: 500 }) as AsyncIterable<string[]>) {
      if (keys.length > 0) deleted += await redis.del(...keys);
    }
    progress(`[redis] deleted ${deleted} key(s) under ${prefix}:`);
  } finally {
    redis.disconnect();
  }
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

/**
 * Every context is closed by now, so the process should exit by itself. A guard: if sockets still hold it
 * open (a connection some close() missed), say so and exit rather than hang.
 */
function exitIfHeldOpen(): void {
  setTimeout(() => {
    const open = process.getActiveResourcesInfo().filter((r) => r.startsWith('TCP'));
    if (open.length === 0) return;
    progress(`note: ${open.length} socket(s) still open after every context closed (${open.join(', ')}); exiting explicitly`);
    process.stdout.write('', () => process.exit());
  }, 1000).unref();
}

main()
  .catch((error: unknown) => {
    process.stderr.write(`bench failed: ${error instanceof Error ? (error.stack ?? error.message) : String(error)}\n`);
    process.exitCode = 1;
  })
  .finally(exitIfHeldOpen);
