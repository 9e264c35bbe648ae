// The financial pack's face: indicators, portfolio risk and calibrated directional calls from the
// clients' financial memories, behind the financial entitlement, when LATTICE_PACKS loads it (and
// the project has not turned it off); its manifest for the packs listing; a subject's recorded calls
// for data-subject rights.
import type { MemoryApi } from '../memory/index.js';
import { bindMethods, type DomainModule } from '../platform/module.js';
import type { Runtime } from '../platform/runtime.js';
import { deleteRows, tablePages } from '../platform/subject-data.js';
import { FINANCIAL_MANIFEST, financialRoutes } from './routes.js';
import { FinancialPack } from './service.js';
import { SUBJECT_CALLS } from './store.js';

/** The face's methods, named once: its api type and its bound api both read them. */
const FINANCIAL_METHODS = ['profile', 'predict', 'reconcile', 'calibration'] as const;

export type FinancialApi = Pick<FinancialPack, (typeof FINANCIAL_METHODS)[number]>;

export function createFinancialModule(runtime: Pick<Runtime, 'config' | 'db'>, deps: { memory: Pick<MemoryApi, 'list'> }): DomainModule<FinancialApi> {
  const financial = new FinancialPack(runtime.db, deps.memory);
  const loaded = runtime.config.packs.includes('financial');
  const { db } = runtime;
  return {
    name: 'financial',
    api: bindMethods(financial, FINANCIAL_METHODS),
    routes: async (app) => app.register(financialRoutes, { financial, loaded }),
    packs: loaded ? [FINANCIAL_MANIFEST] : [],
    subjectData: {
      export: ({ projectId, subject }) => tablePages(db, 'financial_predictions', SUBJECT_CALLS, [projectId, subject.kind, subject.externalId]),
      async erase(tx, { projectId, subject }) {
        return { counts: { financial_predictions: await deleteRows(tx, SUBJECT_CALLS, [projectId, subject.kind, subject.externalId]) } };
      },
    },
  };
}
