// A transaction's opening settings (TransactionOptions.settings): statements such as SET LOCAL run
// before the transaction's own work (on Postgres in the same round trip as its BEGIN), hold for the
// whole transaction, and end with it; a read-only transaction stays read-only with them.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Db } from '../../src/platform/db.js';
import { createTestDatabase, type TestDatabase } from '../helpers/harness.js';

describe('transaction settings', () => {
  let database: TestDatabase;
  let db: Db;
  beforeAll(async () => {
    database = await createTestDatabase();
    db = await database.open();
  });
  afterAll(async () => database?.drop());

  const setting = async (q: Pick<Db, 'query'>, name: string) => (await q.query<{ value: string }>(`SELECT current_setting($1) AS value`, [name])).rows[0]!.value;

  it('hold through every statement of the transaction and end with it', async () => {
    const before = await setting(db, 'work_mem');
    const inside = await db.transaction(
      async (tx) => [await setting(tx, 'work_mem'), await setting(tx, 'enable_sort')],
      { readOnly: true, settings: `SET LOCAL work_mem = '7MB'; SET LOCAL enable_sort = off` },
    );
    expect(inside).toEqual(['7MB', 'off']);
    expect(before).not.toBe('7MB');
    expect(await setting(db, 'work_mem')).toBe(before);
    expect(await setting(db, 'enable_sort')).toBe('on');
  });

  it('keep a read-only transaction read-only', async () => {
    await db.exec(`CREATE TABLE IF NOT EXISTS settings_probe (x int)`);
    await expect(db.transaction((tx) => tx.query(`INSERT INTO settings_probe VALUES (1)`), { readOnly: true, settings: `SET LOCAL work_mem = '7MB'` })).rejects.toThrow(/read-only/);
    expect((await db.query<{ n: number }>(`SELECT count(*)::int AS n FROM settings_probe`)).rows[0]!.n).toBe(0);
  });
});
