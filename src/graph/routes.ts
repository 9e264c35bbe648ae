// Knowledge-graph routes (SPEC.md "Knowledge graph"; SDK-WIRE.md 4.3): the admin routes under
// /admin/memory (WRITE_MEMORY, as SPEC.md says of every admin route), the graph query under
// /lattice (READ_MEMORY), prefetch and the onboarding briefing.
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { Type } from 'typebox';
import { EXTRACT_SWEEP_MS, type GraphExtraction } from './extraction.js';
import type { GraphRecall } from './recall.js';
import {
  BackfillBodySchema,
  BackfillResponseSchema,
  CreateEdgeBodySchema,
  CreateEntityBodySchema,
  CreateEntityResponseSchema,
  EdgeParamsSchema,
  EdgeSchema,
  EntityPageSchema,
  EntityParamsSchema,
  EntityQuerySchema,
  FUNCTIONAL_PREDICATES,
  GRAPH_LIMITS,
  GraphQueryBodySchema,
  GraphStatsSchema,
  ListEdgesQuerySchema,
  ListEntitiesQuerySchema,
  MergeBodySchema,
  OnboardingQuerySchema,
  PrefetchBodySchema,
  RetireBodySchema,
  ToggleBodySchema,
  ToggleResponseSchema,
  TraverseBodySchema,
} from './schemas.js';
import type { GraphService } from './service.js';

const tags = ['graph'];
const READ = { permission: 'READ_MEMORY' } as const;
const WRITE = { permission: 'WRITE_MEMORY' } as const;
const Entity = Type.Ref('GraphEntity');
const TraversalEdges = Type.Array(Type.Ref('GraphTraversalEdge'));
const EdgeCreated = Type.Object({ ...EdgeSchema.properties, created: Type.Boolean({ description: 'false when the same current fact existed and was strengthened instead' }) });

export const graphRoutes: FastifyPluginAsyncTypebox<{ graph: GraphService; extraction: GraphExtraction; recall: GraphRecall }> = async (app, { graph, extraction, recall }) => {
  // Entity listing, an entity's page and traversal are served twice: under /admin/memory
  // (WRITE_MEMORY, as SPEC.md has them) and under /memory for a READ_MEMORY key (the console, an
  // agent that only reads), as the memory list and search are.
  for (const [url, config, summary] of [
    ['/admin/memory/entities', WRITE, 'List entities (current ones unless includeRetired)'],
    ['/memory/entities', READ, 'List entities (READ_MEMORY; the same as GET /admin/memory/entities)'],
  ] as const) {
    app.get(
      url,
      { config: { ...config, audit: 'read.graph' }, schema: { tags, summary, description: 'Ordered by canonical name. memoryId narrows to the entities that memory mentions.', querystring: ListEntitiesQuerySchema, response: { 200: Type.Array(Entity) } } },
      async (request) => graph.listEntities(request.principal.projectId, request.query),
    );
  }

  app.post(
    '/admin/memory/entities',
    {
      config: { ...WRITE, audit: 'write.graph' },
      schema: {
        tags,
        summary: 'Create an entity, or answer the one its name resolves to',
        description:
          'Names resolve: the canonical name and every alias are normalised (case, accents, punctuation, a leading honorific or "the", a trailing possessive or company form) and a name or alias that normalises like a current entity\'s answers that entity (200, resolved true, the new spellings added as aliases). ' +
          'With `subject`, the entity stands for that subject and resolves by it. 201 when created. Concurrent creates of one name create one entity.',
        body: CreateEntityBodySchema,
        response: { 200: CreateEntityResponseSchema, 201: CreateEntityResponseSchema },
      },
    },
    async (request, reply) => {
      const { entity, created } = await graph.createEntity(request.principal.projectId, request.body);
      return reply.code(created ? 201 : 200).send({ ...entity, resolved: !created });
    },
  );

  for (const [url, config, summary] of [
    ['/admin/memory/entities/:entityId', WRITE, 'An entity and its outgoing edges (hop 1), as of asOf'],
    ['/memory/entities/:entityId', READ, 'An entity and its outgoing edges (hop 1), as of asOf (READ_MEMORY; the same as GET /admin/memory/entities/{entityId})'],
  ] as const) {
    app.get(
      url,
      {
        config: { ...config, audit: 'read.graph' },
        schema: {
          tags,
          summary,
          description: '404 when the project has no such entity; `entity` null (and no edges) when it exists but was not valid at asOf. includeRetired adds retiredEdges, the edges that had ended by asOf (the console draws them on request).',
          params: EntityParamsSchema,
          querystring: EntityQuerySchema,
          response: { 200: EntityPageSchema },
        },
      },
      async (request) => graph.entityPage(request.principal.projectId, request.params.entityId, request.query),
    );
  }

  app.post(
    '/admin/memory/entities/:entityId/retire',
    {
      config: { ...WRITE, audit: 'write.graph' },
      schema: {
        tags,
        summary: 'Retire an entity: validTo set, its current edges closed, nothing deleted',
        description: 'Reads before validTo still see it. Its names are freed, so a later mention creates a new entity. Retiring a retired entity answers it unchanged.',
        params: EntityParamsSchema,
        body: Type.Optional(RetireBodySchema),
        response: { 200: Entity },
      },
    },
    async (request) => graph.retireEntity(request.principal.projectId, request.params.entityId, request.body ?? {}),
  );

  app.post(
    '/admin/memory/entities/:entityId/merge',
    {
      config: { ...WRITE, audit: 'write.graph' },
      schema: {
        tags,
        summary: 'Merge a duplicate entity into another; answers the survivor',
        description:
          'The duplicate (this entity) is superseded (supersededById, validTo now); its names and aliases become the survivor\'s; its edges and memory links are re-pointed to the survivor (an edge the survivor already has is closed instead, keeping the stronger weight); a functional predicate left with two current edges keeps the newer.',
        params: EntityParamsSchema,
        body: MergeBodySchema,
        response: { 200: Entity },
      },
    },
    async (request) => graph.mergeEntity(request.principal.projectId, request.params.entityId, request.body.intoEntityId),
  );

  app.get(
    '/admin/memory/entities/:entityId/onboarding-context',
    {
      config: { ...WRITE, audit: 'read.graph' },
      schema: {
        tags,
        summary: 'An onboarding briefing that inherits memories along the member_of / part_of chain',
        description:
          `From the entity, member_of and part_of edges valid at asOf are followed breadth-first to depth (default ${GRAPH_LIMITS.onboardingDepth.default}, at most ${GRAPH_LIMITS.onboardingDepth.max}; each group once, so cycles end). ` +
          'The live memories that mention each entity of the chain follow, nearest level first, then by importance and recency, kept whole until maxTokens (o200k_base, counted over the briefing as JSON) is spent; `truncated` names the sections that lost items.',
        params: EntityParamsSchema,
        querystring: OnboardingQuerySchema,
        response: {
          200: Type.Object({
            entity: Entity,
            chain: Type.Array(Type.Object({ entity: Type.String(), entityId: Type.String(), type: Type.String(), depth: Type.Integer(), via: Type.Union([Type.String(), Type.Null()]), from: Type.Union([Type.String(), Type.Null()]) })),
            memories: Type.Array(Type.Object({ id: Type.String(), content: Type.String(), type: Type.String(), importance: Type.Number(), validFrom: Type.String(), entityId: Type.String(), depth: Type.Integer() })),
            provenance: Type.Array(Type.String()),
            tokensEstimate: Type.Integer(),
            maxTokens: Type.Integer(),
            truncated: Type.Array(Type.String()),
            asOf: Type.String({ format: 'date-time' }),
          }),
        },
      },
    },
    async (request) => recall.onboarding(request.principal.projectId, request.params.entityId, request.query),
  );

  app.post(
    '/admin/memory/edges',
    {
      config: { ...WRITE, audit: 'write.graph' },
      schema: {
        tags,
        summary: 'Create an edge',
        description:
          'Exactly one of objectId and objectLiteral. The predicate is snake_cased. The same current fact (subject, predicate, other end) is not repeated: it is strengthened (weight = the larger) and answered with 200. ' +
          `Functional predicates (${FUNCTIONAL_PREDICATES.join(', ')}) keep one current edge per subject: a new one closes the previous at its validFrom; one older than the current edge is kept as history, closed where the current one begins. ` +
          'With sourceMemoryId (a memory of this project), the memory is linked to both entities for prefetch. 201 when created.',
        body: CreateEdgeBodySchema,
        response: { 200: EdgeCreated, 201: EdgeCreated },
      },
    },
    async (request, reply) => {
      const { edge, created } = await graph.createEdge(request.principal.projectId, request.body);
      return reply.code(created ? 201 : 200).send({ ...edge, created });
    },
  );

  app.post(
    '/admin/memory/edges/:edgeId/retire',
    {
      config: { ...WRITE, audit: 'write.graph' },
      schema: { tags, summary: 'Retire an edge: validTo set (default now), nothing deleted; reads before validTo still see it', params: EdgeParamsSchema, body: Type.Optional(RetireBodySchema), response: { 200: Type.Ref('GraphEdge') } },
    },
    async (request) => graph.retireEdge(request.principal.projectId, request.params.edgeId, request.body ?? {}),
  );

  app.get(
    '/admin/memory/graph/edges',
    {
      config: { ...WRITE, audit: 'read.graph' },
      schema: {
        tags,
        summary: 'Bulk-load the edges valid at asOf (default now), with their entities, hop 0',
        description: `Newest first. limit default ${GRAPH_LIMITS.edges.default}, at most ${GRAPH_LIMITS.edges.max}; page with offset.`,
        querystring: ListEdgesQuerySchema,
        response: { 200: TraversalEdges },
      },
    },
    async (request) => graph.listEdges(request.principal.projectId, request.query),
  );

  for (const [url, config, summary] of [
    ['/admin/memory/graph/traverse', WRITE, 'Multi-hop traversal (1 to 3 hops) from a seed entity'],
    ['/memory/graph/traverse', READ, 'Multi-hop traversal (1 to 3 hops) from a seed entity (READ_MEMORY; the same as POST /admin/memory/graph/traverse)'],
  ] as const) {
    app.post(
      url,
      {
        config: { ...config, audit: 'read.graph' },
        schema: {
          tags,
          summary,
          description:
            'Breadth-first over the edges valid at asOf (default now), optionally only the given predicates; direction out (subject to object, the default) or both. hop is 1 for an edge of the seed, 2 for an edge of a neighbour, 3 beyond. ' +
            `Each edge is answered once, at the hop it is first reached; each entity is expanded once, so cycles end; literal objects are not expanded. Fan-out is bounded: at most ${GRAPH_LIMITS.fanOut} edges per entity and direction each hop (strongest weight first, then newest, then id), and \`limit\` edges in all (default ${GRAPH_LIMITS.traversal.default}, at most ${GRAPH_LIMITS.traversal.max}); a hop that would pass the limit takes every entity's strongest edge before any entity's second.`,
          body: TraverseBodySchema,
          response: { 200: TraversalEdges },
        },
      },
      async (request) => graph.traverse(request.principal.projectId, request.body),
    );
  }

  app.get(
    '/admin/memory/graph/stats',
    { config: WRITE, schema: { tags, summary: 'Entity and edge counts, and the extraction state', response: { 200: GraphStatsSchema } } },
    async (request) => graph.stats(request.principal.projectId),
  );

  app.post(
    '/admin/memory/graph/extraction/toggle',
    {
      config: WRITE,
      schema: {
        tags,
        summary: 'Opt the project in or out of entity extraction',
        description: `Opted in, new and changed memories are extracted by a job within about ${EXTRACT_SWEEP_MS / 1000} seconds (when GRAPH_EXTRACTION_ENABLED is on for the deployment); graph/backfill covers the rest on demand.`,
        body: ToggleBodySchema,
        response: { 200: ToggleResponseSchema },
      },
    },
    async (request) => graph.setExtraction(request.principal.projectId, request.body.enabled),
  );

  app.post(
    '/admin/memory/graph/backfill',
    {
      config: { ...WRITE, audit: 'write.graph' },
      schema: {
        tags,
        summary: 'Extract entities and edges from memories not yet processed',
        description:
          'A batch of the live memories not extracted yet (or changed since), oldest first, by the heuristic extractor; `remaining` says how many are left: call again until 0. 409 when the project has not opted in or the deployment turned extraction off.',
        body: Type.Optional(BackfillBodySchema),
        response: { 200: BackfillResponseSchema },
      },
    },
    async (request) => extraction.backfill(request.principal.projectId, request.body?.limit),
  );

  app.post(
    '/admin/memory/prefetch-related',
    {
      config: { ...WRITE, audit: 'read.memory' },
      schema: {
        tags,
        summary: 'Memories linked to the same graph entities as the seeds',
        description:
          `Other live memories that mention any entity the seeds mention, ranked by the number of distinct shared entities (ties by id); deterministic and read-only. Every seed must be a memory of this project (404 otherwise). limit default ${GRAPH_LIMITS.prefetch.default}, clamped to [1, ${GRAPH_LIMITS.prefetch.max}].`,
        body: PrefetchBodySchema,
        response: { 200: Type.Array(Type.Ref('Memory')) },
      },
    },
    async (request) => recall.prefetch(request.principal.projectId, request.body.seedMemoryIds, request.body.limit),
  );

  app.post(
    '/lattice/graph/query',
    {
      config: { ...READ, audit: 'read.graph' },
      schema: {
        tags,
        summary: 'Edges valid at an instant, by subject entity and predicate',
        description: `asOf omitted means now. Newest first. limit default ${GRAPH_LIMITS.query.default}, clamped to [1, ${GRAPH_LIMITS.query.max}].`,
        body: GraphQueryBodySchema,
        response: { 200: Type.Object({ edges: Type.Array(Type.Ref('GraphEdge')) }) },
      },
    },
    async (request) => graph.query(request.principal.projectId, request.body),
  );
};
