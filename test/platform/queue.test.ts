import fc from 'fast-check';
import { afterEach, describe, expect, it } from 'vitest';
import { AppError, DependencyUnavailableError, JobTimeoutError, NotFoundError, RemoteAppError } from '../../src/platform/errors.js';
import { createLogger } from '../../src/platform/logger.js';
import { backoffDelay, checkJobId, checkJobName, domainQueue, type JobHandlers, type JobMapBase, type JobQueue } from '../../src/platform/queue.js';
import { BullQueue } from '../../src/platform/queue-bullmq.js';
import { InProcessQueue } from '../../src/platform/queue-inprocess.js';
import { REDIS_URL, uniqueName } from '../helpers/harness.js';

type TestJobs = {
  add: { payload: { a: number; b: number }; result: number };
  'fail-once': { payload: { key: string }; result: number };
  'not-found': { payload: { what: string; projectId?: string }; result: never };
  unavailable: { payload: { what: string }; result: never };
  slow: { payload: { key: string; ms: number; hold?: boolean }; result: string };
  'project-work': { payload: { projectId: string; ms: number; failFirst?: boolean; hold?: string }; result: number };
};

const log = createLogger('silent');
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/**
 * What the handlers saw: runs started and finished per key, results by job id, peak concurrency;
 * and gates, by key, that a held job waits on until the test releases it.
 */
class Recorder {
  readonly started = new Map<string, number>();
  readonly finished = new Map<string, number>();
  readonly results = new Map<string, number>();
  private readonly gates = new Map<string, { opened: Promise<void>; open: () => void }>();
  active = 0;
  peak = 0;
  count(map: Map<string, number>, key: string) {
    map.set(key, (map.get(key) ?? 0) + 1);
  }
  private gate(key: string) {
    let gate = this.gates.get(key);
    if (!gate) {
      let open!: () => void;
      const opened = new Promise<void>((resolve) => (open = resolve));
      gate = { opened, open };
      this.gates.set(key, gate);
    }
    return gate;
  }
  held(key: string): Promise<void> {
    return this.gate(key).opened;
  }
  release(key: string): void {
    this.gate(key).open();
  }
  releaseAll(): void {
    for (const gate of this.gates.values()) gate.open();
  }
}

function handlers(rec: Recorder): JobHandlers<TestJobs> {
  return {
    add: async ({ a, b }, { jobId }) => {
      rec.results.set(jobId, a + b);
      return a + b;
    },
    'fail-once': async ({ key }, { attempt }) => {
      rec.count(rec.started, key);
      if (attempt === 1) throw new Error('transient failure');
      rec.count(rec.finished, key);
      return attempt;
    },
    'not-found': async ({ what }) => {
      rec.count(rec.started, what);
      throw new NotFoundError(`no ${what} here`, { what });
    },
    unavailable: async ({ what }) => {
      rec.count(rec.started, what);
      throw new DependencyUnavailableError(`${what} is down`);
    },
    'project-work': async ({ ms, failFirst, hold }, { attempt }) => {
      if (failFirst && attempt === 1) throw new Error('transient failure');
      if (hold) await rec.held(hold);
      await sleep(ms);
      return attempt;
    },
    slow: async ({ key, ms, hold }) => {
      rec.count(rec.started, key);
      rec.peak = Math.max(rec.peak, ++rec.active);
      if (hold) await rec.held(key);
      await sleep(ms);
      rec.active--;
      rec.count(rec.finished, key);
      return key;
    },
  };
}

const implementations = [
  {
    kind: 'in-process',
    skip: false,
    create: (concurrency: number): JobQueue<TestJobs> => new InProcessQueue<TestJobs>({ concurrency, defaultTimeoutMs: 60_000, log }),
  },
  {
    kind: 'bullmq',
    skip: !REDIS_URL,
    create: (concurrency: number): JobQueue<TestJobs> =>
      new BullQueue<TestJobs>({ redisUrl: REDIS_URL!, prefix: uniqueName('qt'), concurrency, defaultTimeoutMs: 60_000, log }),
  },
] as const;

for (const impl of implementations) {
  describe.skipIf(impl.skip)(`the ${impl.kind} queue`, () => {
    const open: JobQueue<TestJobs>[] = [];
    const recorders: Recorder[] = [];
    afterEach(async () => {
      // A test that failed while a job was held must not leave close() waiting for it.
      for (const rec of recorders.splice(0)) rec.releaseAll();
      await Promise.all(open.splice(0).map((queue) => queue.close()));
    });

    async function start(concurrency = 4): Promise<{ queue: JobQueue<TestJobs>; rec: Recorder }> {
      const queue = impl.create(concurrency);
      open.push(queue);
      const rec = new Recorder();
      recorders.push(rec);
      await queue.startConsumers(handlers(rec));
      return { queue, rec };
    }

    it('reports its kind and answers ping', async () => {
      const { queue } = await start();
      expect(queue.kind).toBe(impl.kind);
      await expect(queue.ping()).resolves.toBeUndefined();
    });

    it('returns the handler\'s result from run', async () => {
      const { queue } = await start();
      await expect(queue.run('add', { a: 2, b: 40 })).resolves.toBe(42);
    });

    it('returns a job id from enqueue and runs that job', async () => {
      const { queue, rec } = await start();
      const id = await queue.enqueue('add', { a: 1, b: 2 });
      expect(id).toEqual(expect.any(String));
      await expect.poll(() => rec.results.get(id), { timeout: 60_000 }).toBe(3);
    });

    it('retries a handler that fails once, and it then succeeds', async () => {
      const { queue, rec } = await start();
      await queue.enqueue('fail-once', { key: 'k' }, { attempts: 3, backoffMs: 10 });
      await expect.poll(() => rec.finished.get('k'), { timeout: 60_000 }).toBe(1);
      expect(rec.started.get('k')).toBe(2);
    });

    it('does not retry a job enqueued with attempts 1', async () => {
      const { queue, rec } = await start();
      await queue.enqueue('fail-once', { key: 'once' }, { attempts: 1, backoffMs: 10 });
      await queue.enqueue('add', { a: 0, b: 0 }, { jobId: uniqueName('after'), delayMs: 300 });
      await expect.poll(() => rec.results.size, { timeout: 60_000 }).toBe(1);
      expect(rec.started.get('once')).toBe(1);
      expect(rec.finished.get('once')).toBeUndefined();
    });

    it.each([
      ['not-found', { code: 'NOT_FOUND', statusCode: 404, params: { what: 'widget' } }],
      ['unavailable', { code: 'SERVICE_UNAVAILABLE', statusCode: 503, retryAfterSeconds: 5 }],
    ] as const)('hands the %s handler\'s AppError to the run caller with its code and status', async (name, expected) => {
      const { queue } = await start();
      const error: unknown = await queue.run(name, { what: 'widget' }).catch((e: unknown) => e);
      expect(error).toBeInstanceOf(AppError);
      expect(error).toMatchObject({ ...expected, message: expect.stringContaining('widget') });
      if (impl.kind === 'bullmq') expect(error).toBeInstanceOf(RemoteAppError);
    });

    it('does not retry a 4xx AppError (a retry cannot help), but retries a 5xx one', async () => {
      const { queue, rec } = await start();
      const project = uniqueName('gone');
      await queue.enqueue('not-found', { what: 'gone', projectId: project }, { attempts: 3, backoffMs: 10 });
      await queue.enqueue('unavailable', { what: 'down' }, { attempts: 3, backoffMs: 10 });
      await expect.poll(() => rec.started.get('down'), { timeout: 60_000 }).toBe(3);
      // The 404 job ran and left the queue: not waiting, running, or delayed for a retry (a job
      // that fails moves from running to its retry's delay at once), so no further run can come.
      await expect.poll(async () => (rec.started.get('gone') ?? 0) > 0 && (await queue.inFlight(project)).jobs.length === 0, { timeout: 60_000, interval: 20 }).toBe(true);
      expect(rec.started.get('gone')).toBe(1);
    });

    it('throws JobTimeoutError from run past its timeout, and the job still completes', async () => {
      const { queue, rec } = await start();
      // Held until the wait has been given up: the job cannot finish within the timeout however
      // slowly the machine runs.
      const error: unknown = await queue.run('slow', { key: 'late', ms: 0, hold: true }, { timeoutMs: 100 }).catch((e: unknown) => e);
      expect(error).toBeInstanceOf(JobTimeoutError);
      expect(error).toMatchObject({ code: 'JOB_TIMEOUT', statusCode: 503 });
      expect(rec.finished.get('late')).toBeUndefined();
      // A wait given up leaves nothing listening for the job (BullMQ's QueueEvents, when there is one).
      const events = (queue as unknown as { events?: { eventNames(): (string | symbol)[] } }).events;
      expect(events?.eventNames().filter((name) => /^(completed|failed):/.test(String(name))) ?? []).toEqual([]);
      rec.release('late');
      await expect.poll(() => rec.finished.get('late'), { timeout: 60_000 }).toBe(1);
    });

    it('fires a schedule with everyMs repeatedly', async () => {
      const { queue, rec } = await start();
      await queue.schedule(uniqueName('tick'), 'slow', { key: 'tick', ms: 0 }, { everyMs: 100 });
      await expect.poll(() => rec.finished.get('tick') ?? 0, { timeout: 60_000, interval: 50 }).toBeGreaterThanOrEqual(3);
    });

    it('replaces a schedule when the same scheduleId is scheduled again', async () => {
      const { queue, rec } = await start();
      const id = uniqueName('resched');
      await queue.schedule(id, 'slow', { key: 'fast', ms: 0 }, { everyMs: 100 });
      await queue.schedule(id, 'slow', { key: 'rare', ms: 0 }, { everyMs: 60_000 });
      // A witness on the same interval, scheduled after: by its fifth run a live 'fast' would have
      // run about as often.
      await queue.schedule(uniqueName('witness'), 'slow', { key: 'witness', ms: 0 }, { everyMs: 100 });
      await expect.poll(() => rec.finished.get('witness') ?? 0, { timeout: 60_000, interval: 50 }).toBeGreaterThanOrEqual(5);
      // The first schedule may have fired once before it was replaced.
      expect(rec.finished.get('fast') ?? 0).toBeLessThanOrEqual(1);
      expect(rec.finished.get('rare') ?? 0).toBeLessThanOrEqual(1);
    });

    it('reports a payload it cannot store with its real cause, not as an outage', async () => {
      const { queue } = await start();
      const payload = { a: 1n, b: 2 } as unknown as { a: number; b: number };
      const error: unknown = await queue.enqueue('add', payload).catch((e: unknown) => e);
      expect(error).toBeInstanceOf(Error);
      expect(error).not.toBeInstanceOf(DependencyUnavailableError);
      expect((error as Error).message).toMatch(/BigInt/);
      await expect(queue.run('add', payload)).rejects.toThrow(/BigInt/);
      // The queue still works.
      await expect(queue.run('add', { a: 2, b: 2 })).resolves.toBe(4);
    });

    it('removes the schedules not kept, and they stop firing', async () => {
      const { queue, rec } = await start();
      const kept = uniqueName('kept');
      const dropped = uniqueName('dropped');
      await queue.schedule(kept, 'slow', { key: 'kept', ms: 0 }, { everyMs: 100 });
      await queue.schedule(dropped, 'slow', { key: 'dropped', ms: 0 }, { everyMs: 100 });
      expect(await queue.unscheduleOthers([kept])).toEqual([dropped]);
      const before = rec.finished.get('dropped') ?? 0;
      await expect.poll(() => rec.finished.get('kept') ?? 0, { timeout: 60_000, interval: 50 }).toBeGreaterThanOrEqual(3);
      // At most one run that was already due when it was removed.
      expect((rec.finished.get('dropped') ?? 0) - before).toBeLessThanOrEqual(1);
      expect(await queue.unscheduleOthers([kept])).toEqual([]);
    });

    it('lists the jobs in flight of one project: running, waiting, delayed and retrying, with their attempt', async () => {
      const { queue, rec } = await start(1);
      // Held until the listing has been checked, however long that takes.
      const running = await queue.enqueue('project-work', { projectId: 'pa', ms: 0, hold: 'running' });
      await expect.poll(async () => (await queue.inFlight('pa')).jobs.map((j) => j.state), { timeout: 60_000, interval: 20 }).toEqual(['active']);
      const waiting = await queue.enqueue('project-work', { projectId: 'pa', ms: 0 });
      await queue.enqueue('project-work', { projectId: 'pb', ms: 0 });
      const delayed = await queue.enqueue('project-work', { projectId: 'pa', ms: 0 }, { delayMs: 60_000 });
      const listed = await queue.inFlight('pa');
      expect(listed.truncated).toBe(false);
      expect(listed.jobs.map((j) => [j.id, j.name, j.state, j.attempt])).toEqual([
        [running, 'project-work', 'active', 1],
        [waiting, 'project-work', 'waiting', 1],
        [delayed, 'project-work', 'delayed', 1],
      ]);
      const [active, queued] = listed.jobs;
      expect(active!.startedAt!.getTime()).toBeGreaterThanOrEqual(active!.enqueuedAt.getTime());
      expect(queued!.startedAt).toBeNull();
      expect(queued!.enqueuedAt.getTime()).toBeGreaterThanOrEqual(active!.enqueuedAt.getTime());
      expect((await queue.inFlight('pb')).jobs.map((j) => j.state)).toEqual(['waiting']);
      expect((await queue.inFlight('nobody')).jobs).toEqual([]);

      // The scan stops at its cap (across projects): what lies beyond is not read, and it says so.
      const capped = await queue.inFlight('pa', 2);
      expect(capped.truncated).toBe(true);
      expect(capped.jobs.map((j) => j.id)).toEqual([running, waiting]);

      // Finished jobs leave the listing; one that failed waits out its backoff as delayed, on its second try.
      rec.release('running');
      const retrying = await queue.enqueue('project-work', { projectId: 'pc', ms: 0, failFirst: true }, { attempts: 2, backoffMs: 60_000 });
      await expect.poll(async () => (await queue.inFlight('pa')).jobs.map((j) => j.id), { timeout: 60_000, interval: 50 }).toEqual([delayed]);
      await expect.poll(async () => (await queue.inFlight('pc')).jobs.map((j) => [j.id, j.state, j.attempt]), { timeout: 60_000, interval: 50 }).toEqual([[retrying, 'delayed', 2]]);
    });

    it('runs a job enqueued twice with the same jobId once', async () => {
      // One job at a time, in order: a second copy would run before the marker enqueued after it.
      const { queue, rec } = await start(1);
      const jobId = uniqueName('dedupe');
      const first = await queue.enqueue('slow', { key: jobId, ms: 300 }, { jobId });
      const second = await queue.enqueue('slow', { key: jobId, ms: 300 }, { jobId });
      expect(second).toBe(first);
      const marker = await queue.enqueue('add', { a: 1, b: 1 });
      await expect.poll(() => rec.results.get(marker), { timeout: 60_000 }).toBe(2);
      expect(rec.finished.get(jobId)).toBe(1);
      expect(rec.started.get(jobId)).toBe(1);
    });
  });
}

describe('the in-process queue\'s concurrency', () => {
  let queue: InProcessQueue<TestJobs> | undefined;
  afterEach(() => queue?.close());

  it('never runs more than `concurrency` handlers at once', async () => {
    queue = new InProcessQueue<TestJobs>({ concurrency: 2, defaultTimeoutMs: 60_000, log });
    const rec = new Recorder();
    await queue.startConsumers(handlers(rec));
    const runs = Array.from({ length: 8 }, (_, i) => queue!.run('slow', { key: `c${i}`, ms: 30 }));
    await Promise.all([...runs, ...Array.from({ length: 4 }, (_, i) => queue!.enqueue('slow', { key: `e${i}`, ms: 30 }))]);
    await queue.whenIdle();
    expect([...rec.finished.values()].reduce((a, b) => a + b, 0)).toBe(12);
    expect(rec.peak).toBe(2);
  });

  it('holds jobs until consumers start', async () => {
    queue = new InProcessQueue<TestJobs>({ concurrency: 2, defaultTimeoutMs: 60_000, log });
    const rec = new Recorder();
    let settled = false;
    const result = queue.run('project-work', { projectId: 'held', ms: 0 }, { timeoutMs: 120_000 }).finally(() => (settled = true));
    // The queue's own timer moves a delayed job to waiting: once it has, the queue has had its
    // turn, and both jobs still wait for a consumer.
    await queue.enqueue('project-work', { projectId: 'held', ms: 0 }, { delayMs: 50 });
    await expect.poll(async () => (await queue!.inFlight('held')).jobs.map((j) => j.state), { timeout: 60_000, interval: 20 }).toEqual(['waiting', 'waiting']);
    expect(settled).toBe(false);
    await queue.startConsumers(handlers(rec));
    await expect(result).resolves.toBe(1);
    await queue.whenIdle();
    expect(await queue.inFlight('held')).toEqual({ jobs: [], truncated: false });
  });
});

describe('backoffDelay', () => {
  it('stays within [ceiling/2, ceiling], ceiling = min(cap, base * 2^(attempt-1))', () => {
    fc.assert(
      fc.property(
        fc.integer({ min: 1, max: 40 }),
        fc.integer({ min: 1, max: 100_000 }),
        fc.integer({ min: 1, max: 1_000_000 }),
        fc.double({ min: 0, max: 1, maxExcluded: true, noNaN: true }),
        (attempt, base, cap, r) => {
          const ceiling = Math.min(cap, base * 2 ** (attempt - 1));
          const delay = backoffDelay(attempt, base, cap, () => r);
          expect(delay).toBeGreaterThanOrEqual(Math.floor(ceiling / 2));
          expect(delay).toBeLessThanOrEqual(Math.ceil(ceiling));
          expect(Number.isInteger(delay)).toBe(true);
        },
      ),
    );
  });

  it('doubles per attempt until the cap', () => {
    const top = () => 1 - Number.EPSILON;
    expect([1, 2, 3, 4, 5, 6].map((attempt) => backoffDelay(attempt, 100, 2000, top))).toEqual([100, 200, 400, 800, 1600, 2000]);
    expect(backoffDelay(3, 100, 2000, () => 0)).toBe(200);
  });
});

describe('job names and ids', () => {
  it('accepts <domain>.<job> names of the domain, and refuses others, naming them', () => {
    expect(() => checkJobName('memory', 'memory.embed-drain')).not.toThrow();
    for (const bad of ['embeddings.drain', 'memory', 'memory.', 'memory.Embed', 'memory.embed.drain', 'memory:embed', 'memoryx.embed']) {
      expect(() => checkJobName('memory', bad), bad).toThrow(/is not named memory\.<job>/);
    }
  });

  it('accepts <job>.<key> ids with dots as the only separator, and refuses colons or another job\'s prefix', () => {
    expect(() => checkJobId('memory.embed-drain', 'memory.embed-drain.proj_1.1763900000')).not.toThrow();
    expect(() => checkJobId('alerts.deliver', 'alerts.deliver.fire_01ABC.0.2')).not.toThrow();
    for (const bad of ['embed:proj:1', 'memory.embed-drain', 'memory.embed-drain.', 'memory.embed-drain:p:1', 'memory.dedup.p', 'memory.embed-drain.a b', '12345']) {
      expect(() => checkJobId('memory.embed-drain', bad), bad).toThrow(/is not memory\.embed-drain\.<key>/);
    }
  });
});

describe('a domain\'s view of the queue', () => {
  type Jobs = { 'demo.add': { payload: { a: number; b: number }; result: number } };
  let queue: InProcessQueue<JobMapBase> | undefined;
  afterEach(() => queue?.close());

  async function started(): Promise<InProcessQueue<JobMapBase>> {
    queue = new InProcessQueue<JobMapBase>({ concurrency: 2, defaultTimeoutMs: 60_000, log });
    const add: JobHandlers<Jobs> = { 'demo.add': async ({ a, b }) => a + b };
    await queue.startConsumers(add as unknown as JobHandlers<JobMapBase>);
    return queue;
  }

  it('runs and enqueues the domain\'s own jobs', async () => {
    const view = domainQueue<Jobs>(await started(), 'demo');
    await expect(view.run('demo.add', { a: 1, b: 2 })).resolves.toBe(3);
    await expect(view.enqueue('demo.add', { a: 1, b: 2 }, { jobId: 'demo.add.k1' })).resolves.toBe('demo.add.k1');
  });

  it('refuses another domain\'s job and a malformed id before anything is queued', async () => {
    const view = domainQueue<Jobs>(await started(), 'other');
    await expect(async () => view.enqueue('demo.add', { a: 1, b: 2 })).rejects.toThrow(/is not named other\.<job>/);
    const own = domainQueue<Jobs>(queue!, 'demo');
    await expect(async () => own.enqueue('demo.add', { a: 1, b: 2 }, { jobId: 'demo:add:1' })).rejects.toThrow(/is not demo\.add\.<key>/);
  });
});
