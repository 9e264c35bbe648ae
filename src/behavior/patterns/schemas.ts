// Shapes of mined patterns (SDK-WIRE.md 4.4): the pattern record, its metadata, the extract request
// and report, and the per-contact listing.
import { Type, type Static } from 'typebox';
import { StringEnum, SubjectSchema, Timestamp } from '../../platform/common-schemas.js';
import { ProjectParamsSchema } from '../../platform/project-id.js';

export const PATTERN_KINDS = ['recurring_event', 'day_of_week', 'time_of_day', 'entity_preference', 'declining_engagement'] as const;

export const CadenceSchema = Type.Object({
  periodDays: Type.Optional(Type.Number()),
  dayOfWeek: Type.Optional(Type.Integer({ minimum: 0, maximum: 6, description: '0 = Sunday' })),
  timeOfDayLocal: Type.Optional(Type.String({ description: 'HH:MM in `timezone`' })),
  timezone: Type.Optional(Type.String()),
});

export const PatternMetaSchema = Type.Object(
  {
    patternKind: Type.String({ description: `One of ${PATTERN_KINDS.join(', ')}` }),
    contactId: Type.String({ description: "The subject's externalId" }),
    subjectKind: Type.String(),
    eventType: Type.Optional(Type.String({ description: 'The activity type the pattern was mined from; absent for untyped activity' })),
    entityExternalIds: Type.Optional(Type.Array(Type.String(), { description: 'entity_preference: the preferred entity' })),
    cadence: Type.Optional(CadenceSchema),
    confidence: Type.Number({
      description:
        'The pattern\'s confidence: mined, the Beta posterior mean (hits + 1) / (hits + misses + 2); once decisions citing the pattern have outcomes, that updated by them (minedConfidence is then the mined value)',
    }),
    hits: Type.Integer({ description: 'Mined: periods (or activities) the pattern held for' }),
    misses: Type.Integer({ description: 'Mined: periods (or activities) it did not, `unseen` included' }),
    unseen: Type.Optional(
      Type.Integer({
        description:
          'A tentative pattern (a cadence from 3 to 5 occurrences, a preference from 3 or 4 activities): the observations it lacks to be a full one, counted among the misses, so its confidence is low until more activity or outcomes say otherwise',
      }),
    ),
    minedConfidence: Type.Optional(Type.Number({ description: 'The confidence mining alone gives, once outcomes have moved `confidence`' })),
    outcomeHits: Type.Optional(Type.Number({ description: 'Weighted successes of decisions that cited the pattern (a partial outcome counts half)' })),
    outcomeMisses: Type.Optional(Type.Number({ description: 'Weighted failures of decisions that cited the pattern' })),
    observationCount: Type.Integer(),
    observationWindowDays: Type.Number(),
    lastObservedAt: Timestamp(),
    nextExpectedAt: Type.Optional(Timestamp()),
    toleranceMinutes: Type.Optional(Type.Number()),
    rateRatio: Type.Optional(Type.Number({ description: 'declining_engagement: recent rate / earlier rate' })),
    active: Type.Boolean(),
    broken: Type.Optional(Type.Boolean({ description: 'The pattern monitor found a firing missed beyond the tolerance (POST /lattice/monitor/tick); it holds while brokenFor equals nextExpectedAt' })),
    brokenAt: Type.Optional(Timestamp('When the monitor marked it')),
    brokenFor: Type.Optional(Timestamp('The missed firing (the nextExpectedAt it was marked for)')),
  },
  { $id: 'PatternMeta', title: 'PatternMeta' },
);
export type PatternMeta = Static<typeof PatternMetaSchema>;

export const PatternRecordSchema = Type.Object(
  {
    id: Type.String({ description: 'The behavior_pattern memory id (mem_...)' }),
    projectId: Type.Union([Type.String(), Type.Null()]),
    contactId: Type.String({ description: "The subject's externalId" }),
    subject: SubjectSchema,
    summary: Type.String(),
    metadata: Type.Ref('PatternMeta'),
    active: Type.Boolean(),
    confidence: Type.Number(),
    sourceMemoryIds: Type.Array(Type.String(), { description: 'The activities (memory, event and observation ids) the pattern was mined from, most recent first, at most 100' }),
    created: Timestamp(),
    updated: Timestamp(),
  },
  { $id: 'PatternRecord', title: 'PatternRecord' },
);
/** The record, its metadata typed (the schema refers to PatternMeta by $ref). */
export type PatternRecord = Omit<Static<typeof PatternRecordSchema>, 'metadata'> & { metadata: PatternMeta };

export const ExtractBodySchema = Type.Object(
  {
    contactId: Type.Optional(Type.String({ minLength: 1, maxLength: 256, description: "Mine one subject, by externalId (any kind; narrow with subject.kind)" })),
    subject: Type.Optional(SubjectSchema),
    windowDays: Type.Optional(Type.Integer({ minimum: 7, maximum: 730, default: 90, description: 'How far back activity is read' })),
    force: Type.Optional(Type.Boolean({ description: 'Accepted for the clients; mining always recomputes' })),
    source: Type.Optional(StringEnum(['memories', 'contact_events'], { description: 'Accepted for the clients; every kind of activity is read' })),
    timezone: Type.Optional(Type.String({ maxLength: 64, description: 'IANA time zone for day-of-week and time-of-day patterns (default UTC)' })),
  },
  { additionalProperties: false },
);
export type ExtractBody = Static<typeof ExtractBodySchema>;

export const ExtractReportSchema = Type.Object({
  contactsProcessed: Type.Integer(),
  patternsCreated: Type.Integer(),
  patternsRefreshed: Type.Integer(),
  patternsDeactivated: Type.Integer(),
  durationMs: Type.Number(),
  errors: Type.Optional(Type.Array(Type.Object({ contactId: Type.String(), eventType: Type.Union([Type.String(), Type.Null()]), error: Type.String() }))),
});
export type ExtractReport = Static<typeof ExtractReportSchema>;

export const PatternParamsSchema = Type.Object({
  projectId: ProjectParamsSchema.properties.projectId,
  patternId: Type.String({ minLength: 1, maxLength: 100, description: 'A behavior_pattern memory id' }),
});

export const ContactParamsSchema = Type.Object({
  projectId: ProjectParamsSchema.properties.projectId,
  contactId: Type.String({ minLength: 1, maxLength: 256, description: "A subject's externalId" }),
});

export const ContactPatternsQuerySchema = Type.Object(
  {
    activeOnly: Type.Optional(Type.Boolean({ default: true })),
    limit: Type.Optional(Type.Integer({ minimum: 1, maximum: 100, default: 50 })),
    cursor: Type.Optional(Type.String({ maxLength: 200, description: 'nextCursor of the previous page' })),
    subjectKind: Type.Optional(Type.String({ minLength: 1, maxLength: 100, description: 'Only subjects of this kind' })),
  },
  { additionalProperties: false },
);

export const PatternPageSchema = Type.Object({
  data: Type.Array(Type.Ref('PatternRecord')),
  nextCursor: Type.Union([Type.String(), Type.Null()]),
});
