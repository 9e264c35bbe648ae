// Shapes shared by several domains.
import { Type, type Static } from 'typebox';

export const SubjectSchema = Type.Object(
  {
    kind: Type.String({ minLength: 1, maxLength: 100, description: 'What the subject is, e.g. user, customer, patient' }),
    externalId: Type.String({ minLength: 1, maxLength: 256, description: "The subject's id in the caller's system" }),
  },
  { additionalProperties: false, $id: 'Subject', title: 'Subject' },
);
export type Subject = Static<typeof SubjectSchema>;

export const Timestamp = (description?: string) => Type.String({ format: 'date-time', ...(description ? { description } : {}) });

export const LimitOffset = (defaultLimit: number, maxLimit: number) => ({
  limit: Type.Optional(Type.Integer({ minimum: 1, maximum: maxLimit, default: defaultLimit })),
  offset: Type.Optional(Type.Integer({ minimum: 0, maximum: 1_000_000, default: 0 })),
});
