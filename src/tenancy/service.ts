// Projects, API keys, entitlements and meters: the one place that decides who may do what, and
// how much of a metered resource a project may use.
import type { FastifyBaseLogger } from 'fastify';
import { LRUCache } from 'lru-cache';
import type { Db } from '../platform/db.js';
import {
  AuthenticationError,
  ConflictError,
  FeatureDisabledError,
  PackDisabledError,
  NotFoundError,
  PermissionError,
  QuotaExceededError,
  ValidationError,
} from '../platform/errors.js';
import { newId } from '../platform/ids.js';
import type { Permission } from '../platform/access.js';
import { isProjectId } from '../platform/project-id.js';
import { fromKey, generateKey, hashKey } from './keys.js';
import { entitlementsFor, isPlan, METERS, upgradeFor, type Entitlements, type Feature, type Meter, type Plan } from './plans.js';
import * as store from './store.js';

/**
 * A metered call checks its quota exactly, one at a time under the meter's lock, once the quota
 * has room for fewer than this many more calls like it; before that it only adds (see consume).
 */
export const EXACT_NEAR_QUOTA = 256;

/** Who is calling: resolved from the API key on every request. */
export interface Principal {
  keyId: string;
  keyPrefix: string;
  keyName: string | null;
  projectId: string;
  plan: Plan;
  permissions: ReadonlySet<Permission>;
  entitlements: Entitlements;
}

export interface CreatedKey {
  id: string;
  projectId: string;
  apiKey: string;
  prefix: string;
  permissions: Permission[];
}

/** One meter's use this month against the plan's quota. */
export interface MeterUsage {
  meter: Meter;
  used: number;
  /** Infinity: unlimited. */
  limit: number;
  /** The month metered: its first instant, and the next month's, when the meter starts again from 0 (UTC). */
  period: Date;
  resetsAt: Date;
}

/** A project as its plan sees it: entitlements (quotas of Infinity are unlimited) and this month's meters. */
export interface PlanUsage {
  project: { id: string; name: string; plan: Plan };
  entitlements: Entitlements;
  meters: MeterUsage[];
}

function monthStart(now: Date): string {
  return `${now.getUTCFullYear()}-${String(now.getUTCMonth() + 1).padStart(2, '0')}-01`;
}

function nextMonthStart(now: Date): Date {
  return new Date(Date.UTC(now.getUTCFullYear(), now.getUTCMonth() + 1, 1));
}

function secondsToNextMonth(now: Date): number {
  return Math.max(1, Math.ceil((nextMonthStart(now).getTime() - now.getTime()) / 1000));
}

export class TenancyService {
  /**
   * Keys resolved in the last `keyCacheMs`, by hash: a request then costs no query to
   * authenticate. A revocation or a plan change made through this process clears it at once;
   * one made by another process (the CLI, another API process) takes effect there within
   * `keyCacheMs`. 0 turns the cache off. Unknown keys are never cached, so a new key works at once.
   */
  private readonly keys: LRUCache<string, store.KeyWithProject> | undefined;

  constructor(
    private readonly db: Db,
    keyCacheMs = 0,
  ) {
    this.keys = keyCacheMs > 0 ? new LRUCache({ max: 10_000, ttl: keyCacheMs }) : undefined;
  }

  async createProject(id: string, options: { name?: string; plan?: string } = {}): Promise<store.ProjectRow> {
    if (!isProjectId(id)) throw new ValidationError('project id must be 2 to 63 characters of a-z, 0-9, _ and -, starting with a letter or digit');
    const plan = options.plan ?? 'free';
    if (!isPlan(plan)) throw new ValidationError(`unknown plan ${plan}; plans are free, growth, enterprise`);
    const created = await store.insertProject(this.db, { id, name: options.name ?? id, plan });
    if (!created) throw new ConflictError(`project ${id} already exists`);
    return (await store.findProject(this.db, id))!;
  }

  async ensureProject(id: string, plan: Plan): Promise<boolean> {
    if (!isProjectId(id)) throw new ValidationError(`invalid project id ${id}`);
    return store.insertProject(this.db, { id, name: id, plan });
  }

  /**
   * Creates a project and its first key in one transaction, so that an interrupted start never
   * leaves a project nobody holds a key for. Answers undefined when the project already exists.
   */
  async createProjectWithKey(id: string, plan: Plan, permissions: Permission[], keyName: string): Promise<CreatedKey | undefined> {
    if (!isProjectId(id)) throw new ValidationError(`invalid project id ${id}`);
    const material = generateKey();
    const keyId = newId('key');
    return this.db.transaction(async (tx) => {
      if (!(await store.insertProject(tx, { id, name: id, plan }))) return undefined;
      await store.insertKey(tx, { id: keyId, projectId: id, prefix: material.prefix, hash: material.hash, name: keyName, permissions });
      return { id: keyId, projectId: id, apiKey: material.apiKey, prefix: material.prefix, permissions };
    });
  }

  listProjects(): Promise<store.ProjectRow[]> {
    return store.listProjects(this.db);
  }

  countProjects(): Promise<number> {
    return store.countProjects(this.db);
  }

  async setPlan(projectId: string, plan: string, overrides?: Parameters<typeof store.updateProjectPlan>[3]): Promise<void> {
    if (!isPlan(plan)) throw new ValidationError(`unknown plan ${plan}; plans are free, growth, enterprise`);
    if (!(await store.updateProjectPlan(this.db, projectId, plan, overrides))) throw new NotFoundError(`project ${projectId} not found`);
    this.keys?.clear();
  }

  async createKey(projectId: string, permissions: Permission[], name: string | null = null): Promise<CreatedKey> {
    if (!(await store.findProject(this.db, projectId))) throw new NotFoundError(`project ${projectId} not found`);
    const material = generateKey();
    const id = newId('key');
    await store.insertKey(this.db, { id, projectId, prefix: material.prefix, hash: material.hash, name, permissions });
    return { id, projectId, apiKey: material.apiKey, prefix: material.prefix, permissions };
  }

  /** Registers a key chosen by the deployment (bootstrap); a no-op when it already exists. */
  async ensureKey(projectId: string, apiKey: string, permissions: Permission[]): Promise<boolean> {
    const material = fromKey(apiKey);
    const existing = await store.findKeyByHash(this.db, material.hash);
    if (existing) {
      if (existing.projectId !== projectId) throw new ConflictError('the bootstrap API key already belongs to another project');
      return false;
    }
    return store.insertKey(this.db, {
      id: newId('key'),
      projectId,
      prefix: material.prefix,
      hash: material.hash,
      name: 'bootstrap',
      permissions,
    });
  }

  listKeys(projectId: string): Promise<store.ApiKeyRow[]> {
    return store.listKeys(this.db, projectId);
  }

  /** Revokes the key whose visible prefix (or id) is given. */
  async revokeKey(prefixOrId: string): Promise<store.ApiKeyRow> {
    const matches = prefixOrId.startsWith('key_')
      ? await store.findKeysById(this.db, prefixOrId)
      : await store.findKeysByPrefix(this.db, prefixOrId);
    if (matches.length === 0) throw new NotFoundError(`no API key with prefix ${prefixOrId}`);
    if (matches.length > 1) throw new ConflictError(`${matches.length} keys share the prefix ${prefixOrId}; revoke by id (${matches.map((k) => k.id).join(', ')})`);
    await store.revokeKey(this.db, matches[0]!.id);
    this.keys?.clear();
    return { ...matches[0]!, revokedAt: matches[0]!.revokedAt ?? new Date() };
  }

  /** Resolves a bearer key for a request on `projectId`. Another project's key sees a 404. */
  async authenticate(apiKey: string | undefined, projectId: string): Promise<Principal> {
    if (apiKey === undefined || apiKey.length === 0) {
      throw new AuthenticationError('missing API key: send Authorization: Bearer <key>');
    }
    const hash = hashKey(apiKey);
    let key = this.keys?.get(hash);
    if (!key) {
      key = await store.findKeyByHash(this.db, hash);
      if (key && key.revokedAt === null) this.keys?.set(hash, key);
    }
    if (!key || key.revokedAt !== null) throw new AuthenticationError('invalid or revoked API key');
    if (key.projectId !== projectId) throw new NotFoundError(`project ${projectId} not found`);
    return {
      keyId: key.id,
      keyPrefix: key.prefix,
      keyName: key.name,
      projectId: key.projectId,
      plan: key.project.plan,
      permissions: new Set(key.permissions),
      entitlements: entitlementsFor(key.project.plan, key.project.entitlementOverrides),
    };
  }

  assertPermission(principal: Principal, permission: Permission): void {
    if (!principal.permissions.has(permission)) {
      throw new PermissionError(`this API key lacks the ${permission} permission`, { required: permission });
    }
  }

  assertFeature(principal: Principal, feature: Feature): void {
    if (!principal.entitlements[feature]) throw new FeatureDisabledError(feature, principal.plan, upgradeFor(principal.plan, feature));
  }

  /** The project's pack settings (only the packs it has set; the others are as the deployment has them). */
  listPacks(projectId: string): Promise<store.PackSettingRow[]> {
    return store.listPackSettings(this.db, projectId);
  }

  /** Turns a pack on or off for the project (its settings kept unless given); one row per pack. */
  setPack(projectId: string, setting: { packId: string; enabled: boolean; config?: Record<string, unknown>; setByKey: string | null }): Promise<store.PackSettingRow> {
    return store.upsertPackSetting(this.db, projectId, { ...setting, config: setting.config, id: newId('pack') });
  }

  /** Forgets the project's setting for a pack: the deployment's default applies again. Answers whether there was one. */
  removePack(projectId: string, packId: string): Promise<boolean> {
    return store.deletePackSetting(this.db, projectId, packId);
  }

  /** Refuses (403 FEATURE_DISABLED) when the project has turned the pack off. */
  async assertPackEnabled(principal: Principal, packId: string): Promise<void> {
    if ((await store.packEnabled(this.db, principal.projectId, packId)) === false) throw new PackDisabledError(packId);
  }

  /**
   * Meters `amount` units against the monthly quota; refuses the whole amount if it would overshoot.
   * Far from the quota (room for EXACT_NEAR_QUOTA such calls), or with none, it only adds to a
   * meter shard: no lock, no shared row. Nearer, it checks and adds under the meter's lock, one
   * call at a time, so the quota is never overshot: a call on the fast path saw room for
   * EXACT_NEAR_QUOTA more like it, and that many are never in flight at once.
   */
  async consume(principal: Principal, meter: Meter, amount: number, now = new Date()): Promise<void> {
    if (amount <= 0) return;
    const limit = principal.entitlements[meter];
    const period = monthStart(now);
    const { projectId } = principal;
    if (amount > limit) throw new QuotaExceededError(meter, limit, await store.meterUsage(this.db, projectId, meter, period), amount, secondsToNextMonth(now));
    if (Number.isFinite(limit) && (await store.meterUsage(this.db, projectId, meter, period)) + amount * EXACT_NEAR_QUOTA > limit) {
      const refusedAt = await this.db.transaction(async (tx) => {
        await store.lockMeter(tx, projectId, meter, period);
        const used = await store.meterUsage(tx, projectId, meter, period);
        if (used + amount > limit) return used;
        await store.addToMeter(tx, projectId, meter, period, amount);
        return undefined;
      });
      if (refusedAt !== undefined) throw new QuotaExceededError(meter, limit, refusedAt, amount, secondsToNextMonth(now));
      return;
    }
    await store.addToMeter(this.db, projectId, meter, period, amount);
  }

  /** Gives back units consumed for work that then failed, so a failed write costs nothing. */
  async refund(principal: Principal, meter: Meter, amount: number, now = new Date()): Promise<void> {
    if (amount <= 0) return;
    await store.addToMeter(this.db, principal.projectId, meter, monthStart(now), -amount);
  }

  /**
   * Consumes `amount` units of `meter` for `work`, and gives them back if the work fails: a refused
   * or failed write costs nothing. Every metered use case goes through this.
   */
  async metered<T>(principal: Principal, meter: Meter, amount: number, work: () => Promise<T>, log?: FastifyBaseLogger): Promise<T> {
    const now = new Date();
    await this.consume(principal, meter, amount, now);
    try {
      return await work();
    } catch (error) {
      await this.refund(principal, meter, amount, now).catch((refundError: unknown) => log?.error({ err: refundError, meter }, 'meter refund failed'));
      throw error;
    }
  }

  /** Records units already spent (a model call's tokens), whatever the quota: the next call is the one refused. */
  async record(projectId: string, meter: Meter, amount: number, now = new Date()): Promise<void> {
    if (amount > 0) await store.addToMeter(this.db, projectId, meter, monthStart(now), amount);
  }

  /** Whether the project's plan (and overrides) include a feature; false for no such project. */
  async entitled(projectId: string, feature: Feature): Promise<boolean> {
    const project = await store.findProject(this.db, projectId);
    return project !== undefined && entitlementsFor(project.plan, project.entitlementOverrides)[feature];
  }

  /** Refuses (QUOTA_EXCEEDED) when the project has used its month's quota of `meter`. */
  async assertWithin(projectId: string, meter: Meter, now = new Date()): Promise<void> {
    const project = await store.findProject(this.db, projectId);
    if (!project) return;
    const limit = entitlementsFor(project.plan, project.entitlementOverrides)[meter];
    const used = await this.usage(projectId, meter, now);
    if (used >= limit) throw new QuotaExceededError(meter, limit, used, 1, secondsToNextMonth(now));
  }

  usage(projectId: string, meter: Meter, now = new Date()): Promise<number> {
    return store.meterUsage(this.db, projectId, meter, monthStart(now));
  }

  /** The project, its entitlements, and this month's use of every meter against its quota. */
  async planUsage(projectId: string, now = new Date()): Promise<PlanUsage> {
    const project = await store.findProject(this.db, projectId);
    if (!project) throw new NotFoundError(`project ${projectId} not found`);
    const entitlements = entitlementsFor(project.plan, project.entitlementOverrides);
    const period = monthStart(now);
    const used = await store.meterUsages(this.db, projectId, period);
    const meters = METERS.map((meter) => ({
      meter,
      used: used.get(meter) ?? 0,
      limit: entitlements[meter],
      period: new Date(`${period}T00:00:00Z`),
      resetsAt: nextMonthStart(now),
    }));
    return { project: { id: project.id, name: project.name, plan: project.plan }, entitlements, meters };
  }
}
