// The composition root: builds the platform, then every domain in dependency order, one line each;
// each domain may use the apis of those above it. The only importer of the domains' faces.
// Adding a domain: one `.with(...)` line here, below the domains it uses.
import type { Config } from './config.js';
import { createAlertsModule } from './alerts/index.js';
import { createBehaviorModule } from './behavior/index.js';
import { createComplianceModule } from './compliance/index.js';
import { createEmbeddingsModule } from './embeddings/index.js';
import { createDiscoveryModule } from './discovery/index.js';
import { createEstimatorsModule } from './estimators/index.js';
import { createEventsModule } from './events/index.js';
import { createFinancialModule } from './financial/index.js';
import { createGraphModule } from './graph/index.js';
import { createHealthModule } from './health/index.js';
import { createLearningModule } from './learning/index.js';
import { createMediaModule } from './media/index.js';
import { createMemoryModule } from './memory/index.js';
import type { Db } from './platform/db.js';
import { createMaintenanceModule } from './platform/maintenance.js';
import { Composition, jobRunner, type AnyModule } from './platform/module.js';
import { createRuntime, type Runtime, type RuntimeOptions } from './platform/runtime.js';
import { createProjectModule } from './project/index.js';
import { createTenancyAdmin, createTenancyModule } from './tenancy/index.js';
import { createTypedModule } from './typed/index.js';

function compose(runtime: Runtime) {
  return Composition.start()
    .with('maintenance', () => createMaintenanceModule(runtime))
    .with('tenancy', () => createTenancyModule(runtime))
    .with('embeddings', () => createEmbeddingsModule(runtime))
    .with('memory', ({ embeddings, tenancy }) => createMemoryModule(runtime, { embeddings, tenancy }))
    .with('events', () => createEventsModule(runtime))
    .with('alerts', ({ events, memory }) => createAlertsModule(runtime, { events, memory }))
    .with('typed', ({ tenancy, events }) => createTypedModule(runtime, { tenancy, events }))
    .with('behavior', ({ tenancy, memory, events }) => createBehaviorModule(runtime, { tenancy, memory, events }))
    .with('learning', ({ memory, behavior, typed }) => createLearningModule(runtime, { memory, behavior, typed }))
    .with('discovery', ({ behavior, events, memory }) => createDiscoveryModule(runtime, { behavior, events, memory }))
    .with('estimators', ({ memory, typed }) => createEstimatorsModule({ memory, typed }))
    .with('health', ({ estimators }) => createHealthModule(runtime, { estimators }))
    .with('financial', ({ memory }) => createFinancialModule(runtime, { memory }))
    .with('graph', ({ memory, behavior }) => createGraphModule(runtime, { memory, behavior }))
    .with('media', ({ memory, tenancy }) => createMediaModule(runtime, { memory, tenancy }))
    // After every module with subject data: its export and hard delete reach them through their subject hooks.
    .with('compliance', ({ tenancy }, { modules }) => createComplianceModule(runtime, { tenancy }, modules))
    // After every module whose backlog it shows (the console's Project page).
    .with('project', ({ tenancy, alerts }, { modules }) => createProjectModule(runtime, { tenancy, alerts }, modules));
}

/** Every domain's api, by domain name. */
export type Apis = Awaited<ReturnType<ReturnType<typeof compose>['build']>>['apis'];

export interface Lattice {
  readonly runtime: Runtime;
  readonly apis: Apis;
  /** In dependency order; the app mounts their routes and gathers their MCP tools. */
  readonly modules: readonly AnyModule[];
  /** Starts consuming jobs in this process: consumers, schedules, then each module's start-up work. */
  startConsumers(): Promise<void>;
  close(): Promise<void>;
}

export async function createLattice(config: Config, options: RuntimeOptions): Promise<Lattice> {
  const runtime = await createRuntime(config, options);
  try {
    const { apis, modules } = await compose(runtime).build();
    const jobs = jobRunner(runtime.queue, modules, runtime.log, runtime.db);
    return { runtime, apis, modules, startConsumers: () => jobs.start(), close: () => runtime.close() };
  } catch (error) {
    await runtime.close();
    throw error;
  }
}

/** The tenancy admin operations over a bare database: the CLI's project and key commands. */
export function tenancyAdmin(db: Db): ReturnType<typeof createTenancyAdmin> {
  return createTenancyAdmin(db);
}
