// Vitest's global setup: the test databases start migrated. On the embedded backend, one in-memory
// PGlite database is migrated once per run and its data directory dumped to a file, and each test
// file's harness starts its database from that dump (test/helpers/harness.ts): about 2.6 of the
// 4.3 s a file spent opening its database. On Postgres, one database is migrated once per run and
// each file's database is created from it as a template (CREATE DATABASE ... TEMPLATE): a copy of
// its files, where running the migrations again took about a second and a half of the server's CPU.
import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { TestProject } from 'vitest/node';
import { createPgDb } from '../../src/platform/db-pg.js';
import { createPgliteDb, pgliteOf } from '../../src/platform/db-pglite.js';
import { migrate } from '../../src/platform/migrations.js';
import { run, withDatabase } from './citus.js';

declare module 'vitest' {
  export interface ProvidedContext {
    /** The file holding a migrated PGlite data directory (tar), or '' on a Postgres run. */
    pgliteTemplate: string;
    /** On a Postgres run (not Citus), the name of the migrated database to copy; '' otherwise. */
    pgTemplate: string;
  }
}

/** Migrates a database of its own on the Postgres server; answers its name and how to drop it. */
async function postgresTemplate(url: string): Promise<{ name: string; drop: () => Promise<void> }> {
  const name = `lattice_tpl_${process.pid}_${randomBytes(4).toString('hex')}`;
  const admin = withDatabase(url, 'postgres');
  await run(admin, [`CREATE DATABASE ${name}`]);
  const db = createPgDb({ connectionString: withDatabase(url, name), max: 2 });
  try {
    await migrate(db);
  } finally {
    // A database is copied only while nobody is connected to it.
    await db.close();
  }
  return { name, drop: async () => void (await run(admin, [`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`])) };
}

export default async function setup(project: TestProject): Promise<() => void | Promise<void>> {
  if (process.env.DATABASE_URL || process.env.CITUS_URL) {
    project.provide('pgliteTemplate', '');
    // A Citus database is distributed as it is made (test/helpers/citus.ts): no template there.
    if (process.env.CITUS_URL) {
      project.provide('pgTemplate', '');
      return () => {};
    }
    const template = await postgresTemplate(process.env.DATABASE_URL!);
    project.provide('pgTemplate', template.name);
    return () => template.drop();
  }
  project.provide('pgTemplate', '');
  const db = await createPgliteDb();
  const dir = mkdtempSync(join(tmpdir(), 'lattice-pglite-template-'));
  try {
    await migrate(db);
    const dump = await pgliteOf(db)!.dumpDataDir('none');
    const file = join(dir, 'migrated.tar');
    writeFileSync(file, Buffer.from(await dump.arrayBuffer()));
    project.provide('pgliteTemplate', file);
  } finally {
    await db.close();
  }
  return () => rmSync(dir, { recursive: true, force: true });
}
