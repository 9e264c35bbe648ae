// Memory use cases: write (save, create), read (get, recall, list, review, stats, insights) and
// curate (patch, confirm, promote, delete). REST routes and MCP tools both call these. What is
// written is embedded by the pipeline (embedding/pipeline.ts).
import { UNIQUE_VIOLATION, type Db, type Queryable } from '../platform/db.js';
import { ConflictError, NotFoundError, ValidationError } from '../platform/errors.js';
import { newId } from '../platform/ids.js';
import { subjectOf, type Subject } from '../platform/common-schemas.js';
import { contentHash, memoryKey } from './content-hash.js';
import type { BackfillProgress, EmbeddingPipeline } from './embedding/pipeline.js';
import { IMMUTABLE_FIELDS, type Memory, type MemoryScope, type MemoryType, type PatchMemoryBody, type SubjectInsight } from './schemas.js';
import { brainIdsOf } from './brains/store.js';
import * as store from './store.js';

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
    /** Embeds what the service writes (now, or behind by a job). */
    private readonly embedding: EmbeddingPipeline,
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
    if (byId.size > 0 && !(await this.embedding.embedInline(projectId, [...byId.values()]))) await this.embedding.scheduleEmbeddingOrLeaveToSweep(projectId);
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
    return this.embedding.scheduleEmbeddingOrLeaveToSweep(projectId);
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
    if (changes.content !== undefined) await this.embedding.scheduleEmbeddingOrLeaveToSweep(projectId);
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

  // ---- embeddings: the pipeline's (embedding/pipeline.ts) ---------------------------------------

  backfillEmbeddings(projectId: string, batch?: number): Promise<BackfillProgress> {
    return this.embedding.backfillEmbeddings(projectId, batch);
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
