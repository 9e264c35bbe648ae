// The brain registry (SDK-WIRE.md: POST, GET /brains; GET, PATCH, DELETE /brains/{id}) and the
// catalogue of every project's published public brains (GET /brain-catalog).
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { Type } from 'typebox';
import type { Brains } from './brains.js';
import { BRAIN_PAGE, BrainPageQuerySchema, BrainPageSchema, BrainParamsSchema, CataloguePageQuerySchema, CataloguePageSchema, CreateBrainSchema, UpdateBrainSchema } from './schemas.js';

const tags = ['brains'];
const READ = { permission: 'READ_MEMORY' } as const;
const WRITE = { permission: 'WRITE_MEMORY' } as const;
const about =
  "A brain is a named, versioned collection of the project's memories (a memory belongs to one by metadata.brainId) with a card: provenance and licences, coverage, evaluation. " +
  'It is created as a DRAFT; PATCH status PUBLISHED publishes it, which needs rightsAttested true (400 otherwise); ARCHIVED retires it. Visibility PUBLIC, UNLISTED or PRIVATE (the default) says who may find it once published. ' +
  "Deleting a brain leaves its memories in the project (their metadata.brainId then names no brain).";

export const brainRoutes: FastifyPluginAsyncTypebox<{ brains: Brains }> = async (app, { brains }) => {
  app.post(
    '/brains',
    {
      config: { ...WRITE, audit: 'write.brain' },
      schema: { tags, summary: 'Create a brain (a draft)', description: `${about} 409 CONFLICT when the project has a brain with the externalId already.`, body: CreateBrainSchema, response: { 201: Type.Ref('Brain') } },
    },
    async (request, reply) => reply.code(201).send(await brains.create(request.principal.projectId, request.body)),
  );

  app.get(
    '/brains',
    {
      config: { ...READ, audit: 'read.brain' },
      schema: {
        tags,
        summary: "The project's brains, newest first, a page at a time",
        description: `At most limit (default ${BRAIN_PAGE.default}, at most ${BRAIN_PAGE.max}) a page. Pass next (or previous) back as cursor for the page after (or before); null at either end. A cursor this API did not give is a 400.`,
        querystring: BrainPageQuerySchema,
        response: { 200: BrainPageSchema },
      },
    },
    async (request) => brains.page(request.principal.projectId, request.query),
  );

  app.get(
    '/brain-catalog',
    {
      config: { ...READ, audit: 'read.brain' },
      schema: {
        tags,
        summary: "Every project's published public brains, newest first, a page at a time",
        description:
          'The brains any project may read: PUBLISHED and PUBLIC (an UNLISTED brain is read by whoever has its id and is listed nowhere; PRIVATE and unpublished ones never leave their project). Each shows its card, not its owner. ' +
          `Read one with brainId on POST /memory/search or /memory/context, or over MCP at /brains/{brainId}/mcp-server/http. domain narrows to one domain. Paged as GET /brains: at most limit (default ${BRAIN_PAGE.default}, at most ${BRAIN_PAGE.max}), cursors next and previous.`,
        querystring: CataloguePageQuerySchema,
        response: { 200: CataloguePageSchema },
      },
    },
    async (request) => brains.catalogue(request.query),
  );

  app.get(
    '/brains/:brainId',
    { config: { ...READ, audit: 'read.brain' }, schema: { tags, summary: 'A brain', params: BrainParamsSchema, response: { 200: Type.Ref('Brain') } } },
    async (request) => brains.get(request.principal.projectId, request.params.brainId),
  );

  app.patch(
    '/brains/:brainId',
    {
      config: { ...WRITE, audit: 'write.brain' },
      schema: { tags, summary: 'Change, publish or archive a brain', description: about, params: BrainParamsSchema, body: UpdateBrainSchema, response: { 200: Type.Ref('Brain') } },
    },
    async (request) => brains.update(request.principal.projectId, request.params.brainId, request.body),
  );

  app.delete(
    '/brains/:brainId',
    { config: { ...WRITE, audit: 'write.brain' }, schema: { tags, summary: 'Delete a brain (its memories stay)', params: BrainParamsSchema, response: { 204: Type.Null() } } },
    async (request, reply) => {
      await brains.delete(request.principal.projectId, request.params.brainId);
      return reply.code(204).send(null);
    },
  );
};
