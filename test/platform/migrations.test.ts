import { mkdtemp, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import type { Db } from '../../src/platform/db.js';
import { loadMigrations, migrate } from '../../src/platform/migrations.js';
import { backend, createTestDatabase, type TestDatabase } from '../helpers/harness.js';

describe(`migrations on ${backend}`, () => {
  let database: TestDatabase | undefined;
  afterEach(async () => {
    await database?.drop();
    database = undefined;
  });

  it('applies every file once, in order, and enables pgvector', async () => {
    database = await createTestDatabase();
    const db = await database.open();
    const files = await loadMigrations();
    const first = await migrate(db);
    expect(first.applied).toEqual(files.map((m) => `${String(m.version).padStart(4, '0')}_${m.name}`));
    const versions = (await db.query<{ version: number }>('SELECT version FROM schema_migrations ORDER BY version')).rows.map((r) => r.version);
    expect(versions).toEqual(files.map((m) => m.version));
    const vector = await db.query<{ d: number }>(`SELECT '[1,0]'::vector <=> '[0,1]'::vector AS d`);
    expect(vector.rows[0]!.d).toBeCloseTo(1);
  });

  it('is idempotent: a second run applies nothing and changes nothing', async () => {
    database = await createTestDatabase();
    const db = await database.open();
    await migrate(db);
    await db.query(`INSERT INTO projects (id, name) VALUES ('kept', 'kept')`);
    const second = await migrate(db);
    expect(second.applied).toEqual([]);
    expect((await db.query('SELECT id FROM projects')).rows).toEqual([{ id: 'kept' }]);
  });

  it('applies each migration exactly once when several runners start at once', async () => {
    database = await createTestDatabase();
    // On Postgres each runner has its own connection pool, as separate processes would.
    const dbs: Db[] = await Promise.all(Array.from({ length: 4 }, () => database!.open()));
    const results = await Promise.all(dbs.map((db) => migrate(db)));
    const files = await loadMigrations();
    expect(results.flatMap((r) => r.applied)).toHaveLength(files.length);
    const rows = (await dbs[0]!.query<{ version: number; n: number }>('SELECT version, count(*)::int AS n FROM schema_migrations GROUP BY version')).rows;
    expect(rows).toHaveLength(files.length);
    expect(rows.every((r) => r.n === 1)).toBe(true);
  });

  it('rolls a failing migration back whole and records nothing for it', async () => {
    database = await createTestDatabase();
    const db = await database.open();
    const files = await loadMigrations();
    const broken = { version: 9999, name: 'broken', sql: 'CREATE TABLE half_done (id int); SELECT no_such_function();' };
    await expect(migrate(db, [...files, broken])).rejects.toThrow();
    const exists = await db.query(`SELECT 1 FROM pg_tables WHERE tablename = 'half_done'`);
    expect(exists.rows).toHaveLength(0);
    const versions = (await db.query<{ version: number }>('SELECT version FROM schema_migrations')).rows.map((r) => r.version);
    expect(versions).not.toContain(9999);
    expect(versions).toHaveLength(files.length);
  });

  it('refuses a file whose name is not NNNN_name.sql', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'lattice-migrations-'));
    await writeFile(join(dir, '1_oops.sql'), 'SELECT 1');
    await expect(loadMigrations(dir)).rejects.toThrow(/NNNN_name\.sql/);
  });
});
