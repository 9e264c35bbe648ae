// The estimators domain's face: deterministic estimates over a subject's readings (PhenoAge), and
// the one reader of recorded health data (memories, typed observations) the healthcare pack uses too.
import type { MemoryApi } from '../memory/index.js';
import { bindMethods, type DomainModule } from '../platform/module.js';
import type { TypedApi } from '../typed/index.js';
import { estimatorRoutes } from './routes.js';
import { EstimateSchema } from './schemas.js';
import { Estimators } from './service.js';

export type { BiomarkerReading, Birth, HealthMemory, SubjectHealth } from './readings.js';

/** The face's methods, named once: its api type and its bound api both read them. */
const ESTIMATORS_METHODS = ['estimate', 'subjectHealth', 'projectHealth'] as const;

export type EstimatorsApi = Pick<Estimators, (typeof ESTIMATORS_METHODS)[number]>;

export function createEstimatorsModule(deps: { memory: Pick<MemoryApi, 'list' | 'save'>; typed: Pick<TypedApi, 'listObservations' | 'listAttributes'> }): DomainModule<EstimatorsApi> {
  const estimators = new Estimators(deps.memory, deps.typed);
  return {
    name: 'estimators',
    api: bindMethods(estimators, ESTIMATORS_METHODS),
    routes: async (app) => app.register(estimatorRoutes, { estimators }),
    schemas: [EstimateSchema],
  };
}
