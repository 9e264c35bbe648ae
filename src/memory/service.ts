// Memory use cases. For now: the embedding backfill, the one path that crosses every tier
// (route -> queue -> job -> pool -> database).
import type { Db } from '../platform/db.js';
import type { AppQueue } from '../jobs.js';
import type { Embedder } from '../embeddings/embedder.js';
import { mapConcurrent } from '../platform/concurrency.js';
import * as store from './store.js';

export const BACKFILL_DEFAULT_BATCH = 500;
export const BACKFILL_MAX_BATCH = 10_000;
/** Rows embedded and written together by the backfill job. */
const WRITE_GROUP = 64;
const EMBED_GROUPS_IN_FLIGHT = 2;

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

  /**
   * The job: loads memories without a vector, embeds them in the pool, writes them back. Groups are
   * written as soon as they are embedded, so database writes overlap the embedding of later groups.
   */
  async embedPending(projectId: string, batch: number): Promise<{ embedded: number }> {
    const rows = await store.selectUnembedded(this.db, projectId, batch);
    const groups: (typeof rows)[] = [];
    for (let i = 0; i < rows.length; i += WRITE_GROUP) groups.push(rows.slice(i, i + WRITE_GROUP));
    const written = await mapConcurrent(groups, EMBED_GROUPS_IN_FLIGHT, async (group) => {
      const vectors = await this.embedder.embed(group.map((r) => r.content));
      return store.writeEmbeddings(
        this.db,
        projectId,
        this.embedder.model,
        group.map((row, i) => ({ id: row.id, vector: vectors[i]! })),
      );
    });
    return { embedded: written.reduce((sum, n) => sum + n, 0) };
  }
}
