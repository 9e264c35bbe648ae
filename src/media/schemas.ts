// Media shapes (SPEC.md "POST /memory/media", "POST /memory/attachments"; SDK-WIRE.md 4.2).
import { Type, type Static } from 'typebox';
import { StringEnum, SubjectSchema, Timestamp } from '../platform/common-schemas.js';

const Base64 = Type.String({ minLength: 1, description: 'The file, base64 (standard alphabet, padding optional, whitespace ignored)' });
const MimeType = Type.String({ minLength: 3, maxLength: 200, description: 'As declared; the bytes decide (a type that lies is corrected, or refused when the bytes are no supported type)' });

export const AttachmentBodySchema = Type.Object(
  {
    subject: SubjectSchema,
    mimeType: MimeType,
    dataBase64: Base64,
    fileName: Type.Optional(Type.String({ maxLength: 300 })),
    content: Type.Optional(Type.String({ maxLength: 20_000, description: "The caller's caption or transcript: the memory's text" })),
    activityType: Type.Optional(Type.String({ maxLength: 100 })),
    occurredAt: Type.Optional(Timestamp('When it was captured; default now')),
    importance: Type.Optional(Type.Number({ minimum: 0, maximum: 10 })),
    metadata: Type.Optional(Type.Record(Type.String(), Type.Unknown())),
  },
  { additionalProperties: false },
);
export type AttachmentBody = Static<typeof AttachmentBodySchema>;

export const MediaBodySchema = Type.Object(
  {
    mimeType: MimeType,
    dataBase64: Base64,
    userId: Type.Optional(Type.String({ minLength: 1, maxLength: 256, description: 'The end user it is about: the subject user:<userId>' })),
    agentId: Type.Optional(Type.String({ maxLength: 256 })),
    sessionId: Type.Optional(Type.String({ maxLength: 256 })),
    source: Type.Optional(Type.String({ maxLength: 100, description: 'An origin label, kept in metadata.media.source' })),
  },
  { additionalProperties: false },
);
export type MediaBody = Static<typeof MediaBodySchema>;

export const MediaResultSchema = Type.Object({
  saved: Type.Array(Type.Object({ id: Type.String(), content: Type.String(), kind: Type.String() })),
  candidateCount: Type.Integer(),
  extractedText: Type.String(),
  modality: StringEnum(['image', 'audio', 'document']),
  blobUri: Type.String({ description: 'The kept file (blob://local/<project>/<sha256>)' }),
  mimeType: Type.String({ description: 'The type read from the bytes' }),
});
