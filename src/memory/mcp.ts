// The conversational memory tools for MCP clients: thin adapters over the same services as the
// REST routes. The MCP server (src/mcp) checks each tool's permission and maps its errors.
import { z } from 'zod';
import { ValidationError } from '../platform/errors.js';
import { SUBJECT_LIMITS } from '../platform/common-schemas.js';
import { isStorableTimestamp } from '../platform/input-guard.js';
import { defineTool, type ToolDefinition } from '../platform/module.js';
import type { ConversationContexts } from './context/context.js';
import { FLAG_AFTER, type MemoryFeedback } from './feedback/feedback.js';
import type { MemoryObserver } from './observe/observe.js';
import { MEMORY_SCOPES, MEMORY_TYPES } from './schemas.js';
import { toHitBody } from './search/routes.js';
import type { MemorySearch } from './search/search.js';
import type { MemoryService } from './service.js';

const scope = z.enum(MEMORY_SCOPES);
const type = z.enum(MEMORY_TYPES);
const limit = (d: number, max: number) => z.number().int().min(1).max(max).optional().describe(`default ${d}, at most ${max}`);
const offset = z.number().int().min(0).max(10_000).optional();
const isoTime = z.string().refine(isStorableTimestamp, 'must be an RFC 3339 timestamp (years 0001 to 9999, no leap second)');
// The REST subject's bounds, so both surfaces refuse the same subjects.
const subject = z.object({ kind: z.string().min(1).max(SUBJECT_LIMITS.kind), externalId: z.string().min(1).max(SUBJECT_LIMITS.externalId) });
/** Who wrote it and about whom, as the public MCP clients send it. */
const provenance = {
  agentId: z.string().max(256).optional(),
  userId: z.string().max(256).optional(),
  sessionId: z.string().max(256).optional(),
};

export function memoryTools(services: { memory: MemoryService; search: MemorySearch; observer: MemoryObserver; contexts: ConversationContexts; feedback: MemoryFeedback }): ToolDefinition[] {
  const { memory, search, observer, contexts, feedback } = services;
  return [
    defineTool({
      name: 'memory_feedback',
      description:
        `Rate a memory an answer used (POST /memory/feedback): a negative rating counts on the memory, and at the ${FLAG_AFTER === 3 ? 'third' : `${FLAG_AFTER}th`} a confirmed memory is flagged for review; ` +
        'a positive one counts as a use (recency). With a responseId it counts once per memory and response. Answers { counted } (false: that response was rated before); NOT_FOUND for a memory the project does not hold.',
      permission: 'WRITE_MEMORY',
      audit: 'write.feedback',
      inputSchema: {
        memoryId: z.string().min(1).max(100),
        rating: z.enum(['positive', 'negative']),
        responseId: z.string().min(1).max(200).optional().describe('The answer that used the memory'),
        comment: z.string().max(2000).optional(),
      },
      run: async (a, { projectId }) => ({ counted: await feedback.submit(projectId, a, null) }),
    }),

    defineTool({
      name: 'memory_context',
      description:
        'The memories a conversation needs, as one context text within a token budget (POST /memory/context): the subject is the one given, else a speaker naming themself ("I\'m Priya"), else a turn whose role is a name, else userId; ' +
        'a conversation naming no one is answered from the memories about no subject. Answers { context, subject (with origin and confidence), memoryIds, tokensEstimate, tokenBudget, droppedForBudget, query, reason }.',
      permission: 'READ_MEMORY',
      audit: 'read.context',
      inputSchema: {
        turns: z.array(z.object({ role: z.string().max(100).optional(), content: z.string().max(20_000) })).max(200).optional(),
        conversation: z.string().max(100_000).optional().describe('The conversation as one text: a line "Name: ..." starts a turn'),
        intent: z.string().max(2000).optional(),
        tokenBudget: z.number().optional().describe('default 1200, clamped to [50, 16000]'),
        limit: z.number().optional().describe('default 25, clamped to [1, 100]'),
        excludeCategories: z.array(z.string().max(200)).max(100).optional(),
        subject: subject.optional(),
        userId: z.string().min(1).max(256).optional(),
        referenceTime: isoTime.optional(),
      },
      run: (a, { projectId }) => contexts.build(projectId, { ...a, referenceTime: a.referenceTime === undefined ? undefined : new Date(a.referenceTime) }),
    }),

    defineTool({
      name: 'memory_save',
      description: 'Write a memory verbatim with an explicit type (kind) and scope. Idempotent on id and on identical live content.',
      permission: 'WRITE_MEMORY',
      audit: 'write.memory',
      inputSchema: {
        id: z.string().min(21).max(100).optional().describe('Client-chosen id (21+ characters) for idempotent retries'),
        content: z.string().min(1).max(20_000),
        type: type.optional(),
        kind: type.optional().describe('Alias of type'),
        scope,
        importance: z.number().min(0).max(10).optional(),
        confidence: z.number().min(0).max(1).optional(),
        category: z.string().max(100).optional(),
        occurredAt: isoTime.optional().describe('Event time (validFrom); default now'),
        validFrom: isoTime.optional(),
        metadata: z.record(z.string(), z.unknown()).optional(),
        subject: subject.optional(),
        ...provenance,
      },
      async run(a, { projectId }) {
        const memoryType = a.type ?? a.kind;
        if (!memoryType) throw new ValidationError('type (or kind) is required');
        const at = a.occurredAt ?? a.validFrom;
        const { memory: saved, created } = await memory.save(projectId, {
          id: a.id,
          content: a.content,
          type: memoryType,
          scope: a.scope,
          importance: a.importance,
          confidence: a.confidence,
          category: a.category,
          metadata: a.metadata,
          subject: a.subject ?? (a.userId ? { kind: 'user', externalId: a.userId } : undefined),
          agentId: a.agentId,
          userId: a.userId,
          sessionKey: a.sessionId,
          validFrom: at === undefined ? undefined : new Date(at),
          source: 'mcp',
        });
        return { ...saved, created };
      },
    }),

    defineTool({
      name: 'memory_search',
      description: 'Hybrid semantic + full-text + recency + importance retrieval, filtered by scope. Without a query, lists newest first.',
      permission: 'READ_MEMORY',
      audit: 'read.search',
      inputSchema: {
        query: z.string().min(1).max(2000).optional(),
        scope: scope.optional(),
        type: type.optional(),
        asOf: isoTime.optional(),
        referenceTime: isoTime.optional().describe('The instant words about time in the query ("last week") are read against; default now'),
        subject: subject.optional().describe('Only memories about this subject'),
        minScore: z.number().min(0).max(1.2).optional(),
        limit: limit(20, 50),
        offset,
        ...provenance,
      },
      async run(a, { projectId }) {
        if (!a.query) {
          return memory.list(projectId, { scope: a.scope, type: a.type, userId: a.userId, agentId: a.agentId, limit: a.limit ?? 20, offset: a.offset ?? 0 });
        }
        const hits = await search.search(projectId, {
          query: a.query,
          scope: a.scope,
          type: a.type,
          userId: a.userId,
          agentId: a.agentId,
          asOf: a.asOf === undefined ? undefined : new Date(a.asOf),
          referenceTime: a.referenceTime === undefined ? undefined : new Date(a.referenceTime),
          subject: a.subject,
          minScore: a.minScore,
          limit: a.limit ?? 20,
          offset: a.offset ?? 0,
        });
        return hits.map(toHitBody);
      },
    }),

    defineTool({
      name: 'memory_list',
      description: 'Newest-first memories in a scope (search without a query).',
      permission: 'READ_MEMORY',
      audit: 'read.list',
      inputSchema: { scope: scope.optional(), type: type.optional(), limit: limit(20, 500), offset, ...provenance },
      run: (a, { projectId }) => memory.list(projectId, { scope: a.scope, type: a.type, limit: a.limit ?? 20, offset: a.offset ?? 0 }),
    }),

    defineTool({
      name: 'memory_recall',
      description: 'Fetch one memory by id; marks it accessed (lastAccessedAt). Not semantic.',
      permission: 'READ_MEMORY',
      audit: 'read.memory',
      inputSchema: { id: z.string().min(1).max(100), ...provenance },
      run: (a, { projectId }) => memory.recall(projectId, a.id),
    }),

    defineTool({
      name: 'memory_observe',
      description: 'Extract what is worth remembering from raw conversation text and save it; filler saves nothing; idempotent. Answers { saved, candidateCount }.',
      permission: 'WRITE_MEMORY',
      audit: 'write.observe',
      inputSchema: {
        text: z.string().min(1).max(20_000).optional(),
        content: z.string().min(1).max(20_000).optional().describe('Legacy alias of text'),
        role: z.enum(['user', 'assistant', 'system']).optional().describe('default user'),
        occurredAt: isoTime.optional(),
        subject: subject.optional(),
        ...provenance,
      },
      async run(a, { projectId }) {
        const text = a.text ?? a.content;
        if (!text) throw new ValidationError('text is required');
        return observer.observe(projectId, {
          text,
          role: a.role ?? 'user',
          userId: a.userId,
          agentId: a.agentId,
          sessionId: a.sessionId,
          occurredAt: a.occurredAt === undefined ? undefined : new Date(a.occurredAt),
          subject: a.subject,
        });
      },
    }),
  ];
}
