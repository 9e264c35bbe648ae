// Memory routes (HTTP adapter over MemoryService).
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import type { MemoryService } from './service.js';
import { BackfillBodySchema, BackfillResultSchema } from './schemas.js';

export const memoryRoutes: FastifyPluginAsyncTypebox<{ memory: MemoryService }> = async (app, { memory }) => {
  app.post(
    '/admin/memory/embeddings/backfill',
    {
      config: { permission: 'WRITE_MEMORY' },
      schema: {
        tags: ['memory'],
        summary: 'Embed memories that have no embedding yet',
        description:
          'Embeds up to `batch` memories of the project that lack a vector, in the worker pool, and answers how many it embedded. ' +
          'Call repeatedly until `embedded` is 0. Runs as a job and waits for it (503 JOB_TIMEOUT if it takes longer than JOB_TIMEOUT_MS; the job still completes).',
        body: BackfillBodySchema,
        response: { 200: BackfillResultSchema },
      },
    },
    async (request) => memory.backfillEmbeddings(request.principal.projectId, request.body.batch),
  );
};
