// The module contract and its assembly: composition in dependency order, the job registry's
// refusals, schedules, start-up work, and bound apis. Pure: no database, an in-process queue.
import { afterEach, describe, expect, it } from 'vitest';
import { createLogger } from '../../src/platform/logger.js';
import { bindMethods, Composition, jobRunner, mergeJobs, mergeSchedules, type AnyModule, type DomainModule } from '../../src/platform/module.js';
import type { JobHandlers, JobMapBase } from '../../src/platform/queue.js';
import { InProcessQueue } from '../../src/platform/queue-inprocess.js';

const log = createLogger('silent');
const noop = async () => null;

type LowJobs = { 'low.tick': { payload: { n: number }; result: number } };

function low(): DomainModule<{ double(n: number): number }, LowJobs> {
  return {
    name: 'low',
    api: { double: (n) => n * 2 },
    jobs: { 'low.tick': async ({ n }) => n + 1 },
    schedules: [{ id: 'low.every-second', job: 'low.tick', payload: { n: 1 }, everyMs: 1000 }],
  };
}

const module = (name: string, extra: Partial<AnyModule> = {}): AnyModule => ({ name, api: {}, ...extra });

describe('Composition', () => {
  it('builds modules in order, each from the apis of those before it, and types the result by name', async () => {
    const built: string[] = [];
    const { apis, modules } = await Composition.start()
      .with('low', () => {
        built.push('low');
        return low();
      })
      .with('high', async ({ low: lower }) => {
        built.push('high');
        return { name: 'high', api: { quadruple: (n: number) => lower.double(lower.double(n)) } };
      })
      .build();
    expect(built).toEqual(['low', 'high']);
    expect(modules.map((m) => m.name)).toEqual(['low', 'high']);
    expect(apis.high.quadruple(3)).toBe(12);
  });

  it('refuses a module whose name is not the one it was composed as', async () => {
    await expect(
      Composition.start()
        .with('memory', () => module('memroy'))
        .build(),
    ).rejects.toThrow(/module memroy was composed as memory/);
  });

  it('refuses a domain composed twice', async () => {
    await expect(
      Composition.start()
        .with('low', () => module('low'))
        .with('low', () => module('low'))
        .build(),
    ).rejects.toThrow(/module low is composed twice/);
  });
});

describe('the job registry', () => {
  it('merges every module\'s handlers', () => {
    const merged = mergeJobs([low() as unknown as AnyModule, module('other', { jobs: { 'other.run': noop } as JobHandlers<JobMapBase> })]);
    expect(Object.keys(merged).sort()).toEqual(['low.tick', 'other.run']);
  });

  it('refuses a job without its domain\'s prefix', () => {
    expect(() => mergeJobs([module('memory', { jobs: { 'embeddings.drain': noop } as JobHandlers<JobMapBase> })])).toThrow(/embeddings\.drain.*memory\.<job>/);
  });

  it('refuses a job name with another separator', () => {
    expect(() => mergeJobs([module('memory', { jobs: { 'memory:drain': noop } as JobHandlers<JobMapBase> })])).toThrow(/memory:drain/);
  });

  it('refuses the same job name from two modules', () => {
    const jobs = { 'low.tick': noop } as JobHandlers<JobMapBase>;
    expect(() => mergeJobs([module('low', { jobs }), module('low', { jobs })])).toThrow(/job low\.tick has two handlers/);
  });

  it('refuses a job listed without a handler', () => {
    expect(() => mergeJobs([module('low', { jobs: { 'low.tick': undefined } as unknown as JobHandlers<JobMapBase> })])).toThrow(/has no handler/);
  });

  it('refuses a schedule outside its domain, for a job its module does not handle, or declared twice', () => {
    const jobs = { 'low.tick': noop } as JobHandlers<JobMapBase>;
    const schedule = (id: string, job = 'low.tick') => ({ id, job, payload: {}, everyMs: 1000 });
    expect(() => mergeSchedules([module('low', { jobs, schedules: [schedule('nightly')] })])).toThrow(/schedule nightly of module low/);
    expect(() => mergeSchedules([module('low', { jobs, schedules: [schedule('low.x', 'low.tock')] })])).toThrow(/runs low\.tock, which module low does not handle/);
    expect(() => mergeSchedules([module('low', { jobs, schedules: [schedule('low.x'), schedule('low.x')] })])).toThrow(/low\.x is declared twice/);
    expect(mergeSchedules([module('low', { jobs, schedules: [schedule('low.x')] })]).map((s) => s.id)).toEqual(['low.x']);
  });
});

describe('jobRunner', () => {
  let queue: InProcessQueue<JobMapBase> | undefined;
  afterEach(() => queue?.close());

  it('fails at assembly, not at the first job, when the registry is bad', () => {
    queue = new InProcessQueue<JobMapBase>({ concurrency: 1, defaultTimeoutMs: 60_000, log });
    expect(() => jobRunner(queue!, [module('low', { jobs: { 'high.tick': noop } as JobHandlers<JobMapBase> })], log)).toThrow(/high\.tick/);
  });

  it('starts the consumers, registers the schedules, then runs each module\'s start-up work in order; a failing one is logged, not fatal', async () => {
    queue = new InProcessQueue<JobMapBase>({ concurrency: 1, defaultTimeoutMs: 60_000, log });
    const started: string[] = [];
    const ticks: number[] = [];
    const ticking: AnyModule = {
      name: 'low',
      api: {},
      jobs: { 'low.tick': async (payload) => ticks.push((payload as { n: number }).n) } as JobHandlers<JobMapBase>,
      schedules: [{ id: 'low.fast', job: 'low.tick', payload: { n: 7 }, everyMs: 50 }],
      onStart: async () => {
        started.push('low');
        // Consumers run by now: a job run here completes.
        await queue!.run('low.tick', { n: 1 });
      },
    };
    const failing = module('mid', { onStart: async () => Promise.reject(new Error('sweep failed')) });
    const last = module('high', { onStart: async () => void started.push('high') });
    await jobRunner(queue, [ticking, failing, last], log).start();
    expect(started).toEqual(['low', 'high']);
    await expect.poll(() => ticks.filter((n) => n === 7).length, { timeout: 60_000 }).toBeGreaterThanOrEqual(2);
    expect(ticks).toContain(1);
  });
});

describe('bindMethods', () => {
  class Counter {
    private count = 0;
    increment(): number {
      return ++this.count;
    }
    secret(): string {
      return 'internal';
    }
  }

  it('exposes only the named methods, bound to their service', () => {
    const api = bindMethods(new Counter(), ['increment']);
    const { increment } = api;
    expect(increment()).toBe(1);
    expect(api.increment()).toBe(2);
    expect(Object.keys(api)).toEqual(['increment']);
  });

  it('refuses a name that is not a method', () => {
    expect(() => bindMethods({ value: 1 } as { value: number }, ['value'])).toThrow(/value is not a method/);
  });
});
