// The healthcare pack's face: health profiles and cohort risk, behind the health entitlement, when
// LATTICE_PACKS loads it; and the listing of loaded packs.
import type { EstimatorsApi } from '../estimators/index.js';
import type { MemoryApi } from '../memory/index.js';
import { bindMethods, type DomainModule } from '../platform/module.js';
import type { Runtime } from '../platform/runtime.js';
import type { TypedApi } from '../typed/index.js';
import { HEALTHCARE_MANIFEST, healthRoutes } from './routes.js';
import { HealthPack } from './service.js';

export type HealthApi = Pick<HealthPack, 'profile' | 'cohortRisk'>;

export function createHealthModule(
  runtime: Pick<Runtime, 'config'>,
  deps: { memory: Pick<MemoryApi, 'list'>; typed: Pick<TypedApi, 'listObservations' | 'listAttributes'>; estimators: Pick<EstimatorsApi, 'estimate'> },
): DomainModule<HealthApi> {
  const health = new HealthPack(deps.memory, deps.typed, deps.estimators);
  const loaded = runtime.config.packs.includes('healthcare');
  return {
    name: 'health',
    api: bindMethods(health, ['profile', 'cohortRisk']),
    routes: async (app) => app.register(healthRoutes, { health, loaded, packs: loaded ? [HEALTHCARE_MANIFEST] : [] }),
  };
}
