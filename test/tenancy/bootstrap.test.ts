import { afterEach, describe, expect, it } from 'vitest';
import { migrate } from '../../src/platform/migrations.js';
import type { Config } from '../../src/config.js';
import type { Db } from '../../src/platform/db.js';
import { createLogger } from '../../src/platform/logger.js';
import { DEMO_PROJECT } from '../../src/tenancy/bootstrap.js';
import { createTenancyModule, type TenancyApi } from '../../src/tenancy/index.js';
import { createTestDatabase, testConfig, type TestDatabase } from '../helpers/harness.js';

describe('first-start provisioning', () => {
  let database: TestDatabase | undefined;
  afterEach(async () => {
    await database?.drop();
    database = undefined;
  });

  let db: Db;
  async function fresh(): Promise<TenancyApi> {
    database = await createTestDatabase();
    db = await database.open();
    await migrate(db);
    return provisioner(testConfig(database));
  }

  /** The tenancy domain as a process with this configuration builds it. */
  const provisioner = (config: Config) => createTenancyModule({ config, db, log: createLogger('silent') }).api;

  it('creates the bootstrap project and key once, and the key works', async () => {
    const tenancy = await fresh();
    const apiKey = 'deploy-key-0123456789abcdefghijkl';
    const config = testConfig(database!, { LATTICE_BOOTSTRAP_PROJECT: 'prod', LATTICE_BOOTSTRAP_API_KEY: apiKey });
    expect(await provisioner(config).bootstrap()).toEqual({ bootstrapProjectCreated: true, bootstrapKeyCreated: true });
    expect(await provisioner(config).bootstrap()).toEqual({ bootstrapProjectCreated: false, bootstrapKeyCreated: false });
    const principal = await tenancy.authenticate(apiKey, 'prod');
    expect(principal).toMatchObject({ projectId: 'prod', plan: 'enterprise' });
    expect([...principal.permissions].sort()).toEqual(['READ_MEMORY', 'WRITE_MEMORY']);
    expect(await tenancy.listKeys('prod')).toHaveLength(1);
  });

  it('refuses a bootstrap key that already belongs to another project', async () => {
    const tenancy = await fresh();
    const apiKey = 'shared-key-0123456789abcdefghijkl';
    await provisioner(testConfig(database!, { LATTICE_BOOTSTRAP_PROJECT: 'one', LATTICE_BOOTSTRAP_API_KEY: apiKey })).bootstrap();
    await expect(
      provisioner(testConfig(database!, { LATTICE_BOOTSTRAP_PROJECT: 'two', LATTICE_BOOTSTRAP_API_KEY: apiKey })).bootstrap(),
    ).rejects.toMatchObject({ code: 'CONFLICT' });
  });

  it('creates demo with a working key on an empty database only, and shows the key only then', async () => {
    const tenancy = await fresh();
    const config = testConfig(database!);
    const first = await provisioner(config).bootstrap();
    expect(first.demo?.projectId).toBe(DEMO_PROJECT);
    await expect(tenancy.authenticate(first.demo!.apiKey, DEMO_PROJECT)).resolves.toMatchObject({ plan: 'enterprise' });
    expect((await provisioner(config).bootstrap()).demo).toBeUndefined();
  });

  it('creates no demo when projects exist or LATTICE_CREATE_DEMO is false', async () => {
    const tenancy = await fresh();
    expect((await provisioner(testConfig(database!, { LATTICE_CREATE_DEMO: 'false' })).bootstrap()).demo).toBeUndefined();
    await tenancy.createProject('existing');
    expect((await provisioner(testConfig(database!)).bootstrap()).demo).toBeUndefined();
    expect((await tenancy.listProjects()).map((p) => p.id)).toEqual(['existing']);
  });
});
