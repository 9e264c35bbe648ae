// Forward-only migrations: numbered SQL files in migrations/, each applied in its own transaction
// and recorded in schema_migrations, all under one advisory lock so that two processes booting at
// once apply each file exactly once. On a Citus deployment the tables they create are distributed.
import { readdir, readFile } from 'node:fs/promises';
import { postgreSplitterOptions, splitQuery } from 'dbgate-query-splitter';
import { join } from 'node:path';
import { citusInstalled, distributeNew } from './citus.js';
import type { Db } from './db.js';
import { projectRoot } from './project-root.js';

// Any constant shared by every Lattice process; "lattice1" in ASCII.
const MIGRATION_LOCK = 0x6c61747469636531n;
const FILE_NAME = /^(\d{4})_([a-z0-9_]+)\.sql$/;

export interface Migration {
  version: number;
  name: string;
  sql: string;
}

export async function loadMigrations(dir = join(projectRoot(), 'migrations')): Promise<Migration[]> {
  const files = (await readdir(dir)).filter((f) => f.endsWith('.sql')).sort();
  const migrations: Migration[] = [];
  for (const file of files) {
    const match = FILE_NAME.exec(file);
    if (!match) throw new Error(`migration file ${file} does not match NNNN_name.sql`);
    const version = Number(match[1]);
    if (migrations.some((m) => m.version === version)) throw new Error(`two migrations numbered ${version}`);
    migrations.push({ version, name: match[2]!, sql: await readFile(join(dir, file), 'utf8') });
  }
  return migrations;
}

/**
 * A migration's statements, one by one. Citus refuses a CREATE INDEX or CREATE TRIGGER on a
 * distributed table sent with other statements in one query string ("cannot insert multiple
 * commands into a prepared statement": it replays the string on the shards), so every backend runs
 * them singly, in the migration's one transaction.
 */
export function statements(sql: string): string[] {
  return splitQuery(sql, postgreSplitterOptions)
    .map((item) => (typeof item === 'string' ? item : item.text))
    .filter((text) => text.replace(/--[^\n]*/g, '').trim() !== '');
}

export interface MigrateResult {
  applied: string[];
  current: number;
}

export async function migrate(db: Db, migrations?: Migration[]): Promise<MigrateResult> {
  const all = migrations ?? (await loadMigrations());
  return db.withAdvisoryLock(MIGRATION_LOCK, async (session) => {
    await session.exec(`
      CREATE TABLE IF NOT EXISTS schema_migrations (
        version integer PRIMARY KEY,
        name text NOT NULL,
        applied_at timestamptz NOT NULL DEFAULT now()
      )`);
    const done = new Set(
      (await session.query<{ version: number }>('SELECT version FROM schema_migrations')).rows.map((r) => r.version),
    );
    const applied: string[] = [];
    // On Citus, a migration that adds a trigger to a distributed table is refused unless
    // citus.enable_unsafe_triggers is on for the statement (a trigger fires on the workers without
    // it; only its creation is checked). Lattice's trigger functions write rows of the row's own
    // project, so of the same shard group: set for the migration's transaction alone.
    const citus = all.some((m) => !done.has(m.version)) && (await citusInstalled(session));
    for (const migration of all) {
      if (done.has(migration.version)) continue;
      await session.transaction(async (tx) => {
        if (citus) await tx.exec('SET LOCAL citus.enable_unsafe_triggers = on');
        for (const statement of statements(migration.sql)) await tx.exec(statement);
        await tx.query('INSERT INTO schema_migrations (version, name) VALUES ($1, $2)', [migration.version, migration.name]);
      });
      applied.push(`${String(migration.version).padStart(4, '0')}_${migration.name}`);
    }
    // On a deployment distributed with Citus (`lattice citus distribute`), the tables a migration
    // created are distributed too, under the same lock.
    if (applied.length > 0) await distributeNew(session);
    const current = all.length === 0 ? 0 : Math.max(...all.map((m) => m.version));
    return { applied, current };
  });
}
