// A brain's own MCP endpoint (`/brains/{brainId}/mcp-server/http`, the hosted endpoint the public
// TypeScript client names for consuming a published brain): read-only tools over that brain's
// memories alone, for the calling project when it may read the brain (Brains.readable: its own in
// any status, another project's when PUBLISHED and PUBLIC or UNLISTED; a 404 otherwise). The tools
// carry the names of /mcp-server's, so a client points the same calls at a brain.
import { z } from 'zod';
import { isStorableTimestamp } from '../../platform/input-guard.js';
import { defineTool, type ScopedMcpEndpoint } from '../../platform/module.js';
import type { ConversationContexts } from '../context/context.js';
import { MEMORY_TYPES } from '../schemas.js';
import { toHitBody } from '../search/routes.js';
import type { MemorySearch } from '../search/search.js';
import { catalogueEntry, type Brains } from './brains.js';
import { BrainParamsSchema } from './schemas.js';

const isoTime = z.string().refine(isStorableTimestamp, 'must be an RFC 3339 timestamp (years 0001 to 9999, no leap second)');

export function brainMcpEndpoint(deps: { brains: Pick<Brains, 'readable'>; search: Pick<MemorySearch, 'search'>; contexts: Pick<ConversationContexts, 'build'> }): ScopedMcpEndpoint {
  const { brains, search, contexts } = deps;
  return {
    url: '/brains/:brainId/mcp-server/http',
    params: BrainParamsSchema,
    summary: "A brain's MCP endpoint (JSON-RPC): its memories alone, read-only",
    description:
      'Tools: brain_info (the brain and its card), memory_search and memory_context over the brain\'s memories (metadata.brainId) in the project that owns it. ' +
      "The calling project's own brain in any status, or another project's when PUBLISHED and PUBLIC or UNLISTED; anything else is a 404. Needs READ_MEMORY; nothing here writes.",
    async tools(projectId, params) {
      const brain = await brains.readable(projectId, params.brainId!);
      return [
        defineTool({
          name: 'brain_info',
          description: 'The brain this endpoint serves: name, domain, version, visibility, status and its card (provenance, licences, coverage, evaluation).',
          permission: 'READ_MEMORY',
          inputSchema: {},
          run: async () => catalogueEntry(brain),
        }),
        defineTool({
          name: 'memory_search',
          description: `Search the brain "${brain.name}" with the project search (hybrid semantic, full text, recency, importance); its memories alone.`,
          permission: 'READ_MEMORY',
          audit: 'read.search',
          inputSchema: {
            query: z.string().min(1).max(2000),
            type: z.enum(MEMORY_TYPES).optional(),
            asOf: isoTime.optional(),
            referenceTime: isoTime.optional(),
            minScore: z.number().min(0).max(1.2).optional(),
            limit: z.number().int().min(1).max(50).optional().describe('default 20, at most 50'),
          },
          run: async (a) =>
            (
              await search.search(brain.projectId, {
                query: a.query,
                type: a.type,
                asOf: a.asOf === undefined ? undefined : new Date(a.asOf),
                referenceTime: a.referenceTime === undefined ? undefined : new Date(a.referenceTime),
                minScore: a.minScore,
                limit: a.limit ?? 20,
                brainId: brain.id,
              })
            ).map(toHitBody),
        }),
        defineTool({
          name: 'memory_context',
          description: `The brain "${brain.name}"'s memories a conversation needs, as one context text within a token budget (POST /memory/context with this brainId).`,
          permission: 'READ_MEMORY',
          audit: 'read.context',
          inputSchema: {
            turns: z.array(z.object({ role: z.string().max(100).optional(), content: z.string().max(20_000) })).max(200).optional(),
            conversation: z.string().max(100_000).optional(),
            intent: z.string().max(2000).optional(),
            tokenBudget: z.number().optional().describe('default 1200, clamped to [50, 16000]'),
            limit: z.number().optional().describe('default 25, clamped to [1, 100]'),
            excludeCategories: z.array(z.string().max(200)).max(100).optional(),
            referenceTime: isoTime.optional(),
          },
          run: (a) =>
            contexts.build(projectId, {
              ...a,
              referenceTime: a.referenceTime === undefined ? undefined : new Date(a.referenceTime),
              brain: { id: brain.id, projectId: brain.projectId, name: brain.name },
            }),
        }),
      ];
    },
  };
}
