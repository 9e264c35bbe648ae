// `lattice serve` as its own process on loopback, for the load runs (test/reliability/soak.ts,
// bench/concurrency.ts): measured from outside, as a client sees it, over real sockets, and with
// its own CPU and memory to read. With DATABASE_URL set it runs on a throwaway Postgres database created
// here and dropped at close (and, with REDIS_URL, BullMQ under a throwaway QUEUE_PREFIX, jobs run
// by the server itself, SERVE_RUNS_JOBS=true); with CITUS_URL set (it wins over DATABASE_URL), on a
// throwaway database of that Citus cluster, made on every node and distributed as `lattice citus
// distribute` does (bench/support.ts, BENCH_CITUS_SHARDS); without either, on the embedded default
// (PGlite, in-process queue) in a temporary DATA_DIR. The per-key rate limit is raised out of the way: it would shape
// the load the run means to measure.
import { execFileSync, spawn, type ChildProcess } from 'node:child_process';
import { createWriteStream, readdirSync, readFileSync } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import pg from 'pg';
import { CLI, reservedPort, runCli } from '../test/helpers/processes.js';
import { createCitusDatabase, dropCitusDatabase } from '../test/helpers/citus.js';
import { citusShardCount, deleteQueueKeys, progress, sleep } from './support.js';

/**
 * Handed through to the server when set: service settings worth trying under load, and the
 * runtime's own (NODE_OPTIONS, MALLOC_ARENA_MAX) for studying its memory.
 */
const PASSED_THROUGH = [
  'SEARCH_EXACT_SCAN_MAX_ROWS', 'POOL_MAX_THREADS', 'WORKER_CONCURRENCY',
  'DB_POOL_MAX', 'DB_STATEMENT_POOL_MAX', 'DB_ACQUIRE_TIMEOUT_MS',
  'NODE_OPTIONS', 'MALLOC_ARENA_MAX',
];

/** How long a first start may take (migrations, the encoder's model) before the run gives up. */
const READY_WITHIN_MS = 180_000;
/** The server's output kept for error messages: its tail, so a chatty run cannot grow it unbounded. */
const OUTPUT_KEPT = 64 * 1024;

/** Clock ticks per second, the unit of /proc/<pid>/stat's times. */
const CLOCK_TICKS = (() => {
  try {
    return Number(execFileSync('getconf', ['CLK_TCK'], { encoding: 'utf8' }).trim()) || 100;
  } catch {
    return 100;
  }
})();

/** Fields of /proc/<pid>/stat after the command name (which may hold spaces and parentheses). */
const statFields = (pid: number | string): string[] | undefined => {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    return stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  } catch {
    return undefined; // gone since the directory was listed
  }
};

export class LatticeProcess {
  private server: ChildProcess | undefined;
  private output = '';
  private closed: Promise<void> | undefined;
  private readonly onSignal = (signal: NodeJS.Signals) => {
    // Ctrl-C reaches the server too (same process group); the database must still be dropped.
    progress(`[lattice] ${signal}: cleaning up before exiting`);
    void this.close().finally(() => process.exit(signal === 'SIGINT' ? 130 : 143));
  };

  private constructor(
    /** 'Postgres + Redis', 'Postgres', 'Citus + Redis', 'Citus' or 'PGlite, in-process queue'. */
    readonly backend: string,
    /** The server's whole environment: only what is set here, plus PATH. */
    private readonly env: Record<string, string>,
    private readonly cleanups: (() => Promise<unknown>)[],
  ) {
    process.once('SIGINT', this.onSignal);
    process.once('SIGTERM', this.onSignal);
  }

  /** Creates the throwaway database (or data directory) and picks a port; `name` goes into their names. */
  static async create(name: string): Promise<LatticeProcess> {
    const serverUrl = process.env.DATABASE_URL;
    const env: Record<string, string> = {
      PATH: process.env.PATH ?? '',
      HOST: '127.0.0.1',
      // Below the ephemeral range and checked free (the server logs at warn, so it cannot report a port 0 got).
      PORT: String(await reservedPort()),
      LOG_LEVEL: 'warn',
      RATE_LIMIT_PER_MINUTE: '10000000',
    };
    for (const key of PASSED_THROUGH) if (process.env[key]) env[key] = process.env[key]!;
    const cleanups: (() => Promise<unknown>)[] = [];
    const citusUrl = process.env.CITUS_URL;
    if (citusUrl || serverUrl) {
      const database = `lattice_${name}_${Date.now().toString(36)}`;
      if (citusUrl) {
        progress(`[lattice] creating ${database} on every node of the Citus cluster (${citusShardCount()} shards per table)`);
        env.DATABASE_URL = await createCitusDatabase(citusUrl, database, { shardCount: citusShardCount() });
        cleanups.push(() => dropCitusDatabase(citusUrl, database));
      } else {
        const admin = new pg.Client({ connectionString: serverUrl });
        await admin.connect();
        await admin.query(`CREATE DATABASE ${database}`);
        await admin.end();
        const url = new URL(serverUrl!);
        url.pathname = `/${database}`;
        env.DATABASE_URL = url.toString();
        cleanups.push(async () => {
          const drop = new pg.Client({ connectionString: serverUrl });
          await drop.connect();
          await drop.query(`DROP DATABASE IF EXISTS ${database} WITH (FORCE)`);
          await drop.end();
        });
      }
      const redisUrl = process.env.REDIS_URL;
      if (redisUrl) {
        Object.assign(env, { REDIS_URL: redisUrl, QUEUE_PREFIX: database, SERVE_RUNS_JOBS: 'true' });
        // Completed jobs stay in Redis for an hour; a load run leaves tens of thousands.
        cleanups.push(() => deleteQueueKeys(redisUrl, database));
      }
    } else {
      const dataDir = await mkdtemp(join(tmpdir(), `lattice-${name}-`));
      env.DATA_DIR = dataDir;
      cleanups.push(() => rm(dataDir, { recursive: true, force: true }));
    }
    const backend = citusUrl || serverUrl ? `${citusUrl ? 'Citus' : 'Postgres'}${process.env.REDIS_URL ? ' + Redis' : ''}` : 'PGlite, in-process queue';
    return new LatticeProcess(backend, env, cleanups);
  }

  /** The throwaway database's URL (Postgres or Citus), or undefined on PGlite. */
  get databaseUrl(): string | undefined {
    return this.env.DATABASE_URL;
  }

  get postgres(): boolean {
    return this.env.DATABASE_URL !== undefined;
  }

  /** http://127.0.0.1:<port>, once started. */
  get origin(): string {
    return `http://127.0.0.1:${this.env.PORT}`;
  }

  get pid(): number {
    if (this.server?.pid === undefined) throw new Error('lattice serve is not running');
    return this.server.pid;
  }

  /**
   * Runs an admin command (`lattice project create …`) against the same database, and answers its
   * stdout. On the embedded default only one process may open the data directory: call it while
   * the server is stopped.
   */
  async cli(args: string[]): Promise<string> {
    const { DATABASE_URL, DATA_DIR } = this.env;
    const result = await runCli(args, DATABASE_URL ? { DATABASE_URL } : { DATA_DIR });
    if (result.code !== 0) throw new Error(`lattice ${args.join(' ')} exited ${result.code}: ${result.stderr}`);
    return result.stdout;
  }

  /**
   * Starts `lattice serve` and resolves once /readyz answers 200. `nodeArgs` go to its node (some
   * flags, such as --trace-gc, are refused in NODE_OPTIONS); `outputFile` receives its output.
   */
  async start(options: { nodeArgs?: readonly string[]; outputFile?: string } = {}): Promise<void> {
    const server = spawn(process.execPath, [...(options.nodeArgs ?? []), CLI, 'serve'], { env: this.env, stdio: ['ignore', 'pipe', 'pipe'] });
    this.server = server;
    this.cleanups.unshift(async () => {
      if (server.exitCode === null && server.signalCode === null) {
        const exited = new Promise((resolve) => server.once('close', resolve));
        server.kill('SIGTERM');
        await exited;
      }
    });
    const onData = (d: Buffer) => {
      this.output = (this.output + d.toString()).slice(-OUTPUT_KEPT);
    };
    server.stdout!.on('data', onData);
    server.stderr!.on('data', onData);
    if (options.outputFile) {
      const file = createWriteStream(options.outputFile);
      server.stdout!.pipe(file);
      server.stderr!.pipe(file);
    }
    const deadline = Date.now() + READY_WITHIN_MS;
    for (let tries = 0; tries < READY_WITHIN_MS / 100; tries++) {
      this.assertRunning();
      const ready = await fetch(`${this.origin}/readyz`, { signal: AbortSignal.timeout(5000) }).then((r) => r.ok, () => false);
      if (ready) return;
      if (Date.now() > deadline) break;
      await sleep(100);
    }
    throw new Error(`lattice serve did not become ready within ${READY_WITHIN_MS / 1000} s:\n${this.output}`);
  }

  /** Throws, with the server's output, if it has exited. */
  assertRunning(): void {
    if (this.server && (this.server.exitCode !== null || this.server.signalCode !== null)) {
      throw new Error(`lattice serve exited (${this.server.exitCode ?? this.server.signalCode}):\n${this.output}`);
    }
  }

  /** The key of the `demo` project the server creates and prints on its first start on an empty database. */
  async demoKey(): Promise<string> {
    // Printed before the server listens, so it is normally here already; the pipe may lag /readyz.
    for (let tries = 0; tries < 100; tries++) {
      const key = /^\s+(lat_\S+)\s*$/m.exec(this.output)?.[1];
      if (key) return key;
      this.assertRunning();
      await sleep(100);
    }
    throw new Error(`lattice serve printed no demo key (was the database empty?):\n${this.output}`);
  }

  /** Resident memory of the server, in MB. */
  rssMb(): number {
    const status = readFileSync(`/proc/${this.pid}/status`, 'utf8');
    return Number(/VmRSS:\s+(\d+)/.exec(status)?.[1] ?? NaN) / 1024;
  }

  /**
   * CPU seconds (user + system) the server has used so far, with its child processes: the live
   * ones (found through their parent pid) and those that ended (cutime, cstime). Its threads (the
   * worker pool, the encoder, PGlite) are in its own figures already.
   */
  cpuSeconds(): number {
    this.assertRunning();
    const own = statFields(this.pid);
    if (!own) throw new Error('lattice serve is not running');
    // utime, stime, cutime, cstime: fields 14 to 17, so 11 to 14 after the name.
    let ticks = Number(own[11]) + Number(own[12]) + Number(own[13]) + Number(own[14]);
    const children = new Map<number, number[]>();
    for (const entry of readdirSync('/proc')) {
      if (!/^\d+$/.test(entry)) continue;
      const fields = statFields(entry);
      if (!fields) continue;
      const parent = Number(fields[1]);
      children.set(parent, [...(children.get(parent) ?? []), Number(entry)]);
    }
    const pending = [...(children.get(this.pid) ?? [])];
    while (pending.length > 0) {
      const pid = pending.pop()!;
      const fields = statFields(pid);
      if (fields) ticks += Number(fields[11]) + Number(fields[12]);
      pending.push(...(children.get(pid) ?? []));
    }
    return ticks / CLOCK_TICKS;
  }

  /** Stops the server (SIGTERM, and waits for it) and removes what `create` made. Safe to call twice. */
  close(): Promise<void> {
    return (this.closed ??= (async () => {
      process.off('SIGINT', this.onSignal);
      process.off('SIGTERM', this.onSignal);
      for (const cleanup of this.cleanups) await cleanup().catch((error: unknown) => progress(`[lattice] cleanup failed: ${error instanceof Error ? error.message : String(error)}`));
    })());
  }
}
