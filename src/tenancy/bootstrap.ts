// First-start provisioning: the deployment's bootstrap project and key (scripted and container
// deployments), or a `demo` project with a fresh key printed once (the quick start).
import type { Config } from '../config.js';
import type { TenancyService } from './service.js';

export interface BootstrapResult {
  bootstrapProjectCreated: boolean;
  bootstrapKeyCreated: boolean;
  /** Set only when a demo project was created just now: its key, to show once. */
  demo?: { projectId: string; apiKey: string };
}

export const DEMO_PROJECT = 'demo';

export async function bootstrap(config: Config, tenancy: TenancyService): Promise<BootstrapResult> {
  const result: BootstrapResult = { bootstrapProjectCreated: false, bootstrapKeyCreated: false };
  if (config.bootstrapProject !== undefined) {
    result.bootstrapProjectCreated = await tenancy.ensureProject(config.bootstrapProject, 'enterprise');
    if (config.bootstrapApiKey !== undefined) {
      result.bootstrapKeyCreated = await tenancy.ensureKey(config.bootstrapProject, config.bootstrapApiKey, ['READ_MEMORY', 'WRITE_MEMORY']);
    }
    return result;
  }
  if (config.createDemoProject && (await tenancy.countProjects()) === 0) {
    const key = await tenancy.createProjectWithKey(DEMO_PROJECT, 'enterprise', ['READ_MEMORY', 'WRITE_MEMORY'], 'demo');
    if (key) result.demo = { projectId: DEMO_PROJECT, apiKey: key.apiKey };
  }
  return result;
}
