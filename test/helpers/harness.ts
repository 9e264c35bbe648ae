// Per-file test harness: a real database (a fresh Postgres database when DATABASE_URL is set,
// otherwise an in-memory PGlite), a real queue (BullMQ under a unique prefix when REDIS_URL is
// set, otherwise in-process), the real worker pool, and the real Fastify app driven by inject.
import { randomBytes } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { FastifyInstance, LightMyRequestResponse } from 'fastify';
import { inject } from 'vitest';
import { buildApp, type BuildOptions } from '../../src/app.js';
import { loadConfig, type Config } from '../../src/config.js';
import { createLattice, type Apis, type Lattice } from '../../src/modules.js';
import type { Permission } from '../../src/platform/access.js';
import type { Db } from '../../src/platform/db.js';
import { createPgDb } from '../../src/platform/db-pg.js';
import { createPgliteDb } from '../../src/platform/db-pglite.js';
import { createLogger } from '../../src/platform/logger.js';
import { CITUS_URL, createCitusDatabase, dropCitusDatabase, run, withDatabase } from './citus.js';
import type { Plan } from '../../src/tenancy/index.js';

/** A Citus coordinator (CITUS_URL) takes the place of DATABASE_URL: each file's database is distributed. */
export const SERVER_DATABASE_URL = CITUS_URL ?? process.env.DATABASE_URL;
export const REDIS_URL = process.env.REDIS_URL;
export const backend: 'pg' | 'pglite' = SERVER_DATABASE_URL ? 'pg' : 'pglite';
export const queueKind: 'bullmq' | 'in-process' = REDIS_URL ? 'bullmq' : 'in-process';

export function uniqueName(prefix: string): string {
  return `${prefix}_${process.pid}_${randomBytes(4).toString('hex')}`;
}

async function adminQuery(sql: string): Promise<void> {
  await run(withDatabase(SERVER_DATABASE_URL!, 'postgres'), [sql]);
}

export interface TestDatabase {
  /** For a Postgres run, the URL of the fresh database; undefined on PGlite. */
  url: string | undefined;
  /** Opens a connection (pool) to it; on PGlite the one shared in-memory instance. */
  open(): Promise<Db>;
  drop(): Promise<void>;
}

export interface TestDatabaseOptions {
  /** Connections in each Postgres pool `open()` makes (default 5); PGlite always has one. */
  max?: number;
  /**
   * Start from the run's migrated template (test/helpers/pglite-template.ts: a PGlite dump, or a
   * Postgres database copied) rather than an empty database; the runtime's migrations then find
   * nothing to apply.
   */
  migrated?: boolean;
}

let template: Blob | undefined;
/** The run's migrated PGlite data directory, read once per process; undefined when the run has none. */
function pgliteTemplate(): Blob | undefined {
  const file = inject('pgliteTemplate');
  if (!file) return undefined;
  return (template ??= new Blob([readFileSync(file)]));
}

/** A fresh database for one test file: empty, or migrated when asked (`migrated`). */
export async function createTestDatabase(options: TestDatabaseOptions = {}): Promise<TestDatabase> {
  if (!SERVER_DATABASE_URL) {
    let db: Promise<Db> | undefined;
    const loadDataDir = options.migrated ? pgliteTemplate() : undefined;
    return {
      url: undefined,
      open: () => (db ??= createPgliteDb({ loadDataDir })),
      drop: async () => (await db)?.close(),
    };
  }
  const name = uniqueName('lattice_t').toLowerCase();
  if (CITUS_URL) await createCitusDatabase(CITUS_URL, name);
  else {
    const template = options.migrated ? inject('pgTemplate') : '';
    await adminQuery(template ? `CREATE DATABASE ${name} TEMPLATE ${template}` : `CREATE DATABASE ${name}`);
  }
  const opened: Db[] = [];
  return {
    url: withDatabase(SERVER_DATABASE_URL, name),
    open: async () => {
      const db = createPgDb({ connectionString: withDatabase(SERVER_DATABASE_URL, name), max: options.max ?? 5 });
      opened.push(db);
      return db;
    },
    drop: async () => {
      await Promise.all(opened.map((db) => db.close()));
      if (CITUS_URL) await dropCitusDatabase(CITUS_URL, name);
      else await adminQuery(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`);
    },
  };
}

/** Config for tests: nothing from the ambient environment but the service URLs. */
export function testConfig(database: TestDatabase, env: Record<string, string> = {}): Config {
  return loadConfig({
    LOG_LEVEL: 'silent',
    POOL_MAX_THREADS: '2',
    // Background embedding at normal priority: the niced threads of a deployment yield to every
    // busy process, and on a machine saturated by parallel test files they could wait minutes for
    // the CPU, so a test of the drain would wait on the OS scheduler (test/platform/pool.test.ts
    // checks the niceness itself).
    POOL_BACKGROUND_NICENESS: '0',
    // Mining after new activity waits an hour in tests, so no file sees patterns (and pattern.emerged
    // events) appear behind its back; the behaviour tests set it to 0 and mine the queue themselves.
    BEHAVIOR_MINING_DEBOUNCE_MS: '3600000',
    BEHAVIOR_MINING_MAX_WAIT_MS: '3600000',
    // The pattern monitor's schedule stays out of the way (a day); its tests tick on demand.
    MONITOR_TICK_INTERVAL_MS: '86400000',
    // Test files mine on demand many times a minute; the limit's own test sets the default back.
    PATTERN_EXTRACT_PER_MINUTE: '100000',
    // Uploaded files go to a directory of this harness's own, not the repository's data/.
    BLOB_DIR: join(tmpdir(), uniqueName('lattice-blobs')),
    ...(database.url ? { DATABASE_URL: database.url } : {}),
    ...(REDIS_URL ? { REDIS_URL, QUEUE_PREFIX: uniqueName('lt') } : {}),
    ...env,
  });
}

export interface Harness {
  lattice: Lattice;
  /** Every domain's api (lattice.apis). */
  apis: Apis;
  /** The database (lattice.runtime.db). */
  db: Db;
  app: FastifyInstance;
  config: Config;
  database: TestDatabase;
  /** Creates a project and a key for it. */
  project(options?: { id?: string; plan?: Plan; permissions?: Permission[] }): Promise<{ projectId: string; apiKey: string }>;
  /** A key for an existing project. */
  key(projectId: string, permissions: Permission[]): Promise<string>;
  /** inject with a bearer key on a project path (relative to /api/v1/projects/:projectId). */
  call(
    method: 'GET' | 'POST' | 'PATCH' | 'DELETE' | 'PUT',
    projectId: string,
    path: string,
    options?: { apiKey?: string; body?: unknown; headers?: Record<string, string> },
  ): Promise<LightMyRequestResponse>;
  close(): Promise<void>;
}

export interface HarnessOptions {
  env?: Record<string, string>;
  /** Consume jobs in this process (default true). */
  consumers?: boolean;
  build?: BuildOptions;
  /** Connections in the Postgres pool (default 5); ignored on PGlite, which has one. */
  max?: number;
}

export async function createHarness(options: HarnessOptions = {}): Promise<Harness> {
  const database = await createTestDatabase({ max: options.max, migrated: true });
  const config = testConfig(database, options.env);
  const db = await database.open();
  const lattice = await createLattice(config, { log: createLogger('silent'), db });
  if (options.consumers !== false) await lattice.startConsumers();
  const app = await buildApp(lattice, { logger: false, ...options.build });
  await app.ready();

  const keys = new Map<string, string>();
  const { apis } = lattice;
  const harness: Harness = {
    lattice,
    apis,
    db,
    app,
    config,
    database,
    async project({ id, plan, permissions } = {}) {
      const projectId = id ?? uniqueName('p').toLowerCase();
      await apis.tenancy.createProject(projectId, { plan: plan ?? 'enterprise' });
      const apiKey = await harness.key(projectId, permissions ?? ['READ_MEMORY', 'WRITE_MEMORY']);
      keys.set(projectId, apiKey);
      return { projectId, apiKey };
    },
    async key(projectId, permissions) {
      return (await apis.tenancy.createKey(projectId, permissions)).apiKey;
    },
    call(method, projectId, path, { apiKey, body, headers } = {}) {
      const key = apiKey ?? keys.get(projectId);
      return app.inject({
        method,
        url: `/api/v1/projects/${projectId}${path}`,
        headers: { ...(key ? { authorization: `Bearer ${key}` } : {}), ...headers },
        ...(body === undefined ? {} : { payload: body as object }),
      });
    },
    async close() {
      await app.close();
      await lattice.close();
      await database.drop();
    },
  };
  return harness;
}

/**
 * Folds every typed point still waiting (TypedService.foldPending) until none waits. The typed.fold
 * job of a harness with consumers may hold some rows meanwhile (a fold skips them); it commits in
 * milliseconds, so a bounded number of passes ends it, and failing past that bound is a clear error.
 */
export async function foldAllTyped(h: Harness, passes = 500): Promise<void> {
  for (let pass = 0; pass < passes; pass++) {
    await h.apis.typed.foldPending();
    const { rows } = await h.db.query<{ n: number }>('SELECT count(*)::int AS n FROM typed_unfolded');
    if (rows[0]!.n === 0) return;
    await new Promise((resolve) => setImmediate(resolve));
  }
  throw new Error(`typed points were still waiting after ${passes} folds`);
}

/**
 * Appends every typed.observation event still in the outbox (TypedService.appendOutboxEvents) until
 * none is left, so a test reads the event log as it will be once the typed.events jobs have run. A
 * row a job holds meanwhile is skipped by this pass and done by the job; a bounded number of passes
 * waits it out, and failing past that bound is a clear error.
 */
export async function appendAllTypedEvents(h: Pick<Harness, 'db' | 'apis'>, passes = 3000): Promise<void> {
  for (let pass = 0; pass < passes; pass++) {
    const { rows } = await h.db.query<{ project_id: string; id: string }>('SELECT project_id, id FROM typed_event_outbox ORDER BY created_at');
    if (rows.length === 0) return;
    for (const row of rows) await h.apis.typed.appendOutboxEvents(row.project_id, row.id);
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
  throw new Error(`typed.observation events were still waiting after ${passes} passes`);
}
