// kill -9 of a `lattice worker` in the middle of a job, under write load: the API keeps accepting
// writes, and a worker started afterwards finishes what the dead one left (its start-up sweep, or
// BullMQ's stalled-job check), so every acknowledged memory ends up embedded.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { countEmbedded } from '../../src/memory/store.js';
import { createHarness, REDIS_URL, SERVER_DATABASE_URL, uniqueName, type Harness } from '../helpers/harness.js';
import { startCli, type LongRunning } from '../helpers/processes.js';

const waitFor = async (check: () => Promise<boolean>, timeoutMs: number) => {
  const start = Date.now();
  while (!(await check())) {
    if (Date.now() - start > timeoutMs) throw new Error(`timed out after ${timeoutMs} ms`);
    await new Promise((r) => setTimeout(r, 100));
  }
};

describe.skipIf(!REDIS_URL || !SERVER_DATABASE_URL)('kill -9 of a worker mid-job', () => {
  let h: Harness;
  const prefix = uniqueName('lattice-crash');
  const workers: LongRunning[] = [];
  const worker = async () => {
    const started = startCli(['worker'], { DATABASE_URL: h.database.url!, REDIS_URL: REDIS_URL!, QUEUE_PREFIX: prefix, POOL_MAX_THREADS: '1', LOG_LEVEL: 'info' });
    workers.push(started);
    await started.waitFor(/consuming jobs/);
    return started;
  };

  beforeAll(async () => {
    // The API side only: jobs go to Redis under this prefix, for the worker processes to run.
    h = await createHarness({ consumers: false, env: { QUEUE_PREFIX: prefix } });
  });
  afterAll(async () => {
    for (const w of workers) w.child.kill('SIGKILL');
    await h?.close();
  });

  it('loses nothing: the next worker embeds every acknowledged memory', async () => {
    const { projectId } = await h.project();
    const first = await worker();
    const bulk = Array.from({ length: 600 }, (_, i) => ({ content: `Bulk memory ${i}: prefers aisle seats on flight ${i}` }));
    const saved = await h.lattice.apis.memory.saveMany(projectId, bulk as never);
    expect(saved).toHaveLength(600);
    // Mid-job: some embedded, not all.
    await waitFor(async () => (await countEmbedded(h.db, projectId)).embedded >= 30, 60_000);
    first.child.kill('SIGKILL');
    await new Promise((resolve) => first.child.once('close', resolve));
    const atKill = (await countEmbedded(h.db, projectId)).embedded;
    expect(atKill).toBeLessThan(600);

    // Writes go on while no worker runs.
    const during: string[] = [];
    for (let i = 0; i < 20; i++) {
      const res = await h.call('POST', projectId, '/admin/memory', { body: { content: `Written while the worker was dead, number ${i}` } });
      expect(res.statusCode).toBe(201);
      during.push(res.json().id);
    }

    await worker();
    await waitFor(async () => (await countEmbedded(h.db, projectId)).embedded === 620, 120_000);
    const { rows } = await h.db.query<{ total: number; embedded: number }>(
      'SELECT count(*)::int AS total, count(embedding)::int AS embedded FROM memories WHERE project_id = $1',
      [projectId],
    );
    expect(rows[0]).toEqual({ total: 620, embedded: 620 });
    const mine = await h.db.query<{ n: number }>('SELECT count(*)::int AS n FROM memories WHERE id = ANY($1::text[]) AND embedding IS NOT NULL', [during]);
    expect(mine.rows[0]!.n).toBe(20);
  }, 240_000);
});
