// Memory use cases: write (save, create), read (get, recall, list, review, stats, insights),
// curate (patch, confirm, promote, delete), and the embedding path. REST routes and MCP tools
// both call these.
import type { EmbeddingsApi } from '../embeddings/index.js';
import { performance } from 'node:perf_hooks';
import { mapConcurrent } from '../platform/concurrency.js';
import { UNIQUE_VIOLATION, type Db, type Queryable } from '../platform/db.js';
import { ConflictError, DependencyUnavailableError, NotFoundError, ValidationError } from '../platform/errors.js';
import { newId } from '../platform/ids.js';
import type { JobHandlers, DomainQueue } from '../platform/queue.js';
import { subjectOf, type Subject } from '../platform/common-schemas.js';
import { contentHash, memoryKey } from './content-hash.js';
import { BACKFILL_DEFAULT_BATCH, BACKFILL_MAX_BATCH } from './limits.js';
import { IMMUTABLE_FIELDS, type Memory, type MemoryScope, type MemoryType, type PatchMemoryBody, type SubjectInsight } from './schemas.js';
import { brainIdsOf } from './brains/store.js';
import * as store from './store.js';

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

/** The jobs this service enqueues: embedding, behind writes and on demand. */
export type EmbeddingJobs = {
  'memory.embed-backfill': { payload: { projectId: string; batch: number }; result: { embedded: number } };
  'memory.embed-drain': { payload: { projectId: string }; result: { embedded: number } };
  'memory.embed-sweep': { payload: Record<string, never>; result: { projects: number } };
};

export interface SaveInput {
  id?: string;
  content: string;
  type?: MemoryType;
  scope?: MemoryScope;
  status?: 'pending' | 'confirmed';
  category?: string;
  importance?: number;
  confidence?: number;
  source?: string;
  subject?: Subject;
  agentId?: string;
  userId?: string;
  sessionKey?: string;
  metadata?: Record<string, unknown>;
  impact?: string;
  validFrom?: Date;
  sourceMemoryIds?: string[];
}

export interface SaveResult {
  memory: Memory;
  /** False when a live identical memory already existed and was answered instead. */
  created: boolean;
}

export interface ListOptions extends store.MemoryFilter {
  limit?: number;
  offset?: number;
}

function normaliseId(id: string): string {
  return id.startsWith('mem_') ? id : `mem_${id}`;
}

export class MemoryService {
  constructor(
    private readonly db: Db,
    private readonly queue: DomainQueue<EmbeddingJobs>,
    private readonly embedder: Pick<EmbeddingsApi, 'embed' | 'embedNow' | 'model'>,
    /** Aborted at shutdown: the drain stops between batches (the sweep finishes the work later). */
    private readonly stopping: AbortSignal = new AbortController().signal,
  ) {}

  // ---- writes ---------------------------------------------------------------------------------

  /** Saves memories verbatim. Replays (same live content) answer the existing memory. */
  async saveMany(projectId: string, inputs: readonly SaveInput[]): Promise<SaveResult[]> {
    const rows = inputs.map((input) => newRow(projectId, input));
    await this.assertBrains(projectId, rows.map((r) => r.metadata));
    const byId = new Map((await store.insertMemories(this.db, rows)).map((m) => [m.id, m]));
    const results: SaveResult[] = [];
    for (const row of rows) {
      const inserted = byId.get(row.id);
      if (inserted) {
        results.push({ memory: inserted, created: true });
        continue;
      }
      // Not inserted: either this exact id exists (a replayed client id) or a live twin does.
      const existing =
        (await store.getMemory(this.db, projectId, row.id)) ??
        (await store.findLiveTwin(this.db, {
          projectId,
          scope: row.scope!,
          type: row.type!,
          subjectKind: row.subjectKind ?? null,
          subjectExternalId: row.subjectExternalId ?? null,
          contentHash: row.contentHash!,
        }));
      if (!existing) throw new ConflictError(`memory ${row.id} conflicts with another write; retry`);
      results.push({ memory: existing, created: false });
    }
    if (byId.size > 0 && !(await this.embedInline(projectId, [...byId.values()]))) await this.scheduleEmbeddingOrLeaveToSweep(projectId);
    return results;
  }

  /**
   * Writes engine-derived memories identified by a key per subject (mined patterns): a key seen
   * before replaces its row in place. Rows whose text is new are embedded by a job. With `tx`, the
   * write joins the caller's transaction, and the embedding is left to `afterKeyedCommit`.
   */
  async upsertKeyed(projectId: string, rows: readonly store.KeyedMemory[], tx?: Queryable): Promise<store.KeyedWrite[]> {
    const written = await store.upsertKeyedMemories(tx ?? this.db, projectId, rows, rows.map(() => newId('mem')));
    if (tx === undefined && written.length > 0) await this.afterKeyedCommit(projectId);
    return written;
  }

  /** Once a transaction that wrote keyed memories has committed: their embedding is scheduled. */
  afterKeyedCommit(projectId: string): Promise<void> {
    return this.scheduleEmbeddingOrLeaveToSweep(projectId);
  }

  /**
   * Saves engine records (a decision, an outcome) inside the caller's transaction, so that they and
   * the memories that mirror them commit or fail together. Every row must be new (its content
   * names its record); the embedding is scheduled by `afterKeyedCommit` once committed.
   */
  async saveInTransaction(tx: Queryable, projectId: string, inputs: readonly SaveInput[]): Promise<Memory[]> {
    const rows = inputs.map((input) => newRow(projectId, input));
    const inserted = await store.insertMemories(tx, rows);
    if (inserted.length !== rows.length) throw new ConflictError('a memory with the same id or content already exists; retry');
    return inserted;
  }

  /** The memories of the project among `ids` (superseded ones too), with their confidence. */
  async confidences(projectId: string, ids: readonly string[]): Promise<Map<string, number>> {
    const found = await store.getMemories(this.db, projectId, [...new Set(ids)]);
    return new Map(found.map((m) => [m.id, m.confidence]));
  }

  async save(projectId: string, input: SaveInput): Promise<SaveResult> {
    const [result] = await this.saveMany(projectId, [input]);
    return result!;
  }

  /**
   * A memory joins a brain by metadata.brainId, which must name a brain of its own project: a
   * memory cannot claim another project's brain, or one that does not exist (and so rank as
   * licensed_brain content it is not).
   */
  private async assertBrains(projectId: string, metadatas: readonly (Record<string, unknown> | null | undefined)[]): Promise<void> {
    const named = metadatas.flatMap((m) => (m && m.brainId !== undefined && m.brainId !== null ? [m.brainId] : []));
    if (named.length === 0) return;
    const bad = (message: string) => new ValidationError(message, { errors: [{ path: 'body.metadata.brainId', message }] });
    if (named.some((id) => typeof id !== 'string' || id === '')) throw bad('metadata.brainId must be the id of one of the project\'s brains (a string)');
    const ids = [...new Set(named as string[])];
    const found = new Set(await brainIdsOf(this.db, projectId, ids));
    const missing = ids.filter((id) => !found.has(id));
    if (missing.length > 0) throw bad(`metadata.brainId names no brain of this project: ${missing.join(', ')}`);
  }

  // ---- reads ----------------------------------------------------------------------------------

  async get(projectId: string, id: string): Promise<Memory> {
    const memory = await store.getMemory(this.db, projectId, id);
    if (!memory) throw new NotFoundError(`memory ${id} not found`);
    return memory;
  }

  /** Many memories by id, in the order of the ids; ids not in the project are left out. */
  getMany(projectId: string, ids: readonly string[]): Promise<Memory[]> {
    return ids.length === 0 ? Promise.resolve([]) : store.getMemories(this.db, projectId, ids);
  }

  /** Fetch by id, marking it accessed (not semantic). */
  async recall(projectId: string, id: string): Promise<Memory> {
    const memory = await store.touchMemory(this.db, projectId, id);
    if (!memory) throw new NotFoundError(`memory ${id} not found`);
    return memory;
  }

  /**
   * Newest first. Without `status` or `asOf`, superseded and rejected memories are left out:
   * a list shows what is believed now.
   */
  list(projectId: string, options: ListOptions = {}): Promise<Memory[]> {
    const { limit = 50, offset = 0, ...filter } = options;
    const effective = filter.status === undefined && filter.asOf === undefined && !filter.reviewOnly ? { ...filter, liveOnly: true } : filter;
    return store.listMemories(this.db, projectId, effective, limit, offset);
  }

  review(projectId: string, limit = 50, offset = 0): Promise<Memory[]> {
    return store.listMemories(this.db, projectId, { reviewOnly: true }, limit, offset);
  }

  async stats(projectId: string) {
    const { byScope, byStatus, byType, totals } = await store.memoryStats(this.db, projectId);
    const total = totals.total ?? 0;
    const embedded = totals.embedded ?? 0;
    return {
      total,
      pendingReview: totals.review ?? 0,
      flagged: totals.flagged ?? 0,
      byScope,
      byStatus,
      byType,
      embedding: {
        embedded,
        total,
        coverage: total === 0 ? 1 : embedded / total,
        graphReady: (totals.graphReady ?? 0) > 0,
        projectIndex: (totals.projectIndex ?? 0) > 0,
      },
      patternCount: totals.patterns ?? 0,
    };
  }

  async insights(projectId: string, limit = 50, offset = 0, now = new Date()): Promise<SubjectInsight[]> {
    const rows = await store.subjectInsights(this.db, projectId, limit, offset);
    return rows.map((r) => ({
      subject: { kind: r.subjectKind, externalId: r.subjectExternalId },
      memoryCount: r.memoryCount,
      firstMemoryAt: new Date(r.firstMemoryAt).toISOString(),
      lastMemoryAt: new Date(r.lastMemoryAt).toISOString(),
      daysSinceLastMemory: Math.max(0, (now.getTime() - new Date(r.lastMemoryAt).getTime()) / 86_400_000),
      avgImportance: r.avgImportance,
      maxImportance: r.maxImportance,
    }));
  }

  // ---- curation -------------------------------------------------------------------------------

  async patch(projectId: string, id: string, body: PatchMemoryBody): Promise<Memory> {
    const immutable = IMMUTABLE_FIELDS.filter((field) => field in body);
    if (immutable.length > 0) {
      throw new ValidationError(`${immutable.join(', ')} cannot be changed`, { errors: immutable.map((f) => ({ path: `body.${f}`, message: 'cannot be changed' })) });
    }
    const changes: store.MemoryChanges = {
      type: body.type,
      category: body.category,
      importance: body.importance,
      confidence: body.confidence,
      scope: body.scope,
      status: body.status,
      metadata: body.metadata,
      impact: body.impact,
      validFrom: body.validFrom === undefined ? undefined : new Date(body.validFrom),
      validTo: body.validTo === undefined ? undefined : body.validTo === null ? null : new Date(body.validTo),
    };
    if (body.content !== undefined) {
      const content = body.content.trim();
      if (content.length === 0) throw new ValidationError('content must not be blank');
      changes.content = content;
    }
    if (body.status === 'confirmed') Object.assign(changes, { reviewReason: null, confirmedAt: new Date() });
    if (body.metadata !== undefined) await this.assertBrains(projectId, [body.metadata]);
    const current = await this.get(projectId, id);
    // An event keyed by its time (content-hash.ts) keeps being keyed by it, at its new time if that moves.
    const timed = current.contentHash !== contentHash(current.content);
    if (changes.content !== undefined || (timed && changes.validFrom !== undefined)) {
      const content = changes.content ?? current.content;
      changes.contentHash = timed ? memoryKey(content, changes.type ?? current.type, changes.validFrom ?? new Date(current.validFrom)) : contentHash(content);
    }
    if (current.status === 'superseded' && body.status !== undefined) {
      throw new ConflictError(`memory ${id} is superseded by ${current.supersededById}; edit that one instead`);
    }
    const validFrom = changes.validFrom ?? new Date(current.validFrom);
    const validTo = changes.validTo === undefined ? (current.validTo ? new Date(current.validTo) : null) : changes.validTo;
    if (validTo !== null && validTo < validFrom) throw new ValidationError('validTo must not be before validFrom');
    const updated = await this.unique(() => store.updateMemory(this.db, projectId, id, changes), `an identical memory already exists`);
    if (!updated) throw new NotFoundError(`memory ${id} not found`);
    if (changes.content !== undefined) await this.scheduleEmbeddingOrLeaveToSweep(projectId);
    return updated;
  }

  /** Confirm or reject a memory awaiting review (pending, or flagged). */
  async confirm(projectId: string, id: string, decision: 'confirmed' | 'rejected', actor: string): Promise<Memory> {
    const current = await this.get(projectId, id);
    const awaiting = current.status === 'pending' || current.reviewReason !== null;
    if (!awaiting || current.status === 'superseded' || current.status === 'rejected') {
      throw new ConflictError(`memory ${id} is ${current.status} and not awaiting review`, { status: current.status });
    }
    const updated = await store.updateMemory(
      this.db,
      projectId,
      id,
      { status: decision, reviewReason: null, confirmedAt: new Date(), confirmedBy: actor },
      ['pending', 'confirmed'],
    );
    if (!updated) throw new ConflictError(`memory ${id} changed while it was being reviewed; read it again`);
    return updated;
  }

  /** Moves the memory to another scope (a scope change, not a copy). */
  async promote(projectId: string, id: string, targetScope: MemoryScope): Promise<Memory> {
    const current = await this.get(projectId, id);
    if (current.status === 'superseded' || current.status === 'rejected') {
      throw new ConflictError(`memory ${id} is ${current.status}; only live memories can be promoted`);
    }
    if (current.scope === targetScope) return current;
    const updated = await this.unique(
      () => store.updateMemory(this.db, projectId, id, { scope: targetScope }),
      `an identical memory already exists in scope ${targetScope}`,
    );
    if (!updated) throw new NotFoundError(`memory ${id} not found`);
    return updated;
  }

  /**
   * Marks live memories superseded by `byId`: their validTo becomes the time the new fact began
   * (its validFrom), so `asOf` before then still finds them. Nothing is deleted.
   */
  async supersede(projectId: string, ids: readonly string[], byId: string): Promise<number> {
    const replacement = await this.get(projectId, byId);
    const targets = ids.filter((id) => id !== byId);
    return store.supersedeMemories(this.db, projectId, targets, byId, new Date(replacement.validFrom));
  }

  async delete(projectId: string, id: string): Promise<void> {
    if (!(await store.deleteMemory(this.db, projectId, id))) throw new NotFoundError(`memory ${id} not found`);
  }

  // ---- embeddings -----------------------------------------------------------------------------

  /**
   * Embeds a small write before it answers (read-your-writes); answers whether it did. The returned
   * memories are marked embedded in place.
   */
  private async embedInline(projectId: string, created: Memory[]): Promise<boolean> {
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
  private async scheduleEmbeddingOrLeaveToSweep(projectId: string): Promise<void> {
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
      const written = await mapConcurrent(groups, EMBED_GROUPS_IN_FLIGHT, async (group) => {
        const vectors = await this.embedder.embed(group.map((r) => r.content), { background: true });
        return store.writeEmbeddings(
          this.db,
          projectId,
          this.embedder.model,
          group.map((row, i) => ({ id: row.id, vector: vectors[i]! })),
        );
      });
      embedded += written.reduce((sum, n) => sum + n, 0);
    }
    return { embedded, claimed };
  }

  /** Runs a write that may collide with a live twin, turning the collision into a 409. */
  private async unique<T>(write: () => Promise<T>, message: string): Promise<T> {
    try {
      return await write();
    } catch (error) {
      if ((error as { code?: string }).code === UNIQUE_VIOLATION) throw new ConflictError(message, undefined);
      throw error;
    }
  }
}

/** The handlers of the embedding jobs. */
export function embeddingJobs(memory: MemoryService): JobHandlers<EmbeddingJobs> {
  return {
    'memory.embed-backfill': ({ projectId, batch }) => memory.embedPending(projectId, batch),
    'memory.embed-drain': ({ projectId }) => memory.drainEmbeddings(projectId),
    'memory.embed-sweep': () => memory.sweepUnembedded(),
  };
}

/** A memory row as a save writes it: content trimmed (blank refused), the defaults filled in. */
function newRow(projectId: string, input: SaveInput): store.NewMemory {
  const content = input.content.trim();
  if (content.length === 0) throw new ValidationError('content must not be blank');
  const subject = subjectOf(input.subject, input.metadata);
  const type = input.type ?? 'fact';
  return {
    id: input.id ? normaliseId(input.id) : newId('mem'),
    projectId,
    content,
    contentHash: memoryKey(content, type, input.validFrom),
    type,
    scope: input.scope ?? 'project',
    status: input.status ?? 'confirmed',
    importance: input.importance ?? 5,
    confidence: input.confidence ?? 1,
    category: input.category ?? null,
    source: input.source ?? null,
    subjectKind: subject?.kind ?? null,
    subjectExternalId: subject?.externalId ?? null,
    agentId: input.agentId ?? null,
    userId: input.userId ?? (subject?.kind === 'user' ? subject.externalId : null),
    sessionKey: input.sessionKey ?? null,
    metadata: input.metadata ?? null,
    impact: input.impact ?? null,
    validFrom: input.validFrom,
    sourceMemoryIds: input.sourceMemoryIds ?? [],
    reviewReason: null,
  };
}
