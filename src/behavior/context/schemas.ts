// Context bundles (SPEC.md "Context"; SDK-WIRE.md 4.6): a subject's profile, patterns, projected
// predictions, memories and observations in one token-budgeted answer with provenance.
import { Type, type Static } from 'typebox';
import { Nullable, SubjectSchema, Timestamp } from '../../platform/common-schemas.js';

export const SECTIONS = ['profile', 'patterns', 'predictions', 'memories', 'observations'] as const;
export type Section = (typeof SECTIONS)[number];

export const CONTEXT_LIMITS = { minTokens: 200, maxTokens: 16_000, defaultTokens: 2000, maxSubjects: 500 } as const;

const options = {
  include: Type.Optional(Type.Array(Type.Enum(SECTIONS), { maxItems: 5, description: 'Sections to build; omitted means all five' })),
  maxTokens: Type.Optional(Type.Number({ description: `Hard cap on the bundle's tokens (o200k_base); default ${CONTEXT_LIMITS.defaultTokens}, clamped to [${CONTEXT_LIMITS.minTokens}, ${CONTEXT_LIMITS.maxTokens}]` })),
  memoryLimit: Type.Optional(Type.Integer({ minimum: 0, maximum: 100, default: 10 })),
  predictionLimit: Type.Optional(Type.Integer({ minimum: 0, maximum: 50, default: 5 })),
  query: Type.Optional(
    Type.String({
      minLength: 1,
      maxLength: 2000,
      description:
        "What the agent is about to answer: when given, the memories section holds the subject's memories that best answer it, ranked by the same search as POST /memory/search within the subject (else the most important, then the newest)",
    }),
  ),
  referenceTime: Type.Optional(Timestamp("The instant the query's words about time are read against (\"last week\"); default now")),
  excludeCategories: Type.Optional(
    Type.Array(Type.String({ maxLength: 100 }), { maxItems: 50, description: 'Memories of these categories, and patterns, predictions and observations of these activity types, are left out' }),
  ),
};

export const ContextBodySchema = Type.Object({ subject: SubjectSchema, ...options }, { additionalProperties: false });
export type ContextBody = Static<typeof ContextBodySchema>;
export type ContextOptions = Omit<ContextBody, 'subject'>;

export const BatchContextBodySchema = Type.Object(
  { subjects: Type.Array(SubjectSchema, { minItems: 1, maxItems: CONTEXT_LIMITS.maxSubjects }), ...options },
  { additionalProperties: false },
);


export const BundleSchema = Type.Object(
  {
    subject: SubjectSchema,
    guidance: Type.String({ description: 'Directive text to place at the top of a prompt' }),
    profile: Nullable(
      Type.Object({
        rfmSegment: Nullable(Type.String()),
        recencyScore: Nullable(Type.Number()),
        frequencyScore: Nullable(Type.Number()),
        monetaryScore: Nullable(Type.Number()),
        topEntity: Nullable(Type.String()),
        cadenceSummary: Nullable(Type.String()),
        risks: Type.Array(Type.Object({ kind: Type.String(), description: Type.String(), severity: Type.Number(), sourcePatternId: Nullable(Type.String()) })),
        contributingPatternIds: Type.Array(Type.String()),
      }),
    ),
    patterns: Type.Array(Type.Object({ id: Type.String(), patternKind: Type.String(), summary: Type.String(), confidence: Type.Number(), nextExpectedAt: Nullable(Timestamp()), sourceMemoryIds: Type.Array(Type.String()) })),
    predictions: Type.Array(
      Type.Object({ patternId: Type.String(), patternKind: Type.String(), description: Type.String(), expectedAt: Timestamp(), confidence: Type.Number(), sourceMemoryIds: Type.Array(Type.String()) }),
    ),
    memories: Type.Array(Type.Object({ id: Type.String(), type: Type.String(), content: Type.String(), importance: Type.Number(), created: Timestamp() })),
    observations: Type.Array(Type.Object({ id: Type.String(), content: Type.String(), proofCount: Type.Integer(), sourceMemoryIds: Type.Array(Type.String()), created: Timestamp() })),
    provenance: Type.Object({ memoryIds: Type.Array(Type.String()), patternIds: Type.Array(Type.String()), observationIds: Type.Array(Type.String()) }),
    tokensEstimate: Type.Integer({ description: 'Tokens (o200k_base) of the bundle content: guidance, subject and the five sections as JSON; never above maxTokens' }),
    truncated: Type.Array(Type.String(), { description: 'Sections that lost items to the budget' }),
    generatedAt: Timestamp(),
    durationMs: Type.Number(),
  },
  { $id: 'ContextBundle', title: 'ContextBundle' },
);
export type Bundle = Static<typeof BundleSchema>;

// ---- a contact's context (GET /lattice/contacts/{contactId}/context; SDK-WIRE.md 4.4) ----------

export const CONTACT_CONTEXT_LIMITS = { events: { default: 25, max: 200 }, memories: { default: 25, max: 100 }, hops: { default: 1, max: 3 } } as const;

export const ContactContextQuerySchema = Type.Object(
  {
    asOf: Type.Optional(Timestamp('The context as it stood at this instant (memories valid then, events up to it, the patterns valid then); default now')),
    eventsLimit: Type.Optional(Type.Integer({ minimum: 1, maximum: CONTACT_CONTEXT_LIMITS.events.max, default: CONTACT_CONTEXT_LIMITS.events.default })),
    memoriesLimit: Type.Optional(Type.Integer({ minimum: 1, maximum: CONTACT_CONTEXT_LIMITS.memories.max, default: CONTACT_CONTEXT_LIMITS.memories.default })),
    graphHops: Type.Optional(Type.Integer({ minimum: 1, maximum: CONTACT_CONTEXT_LIMITS.hops.max, default: CONTACT_CONTEXT_LIMITS.hops.default })),
    subjectKind: Type.Optional(Type.String({ minLength: 1, maxLength: 200, description: 'Only the subject of this kind (contactId matches subjects of any kind otherwise)' })),
  },
  { additionalProperties: false },
);
export type ContactContextQuery = Static<typeof ContactContextQuerySchema>;

export const ContactContextSchema = Type.Object(
  {
    contactId: Type.String(),
    contact: Type.Object({
      id: Type.String(),
      displayName: Type.Optional(Type.String({ description: "The latest typed reading of display_name, displayName, name or full_name; else the name of the graph entity that stands for the contact" })),
      email: Type.Optional(Type.String({ description: 'The latest typed reading of email' })),
      phone: Type.Optional(Type.String({ description: 'The latest typed reading of phone or phone_number' })),
      segment: Type.Optional(Type.String({ description: 'The RFM segment of its profile (POST /lattice/profile); without asOf only' })),
      tags: Type.Optional(Type.Array(Type.String(), { description: 'The latest typed reading of tags, split at commas' })),
      lifetimeValue: Type.Optional(Type.Number({ description: 'The sum of the amounts its activity carries, all of it up to asOf (as profiles read amounts)' })),
      lastInteractionAt: Type.Optional(Timestamp('Its latest activity up to asOf')),
    }),
    activePatterns: Type.Array(Type.Ref('PatternRecord')),
    recentEvents: Type.Array(
      Type.Object({
        id: Type.String(),
        eventType: Type.String(),
        title: Type.String(),
        occurredAt: Timestamp(),
        data: Type.Optional(Type.Record(Type.String(), Type.Unknown())),
      }),
      { description: 'Its events in the log and its activity memories (type event or with metadata.eventType), newest first' },
    ),
    recentMemories: Type.Array(
      Type.Object({ id: Type.String(), content: Type.String(), importance: Type.Number(), scope: Type.String(), type: Type.String(), created: Timestamp() }),
      { description: 'Its other live memories (not activity, not mined patterns), newest first' },
    ),
    entities: Type.Optional(Type.Array(Type.Object({ id: Type.String(), kind: Type.String(), name: Type.String(), metadata: Type.Record(Type.String(), Type.Unknown()) }))),
    edges: Type.Optional(
      Type.Array(Type.Object({ id: Type.String(), sourceEntityId: Type.String(), targetEntityId: Type.String(), kind: Type.String(), weight: Type.Optional(Type.Number()) })),
    ),
  },
  { $id: 'ContactContext', title: 'ContactContext' },
);
export type ContactContext = Static<typeof ContactContextSchema>;
