// The project domain's face: the overview of one project (plan, usage, the modules' backlogs, the
// queue's jobs) for the console's Project page. Composed last: it reads every module before it
// through their backlog hooks, as compliance reaches their subject hooks, and owns no table.
import type { AlertsApi } from '../alerts/index.js';
import { bindMethods, type AnyModule, type DomainModule } from '../platform/module.js';
import type { Runtime } from '../platform/runtime.js';
import type { TenancyApi } from '../tenancy/index.js';
import { projectRoutes } from './routes.js';
import { ProjectOverviewService } from './service.js';

export type { ProjectOverview } from './schemas.js';

/** The face's methods, named once: its api type and its bound api both read them. */
const PROJECT_METHODS = ['overview'] as const;

export type ProjectApi = Pick<ProjectOverviewService, (typeof PROJECT_METHODS)[number]>;

export function createProjectModule(
  runtime: Pick<Runtime, 'queue'>,
  deps: { tenancy: Pick<TenancyApi, 'planUsage'>; alerts: Pick<AlertsApi, 'countActive'> },
  modules: readonly AnyModule[],
): DomainModule<ProjectApi> {
  const overview = new ProjectOverviewService(deps.tenancy, { 'active-triggers': (projectId) => deps.alerts.countActive(projectId) }, runtime.queue, modules);
  return {
    name: 'project',
    api: bindMethods(overview, PROJECT_METHODS),
    routes: async (app) => app.register(projectRoutes, { overview }),
  };
}
