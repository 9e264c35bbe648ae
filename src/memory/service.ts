// Memory use cases. For now: the embedding backfill, the one path that crosses every tier
// (route -> queue -> job -> pool -> database).
import type { Db } from '../platform/db.js';
import type { AppQueue } from '../jobs.js';
import type { Embedder } from '../embeddings/embedder.js';
import * as store from './store.js';

export const BACKFILL_DEFAULT_BATCH = 500;
export const BACKFILL_MAX_BATCH = 10_000;

export class MemoryService {
  constructor(
    private readonly db: Db,
    private readonly queue: AppQueue,
    private readonly embedder: Embedder,
  ) {}

  /** Interactive: runs one backfill batch as a job and waits for it. */
  backfillEmbeddings(projectId: string, batch = BACKFILL_DEFAULT_BATCH): Promise<{ embedded: number }> {
    return this.queue.run('embeddings.backfill', { projectId, batch: Math.min(Math.max(1, batch), BACKFILL_MAX_BATCH) });
  }

  /** The job: loads memories without a vector, embeds them in the pool, writes them back. */
  async embedPending(projectId: string, batch: number): Promise<{ embedded: number }> {
    const rows = await store.selectUnembedded(this.db, projectId, batch);
    if (rows.length === 0) return { embedded: 0 };
    const vectors = await this.embedder.embed(rows.map((r) => r.content));
    const embedded = await store.writeEmbeddings(
      this.db,
      projectId,
      this.embedder.model,
      rows.map((row, i) => ({ id: row.id, vector: vectors[i]! })),
    );
    return { embedded };
  }
}
