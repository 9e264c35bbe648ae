// Shapes shared by several domains.
import { Type, type Static, type TSchemaOptions, type TUnsafe } from 'typebox';
import { Value } from 'typebox/value';

/** A subject's bounds, shared by every surface that takes one (REST schemas, MCP tools). */
export const SUBJECT_LIMITS = { kind: 100, externalId: 256 } as const;

export const SubjectSchema = Type.Object(
  {
    kind: Type.String({ minLength: 1, maxLength: SUBJECT_LIMITS.kind, description: 'What the subject is, e.g. user, customer, patient' }),
    externalId: Type.String({ minLength: 1, maxLength: SUBJECT_LIMITS.externalId, description: "The subject's id in the caller's system" }),
  },
  { additionalProperties: false, title: 'Subject' },
);
export type Subject = Static<typeof SubjectSchema>;

/**
 * The subject of a write: the top-level one, else `metadata.subject` when that is a subject
 * (`{kind, externalId}`), which is where the public MemMesh client puts it (SDK-WIRE.md, POST
 * /admin/memory). The top level wins when both are given; a `metadata.subject` of another shape
 * (a string, say) is ordinary metadata.
 */
export function subjectOf(subject: Subject | undefined, metadata: Record<string, unknown> | null | undefined): Subject | undefined {
  if (subject) return subject;
  const candidate = metadata?.subject;
  return Value.Check(SubjectSchema, candidate) ? { kind: candidate.kind, externalId: candidate.externalId } : undefined;
}

/**
 * A string that is one of `values`, typed as their literal union. The JSON schema stays
 * `{ type: 'string', enum: [...] }`, the form validation and the OpenAPI document have always had:
 * `Type.Enum` would drop `type`, and a union of literals would become an `anyOf` of one-value enums.
 */
export const StringEnum = <const V extends readonly string[]>(values: V, options: TSchemaOptions = {}): TUnsafe<V[number]> =>
  Type.Unsafe<V[number]>(Type.String({ enum: [...values], ...options }));

/** A schema or null. */
export const Nullable = <T extends Parameters<typeof Type.Union>[0][number]>(schema: T) => Type.Union([schema, Type.Null()]);

export const Timestamp = (description?: string) => Type.String({ format: 'date-time', ...(description ? { description } : {}) });

export const LimitOffset = (defaultLimit: number, maxLimit: number) => ({
  limit: Type.Optional(Type.Integer({ minimum: 1, maximum: maxLimit, default: defaultLimit })),
  offset: Type.Optional(Type.Integer({ minimum: 0, maximum: 1_000_000, default: 0 })),
});

/** A numeric input clamped to [min, max] (SPEC.md clamps rather than refuses); absent or not finite, the default. */
export const clamp = (value: number | undefined, fallback: number, min: number, max: number): number =>
  value === undefined || !Number.isFinite(value) ? fallback : Math.min(max, Math.max(min, value));

/** The same, against a documented range {default, min, max}. */
export const clampTo = (value: number | undefined, range: { readonly default: number; readonly min: number; readonly max: number }): number =>
  clamp(value, range.default, range.min, range.max);
