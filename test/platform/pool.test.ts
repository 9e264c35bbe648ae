// The worker pool runs the built entry (dist/workers/index.js): `npm test` builds first; run
// `npm run build` before running this file with vitest directly.
import { spawnSync } from 'node:child_process';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { getPriority, tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { DependencyUnavailableError, PoolOverloadedError } from '../../src/platform/errors.js';
import { WorkerPool, type PoolOptions } from '../../src/platform/pool.js';
import { projectRoot } from '../../src/platform/project-root.js';
import { GATE_BUSY } from '../../workers/native-gate.js';

const TEXTS = Array.from({ length: 8 }, (_, i) => `The customer asked about order number ${i} and its delivery date`);

describe('WorkerPool', () => {
  const pools: WorkerPool[] = [];
  afterEach(async () => {
    await Promise.all(pools.splice(0).map((pool) => pool.destroy()));
  });

  function pool(options: Partial<PoolOptions> = {}): WorkerPool {
    const created = new WorkerPool({ maxThreads: 2, maxQueue: 16, taskTimeoutMs: 60_000, ...options });
    pools.push(created);
    return created;
  }

  it('round-trips a noop task', async () => {
    const p = pool();
    await expect(p.run('noop', { value: 7 })).resolves.toEqual({ value: 7 });
    expect(p.size).toEqual({ inFlight: 0, threads: expect.any(Number) });
    expect(p.size.threads).toBeGreaterThanOrEqual(1);
  });

  it('runs a background pool\'s threads at its niceness, and a default pool\'s at the process\'s', async () => {
    const own = getPriority();
    // Linux keeps a nice value per thread: the main thread's is the process's, unchanged.
    const background = pool({ niceness: 10 });
    const defaults = pool();
    const [low, normal] = await Promise.all([background.run('priority', {}), defaults.run('priority', {})]);
    expect(low).toBe(Math.max(own, 10));
    expect(normal).toBe(own);
    expect(getPriority()).toBe(own);
  });

  it('runs the behaviour kernels in a thread: mining subjects in one batch, fitting BG/NBD over many', async () => {
    const p = pool();
    const monday = Date.UTC(2026, 0, 5, 9);
    const weekly = Float64Array.from({ length: 10 }, (_, i) => monday + i * 7 * 86_400_000);
    const [patterns, none] = await p.run('behavior.mine', [{ times: weekly, now: weekly[9]! + 86_400_000 }, { times: weekly.subarray(0, 2), now: weekly[9]! }]);
    expect(patterns!.map((x) => x.patternKind).sort()).toEqual(['day_of_week', 'recurring_event', 'time_of_day']);
    expect(none).toEqual([]);
    const histories = { x: Float64Array.of(0, 1, 2, 5, 0, 3), tx: Float64Array.of(0, 10, 20, 30, 0, 25), T: Float64Array.of(39, 39, 39, 39, 30, 35) };
    const fit = await p.run('behavior.fit-bgnbd', histories);
    expect(fit.subjects).toBe(6);
    for (const key of ['r', 'alpha', 'a', 'b'] as const) expect(fit[key]).toBeGreaterThan(0);
  });

  it('derives how many tasks a steady feeder keeps in it: two per thread, within what it admits', () => {
    expect(pool({ maxThreads: 2, maxQueue: 16 }).feedLimit).toBe(4);
    expect(pool({ maxThreads: 3, maxQueue: 1 }).feedLimit).toBe(4);
  });

  it('refuses the tasks in progress and queued when destroyed, and runs again after', async () => {
    const p = pool({ maxThreads: 1 });
    const long = Array.from({ length: 64 }, (_, i) => `${TEXTS[i % TEXTS.length]} and its invoice, item ${i} of a long order`);
    await p.run('embed', { texts: TEXTS.slice(0, 1) });
    let runningSettled = false;
    const running = p.run('embed', { texts: long }).then(() => 'ran', (error: unknown) => error).finally(() => (runningSettled = true));
    const queued = p.run('embed', { texts: TEXTS }).then(() => 'ran', (error: unknown) => error);
    // Destroyed once the long task is inside the encoder's native run (the gate counts it busy), the
    // other still queued behind it on the pool's only thread.
    const gate = (p as unknown as { gate: Int32Array }).gate;
    for (const deadline = Date.now() + 60_000; Atomics.load(gate, GATE_BUSY) === 0 && !runningSettled; await new Promise((resolve) => setImmediate(resolve))) {
      if (Date.now() > deadline) throw new Error('the long task never entered its native run');
    }
    expect(runningSettled).toBe(false);
    await p.destroy();
    expect(await queued).toBeInstanceOf(Error);
    // The one in progress settles (it finished its last native run or was refused the next);
    // a destroy that left it hanging would time this test out.
    await running;
    await expect(p.run('embed', { texts: TEXTS.slice(0, 2) })).resolves.toHaveLength(2 * 512);
  });

  it('starts no thread until the first task', () => {
    expect(pool().size).toEqual({ inFlight: 0, threads: 0 });
  });

  it('embeds texts into 512 numbers each, moved back as one Float32Array', async () => {
    const vectors = await pool().run('embed', { texts: TEXTS.slice(0, 3) });
    expect(vectors).toBeInstanceOf(Float32Array);
    expect(vectors).toHaveLength(3 * 512);
  });

  it('refuses tasks beyond maxThreads + maxQueue with PoolOverloadedError, and runs the admitted ones', async () => {
    const p = pool({ maxThreads: 1, maxQueue: 1 });
    const settled = await Promise.allSettled(Array.from({ length: 6 }, () => p.run('embed', { texts: TEXTS })));
    const admitted = settled.filter((s) => s.status === 'fulfilled');
    const refused = settled.flatMap((s) => (s.status === 'rejected' ? [s.reason as unknown] : []));
    expect(admitted).toHaveLength(2);
    for (const s of admitted) expect((s as PromiseFulfilledResult<Float32Array>).value).toHaveLength(TEXTS.length * 512);
    expect(refused).toHaveLength(4);
    for (const error of refused) {
      expect(error).toBeInstanceOf(PoolOverloadedError);
      expect(error).toMatchObject({ code: 'OVERLOADED', statusCode: 503, retryAfterSeconds: 1 });
    }
  });

  it('admits tasks again once the backlog drains', async () => {
    const p = pool({ maxThreads: 1, maxQueue: 1 });
    const first = await Promise.allSettled([1, 2, 3].map((value) => p.run('noop', { value })));
    expect(first.map((s) => s.status)).toEqual(['fulfilled', 'fulfilled', 'rejected']);
    expect(p.size.inFlight).toBe(0);
    await expect(p.run('noop', { value: 4 })).resolves.toEqual({ value: 4 });
  });

  it('fails a plain task that exceeds taskTimeoutMs with DependencyUnavailableError, and counts it out of flight', async () => {
    // A fresh pool: starting its thread alone takes far longer than 5 ms.
    const p = pool({ maxThreads: 1, maxQueue: 4, taskTimeoutMs: 5 });
    const error: unknown = await p.run('noop', { value: 1 }).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(DependencyUnavailableError);
    expect(error).not.toBeInstanceOf(PoolOverloadedError);
    expect(error).toMatchObject({ code: 'SERVICE_UNAVAILABLE', statusCode: 503, message: expect.stringContaining('5 ms') });
    expect(p.size.inFlight).toBe(0);
  });

  it('answers an embed past taskTimeoutMs with DependencyUnavailableError at once, but lets its thread finish the native run', async () => {
    const p = pool({ maxThreads: 1, maxQueue: 4, taskTimeoutMs: 5 });
    const many = Array.from({ length: 200 }, (_, i) => `${TEXTS[i % TEXTS.length]} ${i}`);
    const error: unknown = await p.run('embed', { texts: many }).catch((e: unknown) => e);
    expect(error).toMatchObject({ code: 'SERVICE_UNAVAILABLE', statusCode: 503, message: expect.stringContaining('embed exceeded 5 ms') });
    // Answered before the task finished (loading the model alone takes longer): still in flight, on
    // a thread that was not stopped, so the admission count stays honest.
    expect(p.size).toEqual({ inFlight: 1, threads: 1 });
    await vi.waitFor(() => expect(p.size.inFlight).toBe(0), { timeout: 30_000, interval: 50 });
    expect(p.size.threads).toBe(1);
  });

  it('destroys a pool whose two threads are both inside the encoder\'s native run, and the process lives', () => {
    // Piscina's close({ force }) alone stops the second busy thread mid-run (it counts the first to
    // finish twice): this child aborted with 134 in five runs of five before the gate closed first.
    const script = `
      import { WorkerPool } from ${JSON.stringify(join(projectRoot(), 'src/platform/pool.ts'))};
      const pool = new WorkerPool({ maxThreads: 2, maxQueue: 8, taskTimeoutMs: 60000 });
      await Promise.all([pool.run('embed', { texts: ['warm'] }), pool.run('embed', { texts: ['up'] })]);
      const texts = Array.from({ length: 512 }, (_, i) => 'a long text about an order and its delivery, number ' + i);
      const settled = [pool.run('embed', { texts: texts.slice(0, 256) }), pool.run('embed', { texts })].map((p) => p.then(() => 'ran', () => 'refused'));
      await new Promise((resolve) => setTimeout(resolve, 100));
      await pool.destroy();
      console.log('destroyed', (await Promise.all(settled)).join(' '));`;
    const file = join(mkdtempSync(join(tmpdir(), 'lattice-pool-destroy-')), 'destroy.mts');
    writeFileSync(file, script);
    for (let round = 0; round < 3; round++) {
      const { status, signal, stdout, stderr } = spawnSync(process.execPath, ['--import', 'tsx', file], { cwd: projectRoot(), encoding: 'utf8', timeout: 60_000 });
      expect({ round, status, signal, stderr: stderr.slice(-400) }).toEqual({ round, status: 0, signal: null, stderr: '' });
      expect(stdout).toMatch(/destroyed (ran|refused) (ran|refused)/);
    }
  }, 120_000);

  it('lets the process exit 0 while a thread is inside the encoder\'s native run', () => {
    // Without the gate (workers/native-gate.ts) this child aborts with 134: process.exit stops the
    // thread mid-run, and ONNX Runtime's binding throws a C++ exception nothing catches.
    const script = `
      import { WorkerPool } from ${JSON.stringify(join(projectRoot(), 'src/platform/pool.ts'))};
      const pool = new WorkerPool({ maxThreads: 2, maxQueue: 8, taskTimeoutMs: 60000 });
      await Promise.all([pool.run('embed', { texts: ['warm'] }), pool.run('embed', { texts: ['up'] })]);
      const texts = Array.from({ length: 512 }, (_, i) => 'a long text about an order and its delivery, number ' + i);
      pool.run('embed', { texts }).catch(() => undefined);
      pool.run('embed', { texts }).catch(() => undefined);
      setTimeout(() => { console.log('exiting'); process.exit(0); }, 150);`;
    // A file, not -e: the pool's threads inherit the child's execArgv, and --input-type is refused there.
    const file = join(mkdtempSync(join(tmpdir(), 'lattice-pool-exit-')), 'exit.mts');
    writeFileSync(file, script);
    for (let round = 0; round < 3; round++) {
      const { status, signal, stdout, stderr } = spawnSync(process.execPath, ['--import', 'tsx', file], {
        cwd: projectRoot(),
        encoding: 'utf8',
        timeout: 60_000,
      });
      expect({ round, status, signal, stderr: stderr.slice(-400) }).toEqual({ round, status: 0, signal: null, stderr: '' });
      expect(stdout).toContain('exiting');
    }
  }, 120_000);

  it('runs tasks again after destroy, on a new pool of threads', async () => {
    const p = pool({ maxThreads: 1 });
    await expect(p.run('noop', { value: 1 })).resolves.toEqual({ value: 1 });
    await p.destroy();
    expect(p.size.threads).toBe(0);
    await expect(p.run('noop', { value: 2 })).resolves.toEqual({ value: 2 });
    expect(p.size.threads).toBe(1);
  });

  it('says to build when the worker entry is missing', async () => {
    const p = pool({ filename: '/nonexistent/dist/workers/index.js' });
    await expect(p.run('noop', { value: 1 })).rejects.toThrow(/npm run build/);
    expect(p.size.inFlight).toBe(0);
  });
});
