// Conversation context (POST /memory/context; SDK-WIRE.md 4.1): what the public clients' model
// wrappers put before every model call. The conversation says who it is about (conversation.ts) and
// what to look for (its last turn a person wrote, after the intent); the project's search finds the
// best memories of that subject; the pool packs them, best first and whole, into a context text
// within the token budget (workers/memory/context.ts). A conversation that names nobody the project
// knows is answered from the project's shared memories (those about no subject), never from a
// subject it guessed; context is null, with the reason, when nothing is found.
import { clampTo, type Subject } from '../../platform/common-schemas.js';
import type { Db } from '../../platform/db.js';
import { ValidationError } from '../../platform/errors.js';
import type { WorkerPool } from '../../platform/pool.js';
import type { MemorySearch } from '../search/search.js';
import { listMemories } from '../store.js';
import { queryOf, subjectCandidates, turnsOf, type SubjectCandidate, type Turn } from './conversation.js';

export const CONVERSATION_CONTEXT = {
  tokenBudget: { default: 1200, min: 50, max: 16_000 },
  limit: { default: 25, min: 1, max: 100 },
} as const;

export interface ConversationContextInput {
  turns?: Turn[];
  conversation?: string;
  intent?: string;
  tokenBudget?: number;
  limit?: number;
  excludeCategories?: string[];
  /** Who the conversation is about, when the caller knows (origin explicit). */
  subject?: Subject;
  /** The end user, as observe takes it (origin user). */
  userId?: string;
  /** The instant the conversation's words about time are read against; default now. */
  referenceTime?: Date;
  /** Answer from this brain's memories (in the project that owns it) instead: the caller checked it may read it. */
  brain?: { id: string; projectId: string; name: string };
}

export interface ConversationContext {
  context: string | null;
  subject: SubjectCandidate | null;
  memoryIds: string[];
  tokensEstimate: number;
  tokenBudget: number;
  droppedForBudget: number;
  query: string;
  /** Why context is null; null when it is not. */
  reason: string | null;
}

const clampInt = (value: number | undefined, bounds: { default: number; min: number; max: number }) => Math.round(clampTo(value, bounds));

export class ConversationContexts {
  constructor(
    private readonly db: Db,
    private readonly search: Pick<MemorySearch, 'search'>,
    private readonly pool: Pick<WorkerPool, 'run'>,
  ) {}

  /** A brain's memories that best answer the conversation, packed as build packs a subject's (a brain answers about no one subject). */
  private async fromBrain(
    brain: NonNullable<ConversationContextInput['brain']>,
    query: string,
    input: ConversationContextInput,
    o: { tokenBudget: number; limit: number; empty: Omit<ConversationContext, 'context' | 'subject' | 'reason'> },
  ): Promise<ConversationContext> {
    const hits = await this.search.search(brain.projectId, { query, brainId: brain.id, excludeCategories: input.excludeCategories, referenceTime: input.referenceTime, limit: o.limit });
    if (hits.length === 0) return { ...o.empty, context: null, subject: null, reason: `no memory of the brain ${brain.name} matches the conversation` };
    const header = `What the brain ${brain.name} holds, most relevant first:`;
    const lines = hits.map(({ memory: m }) => `- ${m.content.replace(/\s*\n\s*/g, ' ')} (${m.type}, ${m.validFrom.slice(0, 10)})`);
    const fit = await this.pool.run('memory.fit-context', { budget: o.tokenBudget, header, lines });
    if (fit.kept === 0) return { ...o.empty, context: null, subject: null, droppedForBudget: hits.length, reason: `tokenBudget ${o.tokenBudget} holds not even the best memory` };
    return {
      context: [header, ...lines.slice(0, fit.kept)].join('\n'),
      subject: null,
      memoryIds: hits.slice(0, fit.kept).map((h) => h.memory.id),
      tokensEstimate: fit.tokens,
      tokenBudget: o.tokenBudget,
      droppedForBudget: hits.length - fit.kept,
      query,
      reason: null,
    };
  }

  async build(projectId: string, input: ConversationContextInput): Promise<ConversationContext> {
    const turns = (input.turns ?? turnsOf(input.conversation ?? '')).filter((t) => t.content.trim() !== '');
    const query = queryOf(turns, input.intent);
    if (query === '') throw new ValidationError('the conversation is empty: give `turns` (with content) or a `conversation`', { field: 'turns' });
    const tokenBudget = clampInt(input.tokenBudget, CONVERSATION_CONTEXT.tokenBudget);
    const limit = clampInt(input.limit, CONVERSATION_CONTEXT.limit);
    const empty = { memoryIds: [], tokensEstimate: 0, tokenBudget, droppedForBudget: 0, query };

    if (input.brain) return this.fromBrain(input.brain, query, input, { tokenBudget, limit, empty });
    const candidates = subjectCandidates(turns, input);
    const subject = await this.known(projectId, candidates);
    if (candidates.length > 0 && !subject) {
      const named = candidates.map((c) => `${c.kind}:${c.externalId} (${c.origin})`).join(', ');
      return { ...empty, context: null, subject: null, reason: `nothing is remembered about ${named}` };
    }
    const hits = await this.search.search(projectId, {
      query,
      ...(subject ? { subject: { kind: subject.kind, externalId: subject.externalId } } : { withoutSubject: true }),
      excludeCategories: input.excludeCategories,
      referenceTime: input.referenceTime,
      limit,
    });
    if (hits.length === 0) {
      const about = subject ? `${subject.kind}:${subject.externalId}` : 'the project (the conversation names no one it knows, so only memories about no subject are read)';
      return { ...empty, context: null, subject: subject ?? null, reason: `no memory of ${about} matches the conversation` };
    }
    const header = subject ? `What is remembered about ${subject.kind} ${subject.externalId}, most relevant first:` : 'What is remembered, most relevant first:';
    const lines = hits.map(({ memory: m }) => `- ${m.content.replace(/\s*\n\s*/g, ' ')} (${m.type}, ${m.validFrom.slice(0, 10)})`);
    const fit = await this.pool.run('memory.fit-context', { budget: tokenBudget, header, lines });
    if (fit.kept === 0) {
      return { ...empty, context: null, subject: subject ?? null, droppedForBudget: hits.length, reason: `tokenBudget ${tokenBudget} holds not even the best memory` };
    }
    return {
      context: [header, ...lines.slice(0, fit.kept)].join('\n'),
      subject: subject ?? null,
      memoryIds: hits.slice(0, fit.kept).map((h) => h.memory.id),
      tokensEstimate: fit.tokens,
      tokenBudget,
      droppedForBudget: hits.length - fit.kept,
      query,
      reason: null,
    };
  }

  /** The first candidate the project holds a live memory about; an explicit subject is taken as given. */
  private async known(projectId: string, candidates: readonly SubjectCandidate[]): Promise<SubjectCandidate | undefined> {
    for (const candidate of candidates) {
      if (candidate.origin === 'explicit') return candidate;
      const [any] = await listMemories(this.db, projectId, { subjectKind: candidate.kind, subjectExternalId: candidate.externalId, liveOnly: true }, 1, 0);
      if (any) return candidate;
    }
    return undefined;
  }
}
