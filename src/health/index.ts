// The healthcare pack's face: health profiles and cohort risk, behind the health entitlement, when
// LATTICE_PACKS loads it (and the project has not turned it off); its manifest for the packs listing.
import type { EstimatorsApi } from '../estimators/index.js';
import { bindMethods, type DomainModule } from '../platform/module.js';
import type { Runtime } from '../platform/runtime.js';
import { HEALTHCARE_MANIFEST, healthRoutes } from './routes.js';
import { HealthPack } from './service.js';

/** The face's methods, named once: its api type and its bound api both read them. */
const HEALTH_METHODS = ['profile', 'cohortRisk'] as const;

export type HealthApi = Pick<HealthPack, (typeof HEALTH_METHODS)[number]>;

export function createHealthModule(
  runtime: Pick<Runtime, 'config'>,
  deps: { estimators: Pick<EstimatorsApi, 'estimate' | 'subjectHealth' | 'projectHealth'> },
): DomainModule<HealthApi> {
  const health = new HealthPack(deps.estimators);
  const loaded = runtime.config.packs.includes('healthcare');
  return {
    name: 'health',
    api: bindMethods(health, HEALTH_METHODS),
    routes: async (app) => app.register(healthRoutes, { health, loaded }),
    packs: loaded ? [HEALTHCARE_MANIFEST] : [],
  };
}
