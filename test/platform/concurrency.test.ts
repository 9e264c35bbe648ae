import fc from 'fast-check';
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it, vi } from 'vitest';
import { advisoryKey, KeyedLock, mapConcurrent, Semaphore, withDeadline } from '../../src/platform/concurrency.js';
import type { Db } from '../../src/platform/db.js';
import { backend, createTestDatabase, type TestDatabase } from '../helpers/harness.js';

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
  // On a clock of the test's own: the deadline's timer fires when the test moves the clock, not when
  // a loaded machine gets round to it.
  beforeEach(() => {
    vi.useFakeTimers();
  });
  afterEach(() => {
    vi.useRealTimers();
  });
  const after = <T>(ms: number, value: T) => new Promise<T>((resolve) => setTimeout(() => resolve(value), ms));
  class Late extends Error {}

  it('answers what settles in time, value or error, and never calls late', async () => {
    let called = 0;
    const late = () => (called++, new Late('late'));
    const onTime = withDeadline(after(199, 'on time'), 200, late);
    await vi.advanceTimersByTimeAsync(199);
    await expect(onTime).resolves.toBe('on time');
    await expect(withDeadline(Promise.reject(new Error('own failure')), 200, late)).rejects.toThrow('own failure');
    await vi.advanceTimersByTimeAsync(1_000);
    expect(called).toBe(0);
  });

  it("rejects with late's error once the deadline passes, without waiting for the promise", async () => {
    let outcome: unknown;
    void withDeadline(new Promise(() => {}), 30, () => new Late('too slow')).catch((error: unknown) => (outcome = error));
    await vi.advanceTimersByTimeAsync(29);
    expect(outcome).toBeUndefined();
    await vi.advanceTimersByTimeAsync(1);
    expect(outcome).toBeInstanceOf(Late);
  });
});

describe('KeyedLock', () => {
  let database: TestDatabase;
  beforeAll(async () => {
    database = await createTestDatabase();
  });
  afterAll(async () => {
    await database.drop();
  });
  const open = (): Promise<Db> => database.open();

  /** Runs `n` tasks under `lockOf(i)` on key `keyOf(i)`; answers the most that were inside at once, per key. */
  async function peakPerKey(n: number, lockOf: (i: number) => KeyedLock, keyOf: (i: number) => string, work: () => Promise<void>) {
    const inside = new Map<string, number>();
    const peaks = new Map<string, number>();
    await Promise.all(
      Array.from({ length: n }, (_, i) =>
        lockOf(i).run(keyOf(i), async () => {
          const key = keyOf(i);
          inside.set(key, (inside.get(key) ?? 0) + 1);
          peaks.set(key, Math.max(peaks.get(key) ?? 0, inside.get(key)!));
          await work();
          inside.set(key, inside.get(key)! - 1);
        }),
      ),
    );
    return peaks;
  }

  it('runs one task per key at a time, answers what the task answers, and lets other keys run alongside', async () => {
    const lock = new KeyedLock(await open(), 'test.same-process');
    const peaks = await peakPerKey(30, () => lock, (i) => `key-${i % 3}`, () => new Promise((resolve) => setTimeout(resolve, 5)));
    expect([...peaks.values()]).toEqual([1, 1, 1]);
    await expect(lock.run('key-0', async () => 42)).resolves.toBe(42);
    await expect(lock.run('key-0', async () => Promise.reject(new Error('boom')))).rejects.toThrow('boom');
    // A failed task releases the key.
    await expect(lock.run('key-0', async () => 'after')).resolves.toBe('after');
  });

  it.skipIf(backend !== 'pg')('on Postgres, serialises one key across two pools (two processes) by the advisory lock', async () => {
    const a = new KeyedLock(await open(), 'test.cross-process');
    const b = new KeyedLock(await open(), 'test.cross-process');
    const peaks = await peakPerKey(20, (i) => (i % 2 === 0 ? a : b), () => 'shared', () => new Promise((resolve) => setTimeout(resolve, 10)));
    expect(peaks.get('shared')).toBe(1);
  });

  it.skipIf(backend !== 'pg')('on Postgres, many keys at once never starve the pool: holders leave connections for the work', async () => {
    const db = await open(); // the harness pool: 5 connections
    const lock = new KeyedLock(db, 'test.many-keys');
    let queries = 0;
    await peakPerKey(20, () => lock, (i) => `subject-${i}`, async () => {
      for (let q = 0; q < 3; q++) {
        const { rows } = await db.query<{ one: number }>('SELECT 1 AS one');
        queries += rows[0]!.one;
      }
    });
    expect(queries).toBe(60);
  });

  it('hashes namespace and key to a stable signed 64-bit key', () => {
    expect(advisoryKey('memory.observe', 'p\0project\0user\0u1')).toBe(advisoryKey('memory.observe', 'p\0project\0user\0u1'));
    expect(advisoryKey('memory.observe', 'a')).not.toBe(advisoryKey('memory.observe', 'b'));
    expect(advisoryKey('x', 'ab')).not.toBe(advisoryKey('xa', 'b'));
    fc.assert(fc.property(fc.string(), fc.string(), (ns, key) => {
      const k = advisoryKey(ns, key);
      return k >= -(2n ** 63n) && k < 2n ** 63n;
    }));
  });
});
