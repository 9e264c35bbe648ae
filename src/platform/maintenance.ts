// Planner statistics kept fresh. PGlite runs no autovacuum, and a Postgres may run without it, so
// tables filled in bulk (an import, a backfill) would be planned as if empty: a join that should
// look rows up by key scans a whole project instead. A job every MAINTENANCE_EVERY_MS analyzes,
// on PGlite, every table, and on a Postgres with autovacuum off, the tables changed by more than
// 50 rows + 10% since their last analysis (autovacuum's own default rule). With autovacuum on,
// Postgres keeps its statistics itself and the job does nothing. Composed as a module of its own.
import type { Db } from './db.js';
import type { DomainModule } from './module.js';

export const MAINTENANCE_EVERY_MS = 5 * 60_000;

export type MaintenanceJobs = {
  'maintenance.analyze': { payload: Record<string, never>; result: { analyzed: string[] } };
};

export async function analyzeStale(db: Db): Promise<string[]> {
  if (db.kind === 'pglite') {
    await db.exec('ANALYZE');
    return ['*'];
  }
  const { rows: setting } = await db.query<{ on: boolean }>(`SELECT current_setting('autovacuum')::boolean AS on`);
  if (setting[0]?.on) return [];
  const { rows } = await db.query<{ relname: string }>(
    `SELECT relname FROM pg_stat_user_tables WHERE schemaname = current_schema()
       AND n_mod_since_analyze > 50 + 0.1 * greatest(n_live_tup, 0) ORDER BY relname`,
  );
  for (const { relname } of rows) await db.exec(`ANALYZE "${relname.replace(/"/g, '""')}"`);
  return rows.map((r) => r.relname);
}

export function createMaintenanceModule(runtime: { db: Db }): DomainModule<{ analyzeStale: () => Promise<string[]> }, MaintenanceJobs> {
  const analyze = () => analyzeStale(runtime.db);
  return {
    name: 'maintenance',
    api: { analyzeStale: analyze },
    jobs: { 'maintenance.analyze': async () => ({ analyzed: await analyze() }) },
    schedules: [{ id: 'maintenance.analyze', job: 'maintenance.analyze', payload: {}, everyMs: MAINTENANCE_EVERY_MS }],
  };
}
