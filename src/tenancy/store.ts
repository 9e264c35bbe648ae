// SQL for projects, API keys and meters.
import type { Queryable } from '../platform/db.js';
import type { EntitlementOverrides, Plan } from './plans.js';
import type { Permission } from '../platform/access.js';

export interface ProjectRow {
  id: string;
  name: string;
  plan: Plan;
  entitlementOverrides: EntitlementOverrides;
  createdAt: Date;
}

export interface ApiKeyRow {
  id: string;
  projectId: string;
  prefix: string;
  name: string | null;
  permissions: Permission[];
  createdAt: Date;
  revokedAt: Date | null;
}

const PROJECT_COLUMNS = `id, name, plan, entitlement_overrides AS "entitlementOverrides", created_at AS "createdAt"`;
const KEY_COLUMNS = `id, project_id AS "projectId", prefix, name, permissions, created_at AS "createdAt", revoked_at AS "revokedAt"`;

/** Inserts the project unless it exists; answers whether it was created. */
export async function insertProject(db: Queryable, project: { id: string; name: string; plan: Plan }): Promise<boolean> {
  const result = await db.query(
    `INSERT INTO projects (id, name, plan) VALUES ($1, $2, $3) ON CONFLICT (id) DO NOTHING RETURNING id`,
    [project.id, project.name, project.plan],
  );
  return result.rowCount > 0;
}

export async function findProject(db: Queryable, id: string): Promise<ProjectRow | undefined> {
  const result = await db.query<ProjectRow>(`SELECT ${PROJECT_COLUMNS} FROM projects WHERE id = $1`, [id]);
  return result.rows[0];
}

export async function listProjects(db: Queryable): Promise<ProjectRow[]> {
  return (await db.query<ProjectRow>(`SELECT ${PROJECT_COLUMNS} FROM projects ORDER BY id`)).rows;
}

export async function countProjects(db: Queryable): Promise<number> {
  return (await db.query<{ n: number }>('SELECT count(*)::int AS n FROM projects')).rows[0]!.n;
}

export async function updateProjectPlan(
  db: Queryable,
  id: string,
  plan: Plan,
  overrides?: EntitlementOverrides,
): Promise<boolean> {
  const result = await db.query(
    `UPDATE projects SET plan = $2, entitlement_overrides = COALESCE($3::jsonb, entitlement_overrides) WHERE id = $1`,
    [id, plan, overrides === undefined ? null : JSON.stringify(overrides)],
  );
  return result.rowCount > 0;
}

export async function insertKey(
  db: Queryable,
  key: { id: string; projectId: string; prefix: string; hash: string; name: string | null; permissions: Permission[] },
): Promise<boolean> {
  const result = await db.query(
    `INSERT INTO api_keys (id, project_id, prefix, key_hash, name, permissions)
     VALUES ($1, $2, $3, $4, $5, $6::text[]) ON CONFLICT (key_hash) DO NOTHING RETURNING id`,
    [key.id, key.projectId, key.prefix, key.hash, key.name, key.permissions],
  );
  return result.rowCount > 0;
}

export interface KeyWithProject extends ApiKeyRow {
  project: ProjectRow;
}

export async function findKeyByHash(db: Queryable, hash: string): Promise<KeyWithProject | undefined> {
  const result = await db.query<ApiKeyRow & { pId: string; pName: string; pPlan: Plan; pOverrides: EntitlementOverrides; pCreatedAt: Date }>(
    `SELECT k.id, k.project_id AS "projectId", k.prefix, k.name, k.permissions, k.created_at AS "createdAt",
            k.revoked_at AS "revokedAt", p.id AS "pId", p.name AS "pName", p.plan AS "pPlan",
            p.entitlement_overrides AS "pOverrides", p.created_at AS "pCreatedAt"
       FROM api_keys k JOIN projects p ON p.id = k.project_id
      WHERE k.key_hash = $1`,
    [hash],
  );
  const row = result.rows[0];
  if (!row) return undefined;
  const { pId, pName, pPlan, pOverrides, pCreatedAt, ...key } = row;
  return { ...key, project: { id: pId, name: pName, plan: pPlan, entitlementOverrides: pOverrides, createdAt: pCreatedAt } };
}

export async function findKeysByPrefix(db: Queryable, prefix: string): Promise<ApiKeyRow[]> {
  return (await db.query<ApiKeyRow>(`SELECT ${KEY_COLUMNS} FROM api_keys WHERE prefix = $1`, [prefix])).rows;
}

export async function findKeysById(db: Queryable, id: string): Promise<ApiKeyRow[]> {
  return (await db.query<ApiKeyRow>(`SELECT ${KEY_COLUMNS} FROM api_keys WHERE id = $1`, [id])).rows;
}

export async function listKeys(db: Queryable, projectId: string): Promise<ApiKeyRow[]> {
  return (await db.query<ApiKeyRow>(`SELECT ${KEY_COLUMNS} FROM api_keys WHERE project_id = $1 ORDER BY created_at`, [projectId])).rows;
}

export async function revokeKey(db: Queryable, id: string): Promise<void> {
  await db.query('UPDATE api_keys SET revoked_at = now() WHERE id = $1 AND revoked_at IS NULL', [id]);
}

/**
 * Meters are kept in shards (migration 0015): one month of one meter is the sum of up to
 * METER_SHARDS rows, and each use adds to one of them picked at random, so that concurrent
 * metered calls of a project rarely update the same row and never wait on one shared row.
 */
export const METER_SHARDS = 16;

/** Adds `amount` (negative to give back) to a random shard of the meter; no check. */
export async function addToMeter(db: Queryable, projectId: string, meter: string, periodStart: string, amount: number): Promise<void> {
  await db.query(
    `INSERT INTO meters (project_id, meter, period_start, shard, used) VALUES ($1, $2, $3::date, $4, $5)
     ON CONFLICT (project_id, meter, period_start, shard) DO UPDATE SET used = meters.used + EXCLUDED.used`,
    [projectId, meter, periodStart, Math.floor(Math.random() * METER_SHARDS), amount],
  );
}

/**
 * Inside a transaction: takes the meter's lock (held to commit) so that checks against its quota
 * run one at a time. Only calls near the quota take it (see TenancyService.consume).
 */
export async function lockMeter(tx: Queryable, projectId: string, meter: string, periodStart: string): Promise<void> {
  await tx.query(`SELECT pg_advisory_xact_lock(hashtextextended('meter:' || $1 || ':' || $2 || ':' || $3, 0))`, [projectId, meter, periodStart]);
}

export async function meterUsage(db: Queryable, projectId: string, meter: string, periodStart: string): Promise<number> {
  const result = await db.query<{ used: number }>(
    'SELECT coalesce(sum(used), 0)::int8 AS used FROM meters WHERE project_id = $1 AND meter = $2 AND period_start = $3::date',
    [projectId, meter, periodStart],
  );
  return Number(result.rows[0]?.used ?? 0);
}

/** Every meter of the project used in the period, by name (a meter not used has no row). */
export async function meterUsages(db: Queryable, projectId: string, periodStart: string): Promise<Map<string, number>> {
  const result = await db.query<{ meter: string; used: number }>(
    'SELECT meter, sum(used)::int8 AS used FROM meters WHERE project_id = $1 AND period_start = $2::date GROUP BY meter',
    [projectId, periodStart],
  );
  return new Map(result.rows.map((r) => [r.meter, Number(r.used)]));
}

/** A project's setting for one pack (tenancy_packs). */
export interface PackSettingRow {
  id: string;
  packId: string;
  enabled: boolean;
  config: Record<string, unknown>;
  setByKey: string | null;
  created: Date;
  updated: Date;
}

const PACK_COLUMNS = `id, pack_id AS "packId", enabled, config, set_by_key AS "setByKey", created_at AS "created", updated_at AS "updated"`;

export async function listPackSettings(db: Queryable, projectId: string): Promise<PackSettingRow[]> {
  return (await db.query<PackSettingRow>(`SELECT ${PACK_COLUMNS} FROM tenancy_packs WHERE project_id = $1 ORDER BY pack_id`, [projectId])).rows;
}

/** Sets the project's row for the pack (one per pack: a second call updates it in place). */
export async function upsertPackSetting(
  db: Queryable,
  projectId: string,
  setting: { id: string; packId: string; enabled: boolean; config: Record<string, unknown> | undefined; setByKey: string | null },
): Promise<PackSettingRow> {
  const { rows } = await db.query<PackSettingRow>(
    `INSERT INTO tenancy_packs (project_id, pack_id, id, enabled, config, set_by_key) VALUES ($1, $2, $3, $4, coalesce($5::jsonb, '{}'), $6)
     ON CONFLICT (project_id, pack_id) DO UPDATE
       SET enabled = excluded.enabled, config = coalesce($5::jsonb, tenancy_packs.config), set_by_key = excluded.set_by_key, updated_at = excluded.updated_at
     RETURNING ${PACK_COLUMNS}`,
    [projectId, setting.packId, setting.id, setting.enabled, setting.config === undefined ? null : JSON.stringify(setting.config), setting.setByKey],
  );
  return rows[0]!;
}

/** Answers whether there was a row to remove. */
export async function deletePackSetting(db: Queryable, projectId: string, packId: string): Promise<boolean> {
  return ((await db.query(`DELETE FROM tenancy_packs WHERE project_id = $1 AND pack_id = $2`, [projectId, packId])).rowCount ?? 0) > 0;
}

/** The project's setting for the pack: true or false, or undefined when it has none (the deployment's default). */
export async function packEnabled(db: Queryable, projectId: string, packId: string): Promise<boolean | undefined> {
  const { rows } = await db.query<{ enabled: boolean }>(`SELECT enabled FROM tenancy_packs WHERE project_id = $1 AND pack_id = $2`, [projectId, packId]);
  return rows[0]?.enabled;
}
