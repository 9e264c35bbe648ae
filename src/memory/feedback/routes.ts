// POST /memory/feedback and GET /admin/memory/{memoryId}/feedback (SDK-WIRE.md 4.1, 4.2).
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { Type } from 'typebox';
import { Nullable, Timestamp } from '../../platform/common-schemas.js';
import { MemoryParamsSchema } from '../schemas.js';
import { FLAG_AFTER, type MemoryFeedback } from './feedback.js';

const tags = ['memory'];
const Rating = Type.Union([Type.Literal('positive'), Type.Literal('negative')]);

export const feedbackRoutes: FastifyPluginAsyncTypebox<{ feedback: MemoryFeedback }> = async (app, { feedback }) => {
  app.post(
    '/memory/feedback',
    {
      config: { permission: 'WRITE_MEMORY', audit: 'write.feedback' },
      schema: {
        tags,
        summary: 'Rate a memory an answer used',
        description:
          `204, no body. A negative rating counts on the memory (negativeRatingCount); at the ${FLAG_AFTER === 3 ? 'third' : `${FLAG_AFTER}th`} a confirmed memory is flagged into the review queue (GET /admin/memory/review, reviewReason flagged). ` +
          'A positive rating counts as a use: lastAccessedAt moves to now, which keeps the memory up in search by recency. A rating with a responseId is idempotent: it counts once per memory and response, so a retry of the same call changes nothing. 404 for a memory the project does not hold.',
        body: Type.Object(
          {
            memoryId: Type.String({ minLength: 1, maxLength: 100 }),
            rating: Rating,
            responseId: Type.Optional(Type.String({ minLength: 1, maxLength: 200, description: 'The answer that used the memory' })),
            comment: Type.Optional(Type.String({ maxLength: 2000 })),
          },
          { additionalProperties: false },
        ),
        response: { 204: Type.Null() },
      },
    },
    async (request, reply) => {
      await feedback.submit(request.principal.projectId, request.body, request.principal.keyId);
      request.auditDetail = { memoryIds: [request.body.memoryId], resultCount: 1, metadata: { rating: request.body.rating } };
      return reply.code(204).send(null);
    },
  );

  app.get(
    '/admin/memory/:memoryId/feedback',
    {
      config: { permission: 'WRITE_MEMORY', audit: 'read.feedback' },
      schema: {
        tags,
        summary: "A memory's feedback, newest first",
        params: MemoryParamsSchema,
        response: {
          200: Type.Array(
            Type.Object({
              id: Type.String(),
              memoryId: Type.String(),
              responseId: Nullable(Type.String()),
              rating: Rating,
              comment: Nullable(Type.String()),
              createdByUserId: Nullable(Type.String({ description: 'The API key that gave it' })),
              created: Timestamp(),
            }),
          ),
        },
      },
    },
    async (request) => feedback.list(request.principal.projectId, request.params.memoryId),
  );
};
