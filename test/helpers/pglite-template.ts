// Vitest's global setup: on the embedded backend, one in-memory PGlite database is migrated once
// per run and its data directory dumped to a file, and each test file's harness starts its database
// from that dump (test/helpers/harness.ts). Starting from a dump skips initdb and the migrations:
// about 2.6 of the 4.3 s a file spent opening its database.
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { TestProject } from 'vitest/node';
import { createPgliteDb, pgliteOf } from '../../src/platform/db-pglite.js';
import { migrate } from '../../src/platform/migrations.js';

declare module 'vitest' {
  export interface ProvidedContext {
    /** The file holding a migrated PGlite data directory (tar), or '' on a Postgres run. */
    pgliteTemplate: string;
  }
}

export default async function setup(project: TestProject): Promise<() => void> {
  if (process.env.DATABASE_URL || process.env.CITUS_URL) {
    project.provide('pgliteTemplate', '');
    return () => {};
  }
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
