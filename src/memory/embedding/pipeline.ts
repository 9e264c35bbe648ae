// The embedding pipeline: a memory's vector, made before a small write answers (read-your-writes)
// or behind it by a job (one drain per project and second), claimed a batch at a time so that
// concurrent drains share the work, swept up after a crash or an outage, and backfilled on demand.
import { performance } from 'node:perf_hooks';
import type { EmbeddingsApi } from '../../embeddings/index.js';
import { mapConcurrent } from '../../platform/concurrency.js';
import type { Db } from '../../platform/db.js';
import { DependencyUnavailableError } from '../../platform/errors.js';
import type { DomainQueue, JobHandlers } from '../../platform/queue.js';
import { BACKFILL_DEFAULT_BATCH, BACKFILL_MAX_BATCH } from '../limits.js';
import type { Memory } from '../schemas.js';
import * as store from '../store.js';

export interface BackfillProgress {
  embedded: number;
  remaining: number;
  embeddedPerSecond: number;
  etaSeconds: number | null;
}

/** Rows embedded and written together by the backfill job. */
const WRITE_GROUP = 64;
const EMBED_GROUPS_IN_FLIGHT = 2;
/** Rows a drain claims at once: the groups in flight. */
const CLAIM_SIZE = WRITE_GROUP * EMBED_GROUPS_IN_FLIGHT;
/** The automatic embedding job drains at most this many rows per run, then re-enqueues itself. */
const DRAIN_LIMIT = 5000;
/**
 * Read-your-writes: a write of at most this many new memories is embedded before it answers, so a
 * search right after finds it by meaning; larger (bulk) writes are embedded behind, by a job.
 */
export const INLINE_EMBED_MAX = 4;
/**
 * How long a write waits for its inline embedding at most. One short text takes about 10 to 15 ms
 * of a free pool thread; the bound leaves room for a loaded machine. With no thread free the write
 * does not wait at all; past the bound it answers, and the job embeds the memory (until then it is
 * found by its words).
 */
export const INLINE_EMBED_BUDGET_MS = 250;

/** The jobs the pipeline enqueues: embedding, behind writes and on demand. */
export type EmbeddingJobs = {
  'memory.embed-backfill': { payload: { projectId: string; batch: number }; result: { embedded: number } };
  'memory.embed-drain': { payload: { projectId: string }; result: { embedded: number } };
  'memory.embed-sweep': { payload: Record<string, never>; result: { projects: number } };
};

export class EmbeddingPipeline {
  constructor(
    private readonly db: Db,
    private readonly queue: DomainQueue<EmbeddingJobs>,
    private readonly embedder: Pick<EmbeddingsApi, 'embed' | 'embedNow' | 'model'>,
    /** Aborted at shutdown: the drain stops between batches (the sweep finishes the work later). */
    private readonly stopping: AbortSignal = new AbortController().signal,
  ) {}

  /**
   * Embeds a small write before it answers (read-your-writes); answers whether it did. The returned
   * memories are marked embedded in place.
   */
  async embedInline(projectId: string, created: Memory[]): Promise<boolean> {
    if (created.length > INLINE_EMBED_MAX) return false;
    const vectors = await this.embedder.embedNow(created.map((m) => m.content), INLINE_EMBED_BUDGET_MS);
    if (!vectors) return false;
    const written = await store.writeEmbeddings(this.db, projectId, this.embedder.model, created.map((m, i) => ({ id: m.id, vector: vectors[i]! })));
    if (written !== created.length) return false;
    for (const m of created) m.hasEmbedding = true;
    return true;
  }

  /**
   * After a committed write: the memory is stored, so a queue that is down must not fail the
   * request; the embedding sweep (every minute) finds the memory and schedules its drain.
   */
  async scheduleEmbeddingOrLeaveToSweep(projectId: string): Promise<void> {
    try {
      await this.scheduleEmbedding(projectId);
    } catch (error) {
      if (!(error instanceof DependencyUnavailableError)) throw error;
    }
  }

  /**
   * The sweep: schedules the drain of every project that holds memories without a vector (a write
   * whose drain job was lost to a crash, a queue outage or a shutdown). Answers how many projects.
   */
  async sweepUnembedded(): Promise<{ projects: number }> {
    const projects = await store.projectsWithUnembedded(this.db);
    for (const projectId of projects) await this.scheduleEmbedding(projectId);
    return { projects: projects.length };
  }

  /**
   * Interactive: runs one backfill batch as a job and waits for it, then counts the memories still
   * without a vector and estimates how long they take at this call's rate.
   */
  async backfillEmbeddings(projectId: string, batch = BACKFILL_DEFAULT_BATCH): Promise<BackfillProgress> {
    const started = performance.now();
    const { embedded } = await this.queue.run('memory.embed-backfill', { projectId, batch: Math.min(Math.max(1, batch), BACKFILL_MAX_BATCH) });
    const seconds = (performance.now() - started) / 1000;
    const remaining = await store.countUnembedded(this.db, projectId);
    const rate = embedded / Math.max(seconds, 1e-3);
    return {
      embedded,
      remaining,
      embeddedPerSecond: Math.round(rate * 10) / 10,
      etaSeconds: remaining === 0 ? 0 : embedded > 0 ? Math.ceil(remaining / rate) : null,
    };
  }

  /**
   * Writes are embedded behind, by a job. One job per project per second: it starts a moment after
   * its second ends, so it sees every row written in that second, and later writes get a later job.
   */
  async scheduleEmbedding(projectId: string, now = Date.now(), at = now): Promise<void> {
    const second = Math.floor(at / 1000);
    await this.queue.enqueue(
      'memory.embed-drain',
      { projectId },
      { jobId: `memory.embed-drain.${projectId}.${second}`, delayMs: Math.max(0, (second + 1) * 1000 + 100 - now), attempts: 3, backoffMs: 2000 },
    );
  }

  /** The automatic job: embeds every pending row of the project, in batches, until shutdown. */
  async drainEmbeddings(projectId: string): Promise<{ embedded: number }> {
    let total = 0;
    while (total < DRAIN_LIMIT) {
      if (this.stopping.aborted) return { embedded: total };
      const { embedded, claimed } = await this.claimAndEmbed(projectId, BACKFILL_DEFAULT_BATCH);
      // What is left is claimed by other drains. Should one of them have died, the embedding sweep
      // (every minute) schedules a drain that takes its rows once the claim lapses; a job delayed
      // to the lapse here would sit in the queue for a minute though the other drain finishes.
      if (claimed === 0) return { embedded: total };
      total += embedded;
    }
    await this.scheduleEmbedding(projectId);
    return { embedded: total };
  }

  /**
   * The backfill job: loads memories without a vector, embeds them in the pool, writes them back.
   * Groups are written as soon as they are embedded, so writes overlap the embedding of later groups.
   */
  async embedPending(projectId: string, batch: number): Promise<{ embedded: number }> {
    const { embedded } = await this.claimAndEmbed(projectId, batch, true);
    return { embedded };
  }

  /**
   * Claims rows a claim at a time (so that a claim is held for a second or two, not for the whole
   * batch), embeds them, writes them back; answers how many it claimed and wrote.
   */
  private async claimAndEmbed(projectId: string, batch: number, takeClaimed = false): Promise<{ embedded: number; claimed: number }> {
    let claimed = 0;
    let embedded = 0;
    while (claimed < batch) {
      const rows = await store.claimUnembedded(this.db, projectId, Math.min(CLAIM_SIZE, batch - claimed), takeClaimed);
      if (rows.length === 0) break;
      claimed += rows.length;
      const groups: (typeof rows)[] = [];
      for (let i = 0; i < rows.length; i += WRITE_GROUP) groups.push(rows.slice(i, i + WRITE_GROUP));
      let written: number[];
      try {
        written = await mapConcurrent(groups, EMBED_GROUPS_IN_FLIGHT, async (group) => {
          const vectors = await this.embedder.embed(group.map((r) => r.content), { background: true });
          return store.writeEmbeddings(
            this.db,
            projectId,
            this.embedder.model,
            group.map((row, i) => ({ id: row.id, vector: vectors[i]! })),
          );
        });
      } catch (error) {
        // The job's retry (or the next drain) takes the rows at once, rather than skipping them as
        // another drain's until the claim lapses a minute later. Best effort: a release that fails
        // too leaves the lapse to free them.
        await store.releaseEmbedClaims(this.db, projectId, rows.map((r) => r.id)).catch(() => undefined);
        throw error;
      }
      embedded += written.reduce((sum, n) => sum + n, 0);
    }
    return { embedded, claimed };
  }
}

/** The handlers of the embedding jobs. */
export function embeddingJobs(pipeline: EmbeddingPipeline): JobHandlers<EmbeddingJobs> {
  return {
    'memory.embed-backfill': ({ projectId, batch }) => pipeline.embedPending(projectId, batch),
    'memory.embed-drain': ({ projectId }) => pipeline.drainEmbeddings(projectId),
    'memory.embed-sweep': () => pipeline.sweepUnembedded(),
  };
}
