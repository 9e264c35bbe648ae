// Planner statistics kept fresh. PGlite runs no autovacuum, and a Postgres may run without it, so
// tables filled in bulk (an import, a backfill) would be planned as if empty: a join that should
// look rows up by key scans a whole project instead. A job analyzes, on PGlite, every table (it
// reports no change counts) every 5 minutes, and on a Postgres with autovacuum off, every minute
// (autovacuum's own interval: a project that grows by thousands of memories a minute is planned
// from statistics at most a minute old), the tables changed by more than 50 rows + 10% since their
// last analysis (autovacuum's own default rule). With autovacuum on, Postgres keeps its statistics
// itself and the job does nothing. Composed as a module of its own.
//
// Dead rows likewise: the queue-like tables (the mining queue, the typed points waiting for their
// fold, the outboxes) delete what they insert, and without autovacuum their dead rows pile up until
// every scan of them walks tens of thousands (44,405 in the mining queue after a 10-minute soak).
// On a Postgres with autovacuum off, maintenance.vacuum vacuums every minute the tables whose dead
// rows pass 50 + 20% of their live ones (autovacuum's own default rule), skipping a table another
// vacuum holds. PGlite is left to its ANALYZE: its one connection would wait out every VACUUM.
import type { Db } from './db.js';
import type { DomainModule } from './module.js';

/** How often the job runs: on Postgres the check is a read of its table counters; on PGlite the job analyzes everything. */
export const maintenanceEveryMs = (kind: Db['kind']) => (kind === 'pglite' ? 5 * 60_000 : 60_000);

export type MaintenanceJobs = {
  'maintenance.analyze': { payload: Record<string, never>; result: { analyzed: string[] } };
  'maintenance.vacuum': { payload: Record<string, never>; result: { vacuumed: string[] } };
};

const autovacuumOn = async (db: Db) => (await db.query<{ on: boolean }>(`SELECT current_setting('autovacuum')::boolean AS on`)).rows[0]?.on === true;
const quoted = (name: string) => `"${name.replace(/"/g, '""')}"`;

export async function analyzeStale(db: Db): Promise<string[]> {
  if (db.kind === 'pglite') {
    await db.exec('ANALYZE');
    return ['*'];
  }
  if (await autovacuumOn(db)) return [];
  const { rows } = await db.query<{ relname: string }>(
    `SELECT relname FROM pg_stat_user_tables WHERE schemaname = current_schema()
       AND n_mod_since_analyze > 50 + 0.1 * greatest(n_live_tup, 0) ORDER BY relname`,
  );
  for (const { relname } of rows) await db.exec(`ANALYZE ${quoted(relname)}`);
  return rows.map((r) => r.relname);
}

/** On a Postgres with autovacuum off, vacuums the tables with dead rows past autovacuum's default rule; answers them. */
export async function vacuumDead(db: Db): Promise<string[]> {
  if (db.kind === 'pglite' || (await autovacuumOn(db))) return [];
  const { rows } = await db.query<{ relname: string }>(
    `SELECT relname FROM pg_stat_user_tables WHERE schemaname = current_schema()
       AND n_dead_tup > 50 + 0.2 * greatest(n_live_tup, 0) ORDER BY relname`,
  );
  for (const { relname } of rows) await db.exec(`VACUUM (SKIP_LOCKED) ${quoted(relname)}`);
  return rows.map((r) => r.relname);
}

export function createMaintenanceModule(runtime: { db: Db }): DomainModule<{ analyzeStale: () => Promise<string[]>; vacuumDead: () => Promise<string[]> }, MaintenanceJobs> {
  const analyze = () => analyzeStale(runtime.db);
  const vacuum = () => vacuumDead(runtime.db);
  return {
    name: 'maintenance',
    api: { analyzeStale: analyze, vacuumDead: vacuum },
    jobs: {
      'maintenance.analyze': async () => ({ analyzed: await analyze() }),
      'maintenance.vacuum': async () => ({ vacuumed: await vacuum() }),
    },
    schedules: [
      { id: 'maintenance.analyze', job: 'maintenance.analyze', payload: {}, everyMs: maintenanceEveryMs(runtime.db.kind) },
      ...(runtime.db.kind === 'pglite' ? [] : [{ id: 'maintenance.vacuum', job: 'maintenance.vacuum' as const, payload: {}, everyMs: 60_000 }]),
    ],
  };
}
