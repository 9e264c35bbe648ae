// Every memory shape, defined once: validation, types and the OpenAPI come from these.
import { Type, type Static } from 'typebox';
import { LimitOffset, StringEnum, SubjectSchema, Timestamp } from '../platform/common-schemas.js';
import { ProjectParamsSchema } from '../platform/project-id.js';
import { MEMORY_SCOPES, MEMORY_STATUSES, MEMORY_TYPES } from './enums.js';
import { BACKFILL_DEFAULT_BATCH, BACKFILL_MAX_BATCH } from './limits.js';

export { MEMORY_SCOPES, MEMORY_STATUSES, MEMORY_TYPES, REVIEW_REASONS } from './enums.js';
export type { MemoryScope, MemoryStatus, MemoryType } from './enums.js';

export const MemoryTypeSchema = StringEnum(MEMORY_TYPES, { description: 'Memory type (also answered as `kind`)' });
export const MemoryScopeSchema = StringEnum(MEMORY_SCOPES, { description: 'Visibility scope' });
export const MemoryStatusSchema = StringEnum(MEMORY_STATUSES);

export const MemorySchema = Type.Object(
  {
    id: Type.String({ description: 'mem_<ULID>' }),
    created: Timestamp(),
    updated: Timestamp(),
    platformId: Type.String({ description: 'The project id (one project is one platform here)' }),
    projectId: Type.String(),
    type: MemoryTypeSchema,
    kind: MemoryTypeSchema,
    content: Type.String(),
    category: Type.Union([Type.String(), Type.Null()]),
    importance: Type.Number({ minimum: 0, maximum: 10 }),
    confidence: Type.Number({ minimum: 0, maximum: 1 }),
    source: Type.Union([Type.String(), Type.Null()]),
    scope: MemoryScopeSchema,
    status: MemoryStatusSchema,
    reviewReason: Type.Union([Type.String(), Type.Null()]),
    subject: Type.Union([SubjectSchema, Type.Null()]),
    chatbotId: Type.Union([Type.String(), Type.Null()], { description: 'The agent that wrote it' }),
    chatIdentityId: Type.Union([Type.String(), Type.Null()], { description: 'The end user it is about' }),
    sessionKey: Type.Union([Type.String(), Type.Null()]),
    metadata: Type.Union([Type.Record(Type.String(), Type.Unknown()), Type.Null()]),
    impact: Type.Union([Type.String(), Type.Null()]),
    contentHash: Type.String(),
    validFrom: Timestamp('When the fact began to hold in the world'),
    validTo: Type.Union([Timestamp('When it stopped holding'), Type.Null()]),
    recordedAt: Timestamp('When Lattice learned it'),
    lastAccessedAt: Type.Union([Timestamp(), Type.Null()]),
    supersededById: Type.Union([Type.String(), Type.Null()]),
    supersededAt: Type.Union([Timestamp(), Type.Null()]),
    sourceMemoryIds: Type.Array(Type.String(), { description: 'Provenance: the memories this one was derived from' }),
    confirmedAt: Type.Union([Timestamp(), Type.Null()]),
    confirmedByUserId: Type.Union([Type.String(), Type.Null()]),
    negativeRatingCount: Type.Integer(),
    hasEmbedding: Type.Boolean(),
  },
  { $id: 'Memory', title: 'Memory' },
);
export type Memory = Static<typeof MemorySchema>;

export const MemoryParamsSchema = Type.Object({
  projectId: ProjectParamsSchema.properties.projectId,
  memoryId: Type.String({ minLength: 1, maxLength: 100, description: 'A mem_ id' }),
});

const ContentSchema = Type.String({ minLength: 1, maxLength: 20_000, description: 'The memory text (1 to 20,000 characters)' });
const MetadataSchema = Type.Record(Type.String(), Type.Unknown(), { description: 'Free-form JSON object' });

export const CreateMemoryBodySchema = Type.Object(
  {
    id: Type.Optional(Type.String({ minLength: 21, maxLength: 100, description: 'Client-chosen id for idempotent writes; mem_ is prefixed if missing' })),
    content: ContentSchema,
    type: Type.Optional(MemoryTypeSchema),
    kind: Type.Optional(MemoryTypeSchema),
    scope: Type.Optional(MemoryScopeSchema),
    status: Type.Optional(StringEnum(['pending', 'confirmed'], { description: 'Default confirmed; pending puts it in the review queue' })),
    category: Type.Optional(Type.String({ maxLength: 100 })),
    importance: Type.Optional(Type.Number({ minimum: 0, maximum: 10 })),
    confidence: Type.Optional(Type.Number({ minimum: 0, maximum: 1 })),
    source: Type.Optional(Type.String({ maxLength: 100 })),
    subject: Type.Optional(SubjectSchema),
    chatbotId: Type.Optional(Type.String({ maxLength: 256 })),
    chatIdentityId: Type.Optional(Type.String({ maxLength: 256 })),
    sessionKey: Type.Optional(Type.String({ maxLength: 256 })),
    metadata: Type.Optional(MetadataSchema),
    impact: Type.Optional(StringEnum(['HIGH', 'LOW'])),
    validFrom: Type.Optional(Timestamp('Event time; default now')),
    sourceMemoryIds: Type.Optional(Type.Array(Type.String({ maxLength: 100 }), { maxItems: 100 })),
  },
  { additionalProperties: false },
);
export type CreateMemoryBody = Static<typeof CreateMemoryBodySchema>;

export const ListMemoriesQuerySchema = Type.Object(
  {
    type: Type.Optional(MemoryTypeSchema),
    scope: Type.Optional(MemoryScopeSchema),
    status: Type.Optional(StringEnum([...MEMORY_STATUSES, 'flagged'], { description: 'flagged: confirmed memories flagged for review' })),
    source: Type.Optional(Type.String()),
    category: Type.Optional(Type.String()),
    chatbotId: Type.Optional(Type.String()),
    chatIdentityId: Type.Optional(Type.String()),
    subjectKind: Type.Optional(Type.String()),
    subjectExternalId: Type.Optional(Type.String()),
    derivedFrom: Type.Optional(Type.String({ minLength: 1, maxLength: 100, description: 'Only the memories built on this memory: those whose sourceMemoryIds include it (insights, summaries, decisions)' })),
    asOf: Type.Optional(Timestamp('Bi-temporal slice: memories valid at this instant (validFrom <= asOf < validTo), superseded ones included')),
    ...LimitOffset(50, 500),
  },
  { additionalProperties: false },
);
export type ListMemoriesQuery = Static<typeof ListMemoriesQuerySchema>;

export const PageQuerySchema = Type.Object({ ...LimitOffset(50, 500) }, { additionalProperties: false });

/** Fields that exist on a memory but may not be changed by PATCH: named so the refusal is clear. */
export const IMMUTABLE_FIELDS = [
  'id', 'projectId', 'platformId', 'created', 'recordedAt', 'contentHash', 'supersededById', 'supersededAt',
  'lastAccessedAt', 'confirmedAt', 'confirmedByUserId', 'subject', 'sourceMemoryIds', 'hasEmbedding', 'kind',
] as const;

export const PatchMemoryBodySchema = Type.Object(
  {
    content: Type.Optional(ContentSchema),
    type: Type.Optional(MemoryTypeSchema),
    category: Type.Optional(Type.Union([Type.String({ maxLength: 100 }), Type.Null()])),
    importance: Type.Optional(Type.Number({ minimum: 0, maximum: 10 })),
    confidence: Type.Optional(Type.Number({ minimum: 0, maximum: 1 })),
    scope: Type.Optional(MemoryScopeSchema),
    status: Type.Optional(StringEnum(['pending', 'confirmed', 'rejected'])),
    metadata: Type.Optional(Type.Union([MetadataSchema, Type.Null()])),
    impact: Type.Optional(Type.Union([StringEnum(['HIGH', 'LOW']), Type.Null()])),
    validFrom: Type.Optional(Timestamp()),
    validTo: Type.Optional(Type.Union([Timestamp(), Type.Null()])),
    ...Object.fromEntries(IMMUTABLE_FIELDS.map((f) => [f, Type.Optional(Type.Unknown({ description: 'Cannot be changed' }))])),
  },
  { additionalProperties: false },
);
export type PatchMemoryBody = Static<typeof PatchMemoryBodySchema>;

export const ConfirmBodySchema = Type.Object(
  {
    status: StringEnum(['confirmed', 'rejected'], { default: 'confirmed' }),
    comment: Type.Optional(Type.String({ maxLength: 2000 })),
  },
  { additionalProperties: false },
);

export const PromoteBodySchema = Type.Object({ targetScope: MemoryScopeSchema }, { additionalProperties: false });

export const ReviewItemSchema = Type.Intersect([MemorySchema, Type.Object({ reviewReason: Type.String() })]);

export const StatsSchema = Type.Object({
  total: Type.Integer(),
  pendingReview: Type.Integer(),
  flagged: Type.Integer(),
  byScope: Type.Record(Type.String(), Type.Integer()),
  byStatus: Type.Record(Type.String(), Type.Integer()),
  byType: Type.Record(Type.String(), Type.Integer()),
  embedding: Type.Object({
    embedded: Type.Integer(),
    total: Type.Integer(),
    coverage: Type.Number({ description: 'embedded / total, 1 when empty' }),
    graphReady: Type.Boolean({
      description: 'The shared HNSW graph holds every row of the project: past SEARCH_EXACT_SCAN_MAX_ROWS embedded memories search walks it rather than scanning exactly (a job admits a project within a minute of passing)',
    }),
    projectIndex: Type.Boolean({ description: 'The project has an IVFFlat index of its own (Postgres, past SEARCH_IVF_MIN_ROWS), which search reads instead of the graph' }),
  }),
  patternCount: Type.Integer({ description: 'Live behavior_pattern memories' }),
});

export const BackfillBodySchema = Type.Object(
  {
    batch: Type.Optional(
      Type.Integer({
        minimum: 1,
        maximum: BACKFILL_MAX_BATCH,
        default: BACKFILL_DEFAULT_BATCH,
        description: 'How many memories without an embedding to embed in this call',
      }),
    ),
  },
  { additionalProperties: false },
);
export type BackfillBody = Static<typeof BackfillBodySchema>;

export const BackfillResultSchema = Type.Object({
  embedded: Type.Integer({ description: 'Memories embedded by this call; call again until 0' }),
  remaining: Type.Integer({ description: 'Memories of the project still without a vector after this call, of any status (writes landing meanwhile included)' }),
  embeddedPerSecond: Type.Number({ description: "This call's rate: memories embedded per second of the call, the job's queueing included" }),
  etaSeconds: Type.Union([Type.Integer(), Type.Null()], {
    description: '`remaining` at this call\'s rate, in seconds, rounded up: 0 when nothing remains, null when this call embedded nothing while some remain',
  }),
});

/** Per-subject roll-up: recency, silence, importance. */
export const InsightSchema = Type.Object({
  subject: SubjectSchema,
  memoryCount: Type.Integer(),
  firstMemoryAt: Type.String({ format: 'date-time' }),
  lastMemoryAt: Type.String({ format: 'date-time' }),
  daysSinceLastMemory: Type.Number({ description: 'Silence: days since the newest memory about the subject' }),
  avgImportance: Type.Number(),
  maxImportance: Type.Number(),
});
export type SubjectInsight = Static<typeof InsightSchema>;
