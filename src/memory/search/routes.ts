// Search routes: the admin semantic search across scopes, and the same search for agents.
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { Type } from 'typebox';
import type { MemoryScope, MemoryType } from '../schemas.js';
import type { MemorySearch, SearchHit } from './search.js';
import { SearchBodySchema, SearchHitSchema, type SearchBody } from './schemas.js';

export function toSearchInput(b: SearchBody) {
  return {
    query: b.query,
    scope: b.scope as MemoryScope | undefined,
    scopes: b.scopes as MemoryScope[] | undefined,
    type: b.type as MemoryType | undefined,
    status: b.status,
    category: b.category,
    subject: b.subject,
    userId: b.chatIdentityId,
    agentId: b.chatbotId,
    asOf: b.asOf === undefined ? undefined : new Date(b.asOf),
    limit: b.limit,
    offset: b.offset,
    minScore: b.minScore,
  };
}

export function toHitBody(hit: SearchHit) {
  const m = hit.memory;
  return {
    id: m.id,
    type: m.type,
    kind: m.kind,
    content: m.content,
    category: m.category,
    metadata: m.metadata,
    scope: m.scope,
    status: m.status,
    importance: m.importance,
    subject: m.subject,
    validFrom: m.validFrom,
    validTo: m.validTo,
    supersededById: m.supersededById,
    similarity: hit.parts.relevance,
    score: hit.score,
    scoreParts: hit.parts,
    explanation: hit.explanation,
  };
}

const DESCRIPTION =
  'Hybrid retrieval: vector candidates (pgvector) and full-text candidates, fused into one relevance, then blended with recency and importance. ' +
  'Hits are ordered by `score`; each shows the parts of its score. Without `status` or `asOf` only live memories (pending, confirmed) are searched; ' +
  '`asOf` searches the slice valid at that instant, superseded memories included. Memories not yet embedded are found by full text.';

export const searchRoutes: FastifyPluginAsyncTypebox<{ search: MemorySearch }> = async (app, { search }) => {
  const schema = { tags: ['memory'], description: DESCRIPTION, body: SearchBodySchema, response: { 200: Type.Array(SearchHitSchema) } };
  app.post('/admin/memory/search', { config: { permission: 'WRITE_MEMORY', audit: 'read.search' }, schema: { ...schema, summary: 'Semantic search across scopes' } }, async (request) =>
    (await search.search(request.principal.projectId, toSearchInput(request.body))).map(toHitBody),
  );
  app.post('/memory/search', { config: { permission: 'READ_MEMORY', audit: 'read.search' }, schema: { ...schema, summary: 'Search memories (agent surface, READ_MEMORY)' } }, async (request) =>
    (await search.search(request.principal.projectId, toSearchInput(request.body))).map(toHitBody),
  );
};
