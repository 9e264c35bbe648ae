// Memories whose embedding job was lost (a crash, a queue outage, a shutdown between the write and
// its job) are embedded anyway: at the next start, and by the sweep every minute.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createLattice } from '../../src/modules.js';
import { EmbeddingPipeline, type EmbeddingJobs } from '../../src/memory/embedding/pipeline.js';
import { domainQueue } from '../../src/platform/queue.js';
import { claimUnembedded, countEmbedded, EMBED_CLAIM_SECONDS, insertMemories } from '../../src/memory/store.js';
import { newId } from '../../src/platform/ids.js';
import { createLogger } from '../../src/platform/logger.js';
import { createHarness, type Harness } from '../helpers/harness.js';

const waitFor = async (check: () => Promise<boolean>, timeoutMs = 60_000) => {
  const start = Date.now();
  while (!(await check())) {
    if (Date.now() - start > timeoutMs) throw new Error('timed out');
    await new Promise((r) => setTimeout(r, 100));
  }
};

describe('the embedding sweep', () => {
  let h: Harness;
  beforeAll(async () => {
    h = await createHarness({ consumers: false });
  });
  afterAll(async () => {
    await h?.close();
  });

  it('finds every project with unembedded memories, and embeds them at the next start', async () => {
    const a = await h.project();
    const b = await h.project();
    // Written without any job, as if the process died right after the commit.
    for (const p of [a, b]) {
      await insertMemories(h.db, [
        { id: newId('mem'), projectId: p.projectId, content: `Prefers tea, says ${p.projectId}` },
        { id: newId('mem'), projectId: p.projectId, content: 'Lives in Porto' },
      ]);
    }
    expect((await countEmbedded(h.db, a.projectId)).embedded).toBe(0);

    const restarted = await createLattice(h.config, { log: createLogger('silent'), db: h.db });
    try {
      await restarted.startConsumers();
      await waitFor(async () => (await countEmbedded(h.db, a.projectId)).embedded === 2 && (await countEmbedded(h.db, b.projectId)).embedded === 2);
    } finally {
      await restarted.close();
    }
  });

  it('a drain stops between batches once shutdown begins, leaving the rest unembedded for the sweep', async () => {
    const p = await h.project();
    await insertMemories(h.db, [
      { id: newId('mem'), projectId: p.projectId, content: 'Drinks oat milk' },
      { id: newId('mem'), projectId: p.projectId, content: 'Works from Lisbon' },
    ]);
    const queue = domainQueue<EmbeddingJobs>(h.lattice.runtime.queue, 'memory');
    const shutdown = new AbortController();
    shutdown.abort();
    const stopping = new EmbeddingPipeline(h.db, queue, h.apis.embeddings, shutdown.signal);
    expect(await stopping.drainEmbeddings(p.projectId)).toEqual({ embedded: 0 });
    expect((await countEmbedded(h.db, p.projectId)).embedded).toBe(0);
    const running = new EmbeddingPipeline(h.db, queue, h.apis.embeddings, new AbortController().signal);
    expect(await running.drainEmbeddings(p.projectId)).toEqual({ embedded: 2 });
  });

  it("a drain whose embedding fails lets go of its claim, so the job's retry embeds the rows at once instead of a minute later", async () => {
    const p = await h.project();
    await insertMemories(h.db, ['Swims before work', 'Reads on the train', 'Bakes sourdough'].map((content) => ({ id: newId('mem'), projectId: p.projectId, content })));
    const queue = domainQueue<EmbeddingJobs>(h.lattice.runtime.queue, 'memory');
    const real = h.apis.embeddings;
    // The pool failing mid-drain (a worker thread lost, a task timing out), as the embedder reports it.
    const failing = { model: real.model, embedNow: real.embedNow.bind(real), embed: async () => Promise.reject(new Error('the embedding worker exited')) };
    await expect(new EmbeddingPipeline(h.db, queue, failing).drainEmbeddings(p.projectId)).rejects.toThrow('the embedding worker exited');
    const { rows } = await h.db.query<{ claimed: number; unembedded: number }>(
      `SELECT count(embed_claimed_at)::int AS claimed, count(*) FILTER (WHERE embedding IS NULL)::int AS unembedded FROM memories WHERE project_id = $1`,
      [p.projectId],
    );
    expect(rows[0]).toEqual({ claimed: 0, unembedded: 3 });
    expect(await new EmbeddingPipeline(h.db, queue, real).drainEmbeddings(p.projectId)).toEqual({ embedded: 3 });
  });

  it('drains running at once take disjoint batches, so no row is embedded twice; a lapsed claim is taken again', async () => {
    const p = await h.project();
    const ids = Array.from({ length: 60 }, () => newId('mem'));
    await insertMemories(h.db, ids.map((id, i) => ({ id, projectId: p.projectId, content: `Note ${i} on the allotment` })));
    const claims = await Promise.all([0, 1, 2].map(() => claimUnembedded(h.db, p.projectId, 25)));
    const taken = claims.flatMap((c) => c.map((r) => r.id));
    expect(new Set(taken).size).toBe(taken.length);
    expect(taken.length).toBe(60);
    expect(claims.map((c) => c.length).sort((x, y) => x - y)).toEqual([10, 25, 25]);
    // Every row is claimed: another drain finds nothing until a claim lapses.
    expect(await claimUnembedded(h.db, p.projectId, 100)).toEqual([]);
    await h.db.query(`UPDATE memories SET embed_claimed_at = now() - make_interval(secs => $3) WHERE project_id = $1 AND id = $2`, [p.projectId, ids[7], EMBED_CLAIM_SECONDS + 1]);
    expect((await claimUnembedded(h.db, p.projectId, 100)).map((r) => r.id)).toEqual([ids[7]]);
    // Concurrent drains embed all of them, each once.
    await h.db.query(`UPDATE memories SET embed_claimed_at = NULL WHERE project_id = $1`, [p.projectId]);
    const drains = [0, 1].map(() => new EmbeddingPipeline(h.db, domainQueue<EmbeddingJobs>(h.lattice.runtime.queue, 'memory'), h.apis.embeddings, new AbortController().signal));
    const results = await Promise.all(drains.map((d) => d.drainEmbeddings(p.projectId)));
    expect(results.reduce((sum, r) => sum + r.embedded, 0)).toBe(60);
    expect((await countEmbedded(h.db, p.projectId)).embedded).toBe(60);
  });
});
