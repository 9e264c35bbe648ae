// The soak: `lattice serve` as its own process on loopback, driven by a mixed workload (search 40%,
// save 30%, emit 20%, typed ingest of 10 observations 10%). First a closed loop of SOAK_CLIENTS
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
// phase and use this many requests/s); SEARCH_EXACT_SCAN_MAX_ROWS, POOL_MAX_THREADS and
// WORKER_CONCURRENCY are handed to the server, and NODE_OPTIONS and MALLOC_ARENA_MAX to its runtime;
// SOAK_NODE_ARGS adds flags to the server's node (--trace-gc), SOAK_SERVER_OUTPUT names a file for
// the server's output. On Postgres a throwaway database is created and dropped.
import { spawn } from 'node:child_process';
import { createWriteStream, readFileSync } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import pg from 'pg';
import { makeTexts, markdownTable, memoryTemplates, ms, mulberry32, progress, queryTemplates, summarise } from '../../bench/support.js';
import { CLI, freePort } from '../helpers/processes.js';

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
/** A file that receives the server's stdout and stderr (with SOAK_NODE_ARGS=--trace-gc, its heap after every collection). */
const SERVER_OUTPUT = process.env.SOAK_SERVER_OUTPUT;
/** Flags for the server's node (some, such as --trace-gc, are refused in NODE_OPTIONS). */
const NODE_ARGS = (process.env.SOAK_NODE_ARGS ?? '').split(/\s+/).filter(Boolean);

type Op = 'search' | 'save' | 'emit' | 'ingest';
const MIX: [Op, number][] = [['search', 0.4], ['save', 0.3], ['emit', 0.2], ['ingest', 0.1]];

const rssMb = (pid: number): number => {
  const status = readFileSync(`/proc/${pid}/status`, 'utf8');
  return Number(/VmRSS:\s+(\d+)/.exec(status)?.[1] ?? NaN) / 1024;
};

interface Sample {
  op: Op;
  status: number;
  ms: number;
}

async function main(): Promise<void> {
  const serverUrl = process.env.DATABASE_URL;
  const backend = serverUrl ? `Postgres${process.env.REDIS_URL ? ' + Redis' : ''}` : 'PGlite, in-process queue';
  const cleanups: (() => Promise<unknown>)[] = [];
  const env: Record<string, string> = {
    PATH: process.env.PATH ?? '',
    HOST: '127.0.0.1',
    PORT: String(await freePort()),
    LOG_LEVEL: 'warn',
    RATE_LIMIT_PER_MINUTE: '10000000',
  };
  // Service settings to try under load go through to the server, and so do the runtime's own
  // (NODE_OPTIONS, MALLOC_ARENA_MAX) for studying its memory.
  for (const key of ['SEARCH_EXACT_SCAN_MAX_ROWS', 'POOL_MAX_THREADS', 'WORKER_CONCURRENCY', 'NODE_OPTIONS', 'MALLOC_ARENA_MAX']) if (process.env[key]) env[key] = process.env[key]!;
  if (serverUrl) {
    const name = `lattice_soak_${Date.now().toString(36)}`;
    const admin = new pg.Client({ connectionString: serverUrl });
    await admin.connect();
    await admin.query(`CREATE DATABASE ${name}`);
    await admin.end();
    const url = new URL(serverUrl);
    url.pathname = `/${name}`;
    env.DATABASE_URL = url.toString();
    if (process.env.REDIS_URL) Object.assign(env, { REDIS_URL: process.env.REDIS_URL, QUEUE_PREFIX: name, SERVE_RUNS_JOBS: 'true' });
    cleanups.push(async () => {
      const drop = new pg.Client({ connectionString: serverUrl });
      await drop.connect();
      await drop.query(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`);
      await drop.end();
    });
  } else {
    const dataDir = await mkdtemp(join(tmpdir(), 'lattice-soak-'));
    env.DATA_DIR = dataDir;
    cleanups.push(() => rm(dataDir, { recursive: true, force: true }));
  }

  progress(`[soak] starting lattice serve on ${backend}`);
  const server = spawn(process.execPath, [...NODE_ARGS, CLI, 'serve'], { env, stdio: ['ignore', 'pipe', 'pipe'] });
  cleanups.unshift(async () => {
    server.kill('SIGTERM');
    await new Promise((resolve) => server.once('close', resolve));
  });
  let output = '';
  const apiKey = await new Promise<string>((resolve, reject) => {
    const onData = (d: Buffer) => {
      output += d.toString();
      const key = /^\s+(lat_\S+)\s*$/m.exec(output)?.[1];
      if (key) resolve(key);
    };
    server.stdout!.on('data', onData);
    server.stderr!.on('data', onData);
    if (SERVER_OUTPUT) {
      const file = createWriteStream(SERVER_OUTPUT);
      server.stdout!.pipe(file);
      server.stderr!.pipe(file);
    }
    server.once('close', (code) => reject(new Error(`lattice serve exited ${code}:\n${output}`)));
  });
  for (let tries = 0; ; tries++) {
    const ready = await fetch(`http://127.0.0.1:${env.PORT}/readyz`).then((r) => r.ok, () => false);
    if (ready) break;
    if (tries > 600) throw new Error(`lattice serve did not become ready:\n${output}`);
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
  const base = `http://127.0.0.1:${env.PORT}/api/v1/projects/demo`;
  const headers = { authorization: `Bearer ${apiKey}`, 'content-type': 'application/json' };

  try {
    const random = mulberry32(17);
    let counter = 0;
    const people = ['Ana', 'Bruno', 'Chen', 'Dara', 'Eli', 'Farah', 'Goran', 'Hana'];
    const pick = <T>(list: readonly T[]) => list[Math.floor(random() * list.length)]!;
    // The memory benchmark's realistic sentences and questions (bench/support.ts), so that words
    // are as varied as in real memories rather than a handful repeated in every one.
    const contents = makeTexts(40_000, 5, memoryTemplates);
    const questions = makeTexts(20_000, 6, queryTemplates);
    const bodies: Record<Op, () => [string, unknown]> = {
      search: () => ['/admin/memory/search', { query: questions[counter++ % questions.length], limit: 10 }],
      save: () => ['/admin/memory', { content: contents[counter++ % contents.length], subject: { kind: 'user', externalId: pick(people) } }],
      emit: () => ['/lattice/events/emit', { eventType: 'soak.tick', payloadJson: JSON.stringify({ n: ++counter }), subject: { kind: 'user', externalId: pick(people) } }],
      ingest: () => [
        '/memory-typed/observations',
        {
          observations: Array.from({ length: 10 }, () => ({
            attributeKey: 'soak_score', subjectKind: 'user', subjectExternalId: pick(people), valueNumeric: Math.round(random() * 100), observedAt: new Date(Date.now() - Math.floor(random() * 1e9)).toISOString(),
          })),
        },
      ],
    };
    const nextOp = (): Op => {
      let r = random();
      for (const [op, share] of MIX) if ((r -= share) < 0) return op;
      return 'search';
    };
    const send = async (op: Op): Promise<Sample> => {
      const [path, body] = bodies[op]();
      const start = performance.now();
      try {
        const res = await fetch(`${base}${path}`, { method: 'POST', headers, body: JSON.stringify(body) });
        await res.arrayBuffer();
        return { op, status: res.status, ms: performance.now() - start };
      } catch {
        return { op, status: 0, ms: performance.now() - start };
      }
    };

    // Set-up: the typed attribute, and some memories for search to find.
    const attribute = await fetch(`${base}/memory-typed/attributes`, { method: 'POST', headers, body: JSON.stringify({ attributeKey: 'soak_score', dataType: 'numeric' }) });
    if (attribute.status >= 300) throw new Error(`could not declare the attribute: ${attribute.status} ${await attribute.text()}`);
    for (let i = 0; i < 200; i++) {
      const seeded = await send('save');
      if (seeded.status !== 201) throw new Error(`seeding a memory answered ${seeded.status}`);
    }
    for (const op of ['search', 'emit', 'ingest'] as const) {
      const probe = await send(op);
      if (probe.status >= 300) throw new Error(`a ${op} request answered ${probe.status}: the workload is wrong`);
    }
    progress('[soak] seeded 200 memories');

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
      const drainStart = Date.now();
      for (;;) {
        const stats = await fetch(`${base}/admin/memory/stats`, { headers }).then((r) => r.json() as Promise<{ embedding: { embedded: number; total: number } }>);
        if (stats.embedding.embedded >= stats.embedding.total || Date.now() - drainStart > 300_000) break;
        await new Promise((resolve) => setTimeout(resolve, 500));
      }
      const drainSeconds = (Date.now() - drainStart) / 1000;
      const peak = steadyCount / (PEAK_SECONDS / 2 + drainSeconds);
      rate = SHARE * peak;
      progress(
        `[soak] peak ${peak.toFixed(1)} req/s over the second half and the ${drainSeconds.toFixed(1)} s its embedding backlog took ` +
          `(${(peakSamples.length / PEAK_SECONDS).toFixed(1)} answered per second over the whole); soaking at ${rate.toFixed(1)} req/s`,
      );
    }

    const soakSamples: Sample[] = [];
    const memory: number[] = [rssMb(server.pid!)];
    const pending = new Set<Promise<void>>();
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
      const request = send(nextOp()).then((sample) => {
        soakSamples.push(sample);
        pending.delete(request);
      });
      pending.add(request);
      if (Date.now() - lastReport >= 10_000) {
        lastReport = Date.now();
        memory.push(rssMb(server.pid!));
        progress(`[soak] ${Math.round((Date.now() - started) / 1000)} s: ${soakSamples.length} answered, ${pending.size} in flight, server RSS ${memory.at(-1)!.toFixed(0)} MB`);
      }
    }
    await Promise.all(pending);
    memory.push(rssMb(server.pid!));

    const rows: string[][] = [];
    const describe = (phase: string, samples: Sample[], secondsTaken: number) => {
      for (const op of [...MIX.map(([o]) => o), 'all'] as const) {
        const mine = op === 'all' ? samples : samples.filter((s) => s.op === op);
        const errors = new Map<number, number>();
        for (const s of mine) if (s.status < 200 || s.status >= 300) errors.set(s.status, (errors.get(s.status) ?? 0) + 1);
        const stats = summarise(mine.map((s) => s.ms));
        rows.push([
          phase, op, String(mine.length),
          errors.size === 0 ? '0' : [...errors].map(([status, n]) => `${n} × ${status || 'no answer'}`).join(', '),
          `${(mine.length / secondsTaken).toFixed(1)}/s`, ms(stats.p50), ms(stats.p99),
        ]);
      }
    };
    if (peakSamples.length > 0) describe(`peak (${CLIENTS} clients, ${PEAK_SECONDS} s)`, peakSamples, PEAK_SECONDS);
    describe(`soak at ${rate.toFixed(1)} req/s (${SOAK_SECONDS} s)`, soakSamples, SOAK_SECONDS);
    console.log(`\nSoak, ${new Date().toISOString().slice(0, 16).replace('T', ' ')} UTC: ${backend}, Node ${process.version}.`);
    console.log(`Server RSS during the soak: ${memory.map((m) => m.toFixed(0)).join(' → ')} MB (start ${memory[0]!.toFixed(0)}, end ${memory.at(-1)!.toFixed(0)}).\n`);
    console.log(markdownTable(['Phase', 'Operation', 'n', 'Errors', 'Throughput', 'p50', 'p99'], rows, (c) => c >= 2 && c !== 3));
  } finally {
    for (const cleanup of cleanups) await cleanup().catch(() => undefined);
  }
}

main().catch((error: unknown) => {
  console.error(error);
  process.exitCode = 1;
});
