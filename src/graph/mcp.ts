// The graph's MCP tools (SDK-WIRE.md 8): memory_extract_pending hands out memories not yet
// extracted, each with a ready prompt and its content hash; memory_commit_extraction takes back the
// caller's entities and edges, idempotent by that hash, refusing a stale one.
import { z } from 'zod';
import { defineTool, ToolTexts, type ToolDefinition } from '../platform/module.js';
import type { GraphExtraction } from './extraction.js';

export function graphTools(extraction: GraphExtraction): ToolDefinition[] {
  return [
    defineTool({
      name: 'memory_extract_pending',
      description:
        'Memories whose graph entities are not yet extracted (or whose content changed since), oldest first, each with a ready-to-use system and user prompt and contentHash (md5 hex of the content) to hand back to memory_commit_extraction. Texts under 12 characters are skipped.',
      permission: 'WRITE_MEMORY',
      audit: 'read.graph',
      inputSchema: { limit: z.number().int().min(1).max(50).optional().describe('default 10, at most 50') },
      async run(a, { projectId }) {
        const items = await extraction.pending(projectId, a.limit);
        return new ToolTexts([`${items.length} memor${items.length === 1 ? 'y' : 'ies'} pending extraction.`, JSON.stringify(items)]);
      },
    }),

    defineTool({
      name: 'memory_commit_extraction',
      description:
        'Persist the entities and edges your model extracted from one memory. contentHash must be the one memory_extract_pending gave (a memory changed since is rejected: take it again); committing the same hash again changes nothing. ' +
        'Entity types outside person/org/product/location/concept/event/document/other become other; predicates are snake_cased; edges get weight 0.9 and the memory as sourceMemoryId. Use "@subject" for the person the memory is about.',
      permission: 'WRITE_MEMORY',
      audit: 'write.graph',
      inputSchema: {
        memoryId: z.string().min(1).max(100),
        contentHash: z.string().min(1).max(64),
        entities: z.array(z.object({ name: z.string().min(1).max(300), type: z.string().max(50) })).max(200),
        edges: z.array(z.object({ subject: z.string().min(1).max(300), predicate: z.string().min(1).max(100), object: z.string().min(1).max(2000), object_is_entity: z.boolean().optional() })).max(500),
      },
      async run(a, { projectId }) {
        const result = await extraction.commit(projectId, a);
        const summary =
          result.status === 'rejected'
            ? `rejected: ${result.reason}`
            : result.status === 'unchanged'
              ? `unchanged: memory ${result.memoryId} was already committed with this contentHash`
              : `committed: memory ${result.memoryId}, ${result.entities} entities linked, ${result.edges} edges`;
        return new ToolTexts([summary, JSON.stringify(result)]);
      },
    }),
  ];
}
