import { mkdtemp, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import type { Db } from '../../src/platform/db.js';
import { loadMigrations, migrate, statements } from '../../src/platform/migrations.js';
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

  it('re-keys the six older project tables by (project_id, id) keeping their rows (0013), so ids are unique per project', async () => {
    database = await createTestDatabase();
    const db = await database.open();
    const all = await loadMigrations();
    await migrate(db, all.filter((m) => m.version < 13));
    await db.exec(`
      INSERT INTO projects (id, name) VALUES ('pa', 'a'), ('pb', 'b');
      INSERT INTO memories (id, project_id, content, content_hash) VALUES ('mine', 'pa', 'Likes tea', 'h1');
      INSERT INTO events (id, project_id, event_type, severity, dedupe_key, occurred_at) VALUES ('evt_1', 'pa', 'x', 'info', 'k1', now());
      INSERT INTO typed_attributes (id, project_id, attribute_key, data_type) VALUES ('tat_1', 'pa', 'hr', 'numeric');
      INSERT INTO typed_ingest_batches (id, project_id, observations, row_count) VALUES ('tib_1', 'pa', '[]', 0);
      INSERT INTO alert_rules (id, project_id, name, trigger, notify) VALUES ('alr_1', 'pa', 'r', '{}', '[]');
      INSERT INTO alert_fires (id, project_id, alert_rule_id, dedupe_key) VALUES ('fire_1', 'pa', 'alr_1', 'd');`);
    const count = async () =>
      (await db.query<{ n: string }>(`SELECT (SELECT count(*) FROM memories) + (SELECT count(*) FROM events) + (SELECT count(*) FROM typed_attributes)
        + (SELECT count(*) FROM typed_ingest_batches) + (SELECT count(*) FROM alert_rules) + (SELECT count(*) FROM alert_fires) AS n`)).rows[0]!.n;
    expect(Number(await count())).toBe(6);
    expect((await migrate(db)).applied).toContain('0013_project_keys');
    expect(Number(await count())).toBe(6);
    const keys = await db.query<{ table: string; key: string }>(`
      SELECT c.conrelid::regclass::text AS table, pg_get_constraintdef(c.oid) AS key FROM pg_constraint c
       WHERE c.contype = 'p' AND c.conrelid::regclass::text IN ('memories', 'events', 'typed_attributes', 'typed_ingest_batches', 'alert_rules', 'alert_fires') ORDER BY 1`);
    expect(keys.rows.map((r) => r.key)).toEqual(Array(6).fill('PRIMARY KEY (project_id, id)'));
    // A client's memory id is its project's: another project may use it too.
    await db.query(`INSERT INTO memories (id, project_id, content, content_hash) VALUES ('mine', 'pb', 'Likes coffee', 'h2')`);
    await expect(db.query(`INSERT INTO memories (id, project_id, content, content_hash) VALUES ('mine', 'pa', 'again', 'h3')`)).rejects.toMatchObject({ code: '23505', constraint: 'memories_pkey' });
    // A fire belongs to a rule of its own project, and goes with it.
    await expect(db.query(`INSERT INTO alert_fires (id, project_id, alert_rule_id, dedupe_key) VALUES ('fire_2', 'pb', 'alr_1', 'd')`)).rejects.toMatchObject({ code: '23503' });
    await db.query(`DELETE FROM alert_rules WHERE project_id = 'pa' AND id = 'alr_1'`);
    expect((await db.query('SELECT 1 FROM alert_fires')).rows).toEqual([]);
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

  it("runs a file's statements one by one, never cutting inside a string, a quoted name, a comment or a function body", () => {
    const sql = [
      '-- a note; with a semicolon',
      "CREATE TABLE \"odd;name\" (id text DEFAULT 'a;b');",
      '/* a block; comment */ CREATE FUNCTION f() RETURNS trigger LANGUAGE plpgsql AS $body$',
      'BEGIN',
      "  INSERT INTO t VALUES ('x;y'); RETURN NULL;",
      'END $body$;',
      'DO $$ BEGIN PERFORM 1; END $$;',
      'SELECT 1',
      '-- trailing; comment only',
    ].join('\n');
    const parts = statements(sql);
    expect(parts).toHaveLength(4);
    expect(parts[0]).toContain(`"odd;name" (id text DEFAULT 'a;b')`);
    expect(parts[1]).toMatch(/^\/\* a block; comment \*\/ CREATE FUNCTION f\(\)[\s\S]*RETURN NULL;\nEND \$body\$$/);
    expect(parts[2]).toBe('DO $$ BEGIN PERFORM 1; END $$');
    expect(parts[3]).toMatch(/^SELECT 1\n-- trailing/);
  });

  it('refuses a file whose name is not NNNN_name.sql', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'lattice-migrations-'));
    await writeFile(join(dir, '1_oops.sql'), 'SELECT 1');
    await expect(loadMigrations(dir)).rejects.toThrow(/NNNN_name\.sql/);
  });
});
