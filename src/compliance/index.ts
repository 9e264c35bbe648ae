// The compliance domain's face: data-subject rights (export, hard delete) over every module's
// subject hook, the audit log of calls that touch a subject's data, and the packs listing with their
// setting per project. Composed after every module with subject data or a pack: it reaches the rows
// and the manifests of every module before it.
import { bindMethods, type AnyModule, type DomainModule } from '../platform/module.js';
import type { Runtime } from '../platform/runtime.js';
import type { TenancyApi } from '../tenancy/index.js';
import { AuditLog } from './audit-log.js';
import { packRoutes } from './packs.js';
import { complianceRoutes } from './routes.js';
import { ComplianceService } from './service.js';

/** The face's methods, named once: its api type and its bound api both read them. */
const COMPLIANCE_SERVICE_METHODS = ['hardDelete', 'exportScope', 'exportJson', 'audit'] as const;

export type ComplianceApi = Pick<ComplianceService, (typeof COMPLIANCE_SERVICE_METHODS)[number]> & {
  /** Resolves once every audited call so far is written with its outcome. */
  auditSettled(): Promise<void>;
};

export type ComplianceJobs = {
  'compliance.prune-audit': { payload: Record<string, never>; result: { pruned: number } };
};

export function createComplianceModule(
  runtime: Pick<Runtime, 'config' | 'db' | 'log'>,
  deps: { tenancy: Pick<TenancyApi, 'onAudit' | 'listPacks' | 'setPack' | 'removePack'> },
  modules: readonly AnyModule[],
): DomainModule<ComplianceApi, ComplianceJobs> {
  const { config, db } = runtime;
  const compliance = new ComplianceService(db, modules, runtime.log);
  const auditLog = config.auditLog ? new AuditLog(db, runtime.log) : undefined;
  if (auditLog) deps.tenancy.onAudit((record) => auditLog.begin(record));
  return {
    name: 'compliance',
    api: { ...bindMethods(compliance, COMPLIANCE_SERVICE_METHODS), auditSettled: async () => auditLog?.settled() },
    routes: async (app) => {
      await app.register(complianceRoutes, { compliance });
      await app.register(packRoutes, { packs: modules.flatMap((m) => m.packs ?? []), tenancy: deps.tenancy });
    },
    jobs: { 'compliance.prune-audit': async () => ({ pruned: await compliance.prune(config.auditRetentionDays) }) },
    schedules: [{ id: 'compliance.prune-audit', job: 'compliance.prune-audit', payload: {}, cron: '30 2 * * *' }],
  };
}
