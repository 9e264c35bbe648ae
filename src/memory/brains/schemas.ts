// Brains (SDK-WIRE.md: POST, GET /brains; GET, PATCH, DELETE /brains/{id}; the TypeScript client's
// Brain types): a named, versioned collection of a project's memories with a card, which the
// project can publish.
import { Type, type Static } from 'typebox';
import { Nullable, Timestamp } from '../../platform/common-schemas.js';
import { ProjectParamsSchema } from '../../platform/project-id.js';

export const BRAIN_VISIBILITIES = ['PUBLIC', 'UNLISTED', 'PRIVATE'] as const;
export const BRAIN_STATUSES = ['DRAFT', 'PUBLISHED', 'ARCHIVED'] as const;
export const BRAIN_INTERFACE = 'v1';
export const BRAIN_PAGE = { default: 20, max: 100 } as const;

const Provenance = Type.Object({ source: Type.String({ maxLength: 500 }), license: Type.String({ maxLength: 200 }), url: Type.Optional(Type.String({ maxLength: 2000 })) });

export const BrainCardSchema = Type.Object(
  {
    ontologyRef: Type.Optional(Type.String({ maxLength: 2000 })),
    provenance: Type.Optional(Type.Array(Provenance, { maxItems: 50, description: 'Where the facts came from, and under what licence' })),
    changelogRef: Type.Optional(Type.String({ maxLength: 2000 })),
    coverage: Type.Optional(Type.Object({ subjects: Type.Optional(Type.Integer({ minimum: 0 })), facts: Type.Optional(Type.Integer({ minimum: 0 })), freshness: Type.Optional(Type.String({ maxLength: 200 })) })),
    evaluation: Type.Optional(Type.Object({ benchmark: Type.Optional(Type.String({ maxLength: 200 })), score: Type.Optional(Type.Number()) })),
    predictEnabled: Type.Optional(Type.Boolean()),
    pricing: Type.Optional(Type.Object({ model: Type.Optional(Type.String({ maxLength: 100 })), unit: Type.Optional(Type.String({ maxLength: 100 })) })),
  },
  { additionalProperties: false },
);

export const BrainSchema = Type.Object(
  {
    id: Type.String(),
    created: Timestamp(),
    updated: Timestamp(),
    projectId: Type.String(),
    externalId: Type.String({ description: 'The slug the brain is addressed by, unique within the project' }),
    name: Type.String(),
    domain: Nullable(Type.String()),
    brainInterface: Type.String({ description: `The Brain Interface contract version it conforms to (${BRAIN_INTERFACE})` }),
    version: Type.String(),
    visibility: Type.Enum(BRAIN_VISIBILITIES),
    status: Type.Enum(BRAIN_STATUSES),
    rightsAttested: Type.Boolean({ description: 'The project attests it has the rights to share the facts in it; a brain is published only with it' }),
    card: Nullable(BrainCardSchema),
  },
  { $id: 'Brain', title: 'Brain' },
);
export type Brain = Static<typeof BrainSchema>;

const slug = Type.String({ minLength: 1, maxLength: 100, pattern: '^[a-z0-9][a-z0-9._-]*$', description: 'Lowercase letters, digits, dot, dash and underscore' });
const fields = {
  name: Type.String({ minLength: 1, maxLength: 200 }),
  domain: Type.String({ minLength: 1, maxLength: 200 }),
  version: Type.String({ minLength: 1, maxLength: 50 }),
  visibility: Type.Enum(BRAIN_VISIBILITIES),
  rightsAttested: Type.Boolean(),
  card: BrainCardSchema,
};

export const CreateBrainSchema = Type.Object(
  {
    externalId: slug,
    name: fields.name,
    domain: Type.Optional(fields.domain),
    version: Type.Optional({ ...fields.version, default: '1.0.0' }),
    visibility: Type.Optional({ ...fields.visibility, default: 'PRIVATE' }),
    rightsAttested: Type.Optional({ ...fields.rightsAttested, default: false }),
    card: Type.Optional(fields.card),
  },
  { additionalProperties: false },
);
export type CreateBrain = Static<typeof CreateBrainSchema>;

export const UpdateBrainSchema = Type.Object(
  {
    name: Type.Optional(fields.name),
    domain: Type.Optional(Nullable(fields.domain)),
    version: Type.Optional(fields.version),
    visibility: Type.Optional(fields.visibility),
    status: Type.Optional(Type.Enum(BRAIN_STATUSES)),
    rightsAttested: Type.Optional(fields.rightsAttested),
    card: Type.Optional(Nullable(fields.card)),
  },
  { additionalProperties: false, minProperties: 1 },
);
export type UpdateBrain = Static<typeof UpdateBrainSchema>;

export const BrainPageQuerySchema = Type.Object(
  {
    limit: Type.Optional(Type.Integer({ minimum: 1, maximum: BRAIN_PAGE.max, default: BRAIN_PAGE.default })),
    cursor: Type.Optional(Type.String({ minLength: 1, maxLength: 200, description: 'next or previous of an earlier page' })),
  },
  { additionalProperties: false },
);

export const BrainPageSchema = Type.Object({
  data: Type.Array(Type.Ref('Brain')),
  next: Nullable(Type.String({ description: 'The cursor of the page after this one (older brains); null on the last' })),
  previous: Nullable(Type.String({ description: 'The cursor of the page before this one (newer brains); null on the first' })),
});

export const BrainParamsSchema = Type.Object({ projectId: ProjectParamsSchema.properties.projectId, brainId: Type.String({ minLength: 1, maxLength: 100 }) });

/** A brain as the catalogue and a brain's MCP endpoint show it to other projects: no owner, no bookkeeping. */
export const CatalogueBrainSchema = Type.Object({
  id: Type.String(),
  externalId: Type.String(),
  name: Type.String(),
  domain: Nullable(Type.String()),
  version: Type.String(),
  brainInterface: Type.String(),
  visibility: Type.Enum(BRAIN_VISIBILITIES),
  status: Type.Enum(BRAIN_STATUSES),
  card: Nullable(BrainCardSchema),
  updated: Timestamp(),
});
export type CatalogueBrain = Static<typeof CatalogueBrainSchema>;

export const CataloguePageQuerySchema = Type.Object(
  {
    ...BrainPageQuerySchema.properties,
    domain: Type.Optional(Type.String({ minLength: 1, maxLength: 200, description: 'Only brains of this domain (case-insensitive)' })),
  },
  { additionalProperties: false },
);

export const CataloguePageSchema = Type.Object({
  data: Type.Array(CatalogueBrainSchema),
  next: BrainPageSchema.properties.next,
  previous: BrainPageSchema.properties.previous,
});
