// The scale-out shape: the API enqueues, a separate `lattice worker` process consumes through
// BullMQ, both on one Postgres and one Redis.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { countEmbedded, insertMemories } from '../../src/memory/store.js';
import { newId } from '../../src/platform/ids.js';
import { createHarness, REDIS_URL, SERVER_DATABASE_URL, type Harness } from '../helpers/harness.js';
import { startCli, type LongRunning } from '../helpers/processes.js';

const BACKFILL = '/admin/memory/embeddings/backfill';

describe.skipIf(!REDIS_URL || !SERVER_DATABASE_URL)('backfill through BullMQ with a separate worker process', () => {
  let h: Harness;
  let worker: LongRunning | undefined;
  let p: { projectId: string; apiKey: string };

  beforeAll(async () => {
    // This process only produces jobs: no consumers here.
    h = await createHarness({ consumers: false, env: { JOB_TIMEOUT_MS: '2000' } });
    p = await h.project();
    await insertMemories(
      h.db,
      Array.from({ length: 30 }, (_, i) => ({ id: newId('mem'), projectId: p.projectId, content: `fact number ${i} about the customer` })),
    );
  });
  afterAll(async () => {
    await worker?.stop();
    await h?.close();
  });

  it('times out with JOB_TIMEOUT while no worker runs, since the API does not consume', async () => {
    const res = await h.call('POST', p.projectId, BACKFILL, { body: { batch: 10 } });
    expect(res.statusCode).toBe(503);
    expect(res.json().code).toBe('JOB_TIMEOUT');
    expect((await countEmbedded(h.db, p.projectId)).embedded).toBe(0);
  });

  it('embeds everything once a worker process consumes, including the job queued before it started', async () => {
    worker = startCli(['worker'], {
      DATABASE_URL: h.database.url,
      REDIS_URL,
      QUEUE_PREFIX: h.config.queuePrefix,
      POOL_MAX_THREADS: '1',
      LOG_LEVEL: 'info',
    });
    await worker.waitFor(/consuming jobs/);
    // The job enqueued above (10 rows) is picked up by the worker too.
    await expect.poll(async () => (await countEmbedded(h.db, p.projectId)).embedded, { timeout: 30_000, interval: 250 }).toBeGreaterThanOrEqual(10);
    let embedded = -1;
    for (let i = 0; i < 10 && embedded !== 0; i++) {
      const res = await h.call('POST', p.projectId, BACKFILL, { body: { batch: 8 } });
      if (res.statusCode === 503) continue; // the first job can outlast 2 s while the thread loads the model
      expect(res.statusCode).toBe(200);
      embedded = res.json().embedded;
    }
    expect(embedded).toBe(0);
    expect(await countEmbedded(h.db, p.projectId)).toMatchObject({ total: 30, embedded: 30 });
  });

  it('stops cleanly on SIGTERM', async () => {
    expect(await worker!.stop()).toBe(0);
    worker = undefined;
  });
});
