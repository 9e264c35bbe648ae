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
 * Adds `amount` to the meter for the period unless that would pass `limit`. One statement, so
 * concurrent writers can never overshoot together. Answers the new total, or undefined if refused.
 */
export async function consumeMeter(
  db: Queryable,
  projectId: string,
  meter: string,
  periodStart: string,
  amount: number,
  limit: number,
): Promise<number | undefined> {
  if (amount > limit) return undefined;
  const result = await db.query<{ used: number }>(
    `INSERT INTO meters (project_id, meter, period_start, used) VALUES ($1, $2, $3::date, $4)
     ON CONFLICT (project_id, meter, period_start)
     DO UPDATE SET used = meters.used + EXCLUDED.used
     WHERE meters.used + EXCLUDED.used <= $5
     RETURNING used`,
    [projectId, meter, periodStart, amount, Number.isFinite(limit) ? limit : Number.MAX_SAFE_INTEGER],
  );
  return result.rows[0]?.used;
}

export async function meterUsage(db: Queryable, projectId: string, meter: string, periodStart: string): Promise<number> {
  const result = await db.query<{ used: number }>(
    'SELECT used FROM meters WHERE project_id = $1 AND meter = $2 AND period_start = $3::date',
    [projectId, meter, periodStart],
  );
  return result.rows[0]?.used ?? 0;
}

/** Every meter of the project used in the period, by name (a meter not used has no row). */
export async function meterUsages(db: Queryable, projectId: string, periodStart: string): Promise<Map<string, number>> {
  const result = await db.query<{ meter: string; used: number }>(
    'SELECT meter, used FROM meters WHERE project_id = $1 AND period_start = $2::date',
    [projectId, periodStart],
  );
  return new Map(result.rows.map((r) => [r.meter, Number(r.used)]));
}
