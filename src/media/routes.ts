// Media routes: POST /memory/attachments (no model).
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { Type } from 'typebox';
import { AttachmentBodySchema } from './schemas.js';
import type { MediaService } from './service.js';

export const mediaRoutes: FastifyPluginAsyncTypebox<{ media: MediaService; maxBytes: number }> = async (app, { media, maxBytes }) => {
  app.post(
    '/memory/attachments',
    {
      config: { permission: 'WRITE_MEMORY', audit: 'write.memory' },
      schema: {
        tags: ['media'],
        summary: 'Keep a file and remember it by its caption (no model)',
        description:
          `The file is decoded (strict base64; at most ${maxBytes} bytes, MEDIA_MAX_BYTES) and its type read from its bytes: a declared type the bytes contradict is corrected (metadata.attachment.declaredMimeType keeps what was declared), and bytes of no supported type (images, audio, PDF, DOCX, text, HTML, CSV, JSON) are refused with 400. ` +
          'The blob is kept under the data directory (BLOB_DIR), once per content, and named by an opaque blob:// URI. The memory (type observation, source attachment) is the caption (`content`), or names the file when there is none; metadata.fileId is the content\'s SHA-256 and metadata.attachment describes the file. ' +
          'The same file and caption again answer the same memory (200).',
        body: AttachmentBodySchema,
        response: { 200: Type.Ref('Memory'), 201: Type.Ref('Memory') },
      },
    },
    async (request, reply) => {
      const { memory, created } = await media.attach(request.principal.projectId, request.body);
      return reply.code(created ? 201 : 200).send(memory);
    },
  );
};
