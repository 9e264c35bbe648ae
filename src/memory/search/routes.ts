// Search routes: the admin semantic search across scopes, and the same search for agents.
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { Type } from 'typebox';
import type { MemorySearch, SearchHit } from './search.js';
import type { Brains } from '../brains/brains.js';
import { SearchBodySchema, SearchHitSchema, type SearchBody } from './schemas.js';

export function toSearchInput(b: SearchBody) {
  return {
    query: b.query,
    scope: b.scope,
    scopes: b.scopes,
    type: b.type,
    status: b.status,
    category: b.category,
    subject: b.subject,
    userId: b.chatIdentityId,
    agentId: b.chatbotId,
    asOf: b.asOf === undefined ? undefined : new Date(b.asOf),
    limit: b.limit,
    offset: b.offset,
    minScore: b.minScore,
    referenceTime: b.referenceTime === undefined ? undefined : new Date(b.referenceTime),
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
  'Hybrid retrieval. Candidates come from two lists: the nearest memories by embedding (pgvector; exact scan in projects of up to SEARCH_EXACT_SCAN_MAX_ROWS ' +
  'embedded memories, HNSW with an over-scan re-ranked exactly above once a background job has put the project\'s rows in the graph (exact scan until then), and on Postgres, in a project past SEARCH_IVF_MIN_ROWS, an IVFFlat index over that ' +
  'project alone, built and kept up to date by a background job) and the best memories by BM25 (k1 1.2, b 0.9), at least 50 from each. When the ' +
  'search\'s own collection (the project under its filters: a subject, a scope, an instant) holds at most 5,000 memories, BM25 is exact over it, with ' +
  'that collection\'s own word statistics, and the collection is scanned exactly by embedding too; a memory with a session key also scores 0.3 of ' +
  'the BM25 of the turns before and after it in its session (`scoreParts.context`). Larger collections take the project\'s word statistics and ' +
  'the memories holding the query\'s rarest words. Relevance = 0.75 x (cosine - hubness) + 0.25 x BM25 divided by the best BM25 among the candidates, where hubness is ' +
  'how much closer the memory is to its 10 nearest fellow candidates than the candidates are on average (CSLS: a text close to everything is not ' +
  'singled out by being close to the query; weights fitted on a public conversational-memory benchmark); score = 0.85 x relevance + 0.025 x recency + 0.1 x importance (+ the graph bonus). Hits are ordered by `score`; ' +
  'each shows the parts of its score and a one-line explanation. Without `status` or `asOf` only live memories (pending, confirmed) are searched; ' +
  '`asOf` searches the slice valid at that instant, superseded memories included. Newer first: of two live memories of one subject holding one fact with ' +
  'different values (the same slot; or, both short, sharing half their words or close in meaning), the newer ranks above the older when both are on the ' +
  'page (`scoreParts.stale`); not for a query naming a span of time. Words about time ("last week", "in May 2023") are read against `referenceTime` ' +
  '(default now) and add up to 0.1 for a memory valid then (`scoreParts.time`); names in the query found in a memory add up to 0.02 (`scoreParts.names`); ' +
  'in a collection scored exactly, long query words also match related forms ("allergies" finds "allergic") at half weight. A memory saved by a single write is embedded before the write ' +
  'answers, so it is found by meaning at once; a memory not embedded yet (bulk writes, a busy worker pool) is found by its words.';

export const searchRoutes: FastifyPluginAsyncTypebox<{ search: MemorySearch; brains: Pick<Brains, 'readable'> }> = async (app, { search, brains }) => {
  const schema = { tags: ['memory'], description: DESCRIPTION, body: SearchBodySchema, response: { 200: Type.Array(SearchHitSchema) } };
  /** The project's memories, or with `brainId` that brain's (in the project that owns it, once the caller may read it). */
  const run = async (projectId: string, body: SearchBody) => {
    if (body.brainId === undefined) return (await search.search(projectId, toSearchInput(body))).map(toHitBody);
    const brain = await brains.readable(projectId, body.brainId);
    return (await search.search(brain.projectId, { ...toSearchInput(body), brainId: brain.id })).map(toHitBody);
  };
  app.post('/admin/memory/search', { config: { permission: 'WRITE_MEMORY', audit: 'read.search' }, schema: { ...schema, summary: 'Semantic search across scopes' } }, async (request) =>
    run(request.principal.projectId, request.body),
  );
  app.post('/memory/search', { config: { permission: 'READ_MEMORY', audit: 'read.search' }, schema: { ...schema, summary: 'Search memories (agent surface, READ_MEMORY)' } }, async (request) =>
    run(request.principal.projectId, request.body),
  );
};
