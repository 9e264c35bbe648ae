// The estimators domain's face: deterministic estimates over a subject's readings (PhenoAge), and
// the one reader of recorded health data (memories, typed observations) the healthcare pack uses too.
import type { MemoryApi } from '../memory/index.js';
import { bindMethods, type DomainModule } from '../platform/module.js';
import type { TypedApi } from '../typed/index.js';
import { estimatorRoutes } from './routes.js';
import { EstimateSchema } from './schemas.js';
import { Estimators } from './service.js';

export type { BiomarkerReading, Birth, HealthMemory, SubjectHealth } from './readings.js';

export type EstimatorsApi = Pick<Estimators, 'estimate' | 'subjectHealth' | 'projectHealth'>;

export function createEstimatorsModule(deps: { memory: Pick<MemoryApi, 'list' | 'save'>; typed: Pick<TypedApi, 'listObservations' | 'listAttributes'> }): DomainModule<EstimatorsApi> {
  const estimators = new Estimators(deps.memory, deps.typed);
  return {
    name: 'estimators',
    api: bindMethods(estimators, ['estimate', 'subjectHealth', 'projectHealth']),
    routes: async (app) => app.register(estimatorRoutes, { estimators }),
    schemas: [EstimateSchema],
  };
}
