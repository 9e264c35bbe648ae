// The conversational memory tools, as an MCP server bound to one caller. Tools are thin adapters
// over the same services as the REST routes; errors come back as MCP tool errors carrying our
// codes, never as transport failures.
import { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import { z } from 'zod';
import { AppError, ValidationError } from '../platform/errors.js';
import { MEMORY_SCOPES, MEMORY_TYPES, type MemoryScope, type MemoryType } from '../memory/schemas.js';
import type { MemorySearch } from '../memory/search.js';
import { toHitBody } from '../memory/search-routes.js';
import type { MemoryService } from '../memory/service.js';
import type { Permission } from '../tenancy/keys.js';
import type { Principal, TenancyService } from '../tenancy/service.js';

export interface McpServices {
  memory: MemoryService;
  search: MemorySearch;
  tenancy: TenancyService;
  /** Observe, once the extractor is wired (the service method exists). */
  observe?: (projectId: string, input: ObserveToolInput) => Promise<unknown>;
}

export interface ObserveToolInput {
  text: string;
  role: 'user' | 'assistant' | 'system';
  userId?: string;
  agentId?: string;
  sessionId?: string;
  occurredAt?: Date;
  subject?: { kind: string; externalId: string };
}

const scope = z.enum(MEMORY_SCOPES);
const type = z.enum(MEMORY_TYPES);
const limit = (d: number, max: number) => z.number().int().min(1).max(max).optional().describe(`default ${d}, at most ${max}`);
const offset = z.number().int().min(0).max(10_000).optional();
const isoTime = z.string().refine((s) => !Number.isNaN(Date.parse(s)), 'must be an ISO 8601 timestamp');
const provenance = {
  platformId: z.string().optional().describe('Accepted for compatibility; the project is the one of the API key'),
  projectId: z.string().optional().describe('Accepted for compatibility; must match the API key if given'),
  agentId: z.string().max(256).optional(),
  userId: z.string().max(256).optional(),
  sessionId: z.string().max(256).optional(),
};

function ok(value: unknown): CallToolResult {
  return { content: [{ type: 'text', text: JSON.stringify(value) }] };
}

function failure(error: unknown): CallToolResult {
  const body =
    error instanceof AppError
      ? { code: error.code, statusCode: error.statusCode, message: error.message, ...(error.params ? { params: error.params } : {}) }
      : { code: 'INTERNAL_ERROR', statusCode: 500, message: 'internal error' };
  return { isError: true, content: [{ type: 'text', text: JSON.stringify(body) }] };
}

export function buildMcpServer(services: McpServices, principal: Principal, log: { error(obj: unknown, msg: string): void }): McpServer {
  const server = new McpServer({ name: 'lattice', version: '1.0.0' }, { capabilities: { tools: {} } });
  const { memory, search, tenancy } = services;
  const projectId = principal.projectId;

  /** Runs a tool body under a permission, mapping every failure to a tool error. */
  const guarded =
    <A>(permission: Permission, body: (args: A) => Promise<unknown>) =>
    async (args: A): Promise<CallToolResult> => {
      try {
        tenancy.assertPermission(principal, permission);
        const { projectId: claimed } = args as { projectId?: string };
        if (claimed !== undefined && claimed !== projectId) throw new ValidationError(`projectId ${claimed} does not match the API key's project`);
        return ok(await body(args));
      } catch (error) {
        if (!(error instanceof AppError)) log.error({ err: error }, 'MCP tool failed');
        return failure(error);
      }
    };

  server.registerTool(
    'memory_save',
    {
      description: 'Write a memory verbatim with an explicit type (kind) and scope. Idempotent on id and on identical live content.',
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
        subject: z.object({ kind: z.string().min(1), externalId: z.string().min(1) }).optional(),
        ...provenance,
      },
    },
    guarded('WRITE_MEMORY', async (a) => {
      const memoryType = (a.type ?? a.kind) as MemoryType | undefined;
      if (!memoryType) throw new ValidationError('type (or kind) is required');
      const at = a.occurredAt ?? a.validFrom;
      const { memory: saved, created } = await memory.save(projectId, {
        id: a.id,
        content: a.content,
        type: memoryType,
        scope: a.scope as MemoryScope,
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
    }),
  );

  server.registerTool(
    'memory_search',
    {
      description: 'Hybrid semantic + full-text + recency + importance retrieval, filtered by scope. Without a query, lists newest first.',
      inputSchema: {
        query: z.string().min(1).max(2000).optional(),
        scope: scope.optional(),
        type: type.optional(),
        asOf: isoTime.optional(),
        minScore: z.number().min(0).max(1.1).optional(),
        limit: limit(20, 50),
        offset,
        ...provenance,
      },
    },
    guarded('READ_MEMORY', async (a) => {
      if (!a.query) {
        return memory.list(projectId, { scope: a.scope as MemoryScope | undefined, type: a.type, userId: a.userId, agentId: a.agentId, limit: a.limit ?? 20, offset: a.offset ?? 0 });
      }
      const hits = await search.search(projectId, {
        query: a.query,
        scope: a.scope as MemoryScope | undefined,
        type: a.type as MemoryType | undefined,
        userId: a.userId,
        agentId: a.agentId,
        asOf: a.asOf === undefined ? undefined : new Date(a.asOf),
        minScore: a.minScore,
        limit: a.limit ?? 20,
        offset: a.offset ?? 0,
      });
      return hits.map(toHitBody);
    }),
  );

  server.registerTool(
    'memory_list',
    {
      description: 'Newest-first memories in a scope (search without a query).',
      inputSchema: { scope: scope.optional(), type: type.optional(), limit: limit(20, 500), offset, ...provenance },
    },
    guarded('READ_MEMORY', (a) =>
      memory.list(projectId, { scope: a.scope as MemoryScope | undefined, type: a.type, limit: a.limit ?? 20, offset: a.offset ?? 0 }),
    ),
  );

  server.registerTool(
    'memory_recall',
    { description: 'Fetch one memory by id; marks it accessed (lastAccessedAt). Not semantic.', inputSchema: { id: z.string().min(1).max(100), ...provenance } },
    guarded('READ_MEMORY', (a) => memory.recall(projectId, a.id)),
  );

  if (services.observe) {
    const observe = services.observe;
    server.registerTool(
      'memory_observe',
      {
        description: 'Extract what is worth remembering from raw conversation text and save it; filler saves nothing; idempotent. Answers { saved, candidateCount }.',
        inputSchema: {
          text: z.string().min(1).max(20_000).optional(),
          content: z.string().min(1).max(20_000).optional().describe('Legacy alias of text'),
          role: z.enum(['user', 'assistant', 'system']).optional().describe('default user'),
          occurredAt: isoTime.optional(),
          subject: z.object({ kind: z.string().min(1), externalId: z.string().min(1) }).optional(),
          ...provenance,
        },
      },
      guarded('WRITE_MEMORY', async (a) => {
        const text = a.text ?? a.content;
        if (!text) throw new ValidationError('text is required');
        return observe(projectId, {
          text,
          role: a.role ?? 'user',
          userId: a.userId,
          agentId: a.agentId,
          sessionId: a.sessionId,
          occurredAt: a.occurredAt === undefined ? undefined : new Date(a.occurredAt),
          subject: a.subject,
        });
      }),
    );
  }

  return server;
}
