import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { mapConcurrent, Semaphore, withDeadline } from '../../src/platform/concurrency.js';

describe('mapConcurrent', () => {
  it('keeps input order and never runs more than the limit at once', async () => {
    await fc.assert(
      fc.asyncProperty(fc.array(fc.integer({ min: 0, max: 5 }), { maxLength: 40 }), fc.integer({ min: 1, max: 8 }), async (delays, limit) => {
        let running = 0;
        let peak = 0;
        const result = await mapConcurrent(delays, limit, async (delay, i) => {
          running++;
          peak = Math.max(peak, running);
          await new Promise((resolve) => setTimeout(resolve, delay));
          running--;
          return i * 2;
        });
        expect(result).toEqual(delays.map((_, i) => i * 2));
        expect(peak).toBeLessThanOrEqual(limit);
        if (delays.length >= limit) expect(peak).toBe(limit);
      }),
      { numRuns: 30 },
    );
  });

  it('rejects with the first failure', async () => {
    await expect(mapConcurrent([1, 2, 3], 2, async (x) => (x === 2 ? Promise.reject(new Error('two')) : x))).rejects.toThrow('two');
  });
});

describe('Semaphore', () => {
  it('admits at most its permits at once, in arrival order', async () => {
    const slots = new Semaphore(2);
    let running = 0;
    let peak = 0;
    const started: number[] = [];
    await Promise.all(
      Array.from({ length: 7 }, (_, i) =>
        slots.use(async () => {
          started.push(i);
          running++;
          peak = Math.max(peak, running);
          await new Promise((resolve) => setTimeout(resolve, 5));
          running--;
        }),
      ),
    );
    expect(peak).toBe(2);
    expect(started).toEqual([0, 1, 2, 3, 4, 5, 6]);
  });

  it('releases its permit when the work fails', async () => {
    const slots = new Semaphore(1);
    await expect(slots.use(() => Promise.reject(new Error('boom')))).rejects.toThrow('boom');
    await expect(slots.use(async () => 'next')).resolves.toBe('next');
  });
});

describe('withDeadline', () => {
  const after = <T>(ms: number, value: T) => new Promise<T>((resolve) => setTimeout(() => resolve(value), ms));
  class Late extends Error {}

  it('answers what settles in time, value or error, and never calls late', async () => {
    let called = 0;
    const late = () => (called++, new Late('late'));
    await expect(withDeadline(after(5, 'on time'), 200, late)).resolves.toBe('on time');
    await expect(withDeadline(Promise.reject(new Error('own failure')), 200, late)).rejects.toThrow('own failure');
    expect(called).toBe(0);
  });

  it("rejects with late's error once the deadline passes, without waiting for the promise", async () => {
    const start = Date.now();
    await expect(withDeadline(new Promise(() => {}), 30, () => new Late('too slow'))).rejects.toBeInstanceOf(Late);
    expect(Date.now() - start).toBeLessThan(1000);
  });
});
