// A Postgres crash and restart, for real: a cluster of this test's own on a loopback port, stopped
// with `pg_ctl stop -m immediate` (as a crash) under a write load and started again. Every request
// answers 2xx or 503 with Retry-After in bounded time, never a 500 or a hang; every write that was
// acknowledged is there after the restart; the API recovers by itself.
import { spawn, spawnSync } from 'node:child_process';
import { chownSync, existsSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { FastifyInstance } from 'fastify';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildApp } from '../../src/app.js';
import { createLattice, type Lattice } from '../../src/modules.js';
import { insertMemories } from '../../src/memory/store.js';
import { newId } from '../../src/platform/ids.js';
import { createLogger } from '../../src/platform/logger.js';
import { SERVER_DATABASE_URL, testConfig } from '../helpers/harness.js';
import { reservedPort } from '../helpers/processes.js';

const binDir = (() => {
  const found = spawnSync('pg_config', ['--bindir'], { encoding: 'utf8' });
  return found.status === 0 ? found.stdout.trim() : undefined;
})();
const runnable = SERVER_DATABASE_URL !== undefined && binDir !== undefined && existsSync(join(binDir, 'pg_ctl'));
/** initdb and postgres refuse to run as root; as root, run them as the postgres user. */
const asRoot = process.getuid?.() === 0;

function pg(tool: string, args: string[]): void {
  const command = join(binDir!, tool);
  const result = asRoot
    ? spawnSync('runuser', ['-u', 'postgres', '--', command, ...args], { encoding: 'utf8' })
    : spawnSync(command, args, { encoding: 'utf8' });
  if (result.status !== 0) throw new Error(`${tool} ${args.join(' ')} failed: ${result.stderr || result.stdout}`);
}

/**
 * The same, without blocking the event loop: under load a `pg_ctl start -w` run with spawnSync would
 * freeze every request in flight for the seconds the server takes to start, and their timings with it.
 */
function pgAsync(tool: string, args: string[]): Promise<void> {
  const command = join(binDir!, tool);
  const child = asRoot ? spawn('runuser', ['-u', 'postgres', '--', command, ...args]) : spawn(command, args);
  let output = '';
  child.stdout.on('data', (d: Buffer) => (output += d.toString()));
  child.stderr.on('data', (d: Buffer) => (output += d.toString()));
  return new Promise((resolve, reject) => {
    child.once('error', reject);
    child.once('close', (code) => (code === 0 ? resolve() : reject(new Error(`${tool} ${args.join(' ')} failed: ${output}`))));
  });
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

interface Outcome {
  kind: 'memory' | 'event';
  status: number;
  ms: number;
  id?: string;
  retryAfter?: string;
  during: 'up' | 'down' | 'after';
}

describe.skipIf(!runnable)('a Postgres crash and restart under write load', () => {
  let dir: string;
  let port: number;
  let lattice: Lattice;
  let app: FastifyInstance;
  let projectId: string;
  let apiKey: string;

  const start = () => pg('pg_ctl', ['-D', join(dir, 'data'), '-l', join(dir, 'log'), '-w', '-o', `-p ${port} -k ${dir} -c listen_addresses=127.0.0.1`, 'start']);
  const crash = () => pg('pg_ctl', ['-D', join(dir, 'data'), '-m', 'immediate', 'stop']);
  const startUnderLoad = () => pgAsync('pg_ctl', ['-D', join(dir, 'data'), '-l', join(dir, 'log'), '-w', '-o', `-p ${port} -k ${dir} -c listen_addresses=127.0.0.1`, 'start']);
  const crashUnderLoad = () => pgAsync('pg_ctl', ['-D', join(dir, 'data'), '-m', 'immediate', 'stop']);

  beforeAll(async () => {
    dir = mkdtempSync(join(tmpdir(), 'lattice-pg-'));
    if (asRoot) chownSync(dir, Number(spawnSync('id', ['-u', 'postgres'], { encoding: 'utf8' }).stdout), Number(spawnSync('id', ['-g', 'postgres'], { encoding: 'utf8' }).stdout));
    port = await reservedPort();
    pg('initdb', ['-D', join(dir, 'data'), '-A', 'trust', '-U', 'postgres', '--no-sync']);
    start();
    const config = testConfig({ url: `postgres://postgres@127.0.0.1:${port}/postgres`, open: async () => { throw new Error('unused'); }, drop: async () => {} }, { DB_CONNECT_TIMEOUT_MS: '500' });
    lattice = await createLattice(config, { log: createLogger('silent') });
    await lattice.startConsumers();
    app = await buildApp(lattice, { logger: false });
    await app.ready();
    projectId = 'outage';
    await lattice.apis.tenancy.createProject(projectId, { plan: 'enterprise' });
    apiKey = (await lattice.apis.tenancy.createKey(projectId, ['READ_MEMORY', 'WRITE_MEMORY'])).apiKey;
  }, 120_000);

  afterAll(async () => {
    await app?.close();
    await lattice?.close();
    try {
      crash();
    } catch {
      // already stopped
    }
    rmSync(dir, { recursive: true, force: true });
  });

  const call = (path: string, body: unknown) =>
    app.inject({ method: 'POST', url: `/api/v1/projects/${projectId}${path}`, headers: { authorization: `Bearer ${apiKey}` }, payload: body as object });

  it('answers 2xx or a prompt 503 throughout, keeps every acknowledged write, and recovers', async () => {
    let phase: Outcome['during'] = 'up';
    let running = true;
    const outcomes: Outcome[] = [];
    const writer = async (w: number) => {
      for (let n = 0; running; n++) {
        const kind = n % 2 === 0 ? 'memory' : 'event';
        const during = phase;
        const began = Date.now();
        const res = kind === 'memory'
          ? await call('/admin/memory', { content: `Writer ${w} remembers item ${n}` })
          : await call('/lattice/events/emit', { eventType: 'load.test', dedupeKey: `w${w}-${n}`, payload: { w, n } });
        const ok = res.statusCode < 300;
        const body = ok ? res.json() : undefined;
        outcomes.push({
          kind, status: res.statusCode, ms: Date.now() - began, during,
          id: ok ? (kind === 'memory' ? body.id : body.event.id) : undefined,
          retryAfter: res.headers['retry-after'] as string | undefined,
        });
        if (!ok) await sleep(50);
      }
    };
    /** Waits until `done` holds, checking every 50 ms, for at most `ms`. */
    const until = async (done: () => boolean, ms: number, what: string) => {
      for (const deadline = Date.now() + ms; !done(); await sleep(50)) if (Date.now() > deadline) throw new Error(`${what} within ${ms} ms`);
    };
    const answered = (during: Outcome['during'], ok: boolean) => outcomes.filter((o) => o.during === during && (o.status < 300) === ok).length;
    const writers = [0, 1, 2, 3].map(writer);
    // Crash once the writers are under way: a few writes acknowledged before it.
    await until(() => answered('up', true) >= 8, 60_000, 'no 8 writes were acknowledged before the crash');
    await crashUnderLoad();
    phase = 'down';
    const readyDown = await app.inject({ method: 'GET', url: '/readyz' });
    // Down for 3 s at least, and until the writers have met the outage.
    const downSince = Date.now();
    await until(() => Date.now() - downSince >= 3000 && answered('down', false) >= 4, 60_000, 'the writers met no outage');
    await startUnderLoad();
    phase = 'after';
    // Keep writing until writes succeed again (the pool drops its dead connections as it meets them).
    const deadline = Date.now() + 60_000;
    while (Date.now() < deadline && answered('after', true) < 20) await sleep(100);
    running = false;
    await Promise.all(writers);

    expect(readyDown.statusCode).toBe(503);
    expect(readyDown.json().message).toMatch(/database/);

    const statuses = new Set(outcomes.map((o) => o.status));
    for (const status of statuses) expect([200, 201, 503], `status ${status}`).toContain(status);
    const failures = outcomes.filter((o) => o.status === 503);
    expect(failures.length).toBeGreaterThan(0);
    for (const failure of failures) {
      expect(Number(failure.retryAfter)).toBeGreaterThan(0);
      expect(failure.ms).toBeLessThan(3000);
    }
    expect(outcomes.filter((o) => o.during === 'up' && o.status < 300).length).toBeGreaterThan(0);
    expect(outcomes.filter((o) => o.during === 'after' && o.status < 300).length).toBeGreaterThanOrEqual(20);

    // Nothing acknowledged was lost in the crash.
    const acknowledged = outcomes.filter((o) => o.status < 300);
    const memoryIds = acknowledged.filter((o) => o.kind === 'memory').map((o) => o.id!);
    const eventIds = acknowledged.filter((o) => o.kind === 'event').map((o) => o.id!);
    const db = lattice.runtime.db;
    const memories = await db.query<{ n: number }>('SELECT count(*)::int AS n FROM memories WHERE id = ANY($1::text[])', [memoryIds]);
    const events = await db.query<{ n: number }>('SELECT count(*)::int AS n FROM events WHERE id = ANY($1::text[])', [eventIds]);
    expect({ memories: memories.rows[0]!.n, events: events.rows[0]!.n }).toEqual({ memories: memoryIds.length, events: eventIds.length });
    expect((await app.inject({ method: 'GET', url: '/readyz' })).statusCode).toBe(200);
  }, 240_000);

  it('after Postgres returns, work whose jobs failed during the outage settles within 15 s', async () => {
    const db = lattice.runtime.db;
    const ids = Array.from({ length: 10 }, () => newId('mem'));
    await insertMemories(db, ids.map((id, i) => ({ id, projectId, content: `Kept before the crash, note ${i} on the garden` })));
    crash();
    // The drain of those rows runs while Postgres is down, and fails every attempt it has.
    await lattice.runtime.queue.enqueue('memory.embed-drain', { projectId }, { attempts: 2, backoffMs: 100 });
    for (let polls = 0; (await lattice.runtime.queue.inFlight(projectId)).jobs.length > 0; polls++) {
      if (polls > 600) throw new Error('the drain job did not give up within 600 polls');
      await sleep(100);
    }
    start();
    const back = Date.now();
    const embedded = async () => {
      try {
        return (await db.query<{ n: number }>('SELECT count(*)::int AS n FROM memories WHERE id = ANY($1::text[]) AND embedding IS NOT NULL', [ids])).rows[0]!.n;
      } catch {
        return -1; // the pool still meeting its dead connections
      }
    };
    for (let polls = 0; (await embedded()) < ids.length; polls++) {
      if (polls > 600) throw new Error(`${await embedded()} of ${ids.length} embedded 60 s after Postgres returned`);
      await sleep(100);
    }
    const took = Date.now() - back;
    // The embedding sweep's own schedule is a minute: within 15 s means Postgres's return set it off.
    expect(took, `embedded ${took} ms after Postgres returned`).toBeLessThan(15_000);
  }, 120_000);
});
