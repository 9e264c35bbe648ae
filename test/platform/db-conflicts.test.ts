// Write conflicts: a transaction (or a lone statement) that Postgres aborts as a deadlock victim
// or a serialization failure is run again with a jittered pause, so callers never see one; one
// that keeps losing answers 503 WRITE_CONFLICT with Retry-After. The pools keep reads apart from
// write transactions and count what callers waited for a connection.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { asAppError, isWriteConflict, RETRY_ATTEMPTS, retryingConflicts, type Db } from '../../src/platform/db.js';
import { WriteConflictError } from '../../src/platform/errors.js';
import { backend, createTestDatabase, type TestDatabase } from '../helpers/harness.js';

const deadlock = () => Object.assign(new Error('deadlock detected'), { code: '40P01' });

describe('retryingConflicts', () => {
  it('runs again after a deadlock or a serialization failure, and answers the run that succeeded', async () => {
    let runs = 0;
    const answer = await retryingConflicts(async () => {
      runs++;
      if (runs === 1) throw deadlock();
      if (runs === 2) throw Object.assign(new Error('could not serialize access'), { code: '40001' });
      return 'done';
    });
    expect({ answer, runs }).toEqual({ answer: 'done', runs: 3 });
  });

  it(`gives up after ${RETRY_ATTEMPTS} runs with the last conflict, which answers 503 WRITE_CONFLICT with Retry-After`, async () => {
    let runs = 0;
    const failure = await retryingConflicts(async () => {
      runs++;
      throw deadlock();
    }).catch((error: unknown) => error);
    expect(runs).toBe(RETRY_ATTEMPTS);
    expect(isWriteConflict(failure)).toBe(true);
    const mapped = asAppError(failure);
    expect(mapped).toBeInstanceOf(WriteConflictError);
    expect(mapped).toMatchObject({ code: 'WRITE_CONFLICT', statusCode: 503, retryAfterSeconds: 1 });
  });

  it('never runs again after any other failure', async () => {
    let runs = 0;
    const unique = Object.assign(new Error('duplicate key'), { code: '23505' });
    await expect(
      retryingConflicts(async () => {
        runs++;
        throw unique;
      }),
    ).rejects.toBe(unique);
    expect(runs).toBe(1);
  });
});

describe.skipIf(backend === 'pglite')('Postgres transactions that deadlock', () => {
  let database: TestDatabase;
  let db: Db;
  beforeAll(async () => {
    database = await createTestDatabase({ max: 4 });
    db = await database.open();
    await db.exec(`CREATE TABLE pair (id int PRIMARY KEY, n int NOT NULL); INSERT INTO pair VALUES (1, 0), (2, 0);`);
  });
  afterAll(() => database?.drop());

  it('both commit when two transactions lock two rows in opposite orders: the victim is run again', async () => {
    // Each first run takes its first row, then waits until the other has taken its own: the second
    // locks then cross, and Postgres aborts one. Runs after the first do not wait.
    const firstRuns = new Map<string, number>();
    const holding = { a: false, b: false };
    const bothHold = () => new Promise<void>((resolve, reject) => {
      let polls = 0;
      const check = () => (holding.a && holding.b ? resolve() : ++polls > 500 ? reject(new Error('the other transaction never took its row')) : setTimeout(check, 10));
      check();
    });
    const cross = (name: 'a' | 'b', first: number, second: number) =>
      db.transaction(async (tx) => {
        const run = (firstRuns.get(name) ?? 0) + 1;
        firstRuns.set(name, run);
        await tx.query('UPDATE pair SET n = n + 1 WHERE id = $1', [first]);
        if (run === 1) {
          holding[name] = true;
          await bothHold();
        }
        await tx.query('UPDATE pair SET n = n + 1 WHERE id = $1', [second]);
        return run;
      });
    const runs = await Promise.all([cross('a', 1, 2), cross('b', 2, 1)]);
    // One of them ran twice; each committed once, so each row was incremented twice in all.
    expect([...runs].sort()).toEqual([1, 2]);
    const { rows } = await db.query<{ id: number; n: number }>('SELECT id, n FROM pair ORDER BY id');
    expect(rows).toEqual([{ id: 1, n: 2 }, { id: 2, n: 2 }]);
    expect(db.poolStats!().transactions!.conflicts).toBe(1);
  });

  it('reports each pool, with what callers waited for a connection', async () => {
    await db.transaction(async (tx) => tx.query('SELECT 1'));
    await db.transaction(async (tx) => tx.query('SELECT 1'), { readOnly: true });
    await db.query('SELECT 1');
    const stats = db.poolStats!();
    expect(Object.keys(stats).sort()).toEqual(['statements', 'transactions']);
    expect(stats.transactions!.max).toBe(4);
    expect(stats.transactions!.acquired).toBeGreaterThanOrEqual(1);
    expect(stats.statements!.acquired).toBeGreaterThanOrEqual(2);
    for (const pool of Object.values(stats)) expect(pool.maxWaitMs).toBeGreaterThanOrEqual(pool.meanWaitMs);
  });

  it('answers reads while write transactions hold every connection of theirs', async () => {
    let release!: () => void;
    const held = new Promise<void>((resolve) => (release = resolve));
    let opened = 0;
    const writers = Array.from({ length: 4 }, () =>
      db.transaction(async (tx) => {
        await tx.query('SELECT 1');
        opened++;
        await held;
      }),
    );
    try {
      for (let polls = 0; opened < 4; polls++) {
        if (polls > 500) throw new Error('the writers never all opened');
        await new Promise((resolve) => setTimeout(resolve, 10));
      }
      expect(db.poolStats!().transactions!.idle).toBe(0);
      expect((await db.query<{ one: number }>('SELECT 1 AS one')).rows).toEqual([{ one: 1 }]);
      expect(await db.transaction(async (tx) => (await tx.query<{ n: number }>('SELECT count(*)::int AS n FROM pair')).rows[0]!.n, { readOnly: true })).toBe(2);
    } finally {
      release();
      await Promise.all(writers);
    }
  });

  it('runs a read-only transaction READ ONLY: a write in it is refused', async () => {
    await expect(db.transaction((tx) => tx.query('UPDATE pair SET n = 0'), { readOnly: true })).rejects.toMatchObject({ code: '25006' });
  });
});
