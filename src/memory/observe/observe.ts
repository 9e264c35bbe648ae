// Observe: raw conversation text in, durable memories out. The heuristic extractor (extract.ts)
// decides what is worth keeping; this saves it idempotently (content hashes), and lets a new value
// of a single-valued fact (a slot: residence, employer, preferred_milk ...) supersede the old one,
// so a correction retires what it contradicts instead of deleting it.
import type { Config } from '../../config.js';
import { subjectOf, type Subject } from '../../platform/common-schemas.js';
import { KeyedLock } from '../../platform/concurrency.js';
import type { Db } from '../../platform/db.js';
import type { DomainQueue, JobHandlers } from '../../platform/queue.js';
import { comparableWords, lexicalSimilarity, type ComparableWords } from '../../../workers/near-duplicate.js';
import { extractCandidates } from '../extract/extract.js';
import type { ModelPass } from './model-pass.js';
import { findSlotHolders, findWordNeighbours } from '../store.js';
import type { Memory, MemoryScope, MemoryType } from '../schemas.js';
import type { MemoryService, SaveInput, SaveResult } from '../service.js';

export interface ObserveInput {
  text: string;
  role?: 'user' | 'assistant' | 'system';
  subject?: Subject;
  userId?: string;
  agentId?: string;
  sessionId?: string;
  /** When the turn happened; default now. */
  occurredAt?: Date;
  scope?: MemoryScope;
  /** Overrides the extractor's classification of every statement. */
  type?: MemoryType;
  /** Overrides the extractor's importance of every statement. */
  importance?: number;
  category?: string;
  activityType?: string;
  metadata?: Record<string, unknown>;
}

export interface ObserveResult {
  /** Memories created by this call: empty for filler, and for a repeat of something already known. */
  saved: Memory[];
  candidateCount: number;
  /** Memories retired by a newer value of the same slot. */
  supersededIds: string[];
  /** Set when the turn was queued for extraction (AP_MEMORY_OBSERVE_ASYNC_ENABLED with Redis). */
  queued?: { jobId: string };
}

/** The types of a memory saved as given whose statement may fill a slot (the clients' observe saves events). */
const REVISED_TYPES = new Set<string>(['fact', 'preference', 'event', 'correction']);

/** The slot of a memory's content when it reads as one statement filling one (third person for a subject not a user). */
function slotOfStatement(content: string, subject: Subject, now: Date): string | undefined {
  const { candidates } = extractCandidates(content, { role: 'user', now, thirdParty: subject.kind !== 'user' });
  return candidates.length === 1 ? candidates[0]!.slot : undefined;
}

/** Memories sharing a word with a statement that are checked for being its repeat, at most. */
const REPEAT_NEIGHBOURS = 50;
/** A model fact whose words are this alike a heuristic candidate's says the same thing. */
const MODEL_REPEAT = 0.7;

/** The job that extracts a queued turn (the async buffer). */
export type ObserveJobs = {
  'memory.observe': { payload: { projectId: string; input: Omit<ObserveInput, 'occurredAt'> & { occurredAt: string } }; result: { saved: number } };
};

export class MemoryObserver {
  /**
   * Turns about one subject are saved one at a time (across processes on Postgres): the check for
   * a repeat in other words and the save are one step, so two concurrent paraphrases of the same
   * fact store it once (the content hash alone catches only the identical text).
   */
  private readonly subjectLock: KeyedLock;

  constructor(
    private readonly db: Db,
    private readonly memory: MemoryService,
    private readonly queue: DomainQueue<ObserveJobs>,
    private readonly config: Pick<Config, 'observeAsync' | 'redisUrl'>,
    private readonly modelPass?: Pick<ModelPass, 'candidates'>,
  ) {
    this.subjectLock = new KeyedLock(db, 'memory.observe');
  }

  /** With the async buffer on (and Redis), answers once the raw turn is durably enqueued. */
  async observe(projectId: string, input: ObserveInput): Promise<ObserveResult> {
    if (this.config.observeAsync && this.config.redisUrl !== undefined) {
      const jobId = await this.queue.enqueue(
        'memory.observe',
        { projectId, input: { ...input, occurredAt: (input.occurredAt ?? new Date()).toISOString() } },
        { attempts: 5, backoffMs: 2000 },
      );
      return { saved: [], candidateCount: 0, supersededIds: [], queued: { jobId } };
    }
    return this.extractAndSave(projectId, input);
  }

  async extractAndSave(projectId: string, input: ObserveInput, now = new Date()): Promise<ObserveResult> {
    const occurredAt = input.occurredAt ?? now;
    const role = input.role ?? 'user';
    const subject = subjectOf(input.subject, input.metadata) ?? (input.userId ? { kind: 'user', externalId: input.userId } : undefined);
    // Notes about a customer, a patient, an account: "Jane moved to Denver" is about the subject.
    const heuristic = extractCandidates(input.text, { role, now: occurredAt, thirdParty: subject !== undefined && subject.kind !== 'user' });
    // The model's facts join the heuristic's, except those that say the same words.
    const fromModel = ((await this.modelPass?.candidates(projectId, input.text, role)) ?? []).filter((m) => {
      const words = comparableWords(m.content);
      return !heuristic.candidates.some((c) => lexicalSimilarity(words, comparableWords(c.content)) >= MODEL_REPEAT);
    });
    const modelMade = new Set<object>(fromModel);
    const extracted = { candidates: [...heuristic.candidates, ...fromModel], candidateCount: heuristic.candidateCount + fromModel.length };
    const { candidateCount } = extracted;
    const scope = input.scope ?? 'project';
    if (extracted.candidates.length === 0) return { saved: [], candidateCount, supersededIds: [] };
    const key = [projectId, scope, subject?.kind ?? '', subject?.externalId ?? ''].join('\0');
    return this.subjectLock.run(key, async () => {
      const candidates = await this.withoutRepeats(projectId, extracted.candidates, scope, subject);
      if (candidates.length === 0) return { saved: [], candidateCount, supersededIds: [] };

      const results = await this.memory.saveMany(
        projectId,
        candidates.map((c) => ({
          content: c.content,
          type: input.type ?? c.type,
          scope,
          importance: input.importance ?? c.importance,
          confidence: c.confidence,
          category: input.category,
          subject,
          agentId: input.agentId,
          userId: input.userId,
          sessionKey: input.sessionId,
          source: modelMade.has(c) ? 'observe:model' : 'observe',
          // An event holds from when it happens; anything else from when it was said.
          validFrom: c.type === 'event' && c.occurredAt ? new Date(c.occurredAt) : occurredAt,
          metadata: {
            ...input.metadata,
            role,
            ...(c.slot ? { slot: c.slot } : {}),
            ...(c.correction ? { correction: true } : {}),
            ...(c.entities.length ? { entities: c.entities } : {}),
            ...(c.occurredAt ? { eventAt: c.occurredAt } : {}),
            ...(input.activityType ? { eventType: input.activityType } : {}),
            observedAt: occurredAt.toISOString(),
          },
        })),
      );

      const supersededIds: string[] = [];
      for (const [i, { memory, created }] of results.entries()) {
        const slot = candidates[i]!.slot;
        if (created && slot) supersededIds.push(...(await this.revise(projectId, memory, slot, scope, subject)));
      }
      return { saved: results.filter((r) => r.created).map((r) => r.memory), candidateCount, supersededIds };
    });
  }

  /**
   * A memory saved as given (POST /admin/memory, where the public clients' observe writes a note
   * about a subject) that states one single-valued fact about its subject, and names no slot of its
   * own, is given the slot observe would give the statement (metadata.slot), and revises what is
   * known as observe does: an older live value of the same subject, scope and slot is superseded by
   * it ("Acme downgraded to the Pro plan" after "Jane at Acme is on the Enterprise plan"), or it is
   * superseded by a newer one already known; one that says the same words is the same value restated,
   * left live for dedup. The content is kept as sent. Saved one at a time per subject, as observe's
   * turns are.
   */
  async saveRevising(projectId: string, input: SaveInput, now = new Date()): Promise<SaveResult & { supersededIds: string[] }> {
    const subject = subjectOf(input.subject, input.metadata);
    const slot = subject && input.metadata?.slot === undefined && REVISED_TYPES.has(input.type ?? 'fact') ? slotOfStatement(input.content, subject, now) : undefined;
    if (!slot) return { ...(await this.memory.save(projectId, input)), supersededIds: [] };
    const scope = input.scope ?? 'project';
    return this.subjectLock.run([projectId, scope, subject!.kind, subject!.externalId].join('\0'), async () => {
      const result = await this.memory.save(projectId, { ...input, metadata: { ...input.metadata, slot } });
      return { ...result, supersededIds: result.created ? await this.revise(projectId, result.memory, slot, scope, subject, { restatementsKept: true }) : [] };
    });
  }

  /**
   * Supersedes the older live values of `memory`'s slot by it, or it by a newer one: the ids retired.
   * With restatementsKept, a holder that says the same words (near-duplicate.ts) is no other value
   * but the same one restated, and is left to dedup (observe drops such a statement before saving it).
   */
  private async revise(projectId: string, memory: Memory, slot: string, scope: MemoryScope, subject: Subject | undefined, options: { restatementsKept?: boolean } = {}): Promise<string[]> {
    let holders = await findSlotHolders(this.db, projectId, { slot, scope, subject, excludeId: memory.id });
    if (options.restatementsKept && holders.length > 0) {
      const words = comparableWords(memory.content);
      const restated = new Set((await this.memory.getMany(projectId, holders.map((m) => m.id))).filter((m) => lexicalSimilarity(words, comparableWords(m.content)) === 1).map((m) => m.id));
      holders = holders.filter((m) => !restated.has(m.id));
    }
    const since = Date.parse(memory.validFrom);
    const earlier = holders.filter((m) => m.validFrom.getTime() <= since).map((m) => m.id);
    const later = holders.find((m) => m.validFrom.getTime() > since);
    const retired: string[] = [];
    if (earlier.length > 0) {
      await this.memory.supersede(projectId, earlier, memory.id);
      retired.push(...earlier);
    }
    // Learned late: a newer value is already known, so this one held only until that began.
    if (later) {
      await this.memory.supersede(projectId, [memory.id], later.id);
      retired.push(memory.id);
    }
    return retired;
  }

  /**
   * Drops statements already known in other words: a live memory of the same scope and subject
   * with the same words (articles, punctuation, case, contractions, inflection and phrase order
   * aside; near-duplicate.ts). Exact repeats are caught again by the content hash on save.
   */
  private async withoutRepeats<C extends { content: string }>(projectId: string, candidates: readonly C[], scope: MemoryScope, subject: Subject | undefined): Promise<C[]> {
    const kept: { candidate: C; words: ComparableWords }[] = [];
    for (const candidate of candidates) {
      const words = comparableWords(candidate.content);
      // A repeat within the same turn is dropped too (checked first: no query needed).
      if (kept.some((k) => lexicalSimilarity(words, k.words) === 1)) continue;
      const neighbours = await findWordNeighbours(this.db, projectId, { text: candidate.content, scope, subject, limit: REPEAT_NEIGHBOURS });
      if (!neighbours.some((n) => lexicalSimilarity(words, comparableWords(n.content)) === 1)) kept.push({ candidate, words });
    }
    return kept.map((k) => k.candidate);
  }
}

export function observeJobs(observer: MemoryObserver): JobHandlers<ObserveJobs> {
  return {
    'memory.observe': async ({ projectId, input }) => ({
      saved: (await observer.extractAndSave(projectId, { ...input, occurredAt: new Date(input.occurredAt) })).saved.length,
    }),
  };
}
