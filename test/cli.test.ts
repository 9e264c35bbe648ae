// The `lattice` command as an operator runs it: a separate process, real data directory or database.
import { mkdtemp, rm } from 'node:fs/promises';
import { existsSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createPgliteDb } from '../src/platform/db-pglite.js';
import { createTenancyAdmin } from '../src/tenancy/index.js';
import { createTestDatabase, SERVER_DATABASE_URL, type TestDatabase } from './helpers/harness.js';
import { runCli, startCli, waitUntilReady } from './helpers/processes.js';

describe('lattice on the embedded default', () => {
  let dataDir: string;
  let env: Record<string, string>;
  beforeAll(async () => {
    dataDir = await mkdtemp(join(tmpdir(), 'lattice-cli-'));
    env = { DATA_DIR: dataDir };
  });
  afterAll(() => rm(dataDir, { recursive: true, force: true }));

  it('creates a project and a key, prints the key once as JSON, and revokes it by prefix', async () => {
    const project = await runCli(['project', 'create', 'acme', '--plan', 'growth', '--json'], env);
    expect(project.code, project.stderr).toBe(0);
    expect(JSON.parse(project.stdout)).toMatchObject({ id: 'acme', plan: 'growth' });

    const created = await runCli(['key', 'create', '--project', 'acme', '--permissions', 'READ_MEMORY,WRITE_MEMORY', '--json'], env);
    expect(created.code, created.stderr).toBe(0);
    const key = JSON.parse(created.stdout);
    expect(key.apiKey).toMatch(/^lat_/);
    expect(key.permissions).toEqual(['READ_MEMORY', 'WRITE_MEMORY']);

    const listed = await runCli(['key', 'list', '--project', 'acme', '--json'], env);
    expect(listed.stdout).not.toContain(key.apiKey);
    expect(JSON.parse(listed.stdout)[0]).toMatchObject({ prefix: key.prefix, revokedAt: null });

    const revoked = await runCli(['key', 'revoke', key.prefix], env);
    expect(revoked.code, revoked.stderr).toBe(0);
    const db = await createPgliteDb({ dataDir });
    try {
      await expect(createTenancyAdmin(db).authenticate(key.apiKey, 'acme')).rejects.toMatchObject({ code: 'AUTHENTICATION_ERROR' });
    } finally {
      await db.close();
    }
  });

  it('explains its mistakes with exit code 2 and no stack trace', async () => {
    const duplicate = await runCli(['project', 'create', 'acme'], env);
    expect(duplicate.code).toBe(2);
    expect(duplicate.stderr).toMatch(/already exists/);
    const badPermission = await runCli(['key', 'create', '--project', 'acme', '--permissions', 'READ,ADMIN'], env);
    expect(badPermission.code).toBe(2);
    expect(badPermission.stderr).toMatch(/unknown: READ, ADMIN/);
    const badConfig = await runCli(['migrate'], { ...env, PORT: 'eighty' });
    expect(badConfig.code).toBe(2);
    expect(badConfig.stderr).toMatch(/PORT/);
    for (const r of [duplicate, badPermission, badConfig]) expect(r.stderr).not.toMatch(/\n\s+at /);
  });

  it('refuses to open the data directory while another process holds it, and names that process', async () => {
    const held = await createPgliteDb({ dataDir });
    try {
      const result = await runCli(['project', 'list'], env);
      expect(result.code).toBe(2);
      expect(result.stderr).toMatch(new RegExp(`in use by another Lattice process \\(pid ${process.pid}\\)`));
      expect(result.stderr).toMatch(/stop the server/);
    } finally {
      await held.close();
    }
    const after = await runCli(['project', 'list'], env);
    expect(after.code, after.stderr).toBe(0);
    expect(after.stdout).toMatch(/acme/);
  });

  it('serves the quick start: creates demo, prints its key once, answers with it, and releases the directory on SIGTERM', async () => {
    const fresh = await mkdtemp(join(tmpdir(), 'lattice-serve-'));
    const port = String(20_000 + Math.floor(Math.random() * 20_000));
    try {
      const server = startCli(['serve'], { DATA_DIR: fresh, PORT: port, HOST: '127.0.0.1', POOL_MAX_THREADS: '1', LOG_LEVEL: 'info' });
      const [, apiKey] = (await server.waitFor(/^\s+(lat_\S+)\s*$/m)) as unknown as [string, string];
      await server.waitFor(/listening/);
      const base = `http://127.0.0.1:${port}`;
      expect(await waitUntilReady(base)).toMatchObject({ status: 'ready', encoder: 'loaded' });
      const res = await fetch(`${base}/api/v1/projects/demo/admin/memory/embeddings/backfill`, {
        method: 'POST',
        headers: { authorization: `Bearer ${apiKey}` },
      });
      expect(res.status).toBe(200);
      expect(await res.json()).toEqual({ embedded: 0, remaining: 0, embeddedPerSecond: 0, etaSeconds: 0 });
      expect(existsSync(join(fresh, 'lattice.lock'))).toBe(true);
      expect(await server.stop()).toBe(0);
      expect(existsSync(join(fresh, 'lattice.lock'))).toBe(false);

      const again = startCli(['serve'], { DATA_DIR: fresh, PORT: port, HOST: '127.0.0.1', POOL_MAX_THREADS: '1', LOG_LEVEL: 'info' });
      await again.waitFor(/listening/);
      expect(again.output()).not.toMatch(/lat_/);
      expect(await again.stop()).toBe(0);
    } finally {
      await rm(fresh, { recursive: true, force: true });
    }
  });
});

describe.skipIf(!SERVER_DATABASE_URL)('lattice against Postgres', () => {
  let database: TestDatabase;
  beforeAll(async () => {
    database = await createTestDatabase();
  });
  afterAll(() => database?.drop());

  it('migrates safely when two processes start at once', async () => {
    const env = { DATABASE_URL: database.url! };
    const [one, two] = await Promise.all([runCli(['migrate', '--json'], env), runCli(['migrate', '--json'], env)]);
    expect(one.code, one.stderr).toBe(0);
    expect(two.code, two.stderr).toBe(0);
    const applied = [...JSON.parse(one.stdout).applied, ...JSON.parse(two.stdout).applied];
    expect(new Set(applied).size).toBe(applied.length);
    const db = await database.open();
    const counts = (await db.query<{ n: number }>('SELECT count(*)::int AS n FROM schema_migrations')).rows[0]!.n;
    expect(counts).toBe(applied.length);
  });

  it('runs admin commands while the server holds the database', async () => {
    const env = { DATABASE_URL: database.url! };
    const port = String(20_000 + Math.floor(Math.random() * 20_000));
    const server = startCli(['serve'], { ...env, PORT: port, HOST: '127.0.0.1', LATTICE_CREATE_DEMO: 'false', POOL_MAX_THREADS: '1', LOG_LEVEL: 'info' });
    try {
      await server.waitFor(/listening/);
      expect((await runCli(['project', 'create', 'live'], env)).code).toBe(0);
      const key = JSON.parse((await runCli(['key', 'create', '--project', 'live', '--permissions', 'WRITE_MEMORY', '--json'], env)).stdout);
      const res = await fetch(`http://127.0.0.1:${port}/api/v1/projects/live/admin/memory/embeddings/backfill`, {
        method: 'POST',
        headers: { authorization: `Bearer ${key.apiKey}` },
      });
      expect(res.status).toBe(200);
    } finally {
      expect(await server.stop()).toBe(0);
    }
  });
});
