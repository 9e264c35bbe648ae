// Media routes: POST /memory/attachments (no model).
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { Type } from 'typebox';
import { AttachmentBodySchema, MediaBodySchema, MediaResultSchema } from './schemas.js';
import type { MediaService } from './service.js';

export const mediaRoutes: FastifyPluginAsyncTypebox<{ media: MediaService; maxBytes: number }> = async (app, { media, maxBytes }) => {
  app.post(
    '/memory/media',
    {
      config: { permission: 'WRITE_MEMORY', audit: 'write.memory' },
      schema: {
        tags: ['media'],
        summary: 'Read an image, a recording or a document into memories (model gateway)',
        description:
          `The file is decoded (strict base64, at most ${maxBytes} bytes) and its type read from its bytes (a lying type is corrected; bytes of no supported type, 400). ` +
          "An image is described by the gateway's vision model, audio transcribed by its transcription model; a document's text is read locally (plain text, Markdown, CSV, JSON, HTML, a PDF's text layer, DOCX) and a PDF without one is read by the model. " +
          'The text then goes through observe (as the user\'s turn; userId makes the subject user:<userId>), which saves what is worth remembering; `saved` lists it (empty when the text held nothing new, or when observe is asynchronous). The file is kept (blobUri). ' +
          'Needs MEMORY_MULTIMODAL_ENABLED (503 NOT_CONFIGURED without it) and, for images and audio, MODEL_GATEWAY_URL (503 NOT_CONFIGURED); counts one event against the events-ingested quota (429 past it) and meters the model tokens. A gateway that fails after its retries answers 503 and keeps nothing.',
        body: MediaBodySchema,
        response: { 200: MediaResultSchema },
      },
    },
    async (request) => media.ingest(request.principal, request.body),
  );

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
