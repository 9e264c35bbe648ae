import { afterEach, describe, expect, it } from 'vitest';
import { migrate } from '../../src/platform/migrations.js';
import { bootstrap, DEMO_PROJECT } from '../../src/tenancy/bootstrap.js';
import { TenancyService } from '../../src/tenancy/service.js';
import { createTestDatabase, testConfig, type TestDatabase } from '../helpers/harness.js';

describe('first-start provisioning', () => {
  let database: TestDatabase | undefined;
  afterEach(async () => {
    await database?.drop();
    database = undefined;
  });

  async function fresh(): Promise<TenancyService> {
    database = await createTestDatabase();
    const db = await database.open();
    await migrate(db);
    return new TenancyService(db);
  }

  it('creates the bootstrap project and key once, and the key works', async () => {
    const tenancy = await fresh();
    const apiKey = 'deploy-key-0123456789abcdefghijkl';
    const config = testConfig(database!, { LATTICE_BOOTSTRAP_PROJECT: 'prod', LATTICE_BOOTSTRAP_API_KEY: apiKey });
    expect(await bootstrap(config, tenancy)).toEqual({ bootstrapProjectCreated: true, bootstrapKeyCreated: true });
    expect(await bootstrap(config, tenancy)).toEqual({ bootstrapProjectCreated: false, bootstrapKeyCreated: false });
    const principal = await tenancy.authenticate(apiKey, 'prod');
    expect(principal).toMatchObject({ projectId: 'prod', plan: 'enterprise' });
    expect([...principal.permissions].sort()).toEqual(['READ_MEMORY', 'WRITE_MEMORY']);
    expect(await tenancy.listKeys('prod')).toHaveLength(1);
  });

  it('refuses a bootstrap key that already belongs to another project', async () => {
    const tenancy = await fresh();
    const apiKey = 'shared-key-0123456789abcdefghijkl';
    await bootstrap(testConfig(database!, { LATTICE_BOOTSTRAP_PROJECT: 'one', LATTICE_BOOTSTRAP_API_KEY: apiKey }), tenancy);
    await expect(
      bootstrap(testConfig(database!, { LATTICE_BOOTSTRAP_PROJECT: 'two', LATTICE_BOOTSTRAP_API_KEY: apiKey }), tenancy),
    ).rejects.toMatchObject({ code: 'CONFLICT' });
  });

  it('creates demo with a working key on an empty database only, and shows the key only then', async () => {
    const tenancy = await fresh();
    const config = testConfig(database!);
    const first = await bootstrap(config, tenancy);
    expect(first.demo?.projectId).toBe(DEMO_PROJECT);
    await expect(tenancy.authenticate(first.demo!.apiKey, DEMO_PROJECT)).resolves.toMatchObject({ plan: 'enterprise' });
    expect((await bootstrap(config, tenancy)).demo).toBeUndefined();
  });

  it('creates no demo when projects exist or LATTICE_CREATE_DEMO is false', async () => {
    const tenancy = await fresh();
    expect((await bootstrap(testConfig(database!, { LATTICE_CREATE_DEMO: 'false' }), tenancy)).demo).toBeUndefined();
    await tenancy.createProject('existing');
    expect((await bootstrap(testConfig(database!), tenancy)).demo).toBeUndefined();
    expect((await tenancy.listProjects()).map((p) => p.id)).toEqual(['existing']);
  });
});
