// The shapes of POST /memory/observe, defined once: validation, types and the OpenAPI come from these.
import { Type, type Static } from 'typebox';
import { StringEnum, SubjectSchema, Timestamp } from '../../platform/common-schemas.js';
import { MemoryScopeSchema, MemoryTypeSchema } from '../schemas.js';

const Text = Type.String({ minLength: 1, maxLength: 20_000 });

export const ObserveBodySchema = Type.Object(
  {
    text: Type.Optional(Text),
    content: Type.Optional({ ...Text, description: 'Alias of text' }),
    role: Type.Optional(StringEnum(['user', 'assistant', 'system'], { default: 'user' })),
    subject: Type.Optional(SubjectSchema),
    userId: Type.Optional(Type.String({ maxLength: 256, description: 'The end user; the subject is { kind: user, externalId: userId } when no subject is given' })),
    agentId: Type.Optional(Type.String({ maxLength: 256 })),
    sessionId: Type.Optional(Type.String({ maxLength: 256 })),
    occurredAt: Type.Optional(Timestamp('When the turn happened; relative dates are read from it. Default now')),
    activityType: Type.Optional(Type.String({ maxLength: 100, description: 'Stored as metadata.eventType' })),
    type: Type.Optional({ ...MemoryTypeSchema, description: "Overrides the extractor's classification" }),
    scope: Type.Optional(MemoryScopeSchema),
    importance: Type.Optional(Type.Number({ minimum: 0, maximum: 10, description: "Overrides the extractor's importance" })),
    category: Type.Optional(Type.String({ maxLength: 100 })),
    metadata: Type.Optional(Type.Record(Type.String(), Type.Unknown())),
  },
  { additionalProperties: false },
);
export type ObserveBody = Static<typeof ObserveBodySchema>;

export const ObserveResultSchema = Type.Object({
  saved: Type.Array(Type.Ref('Memory'), { description: 'Memories created by this call; empty for filler or for what was already known' }),
  candidateCount: Type.Integer({ description: 'Statements considered after splitting the text' }),
  supersededIds: Type.Array(Type.String(), { description: 'Memories retired by a newer value of the same fact' }),
  queued: Type.Optional(Type.Object({ jobId: Type.String() }, { description: 'Present when extraction runs in a job (async buffer)' })),
});
