// Planner statistics: the maintenance job analyzes every table on PGlite (no autovacuum there),
// and on a Postgres without autovacuum the tables changed enough since their last analysis. Dead
// rows: on a Postgres without autovacuum, the vacuum job clears the tables that have piled them up.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createHarness, type Harness } from '../helpers/harness.js';

describe('maintenance.analyze', () => {
  let h: Harness;
  beforeAll(async () => {
    h = await createHarness({ consumers: false });
  });
  afterAll(async () => h?.close());

  it('leaves statistics behind for a table filled in bulk', async () => {
    const { projectId } = await h.project();
    await h.db.query(
      `INSERT INTO graph_entities (project_id, id, type, canonical_name) SELECT $1, 'ent_stats' || i, 'concept', 'stats ' || i FROM generate_series(1, 2000) AS i`,
      [projectId],
    );
    const autovacuum = h.db.kind === 'pg' && (await h.db.query<{ on: boolean }>(`SELECT current_setting('autovacuum')::boolean AS on`)).rows[0]!.on;
    let analyzed = await h.apis.maintenance.analyzeStale();
    // Postgres publishes a backend's table counters as it goes idle, but at most once a second: a
    // backend that published within the last second waits seconds more (ten on Postgres 15).
    for (const deadline = Date.now() + 60_000; h.db.kind === 'pg' && !autovacuum && !analyzed.includes('graph_entities') && Date.now() < deadline; ) {
      await new Promise((resolve) => setTimeout(resolve, 100));
      analyzed = await h.apis.maintenance.analyzeStale();
    }
    if (h.db.kind === 'pglite') expect(analyzed).toEqual(['*']);
    else if (autovacuum) expect(analyzed).toEqual([]);
    else expect(analyzed).toContain('graph_entities');
    if (!autovacuum) {
      const { rows } = await h.db.query<{ n: string }>(`SELECT count(*) AS n FROM pg_stats WHERE tablename = 'graph_entities'`);
      expect(Number(rows[0]!.n)).toBeGreaterThan(0);
    }
  }, 120_000);

  it('vacuums a table whose rows were deleted when autovacuum is off, and nothing otherwise', async () => {
    const autovacuum = h.db.kind === 'pg' && (await h.db.query<{ on: boolean }>(`SELECT current_setting('autovacuum')::boolean AS on`)).rows[0]!.on;
    const { projectId } = await h.project();
    await h.db.query(
      `INSERT INTO behavior_mining_queue (project_id, subject_kind, subject_external_id, first_at, last_at)
         SELECT $1, 'user', 'vac-' || i, now(), now() FROM generate_series(1, 3000) AS i`,
      [projectId],
    );
    await h.db.query('DELETE FROM behavior_mining_queue WHERE project_id = $1', [projectId]);
    const dead = async () =>
      (await h.db.query<{ n: number }>(`SELECT coalesce(sum(n_dead_tup), 0)::int AS n FROM pg_stat_user_tables WHERE relname = 'behavior_mining_queue'`)).rows[0]!.n;
    if (h.db.kind === 'pglite' || autovacuum) {
      expect(await h.apis.maintenance.vacuumDead()).toEqual([]);
      return;
    }
    // The deleting backend's counters reach the statistics once flushed (forced here, rather than waited for).
    await h.db.query('SELECT pg_stat_force_next_flush()');
    await h.db.query('SELECT 1');
    let vacuumed = await h.apis.maintenance.vacuumDead();
    for (const deadline = Date.now() + 60_000; !vacuumed.includes('behavior_mining_queue') && Date.now() < deadline; ) {
      await new Promise((resolve) => setTimeout(resolve, 100));
      vacuumed = await h.apis.maintenance.vacuumDead();
    }
    expect(vacuumed).toContain('behavior_mining_queue');
    expect(await dead()).toBeLessThan(3000);
  }, 120_000);
});
