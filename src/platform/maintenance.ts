// Planner statistics kept fresh. PGlite runs no autovacuum, and a Postgres may run without it, so
// tables filled in bulk (an import, a backfill) would be planned as if empty: a join that should
// look rows up by key scans a whole project instead. A job analyzes, on PGlite, every table (it
// reports no change counts) every 5 minutes, and on a Postgres with autovacuum off, every minute
// (autovacuum's own interval: a project that grows by thousands of memories a minute is planned
// from statistics at most a minute old), the tables changed by more than 50 rows + 10% since their
// last analysis (autovacuum's own default rule). With autovacuum on, Postgres keeps its statistics
// itself and the job does nothing. Composed as a module of its own.
import type { Db } from './db.js';
import type { DomainModule } from './module.js';

/** How often the job runs: on Postgres the check is a read of its table counters; on PGlite the job analyzes everything. */
export const maintenanceEveryMs = (kind: Db['kind']) => (kind === 'pglite' ? 5 * 60_000 : 60_000);

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
    schedules: [{ id: 'maintenance.analyze', job: 'maintenance.analyze', payload: {}, everyMs: maintenanceEveryMs(runtime.db.kind) }],
  };
}
