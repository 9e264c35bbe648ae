// The tenancy domain's face: projects, API keys, plans and entitlements, metering, the access
// plugin every project route sits behind, and the audit seam. The lowest domain: every other one
// may depend on it.
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import fp from 'fastify-plugin';
import type { Db } from '../platform/db.js';
import { bindMethods, type DomainModule } from '../platform/module.js';
import type { Runtime } from '../platform/runtime.js';
import { Audit } from './audit.js';
import projectAuth from './auth.js';
import { bootstrap, type BootstrapResult } from './bootstrap.js';
import keyRateLimit from './rate-limit.js';
import { TenancyService } from './service.js';

export type { AuditCall, AuditDetail, AuditEntry, AuditListener, AuditOutcome, AuditRecord, AuditResult, AuditTicket } from './audit.js';
export type { BootstrapResult } from './bootstrap.js';
export type { CreatedKey, MeterUsage, PlanUsage, Principal } from './service.js';
export type { Ceiling, Entitlements, Feature, Meter, Plan } from './plans.js';
export type { ApiKeyRow, ProjectRow } from './store.js';

const SERVICE_METHODS = [
  'listPacks',
  'setPack',
  'removePack',
  'createProject',
  'ensureProject',
  'createProjectWithKey',
  'listProjects',
  'countProjects',
  'setPlan',
  'createKey',
  'ensureKey',
  'listKeys',
  'revokeKey',
  'authenticate',
  'assertPermission',
  'assertFeature',
  'consume',
  'refund',
  'metered',
  'usage',
  'planUsage',
  'entitled',
] as const;

export type TenancyApi = Pick<TenancyService, (typeof SERVICE_METHODS)[number]> & {
  /**
   * Guards every project route: per-key rate limit, then key, permission and entitlement checks,
   * and the audit record of calls to routes marked `audit`. Registered once in the project scope,
   * before any domain's routes.
   */
  readonly access: FastifyPluginAsyncTypebox;
  /** First-start provisioning: the configured bootstrap project and key, or the demo project. */
  bootstrap(): Promise<BootstrapResult>;
  /** Subscribes to every audited call (the compliance domain keeps the log). */
  onAudit: Audit['subscribe'];
  /** Begins the record of an audited call made outside the HTTP routes (an MCP tool). */
  audit: Audit['begin'];
};

export function createTenancyModule(runtime: Pick<Runtime, 'config' | 'db' | 'log'> & Partial<Pick<Runtime, 'gateway'>>): DomainModule<TenancyApi> {
  const service = new TenancyService(runtime.db, runtime.config.apiKeyCacheMs);
  // Model tokens are metered per project: a project past its month's quota is refused before the
  // call, and every call's tokens are recorded after it (a failure to record is logged, not raised).
  runtime.gateway?.beforeCall((projectId) => service.assertWithin(projectId, 'model-tokens'));
  runtime.gateway?.onUsage((projectId, usage) => {
    service.record(projectId, 'model-tokens', usage.totalTokens).catch((error: unknown) => runtime.log.error({ err: error, projectId }, 'recording model tokens failed'));
  });
  const audit = new Audit();
  const access = fp(
    async (scope) => {
      await scope.register(keyRateLimit, { config: runtime.config });
      await scope.register(projectAuth, { tenancy: service, audit });
    },
    { name: 'tenancy-access' },
  );
  return {
    name: 'tenancy',
    api: {
      ...bindMethods(service, SERVICE_METHODS),
      access,
      bootstrap: () => bootstrap(runtime.config, service),
      onAudit: (listener) => audit.subscribe(listener),
      audit: (call, log) => audit.begin(call, log),
    },
  };
}

/** Tenancy over a bare database, for the admin commands (no queue, no pool). */
export function createTenancyAdmin(db: Db): Pick<TenancyApi, 'createProject' | 'listProjects' | 'setPlan' | 'createKey' | 'listKeys' | 'revokeKey' | 'authenticate'> {
  return bindMethods(new TenancyService(db), ['createProject', 'listProjects', 'setPlan', 'createKey', 'listKeys', 'revokeKey', 'authenticate']);
}
