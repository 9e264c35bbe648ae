// Shared by the benchmarks: statistics and formatting, seeded realistic texts, the throwaway
// Postgres database and Redis prefix, the loop over backends and the exit guard, a project's client
// over app.inject and the scaffold of the benches that go through the HTTP API (predict, learning,
// discover), the statement recorder, and a webhook receiver.
import type { FastifyInstance } from 'fastify';
import { randomBytes } from 'node:crypto';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { cpus, loadavg } from 'node:os';
import { Redis } from 'ioredis';
import pg from 'pg';
import type { FastifyBaseLogger } from 'fastify';
import { buildApp } from '../src/app.js';
import { loadConfig } from '../src/config.js';
import { createLattice, type Lattice } from '../src/modules.js';
import { createPgliteDb } from '../src/platform/db-pglite.js';
import type { Db, Queryable } from '../src/platform/db.js';
import type { IngestReport, ObservationInput } from '../src/typed/schemas.js';
import { createCitusDatabase, dropCitusDatabase } from '../test/helpers/citus.js';

export const progress = (line: string): void => {
  process.stderr.write(`${line}\n`);
};

// ---------------------------------------------------------------------------------------------
// Statistics and formatting

export const MINUTE_MS = 60_000;
export const HOUR_MS = 3_600_000;
export const DAY_MS = 86_400_000;

export const thousands = (n: number) => Math.round(n).toLocaleString('en-US');
export const seconds = (elapsedMs: number) => `${(elapsedMs / 1000).toFixed(2)} s`;
/** Seconds to a tenth, as the benches over the HTTP API print their longer phases. */
export const tenthsOfSeconds = (elapsedMs: number) => `${(elapsedMs / 1000).toFixed(1)} s`;
export const megabytes = (bytes: number) => `${(bytes / 1_048_576).toFixed(1)} MB`;
/** A check's outcome in a table cell. */
export const check = (ok: boolean, text: string) => `${ok ? '✅' : '❌'} ${text}`;

/** Nearest-rank percentile of an ascending array. */
export function percentile(sorted: readonly number[], p: number): number {
  if (sorted.length === 0) return NaN;
  const rank = Math.ceil((p / 100) * sorted.length);
  return sorted[Math.min(sorted.length, Math.max(1, rank)) - 1]!;
}

export interface Summary {
  n: number;
  p50: number;
  p95: number;
  p99: number;
  mean: number;
}

export function summarise(samplesMs: readonly number[]): Summary {
  const sorted = [...samplesMs].sort((a, b) => a - b);
  const mean = sorted.reduce((sum, x) => sum + x, 0) / Math.max(1, sorted.length);
  return { n: sorted.length, p50: percentile(sorted, 50), p95: percentile(sorted, 95), p99: percentile(sorted, 99), mean };
}

export const latency = (s: Summary) => `p50 ${ms(s.p50)}, p95 ${ms(s.p95)}, p99 ${ms(s.p99)}`;

export function ms(value: number): string {
  if (value < 1) return `${(value * 1000).toFixed(1)} µs`;
  if (value < 100) return `${value.toFixed(2)} ms`;
  return `${value.toFixed(0)} ms`;
}

export function perSecond(count: number, elapsedMs: number): number {
  return count / (elapsedMs / 1000);
}

export function rate(count: number, elapsedMs: number, unit: string): string {
  const value = perSecond(count, elapsedMs);
  return `${value >= 100 ? value.toFixed(0) : value.toFixed(1)} ${unit}/s (${(elapsedMs / 1000).toFixed(2)} s)`;
}

/** A markdown table; `right(i)` says whether column i is right-aligned (numbers). */
export function markdownTable(header: readonly string[], rows: readonly (readonly string[])[], right: (column: number) => boolean): string {
  return [
    `| ${header.join(' | ')} |`,
    `| ${header.map((_, i) => (right(i) ? '--:' : '---')).join(' | ')} |`,
    ...rows.map((r) => `| ${r.join(' | ')} |`),
  ].join('\n');
}

/** A positive integer setting from the environment; undefined when unset or empty. */
export const optionalInt = (key: string): number | undefined => {
  const text = process.env[key];
  if (text === undefined || text.trim() === '') return undefined;
  const value = Number(text);
  if (!Number.isInteger(value) || value < 1) throw new Error(`${key} must be a positive integer`);
  return value;
};

/** A positive integer setting from the environment, or the fallback. */
export const positiveInt = (key: string, fallback: number): number => optionalInt(key) ?? fallback;

export const sleep = (delayMs: number) => new Promise<void>((resolve) => setTimeout(resolve, delayMs));

/** Polls `done` every 10 ms until it holds or `limitMs` pass; answers the milliseconds it took, or undefined if it never held. */
export async function msUntil(done: () => boolean | Promise<boolean>, limitMs = 60_000): Promise<number | undefined> {
  const start = performance.now();
  while (!(await done())) {
    if (performance.now() - start > limitMs) return undefined;
    await sleep(10);
  }
  return performance.now() - start;
}

// ---------------------------------------------------------------------------------------------
// Texts: varied, realistic agent memories and questions, seeded so every run uses the same ones.

export function mulberry32(seed: number): () => number {
  return () => {
    seed = (seed + 0x6d2b79f5) | 0;
    let t = Math.imul(seed ^ (seed >>> 15), 1 | seed);
    t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t;
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

export const words = {
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

export type Words = typeof words;
export type Template = (w: (k: keyof Words) => string, n: () => number) => string;

export const memoryTemplates: Template[] = [
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
export const queryTemplates: Template[] = [
  (w) => `What does ${w('person')} prefer when ${w('activity')}?`,
  (w) => `Why did the ${w('service')} deploy fail on ${w('day')}?`,
  (w) => `Who decided to use ${w('tech')} for ${w('purpose')}?`,
  (w) => `Has ${w('company')} reported problems where ${w('symptom')}?`,
  (w) => `When should I remind ${w('person')} about ${w('task')}?`,
  (w) => `Who should I ask about ${w('topic')} while ${w('activity')}?`,
  (w, n) => `What happened in incident #${n()} with the ${w('service')} service?`,
];

/** `count` distinct texts from the templates; the same seed gives the same texts. */
export function makeTexts(count: number, seed: number, templates: readonly Template[]): string[] {
  const random = mulberry32(seed);
  const w = (k: keyof Words) => words[k][Math.floor(random() * words[k].length)]!;
  const n = () => 100 + Math.floor(random() * 9900);
  const texts = new Set<string>();
  while (texts.size < count) texts.add(templates[Math.floor(random() * templates.length)]!(w, n));
  return [...texts];
}

// ---------------------------------------------------------------------------------------------
// Backends

/** Settings come from the environment like the service's, minus the backends this run chooses. */
export function configFor(overrides: Record<string, string | undefined>) {
  return loadConfig({ ...process.env, DATABASE_URL: undefined, REDIS_URL: undefined, LOG_LEVEL: 'warn', ...overrides });
}

/**
 * Runs `fn` against a throwaway database `lattice_bench_*` on the server of `serverUrl` (and, when
 * `redisUrl` is set, a throwaway queue prefix), then drops the database and deletes the prefix's keys.
 * BENCH_KEEP_DB=1 keeps the database (its name goes to stderr) to study plans and settings by hand.
 */
export async function withThrowawayPostgres<T>(
  serverUrl: string,
  redisUrl: string | undefined,
  fn: (env: { databaseUrl: string; queuePrefix: string }) => Promise<T>,
): Promise<T> {
  // BENCH_DATABASE names a database kept between runs (created when missing, never dropped): a
  // bench that loads data once can then be run again on it (bench/retrieval.ts).
  const kept = process.env.BENCH_DATABASE;
  if (kept !== undefined && !/^[a-z_][a-z0-9_]{0,62}$/.test(kept)) throw new Error('BENCH_DATABASE must be a plain lower-case database name');
  const name = kept ?? `lattice_bench_${randomBytes(6).toString('hex')}`;
  const adminUrl = new URL(serverUrl);
  adminUrl.pathname = '/postgres';
  const benchUrl = new URL(serverUrl);
  benchUrl.pathname = `/${name}`;
  const queuePrefix = `lattice-bench-${randomBytes(6).toString('hex')}`;

  const admin = new pg.Client({ connectionString: adminUrl.toString() });
  await admin.connect();
  let cleaned: Promise<void> | undefined;
  const cleanUp = () =>
    (cleaned ??= (async () => {
      if (process.env.BENCH_KEEP_DB || kept) { progress(`[postgres] kept ${name}`); return; }
      await admin.query(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`);
      progress(`[postgres] dropped database ${name}`);
      if (redisUrl) await deleteQueueKeys(redisUrl, queuePrefix);
    })());
  // Interrupted (Ctrl-C, a timeout): still drop the database and the keys, then exit.
  const onSignal = (signal: NodeJS.Signals) => {
    progress(`[postgres] ${signal}: cleaning up before exiting`);
    cleanUp()
      .catch((error: unknown) => progress(`[postgres] cleanup failed: ${error instanceof Error ? error.message : String(error)}`))
      .finally(() => process.exit(signal === 'SIGINT' ? 130 : 143));
  };
  process.once('SIGINT', onSignal);
  process.once('SIGTERM', onSignal);
  try {
    const exists = kept !== undefined && (await admin.query('SELECT 1 FROM pg_database WHERE datname = $1', [name])).rowCount === 1;
    if (!exists) await admin.query(`CREATE DATABASE ${name}`);
    progress(`[postgres] ${exists ? 'reusing' : 'created'} database ${name}${redisUrl ? `, queue prefix ${queuePrefix}` : ''}`);
    try {
      return await fn({ databaseUrl: benchUrl.toString(), queuePrefix });
    } finally {
      await cleanUp();
    }
  } finally {
    process.off('SIGINT', onSignal);
    process.off('SIGTERM', onSignal);
    await admin.end();
  }
}

/** Removes what the run left in Redis (completed jobs are kept for an hour by default). */
export async function deleteQueueKeys(redisUrl: string, prefix: string): Promise<void> {
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

/**
 * Runs a benchmark's main. Every context is closed by the end, so the process should exit by itself.
 * A guard: if sockets still hold it open (a connection some close() missed), say so and exit rather than hang.
 */
export function runBench(main: () => Promise<void>): void {
  main()
    .catch((error: unknown) => {
      process.stderr.write(`bench failed: ${error instanceof Error ? (error.stack ?? error.message) : String(error)}\n`);
      process.exitCode = 1;
    })
    .finally(() => {
      setTimeout(() => {
        const open = process.getActiveResourcesInfo().filter((r) => r.startsWith('TCP'));
        if (open.length === 0) return;
        progress(`note: ${open.length} socket(s) still open after every context closed (${open.join(', ')}); exiting explicitly`);
        process.stdout.write('', () => process.exit());
      }, 1000).unref();
    });
}

/**
 * Runs a benchmark on each backend in turn: the embedded default (unless BENCH_SKIP_PGLITE=1) and,
 * with DATABASE_URL, Postgres (and BullMQ with REDIS_URL), telling `run` which and the server's
 * version; then prints the heading (title, date, Node, CPUs, what is measured) and the lines the
 * run gathered in `out`, also when a backend failed.
 */
export async function onEachBackend(
  log: FastifyBaseLogger,
  run: (ctx: Lattice, setup: string, postgres: boolean, machine: string) => Promise<void>,
  report: { title: string; description: string; out: readonly string[] },
): Promise<void> {
  const cpu = cpus()[0]?.model.trim() ?? 'unknown CPU';
  const started = new Date().toISOString().slice(0, 16).replace('T', ' ');
  try {
    if (process.env.BENCH_SKIP_PGLITE === '1') progress('BENCH_SKIP_PGLITE=1: skipping the PGlite run');
    else await withPgliteContext(log, (ctx, setup) => run(ctx, setup, false, ''));
    if (process.env.DATABASE_URL) {
      await withPostgresContext(process.env.DATABASE_URL, process.env.REDIS_URL, log, async (ctx, setup) => {
        const { rows } = await ctx.runtime.db.query<{ pg: string }>(`SELECT current_setting('server_version') AS pg`);
        await run(ctx, setup, true, `Postgres ${rows[0]!.pg}; ${ctx.runtime.config.workerConcurrency} job consumer(s) (WORKER_CONCURRENCY). `);
      });
    } else progress('DATABASE_URL is not set: skipping the Postgres run');
  } finally {
    if (report.out.length > 0) {
      process.stdout.write(`\n${report.title}, ${started} UTC: Node ${process.version}, ${cpus().length} × ${cpu}. ${report.description}\n\n`);
      process.stdout.write(`${report.out.join('\n')}\n`);
    }
  }
}

/**
 * Runs `fn` with a started context on the embedded default (PGlite in memory, in-process queue),
 * then closes it. `setup` names the backend for the table.
 */
export async function withPgliteContext(
  log: FastifyBaseLogger,
  fn: (ctx: Lattice, setup: string) => Promise<void>,
): Promise<void> {
  const db = await createPgliteDb();
  const ctx = await createLattice(configFor({}), { log, db });
  try {
    await ctx.startConsumers();
    await fn(ctx, `PGlite (memory), ${ctx.runtime.queue.kind} queue`);
  } finally {
    await ctx.close();
    await db.close();
  }
}

/** A context on the database at `env.databaseUrl` (and Redis under its prefix), consumers running, closed after `fn`. */
async function withContextOn(
  label: string,
  env: { databaseUrl: string; queuePrefix: string },
  redisUrl: string | undefined,
  log: FastifyBaseLogger,
  fn: (ctx: Lattice, setup: string) => Promise<void>,
): Promise<void> {
  const ctx = await createLattice(configFor({ DATABASE_URL: env.databaseUrl, REDIS_URL: redisUrl, QUEUE_PREFIX: env.queuePrefix }), { log });
  try {
    await ctx.startConsumers();
    await fn(ctx, `${label}, ${ctx.runtime.queue.kind} queue`);
  } finally {
    await ctx.close();
  }
}

/** The same on a throwaway Postgres database (and Redis prefix, when REDIS_URL is given). */
export async function withPostgresContext(
  serverUrl: string,
  redisUrl: string | undefined,
  log: FastifyBaseLogger,
  fn: (ctx: Lattice, setup: string) => Promise<void>,
): Promise<void> {
  await withThrowawayPostgres(serverUrl, redisUrl, (env) => withContextOn('Postgres', env, redisUrl, log, fn));
}

/**
 * Shards per distributed table in a bench's Citus database: BENCH_CITUS_SHARDS, by default Citus's
 * own default of 32 (the tests use 4, which is quicker to make but not what an operator runs).
 */
export const citusShardCount = () => positiveInt('BENCH_CITUS_SHARDS', 32);

/**
 * A throwaway database `lattice_bench_*` on the Citus cluster of `coordinatorUrl`
 * (scripts/citus/cluster.sh): made on every node, migrated and distributed as `lattice citus
 * distribute` does; `fn` gets its URL (and a queue prefix, with `redisUrl`); dropped from every node
 * after, and the prefix's keys deleted. BENCH_KEEP_DB=1 keeps it.
 */
export async function withThrowawayCitus<T>(
  coordinatorUrl: string,
  redisUrl: string | undefined,
  fn: (env: { databaseUrl: string; queuePrefix: string }) => Promise<T>,
): Promise<T> {
  const name = `lattice_bench_${randomBytes(6).toString('hex')}`;
  const queuePrefix = `lattice-bench-${randomBytes(6).toString('hex')}`;
  const shards = citusShardCount();
  progress(`[citus] creating ${name} on every node (${shards} shards per table), migrating and distributing`);
  const databaseUrl = await createCitusDatabase(coordinatorUrl, name, { shardCount: shards });
  try {
    return await fn({ databaseUrl, queuePrefix });
  } finally {
    if (process.env.BENCH_KEEP_DB) progress(`[citus] kept ${name}`);
    else {
      await dropCitusDatabase(coordinatorUrl, name);
      progress(`[citus] dropped ${name} from every node`);
    }
    if (redisUrl) await deleteQueueKeys(redisUrl, queuePrefix);
  }
}

/** The Citus version and the nodes holding shards, for a heading: "Citus 13.2.2, 2 workers". */
export async function citusServer(db: Queryable): Promise<string> {
  const { rows } = await db.query<{ version: string; workers: number }>(
    `SELECT (SELECT extversion FROM pg_extension WHERE extname = 'citus') AS version,
            (SELECT count(*)::int FROM pg_dist_node WHERE groupid <> 0 AND isactive) AS workers`,
  );
  return `Citus ${rows[0]!.version}, ${rows[0]!.workers} workers`;
}

/** The same as withPostgresContext on a throwaway database of the Citus cluster at `coordinatorUrl`. */
export async function withCitusContext(
  coordinatorUrl: string,
  redisUrl: string | undefined,
  log: FastifyBaseLogger,
  fn: (ctx: Lattice, setup: string) => Promise<void>,
): Promise<void> {
  await withThrowawayCitus(coordinatorUrl, redisUrl, (env) => withContextOn('Citus', env, redisUrl, log, fn));
}

// ---------------------------------------------------------------------------------------------
// HTTP

export class HttpError extends Error {
  constructor(method: string, path: string, status: number, body: string) {
    super(`${method} ${path} answered ${status}: ${body.slice(0, 300)}`);
  }
}

/** One project's key, calling /api/v1/projects/{projectId}/... through app.inject. */
export class ProjectClient {
  constructor(
    private readonly app: FastifyInstance,
    readonly projectId: string,
    private readonly apiKey: string,
  ) {}

  private async call<T>(method: 'GET' | 'POST', path: string, body?: unknown): Promise<T> {
    const response = await this.app.inject({
      method,
      url: `/api/v1/projects/${this.projectId}${path}`,
      headers: { authorization: `Bearer ${this.apiKey}` },
      ...(body === undefined ? {} : { payload: body as object }),
    });
    if (response.statusCode >= 300) throw new HttpError(method, path, response.statusCode, response.body);
    return response.json() as T;
  }

  post<T>(path: string, body: unknown): Promise<T> {
    return this.call('POST', path, body);
  }

  get<T>(path: string): Promise<T> {
    return this.call('GET', path);
  }
}

// ---------------------------------------------------------------------------------------------
// Benches over the HTTP API (bench/predict.ts, bench/learning.ts, bench/discover.ts)

/**
 * What such a bench sets in its own environment, before the contexts read their config: mining's
 * debounce and longest wait at a day (no automatic mining in the background while it measures)
 * and, unless set, REQUEST_TIMEOUT_MS 600000 (whole-project calls are awaited within it) and
 * RATE_LIMIT_PER_MINUTE 10000000 (its calls would pass the default 6,000 a minute); `unlessSet`
 * adds more settings, each also only when unset.
 */
export function holdBackgroundMining(unlessSet: Record<string, string> = {}): void {
  process.env.BEHAVIOR_MINING_DEBOUNCE_MS = '86400000';
  process.env.BEHAVIOR_MINING_MAX_WAIT_MS = '86400000';
  process.env.REQUEST_TIMEOUT_MS ??= '600000';
  process.env.RATE_LIMIT_PER_MINUTE ??= '10000000';
  for (const [key, value] of Object.entries(unlessSet)) process.env[key] ??= value;
}

/** One backend's run of a bench over the HTTP API: its started context, the app built on it, its name in the tables. */
export interface AppRun {
  ctx: Lattice;
  app: FastifyInstance;
  setup: string;
  postgres: boolean;
}

const loadAverage = () =>
  loadavg()
    .map((x) => x.toFixed(2))
    .join(' / ');

/**
 * onEachBackend for a bench over the HTTP API: on each backend, builds the app, writes the
 * backend's heading to `report.out`, runs `run`, then (also when it failed) closes the app and
 * writes what onEachBackend says of the machine, the load average before and after, and the time
 * the backend took.
 */
export async function onEachBackendWithApp(
  log: FastifyBaseLogger,
  run: (run: AppRun) => Promise<void>,
  report: { title: string; description: string; out: string[] },
): Promise<void> {
  const write = (text = '') => report.out.push(text);
  await onEachBackend(
    log,
    async (ctx, setup, postgres, machine) => {
      const app = await buildApp(ctx, { logger: false });
      await app.ready();
      const started = performance.now();
      const loadBefore = loadAverage();
      write(`### ${setup}`);
      write();
      try {
        await run({ ctx, app, setup, postgres });
      } finally {
        await app.close();
        write(
          `${machine}Load average (1 / 5 / 15 min) ${loadBefore} before, ${loadAverage()} after this backend's ${tenthsOfSeconds(performance.now() - started)} on ${cpus().length} CPU(s).`,
        );
        write();
      }
    },
    report,
  );
}

/** An enterprise project and a read-write key for it; with `moneyAttribute`, that numeric attribute too, in USD (its values are money). */
export async function openProject(run: AppRun, projectId: string, moneyAttribute?: string): Promise<ProjectClient> {
  await run.ctx.apis.tenancy.createProject(projectId, { plan: 'enterprise' });
  const { apiKey } = await run.ctx.apis.tenancy.createKey(projectId, ['READ_MEMORY', 'WRITE_MEMORY']);
  const client = new ProjectClient(run.app, projectId, apiKey);
  if (moneyAttribute !== undefined) await client.post('/memory-typed/attributes', { attributeKey: moneyAttribute, dataType: 'numeric', unit: 'USD' });
  return client;
}

/** Ingests one batch synchronously (POST /memory-typed/observations); every row must be accepted. Answers the call's milliseconds. */
export async function ingestBatch(client: ProjectClient, rows: readonly ObservationInput[]): Promise<number> {
  const t0 = performance.now();
  const report = await client.post<IngestReport>('/memory-typed/observations', { observations: rows });
  const took = performance.now() - t0;
  if (report.accepted !== rows.length) {
    throw new Error(`ingest: ${rows.length} rows answered ${JSON.stringify({ accepted: report.accepted, quarantined: report.quarantined, duplicates: report.duplicates, reasons: Object.values(report.quarantineReasons).slice(0, 3) })}`);
  }
  return took;
}

// ---------------------------------------------------------------------------------------------
// Recording the statements a service sends

export type Statement = { sql: string; params?: readonly unknown[]; ms?: number; rows?: number };

/**
 * A Db that remembers the statements sent through it (with their time and rows), to EXPLAIN them
 * as a service ran them or to count them; `keep` limits it to the statements of interest.
 */
export function recordingDb(db: Db, keep: (sql: string) => boolean = () => true): { db: Db; statements: Statement[] } {
  const statements: Statement[] = [];
  const wrap = (q: Queryable): Queryable => ({
    query: async (sql, params) => {
      if (!keep(sql)) return q.query(sql, params);
      const statement: Statement = { sql, params };
      statements.push(statement);
      const t0 = performance.now();
      const result = await q.query(sql, params);
      statement.ms = performance.now() - t0;
      statement.rows = result.rows.length;
      return result as never;
    },
    exec: (sql) => {
      if (keep(sql)) statements.push({ sql });
      return q.exec(sql);
    },
  });
  return {
    statements,
    db: {
      kind: db.kind,
      ...wrap(db),
      // A transaction's opening settings are recorded as the statement they are (SET LOCAL ...).
      transaction: (fn, options) =>
        db.transaction((tx) => {
          if (options?.settings && keep(options.settings)) statements.push({ sql: options.settings });
          return fn(wrap(tx));
        }, options),
      withAdvisoryLock: (key, fn) => db.withAdvisoryLock(key, fn),
      withAdvisoryLockIfFree: (key, fn) => db.withAdvisoryLockIfFree(key, fn),
      close: () => db.close(),
    },
  };
}

// ---------------------------------------------------------------------------------------------
// Webhooks

export interface Receiver {
  url: string;
  received: () => number;
  close: () => Promise<void>;
}

/** A webhook receiver on 127.0.0.1 that reads each body and answers 204. */
export async function startReceiver(): Promise<Receiver> {
  let received = 0;
  const server: Server = createServer((req, res) => {
    req.resume();
    req.on('end', () => {
      received += 1;
      res.writeHead(204).end();
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}/hook`,
    received: () => received,
    close: () =>
      new Promise<void>((resolve, reject) => {
        server.closeAllConnections();
        server.close((error) => (error ? reject(error) : resolve()));
      }),
  };
}
