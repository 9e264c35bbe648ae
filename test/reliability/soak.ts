// The soak: `lattice serve` as its own process on loopback, driven by a mixed workload (search 40%,
// save 30%, emit 20%, typed ingest of 10 observations 10%). The project is first grown past the
// exact-scan threshold (SOAK_MEMORIES, growProject says why). Then a closed loop of SOAK_CLIENTS
// clients for SOAK_PEAK_SECONDS measures the peak, over its second half plus the time the embedding
// backlog it left takes to clear: a save answers before its embedding when the encoder is busy, so
// answers per second alone overstate what the server sustains. Then requests are started at 80% of that rate
// (open loop, so a slow server meets the same arrivals) for SOAK_SECONDS. Prints one markdown table:
// per phase and operation the count, the errors (anything not 2xx, by status), throughput and p50/p99,
// and the server's resident memory at the start and the end of the soak (it must stay flat).
//
//   npm run soak                                   # embedded default (PGlite, in-process queue)
//   DATABASE_URL=postgres://postgres@127.0.0.1:5432/postgres REDIS_URL=redis://127.0.0.1:6379 npm run soak
// Settings: SOAK_SECONDS (60), SOAK_PEAK_SECONDS (40), SOAK_CLIENTS (16), SOAK_RATE (skip the peak
// phase and use this many requests/s), SOAK_MEMORIES (1.5 x SEARCH_EXACT_SCAN_MAX_ROWS). Service settings to try under load (SEARCH_EXACT_SCAN_MAX_ROWS,
// POOL_MAX_THREADS, WORKER_CONCURRENCY, the database pools'; bench/lattice-process.ts lists them)
// are handed to the server, and NODE_OPTIONS and MALLOC_ARENA_MAX to its runtime; SOAK_NODE_ARGS
// adds flags to the server's node (--trace-gc), SOAK_SERVER_OUTPUT names a file for the server's
// output. On Postgres a throwaway database is created and dropped (and the queue prefix's Redis
// keys deleted). The server process and the workload are bench/lattice-process.ts's and
// bench/workload.ts's, shared with bench/concurrency.ts.
import pg from 'pg';
import { LatticeProcess } from '../../bench/lattice-process.js';
import { judge } from '../../bench/soak-verdict.js';
import { markdownTable, ms, progress, sleep, summarise } from '../../bench/support.js';
import { createWorkload, errorsByStatus, MIX, prepareProject, projectAt, waitForEmbeddings, type Project, type Sample } from '../../bench/workload.js';

const seconds = (key: string, fallback: number) => {
  const value = Number(process.env[key] ?? fallback);
  if (!Number.isFinite(value) || value <= 0) throw new Error(`${key} must be a positive number`);
  return value;
};
const SOAK_SECONDS = seconds('SOAK_SECONDS', 60);
const PEAK_SECONDS = seconds('SOAK_PEAK_SECONDS', 40);
const CLIENTS = seconds('SOAK_CLIENTS', 16);
const FIXED_RATE = process.env.SOAK_RATE ? seconds('SOAK_RATE', 1) : undefined;
const SHARE = 0.8;
/**
 * The server's exact-scan threshold (handed to it when set here): past it a project's search walks
 * the HNSW graph, at a cost that no longer grows with the project.
 */
const EXACT_SCAN_MAX_ROWS = Number(process.env.SEARCH_EXACT_SCAN_MAX_ROWS ?? 10_000);
/**
 * Memories the project holds before the peak is measured: by default one and a half times the
 * exact-scan threshold, so that the peak is measured on the path search takes for the whole soak.
 * The soak's saves grow the project (30% of its requests: about 15,000 memories in 10 minutes at
 * 80 requests a second); a peak measured on 200 memories, where a search scans them all in a
 * millisecond, is a rate the server cannot hold once the project has grown a hundredfold.
 */
const SEED_MEMORIES = process.env.SOAK_MEMORIES ? Math.round(seconds('SOAK_MEMORIES', 1)) : Math.round(EXACT_SCAN_MAX_ROWS * 1.5);
/** A file that receives the server's stdout and stderr (with SOAK_NODE_ARGS=--trace-gc, its heap after every collection). */
const SERVER_OUTPUT = process.env.SOAK_SERVER_OUTPUT;
/** Flags for the server's node (some, such as --trace-gc, are refused in NODE_OPTIONS). */
const NODE_ARGS = (process.env.SOAK_NODE_ARGS ?? '').split(/\s+/).filter(Boolean);

async function main(): Promise<void> {
  const lattice = await LatticeProcess.create('soak');
  try {
    progress(`[soak] starting lattice serve on ${lattice.backend}`);
    await lattice.start({ nodeArgs: NODE_ARGS, outputFile: SERVER_OUTPUT });
    const demo = projectAt(lattice.origin, 'demo', await lattice.demoKey());
    const workload = createWorkload();
    const send = (op: Sample['op']) => workload.send(demo, op);
    const nextOp = workload.nextOp;

    // Set-up: the typed attribute, and the project grown to the size the soak works at.
    await prepareProject(workload, demo, 200);
    await growProject(demo, SEED_MEMORIES, (op) => workload.send(demo, op));

    let rate = FIXED_RATE;
    const peakSamples: Sample[] = [];
    if (rate === undefined) {
      progress(`[soak] peak: ${CLIENTS} clients, closed loop, ${PEAK_SECONDS} s`);
      const begin = Date.now();
      const steady = begin + (PEAK_SECONDS * 1000) / 2;
      const end = begin + PEAK_SECONDS * 1000;
      let steadyCount = 0;
      await Promise.all(Array.from({ length: CLIENTS }, async () => {
        while (Date.now() < end) {
          const sample = await send(nextOp());
          peakSamples.push(sample);
          if (Date.now() >= steady) steadyCount++;
        }
      }));
      // Saves that found the encoder busy are embedded by a job after they answer: the peak counts
      // the time that backlog takes to clear.
      const drainSeconds = (await waitForEmbeddings([demo], 300_000)).ms / 1000;
      const peak = steadyCount / (PEAK_SECONDS / 2 + drainSeconds);
      rate = SHARE * peak;
      progress(
        `[soak] peak ${peak.toFixed(1)} req/s over the second half and the ${drainSeconds.toFixed(1)} s its embedding backlog took ` +
          `(${(peakSamples.length / PEAK_SECONDS).toFixed(1)} answered per second over the whole); soaking at ${rate.toFixed(1)} req/s`,
      );
    }

    const soakSamples: (Sample & { at: number })[] = [];
    const memory: number[] = [lattice.rssMb()];
    /** The server's RSS, by seconds into the soak. */
    const rssAt: [number, number][] = [[0, memory[0]!]];
    const pending = new Set<Promise<void>>();
    const checkpoints = lattice.databaseUrl ? await CheckpointWatch.open(lattice.databaseUrl) : undefined;
    const stalls = await StallWatch.start(lattice.origin, lattice.databaseUrl);
    const started = Date.now();
    const interval = 1000 / rate;
    let next = performance.now();
    let lastReport = started;
    while (Date.now() - started < SOAK_SECONDS * 1000) {
      const now = performance.now();
      if (now < next) {
        await new Promise((resolve) => setTimeout(resolve, Math.max(0, next - now)));
        continue;
      }
      next += interval;
      const at = Date.now() - started;
      const request = send(nextOp()).then((sample) => {
        soakSamples.push({ ...sample, at });
        pending.delete(request);
      });
      pending.add(request);
      if (Date.now() - lastReport >= 10_000) {
        const since = lastReport - started;
        lastReport = Date.now();
        memory.push(lattice.rssMb());
        rssAt.push([(Date.now() - started) / 1000, memory.at(-1)!]);
        // The p99 of the requests sent in the last 10 s that have answered: where a slow minute comes from.
        const recent = summarise(soakSamples.filter((sample) => sample.at >= since).map((sample) => sample.ms));
        progress(
          `[soak] ${Math.round((Date.now() - started) / 1000)} s: ${soakSamples.length} answered, ${pending.size} in flight, server RSS ${memory.at(-1)!.toFixed(0)} MB, ` +
            `last 10 s p50 ${ms(recent.p50)} p99 ${ms(recent.p99)}${checkpoints ? `, ${await checkpoints.since()}` : ''}, ${stalls.since()}`,
        );
      }
    }
    await Promise.all(pending);
    await checkpoints?.close();
    const stallReport = await stalls.stop(started);
    memory.push(lattice.rssMb());
    rssAt.push([(Date.now() - started) / 1000, memory.at(-1)!]);

    const rows: string[][] = [];
    const describe = (phase: string, samples: Sample[], secondsTaken: number) => {
      for (const op of [...MIX.map(([o]) => o), 'all'] as const) {
        const mine = op === 'all' ? samples : samples.filter((s) => s.op === op);
        const stats = summarise(mine.map((s) => s.ms));
        rows.push([
          phase, op, String(mine.length),
          errorsByStatus(mine),
          `${(mine.length / secondsTaken).toFixed(1)}/s`, ms(stats.p50), ms(stats.p99),
        ]);
      }
    };
    if (peakSamples.length > 0) describe(`peak (${CLIENTS} clients, ${PEAK_SECONDS} s)`, peakSamples, PEAK_SECONDS);
    describe(`soak at ${rate.toFixed(1)} req/s (${SOAK_SECONDS} s)`, soakSamples, SOAK_SECONDS);
    console.log(`\nSoak, ${new Date().toISOString().slice(0, 16).replace('T', ' ')} UTC: ${lattice.backend}, Node ${process.version}.`);
    console.log(`Server RSS during the soak: ${memory.map((m) => m.toFixed(0)).join(' → ')} MB (start ${memory[0]!.toFixed(0)}, end ${memory.at(-1)!.toFixed(0)}).\n`);
    console.log(markdownTable(['Phase', 'Operation', 'n', 'Errors', 'Throughput', 'p50', 'p99'], rows, (c) => c >= 2 && c !== 3));
    if (lattice.databaseUrl) console.log(`\n${await vacuumActivity(lattice.databaseUrl, started)}`);
    console.log(`\n${stallReport}`);
    const verdict = judge(soakSamples, rssAt);
    console.log(`\n${verdict.lines.join('\n')}`);
    if (!verdict.held) process.exitCode = 1;
  } finally {
    await lattice.close();
  }
}

/**
 * Saves memories with CLIENTS clients until the project holds `target`, waits for their embeddings,
 * and, past the exact-scan threshold, for the project to be ready in the HNSW graph (the admission
 * job runs every minute). Any save that fails stops the soak: the set-up must not fail.
 */
async function growProject(project: Project, target: number, send: (op: 'save') => Promise<Sample>): Promise<void> {
  let saved = (await stats(project)).total;
  const start = Date.now();
  let reported = start;
  await Promise.all(Array.from({ length: CLIENTS }, async () => {
    while (saved < target) {
      saved++;
      const sample = await send('save');
      if (sample.status !== 201) throw new Error(`growing the project: a save answered ${sample.status} ${sample.error ?? ''}`);
      if (Date.now() - reported >= 10_000) {
        reported = Date.now();
        progress(`[soak] growing the project: ${saved} of ${target} memories`);
      }
    }
  }));
  const embedded = await waitForEmbeddings([project], 900_000);
  if (!embedded.cleared) throw new Error('growing the project: the embeddings did not clear within 15 minutes');
  progress(`[soak] the project holds ${saved} memories, embedded ${((Date.now() - start) / 1000).toFixed(0)} s after the first save`);
  if (saved <= EXACT_SCAN_MAX_ROWS) return;
  const limit = Date.now() + 900_000;
  while (!(await stats(project)).embedding.graphReady) {
    if (Date.now() > limit) throw new Error('growing the project: it was not admitted to the HNSW graph within 15 minutes');
    await sleep(2000);
  }
  progress(`[soak] the project is in the HNSW graph, ${((Date.now() - start) / 1000).toFixed(0)} s after the first save`);
}

/** When Postgres vacuumed and analysed the busiest tables during the soak (seconds into it): a slow minute may be one of these. */
async function vacuumActivity(url: string, started: number): Promise<string> {
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  try {
    const { rows } = await client.query<{ relname: string; vacuums: number; analyzes: number; last_vacuum: Date | null; last_analyze: Date | null; dead: number }>(
      `SELECT relname, autovacuum_count::int AS vacuums, autoanalyze_count::int AS analyzes, last_autovacuum AS last_vacuum, last_autoanalyze AS last_analyze, n_dead_tup::int AS dead
         FROM pg_stat_user_tables ORDER BY autovacuum_count + autoanalyze_count DESC, n_dead_tup DESC, relname LIMIT 6`,
    );
    const at = (d: Date | null) => (d === null ? 'never' : `${Math.round((d.getTime() - started) / 1000)} s`);
    return `Autovacuum by table (last run, seconds into the soak): ${rows
      .map((r) => `${r.relname} ${r.vacuums} vacuums (last ${at(r.last_vacuum)}), ${r.analyzes} analyses (last ${at(r.last_analyze)}), ${r.dead} dead rows now`)
      .join('; ')}.`;
  } finally {
    await client.end();
  }
}

/**
 * Postgres's checkpoints (timed or requested) and the buffers they wrote since the last reading: a
 * checkpoint writes out every dirty page, and a 10 s window with a slow p99 may be one.
 */
class CheckpointWatch {
  private last = { checkpoints: 0, buffers: 0 };
  private constructor(private readonly client: pg.Client) {}

  static async open(url: string): Promise<CheckpointWatch> {
    const client = new pg.Client({ connectionString: url });
    await client.connect();
    const watch = new CheckpointWatch(client);
    await watch.since();
    return watch;
  }

  async since(): Promise<string> {
    const { rows: [now] } = await this.client.query<{ checkpoints: number; buffers: number }>(
      'SELECT (checkpoints_timed + checkpoints_req)::int AS checkpoints, buffers_checkpoint::int AS buffers FROM pg_stat_bgwriter',
    );
    const line = `checkpoints +${now!.checkpoints - this.last.checkpoints} (${now!.buffers - this.last.buffers} buffers)`;
    this.last = now!;
    return line;
  }

  close(): Promise<void> {
    return this.client.end();
  }
}

/**
 * Where a slow window comes from: every 250 ms, how long the server takes to answer /healthz (a
 * stalled event loop or starved CPU shows there) and, on Postgres, the statements of the soak's
 * database that have been running for more than 250 ms (a lock or a heavy job's query shows there).
 */
class StallWatch {
  private readonly health: { at: number; ms: number }[] = [];
  private readonly queries: { at: number; ms: number; query: string }[] = [];
  private windowStart = 0;
  private stopped = false;
  private loop: Promise<void> = Promise.resolve();

  private constructor(private readonly origin: string, private readonly client: pg.Client | undefined) {}

  static async start(origin: string, databaseUrl: string | undefined): Promise<StallWatch> {
    let client: pg.Client | undefined;
    if (databaseUrl) {
      client = new pg.Client({ connectionString: databaseUrl });
      await client.connect();
    }
    const watch = new StallWatch(origin, client);
    watch.loop = watch.run();
    return watch;
  }

  private async run(): Promise<void> {
    while (!this.stopped) {
      const at = Date.now();
      const begin = performance.now();
      await fetch(`${this.origin}/healthz`).then((res) => res.arrayBuffer(), () => undefined);
      this.health.push({ at, ms: performance.now() - begin });
      if (this.client) {
        const { rows } = await this.client.query<{ ms: number; query: string }>(
          `SELECT (extract(epoch FROM clock_timestamp() - query_start) * 1000)::float8 AS ms, left(regexp_replace(query, '\\s+', ' ', 'g'), 160) AS query
             FROM pg_stat_activity WHERE datname = current_database() AND state = 'active' AND pid <> pg_backend_pid()
              AND clock_timestamp() - query_start > interval '250 milliseconds'`,
        );
        for (const row of rows) this.queries.push({ at, ms: row.ms, query: row.query });
      }
      await sleep(Math.max(0, 250 - (Date.now() - at)));
    }
  }

  /** The slowest /healthz and the long statements seen since the last call. */
  since(): string {
    const start = this.windowStart;
    this.windowStart = Date.now();
    const worst = Math.max(0, ...this.health.filter((h) => h.at >= start).map((h) => h.ms));
    const long = this.queries.filter((q) => q.at >= start).length;
    return `healthz max ${ms(worst)}, ${long} statement samples past 250 ms`;
  }

  async stop(started: number): Promise<string> {
    this.stopped = true;
    await this.loop;
    await this.client?.end();
    const at = (t: number) => `${((t - started) / 1000).toFixed(1)} s`;
    const slowest = [...this.health].sort((a, b) => b.ms - a.ms).slice(0, 8);
    const byQuery = new Map<string, { samples: number; longest: number; when: number[] }>();
    for (const q of this.queries) {
      const entry = byQuery.get(q.query) ?? { samples: 0, longest: 0, when: [] };
      entry.samples++;
      entry.longest = Math.max(entry.longest, q.ms);
      if (entry.when.length < 6) entry.when.push(q.at);
      byQuery.set(q.query, entry);
    }
    const statements = [...byQuery].sort((a, b) => b[1].longest - a[1].longest).slice(0, 12);
    return [
      `Slowest /healthz answers (seconds into the soak): ${slowest.map((h) => `${ms(h.ms)} at ${at(h.at)}`).join(', ')}.`,
      statements.length === 0
        ? 'No statement of the soak\'s database was seen running past 250 ms.'
        : `Statements seen running past 250 ms (longest, samples, first seen at):\n${statements
            .map(([query, e]) => `- ${ms(e.longest)}, ${e.samples}×, at ${e.when.map(at).join(', ')}: ${query}`)
            .join('\n')}`,
    ].join('\n');
  }
}

async function stats(project: Project): Promise<{ total: number; embedding: { graphReady: boolean } }> {
  const res = await fetch(`${project.base}/admin/memory/stats`, { headers: project.headers });
  if (!res.ok) throw new Error(`memory stats answered ${res.status}: ${await res.text()}`);
  return (await res.json()) as { total: number; embedding: { graphReady: boolean } };
}

main().catch((error: unknown) => {
  console.error(error);
  process.exitCode = 1;
});
