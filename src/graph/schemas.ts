// Every knowledge-graph shape (SPEC.md "Entity and edge", "Knowledge graph"; WIRE.md "Knowledge
// graph"; SDK-WIRE.md 4.3), defined once: validation, types and the OpenAPI come from these.
import { Type, type Static } from 'typebox';
import { LimitOffset, Nullable, StringEnum, SubjectSchema, Timestamp } from '../platform/common-schemas.js';
import { ProjectParamsSchema } from '../platform/project-id.js';

export const ENTITY_TYPES = ['person', 'org', 'product', 'location', 'concept', 'event', 'document', 'other'] as const;
export type EntityType = (typeof ENTITY_TYPES)[number];
export const ENTITY_SCOPES = ['platform', 'project', 'location', 'agent', 'user', 'session'] as const;
export type EntityScope = (typeof ENTITY_SCOPES)[number];
/** Single-valued predicates: a new current edge retires the subject's previous one (WIRE.md). */
export const FUNCTIONAL_PREDICATES = ['works_at', 'lives_in', 'located_in', 'based_in', 'reports_to', 'headquartered_in'] as const;

export const GRAPH_LIMITS = {
  edges: { default: 1000, min: 1, max: 10_000 },
  query: { default: 100, min: 1, max: 1000 },
  hops: { default: 1, min: 1, max: 3 },
  prefetch: { default: 10, min: 1, max: 100 },
  /** Edges followed out of (and into) one entity per hop; the strongest first. */
  fanOut: 50,
  /** Edges a traversal answers: `limit`, clamped. */
  traversal: { default: 500, min: 1, max: 5000 },
  seeds: 100,
  backfill: { default: 200, min: 1, max: 2000 },
  onboardingDepth: { default: 3, min: 1, max: 5 },
} as const;


export const EntitySchema = Type.Object(
  {
    id: Type.String({ description: 'ent_<ULID>' }),
    created: Timestamp(),
    updated: Timestamp(),
    platformId: Type.String({ description: 'The project id (one project is one platform here)' }),
    projectId: Type.String(),
    brainId: Type.Null(),
    locationId: Type.Null(),
    chatbotId: Nullable(Type.String()),
    chatIdentityId: Nullable(Type.String()),
    scope: StringEnum(ENTITY_SCOPES),
    type: StringEnum(ENTITY_TYPES),
    canonicalName: Type.String(),
    aliases: Type.Array(Type.String()),
    description: Nullable(Type.String()),
    metadata: Nullable(Type.Record(Type.String(), Type.Unknown())),
    subject: Nullable(SubjectSchema),
    validFrom: Timestamp('When the entity began to exist, as far as the graph knows'),
    validTo: Nullable(Timestamp('When it was retired (or merged); null while current')),
    supersededById: Nullable(Type.String({ description: 'The entity a merge folded this one into' })),
  },
  { $id: 'GraphEntity', title: 'GraphEntity' },
);
export type Entity = Static<typeof EntitySchema>;

/** An edge as SPEC.md shows it (the graph query). */
export const EdgeSchema = Type.Object(
  {
    id: Type.String({ description: 'edge_<ULID>' }),
    subjectId: Type.String(),
    predicate: Type.String(),
    objectId: Nullable(Type.String()),
    objectLiteral: Nullable(Type.String()),
    weight: Type.Number({ minimum: 0, maximum: 1 }),
    validFrom: Timestamp(),
    validTo: Nullable(Timestamp()),
    sourceMemoryId: Nullable(Type.String()),
  },
  { $id: 'GraphEdge', title: 'GraphEdge' },
);
export type Edge = Static<typeof EdgeSchema>;

/** An edge with its entities, as traversal and the entity page answer it (SDK-WIRE.md 4.3). */
export const TraversalEdgeSchema = Type.Object(
  {
    id: Type.String(),
    subject: Type.Ref('GraphEntity'),
    predicate: Type.String(),
    object: Nullable(Type.Ref('GraphEntity')),
    objectLiteral: Nullable(Type.String()),
    weight: Type.Number({ minimum: 0, maximum: 1 }),
    validFrom: Timestamp(),
    validTo: Nullable(Timestamp()),
    sourceMemoryId: Nullable(Type.String()),
    hop: Type.Integer({ minimum: 0, maximum: 3, description: '0 in listings; in a traversal, 1 for an edge of the seed, 2 for an edge of its neighbour, ...' }),
  },
  { $id: 'GraphTraversalEdge', title: 'GraphTraversalEdge' },
);
export type TraversalEdge = Omit<Static<typeof TraversalEdgeSchema>, 'subject' | 'object'> & { subject: Entity; object: Entity | null };

const NameSchema = Type.String({ minLength: 1, maxLength: 300 });
const PredicateSchema = Type.String({ minLength: 1, maxLength: 100, description: 'snake_cased on write (Works At -> works_at)' });
const AsOf = Timestamp('Read the graph as it was at this instant (edges and entities valid then); default now');

export const EntityParamsSchema = Type.Object({ projectId: ProjectParamsSchema.properties.projectId, entityId: Type.String({ minLength: 1, maxLength: 100 }) });
export const EdgeParamsSchema = Type.Object({ projectId: ProjectParamsSchema.properties.projectId, edgeId: Type.String({ minLength: 1, maxLength: 100 }) });

export const ListEntitiesQuerySchema = Type.Object(
  {
    type: Type.Optional(StringEnum(ENTITY_TYPES)),
    scope: Type.Optional(StringEnum(ENTITY_SCOPES)),
    search: Type.Optional(Type.String({ maxLength: 300, description: 'Case-insensitive substring of the canonical name or an alias' })),
    includeRetired: Type.Optional(Type.Boolean({ description: 'Also retired and merged entities; default false' })),
    memoryId: Type.Optional(Type.String({ minLength: 1, maxLength: 100, description: 'Only the entities this memory mentions (its graph entities)' })),
    ...LimitOffset(50, 500),
  },
  { additionalProperties: false },
);
export type ListEntitiesQuery = Static<typeof ListEntitiesQuerySchema>;

export const CreateEntityBodySchema = Type.Object(
  {
    type: StringEnum(ENTITY_TYPES),
    canonicalName: NameSchema,
    aliases: Type.Optional(Type.Array(NameSchema, { maxItems: 50 })),
    description: Type.Optional(Type.String({ maxLength: 2000 })),
    metadata: Type.Optional(Type.Record(Type.String(), Type.Unknown())),
    scope: Type.Optional(StringEnum(ENTITY_SCOPES, { description: 'Default project' })),
    subject: Type.Optional(SubjectSchema),
    chatbotId: Type.Optional(Type.String({ maxLength: 256 })),
    chatIdentityId: Type.Optional(Type.String({ maxLength: 256 })),
    validFrom: Type.Optional(Timestamp('Default now')),
  },
  { additionalProperties: false },
);
export type CreateEntityBody = Static<typeof CreateEntityBodySchema>;

export const CreateEntityResponseSchema = Type.Object({ ...EntitySchema.properties, created: Timestamp(), resolved: Type.Boolean({ description: 'true when the name (or an alias) resolved to an existing entity, which is answered instead (aliases added)' }) });

export const RetireBodySchema = Type.Object(
  {
    at: Type.Optional(Timestamp('When it stopped holding (validTo); default now')),
    reason: Type.Optional(Type.String({ maxLength: 500 })),
  },
  { additionalProperties: false },
);
export type RetireBody = Static<typeof RetireBodySchema>;

export const MergeBodySchema = Type.Object(
  { intoEntityId: Type.String({ minLength: 1, maxLength: 100, description: 'The entity that survives' }) },
  { additionalProperties: false },
);

export const CreateEdgeBodySchema = Type.Object(
  {
    subjectId: Type.String({ minLength: 1, maxLength: 100, description: 'An ent_ id' }),
    predicate: PredicateSchema,
    objectId: Type.Optional(Type.String({ minLength: 1, maxLength: 100 })),
    objectLiteral: Type.Optional(Type.String({ minLength: 1, maxLength: 2000 })),
    weight: Type.Optional(Type.Number({ minimum: 0, maximum: 1, description: 'Default 1' })),
    validFrom: Type.Optional(Timestamp('Default now')),
    validTo: Type.Optional(Timestamp()),
    sourceMemoryId: Type.Optional(Type.String({ maxLength: 100 })),
  },
  { additionalProperties: false },
);
export type CreateEdgeBody = Static<typeof CreateEdgeBodySchema>;

export const EntityQuerySchema = Type.Object(
  {
    asOf: Type.Optional(AsOf),
    includeRetired: Type.Optional(Type.Boolean({ description: 'Also answer retiredEdges: the edges into and out of the entity that had ended by asOf; default false' })),
  },
  { additionalProperties: false },
);
export const EntityPageSchema = Type.Object({
  entity: Nullable(Type.Ref('GraphEntity')),
  edges: Type.Array(Type.Ref('GraphTraversalEdge')),
  retiredEdges: Type.Optional(Type.Array(Type.Ref('GraphTraversalEdge'), { description: `With includeRetired: the edges into and out of the entity whose validTo is at or before asOf, latest ended first, at most ${GRAPH_LIMITS.edges.max}` })),
});

export const ListEdgesQuerySchema = Type.Object(
  {
    asOf: Type.Optional(AsOf),
    ...LimitOffset(GRAPH_LIMITS.edges.default, GRAPH_LIMITS.edges.max),
  },
  { additionalProperties: false },
);

export const TraverseBodySchema = Type.Object(
  {
    entityId: Type.String({ minLength: 1, maxLength: 100 }),
    hops: Type.Optional(Type.Number({ description: 'Default 1, clamped to [1, 3]' })),
    predicates: Type.Optional(Type.Array(PredicateSchema, { maxItems: 50 })),
    asOf: Type.Optional(AsOf),
    direction: Type.Optional(StringEnum(['out', 'both'], { description: 'out: follow edges from subject to object (default); both: also against them' })),
    limit: Type.Optional(Type.Number({ description: `Edges answered at most; default ${GRAPH_LIMITS.traversal.default}, clamped to [1, ${GRAPH_LIMITS.traversal.max}]` })),
  },
  { additionalProperties: false },
);
export type TraverseBody = Static<typeof TraverseBodySchema>;

export const GraphQueryBodySchema = Type.Object(
  {
    subjectId: Type.Optional(Type.String({ minLength: 1, maxLength: 100 })),
    predicate: Type.Optional(PredicateSchema),
    asOf: Type.Optional(AsOf),
    limit: Type.Optional(Type.Number({ description: `Default ${GRAPH_LIMITS.query.default}, clamped to [1, ${GRAPH_LIMITS.query.max}]` })),
  },
  { additionalProperties: false },
);
export type GraphQueryBody = Static<typeof GraphQueryBodySchema>;

export const GraphStatsSchema = Type.Object({
  entityCount: Type.Integer({ description: 'Current entities' }),
  edgeCount: Type.Integer({ description: 'Current edges' }),
  memoriesWithEdges: Type.Integer(),
  retiredEntities: Type.Integer({ description: 'Retired or merged' }),
  retiredEdges: Type.Integer(),
  entitiesByType: Type.Record(Type.String(), Type.Integer()),
  extraction: Type.Object({
    platformEnabled: Type.Boolean({ description: 'GRAPH_EXTRACTION_ENABLED: whether this deployment extracts at all' }),
    projectEnabled: Type.Boolean({ description: 'Whether this project opted in' }),
    extractedMemories: Type.Integer(),
    pendingMemories: Type.Integer({ description: 'Live memories not yet extracted (or changed since)' }),
  }),
});

export const ToggleBodySchema = Type.Object({ enabled: Type.Boolean() }, { additionalProperties: false });
export const ToggleResponseSchema = Type.Object({ projectEnabled: Type.Boolean(), platformEnabled: Type.Boolean() });

export const BackfillBodySchema = Type.Object(
  { limit: Type.Optional(Type.Number({ description: `Memories to extract in this call; default ${GRAPH_LIMITS.backfill.default}, clamped to [1, ${GRAPH_LIMITS.backfill.max}]` })) },
  { additionalProperties: false },
);
export const BackfillResponseSchema = Type.Object({
  processed: Type.Integer({ description: 'Memories extracted by this call' }),
  entitiesLinked: Type.Integer(),
  edgesCreated: Type.Integer(),
  remaining: Type.Integer({ description: 'Live memories still pending after it; call again until 0' }),
  durationMs: Type.Number(),
});

export const PrefetchBodySchema = Type.Object(
  {
    seedMemoryIds: Type.Array(Type.String({ minLength: 1, maxLength: 100 }), { minItems: 1, maxItems: GRAPH_LIMITS.seeds }),
    limit: Type.Optional(Type.Number({ description: `Default ${GRAPH_LIMITS.prefetch.default}, clamped to [1, ${GRAPH_LIMITS.prefetch.max}]` })),
  },
  { additionalProperties: false },
);

export const OnboardingQuerySchema = Type.Object(
  {
    maxTokens: Type.Optional(Type.Number({ description: 'Hard cap on the briefing (o200k_base tokens); default 2000, clamped to [200, 16000]' })),
    depth: Type.Optional(Type.Number({ description: `member_of / part_of links followed; default ${GRAPH_LIMITS.onboardingDepth.default}, clamped to [1, ${GRAPH_LIMITS.onboardingDepth.max}]` })),
    asOf: Type.Optional(AsOf),
  },
  { additionalProperties: false },
);
