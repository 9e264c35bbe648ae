import { createHash } from 'node:crypto';
import type { Db } from './db.js';

// Maps over items with at most `limit` calls in flight, keeping the input order in the result.
export async function mapConcurrent<T, R>(items: readonly T[], limit: number, fn: (item: T, index: number) => Promise<R>): Promise<R[]> {
  const results = new Array<R>(items.length);
  let next = 0;
  const lanes = Array.from({ length: Math.max(1, Math.min(limit, items.length)) }, async () => {
    while (next < items.length) {
      const index = next++;
      results[index] = await fn(items[index]!, index);
    }
  });
  await Promise.all(lanes);
  return results;
}

/** A counting semaphore: `use` waits for one of `permits` slots, first come first served. */
export class Semaphore {
  private readonly waiting: (() => void)[] = [];

  constructor(private permits: number) {}

  async use<T>(fn: () => Promise<T>): Promise<T> {
    if (this.permits > 0) this.permits--;
    else await new Promise<void>((resolve) => this.waiting.push(resolve));
    try {
      return await fn();
    } finally {
      const next = this.waiting.shift();
      if (next) next();
      else this.permits++;
    }
  }
}

/** `promise`, or a rejection with `late()` once `ms` have passed without it settling. */
export async function withDeadline<T>(promise: Promise<T>, ms: number, late: () => Error): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const deadline = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(late()), ms);
  });
  try {
    return await Promise.race([promise, deadline]);
  } finally {
    clearTimeout(timer);
  }
}

/**
 * Runs work one key at a time: in this process by a chain per key (no connection held while
 * waiting), and across processes, when the database is Postgres, by a session advisory lock on a
 * 64-bit hash of the namespace and key. A lock holds a pooled connection while the work uses
 * others, so holders are capped (`maxHolders`, under half the pool): the work always finds a
 * connection, and waiting for a holder's slot never holds one.
 */
export class KeyedLock {
  private readonly tails = new Map<string, Promise<void>>();
  private readonly holders: Semaphore;

  constructor(
    private readonly db: Pick<Db, 'kind' | 'withAdvisoryLock'>,
    private readonly namespace: string,
    maxHolders = 4,
  ) {
    this.holders = new Semaphore(maxHolders);
  }

  async run<T>(key: string, fn: () => Promise<T>): Promise<T> {
    const previous = this.tails.get(key) ?? Promise.resolve();
    let release!: () => void;
    const tail = previous.then(() => new Promise<void>((resolve) => (release = resolve)));
    this.tails.set(key, tail);
    await previous;
    try {
      // PGlite is one process (its lock file keeps others out): the chain is the whole lock.
      if (this.db.kind === 'pglite') return await fn();
      return await this.holders.use(() => this.db.withAdvisoryLock(advisoryKey(this.namespace, key), () => fn()));
    } finally {
      release();
      if (this.tails.get(key) === tail) this.tails.delete(key);
    }
  }
}

/** A signed 64-bit advisory-lock key from the first 8 bytes of SHA-256 of the namespace and key. */
export function advisoryKey(namespace: string, key: string): bigint {
  return createHash('sha256').update(namespace).update('\0').update(key).digest().readBigInt64BE(0);
}
