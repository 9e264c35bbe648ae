// Shapes of the compliance routes (SPEC.md "Compliance objects"; SDK-WIRE.md 4.10).
import { Type, type Static } from 'typebox';
import { Nullable, SubjectSchema, Timestamp } from '../platform/common-schemas.js';

/**
 * Every kind of row an export holds and a hard delete removes, by module. The first five are the
 * SDK's (SDK-WIRE.md 4.10); the others reach what later issues added. Keys are snake_case inside
 * `export`; counts and report fields are camelCase (`alert_fires` is `alertFires`, `alertFiresDeleted`).
 */
export const SUBJECT_KINDS = [
  'memories',
  'patterns',
  'observations',
  'events',
  'alert_fires',
  'queued_observations',
  'accumulators',
  'predictions',
  'financial_predictions',
  'mining_queue',
  'decisions',
  'outcomes',
  'ref_evidence',
  'discovery_features',
  'graph_entities',
  'graph_edges',
  'graph_mentions',
  'blobs',
] as const;
export type SubjectKind = (typeof SUBJECT_KINDS)[number];

export const camel = (kind: string): string => kind.replace(/_([a-z])/g, (_, c: string) => c.toUpperCase());

const KIND_NOTES: Record<SubjectKind, string> = {
  memories: "The subject's memories, and memories derived from them (citing one in sourceMemoryIds, to three links), except mined patterns",
  patterns: "The subject's mined patterns (behavior_pattern memories)",
  observations: "The subject's typed observations, accepted and quarantined",
  events: 'Events naming the subject',
  alert_fires: 'Alert fires naming the subject or one of its events',
  queued_observations: 'Typed observations of the subject accepted by enqueue and not yet ingested',
  accumulators: "The subject's running statistics per attribute (removed with it: they are computed from its observations only)",
  predictions: "The subject's recorded predictions",
  financial_predictions: "The financial pack's recorded calls asked for the subject (a ticker or a portfolio)",
  mining_queue: 'The subject waiting to be mined (at most one row)',
  decisions: "The subject's decisions",
  outcomes: "The subject's outcomes",
  ref_evidence: "Outcome evidence kept for refs that are the subject's (its patterns, predictions, observations)",
  discovery_features: "The subject's discovery features (at most one row)",
  graph_entities: 'On export: the entity standing for the subject, entities its memories mention, and the ends of its edges. On delete: its entity, and every entity left with no edge and no mention',
  graph_edges: "Edges stated by the subject's memories, or from or to its entity",
  graph_mentions: "Links between the subject's memories and the entities they mention",
  blobs: "Files the subject's memories refer to (attachments, media). On delete: those no other memory refers to, deleted from the blob store after the commit",
};

export const ExportBodySchema = Type.Object({ subject: SubjectSchema }, { additionalProperties: false });
export type ExportBody = Static<typeof ExportBodySchema>;

export const ExportBundleSchema = Type.Object(
  {
    subject: SubjectSchema,
    export: Type.Object({
      subject: SubjectSchema,
      ...Object.fromEntries(SUBJECT_KINDS.map((kind) => [kind, Type.Array(Type.Record(Type.String(), Type.Unknown()), { description: `${KIND_NOTES[kind]}; rows as stored, snake_case` })])),
      generated_at: Timestamp(),
    }),
    counts: Type.Object(Object.fromEntries(SUBJECT_KINDS.map((kind) => [camel(kind), Type.Integer({ minimum: 0 })]))),
    generatedAt: Timestamp(),
    durationMs: Type.Number(),
  },
  { title: 'ExportBundle' },
);

export const HardDeleteBodySchema = Type.Object(
  {
    subject: SubjectSchema,
    reason: Type.String({ minLength: 1, maxLength: 2000, description: "Why the subject is erased; stored on the tombstone as given (so it should not repeat the subject's identifiers)" }),
    dryRun: Type.Optional(Type.Boolean({ default: false, description: 'Answer the counts and touch nothing (no tombstone: auditEventId null)' })),
  },
  { additionalProperties: false },
);
export type HardDeleteBody = Static<typeof HardDeleteBodySchema>;

export const HardDeleteReportSchema = Type.Object(
  {
    subject: SubjectSchema,
    ...Object.fromEntries(SUBJECT_KINDS.map((kind) => [`${camel(kind)}Deleted`, Type.Integer({ minimum: 0, description: KIND_NOTES[kind] })])),
    dryRun: Type.Boolean(),
    auditEventId: Nullable(Type.String({ description: 'The tombstone audit row; null on a dry run' })),
    generatedAt: Timestamp(),
    durationMs: Type.Number(),
  },
  { title: 'HardDeleteReport' },
);

export const AuditQuerySchema = Type.Object(
  {
    subjectKind: Type.Optional(Type.String({ minLength: 1, maxLength: 100 })),
    subjectExternalId: Type.Optional(Type.String({ minLength: 1, maxLength: 256, description: 'With subjectKind: the rows about this one subject' })),
    actor: Type.Optional(Type.String({ minLength: 1, maxLength: 200, description: "A key's id or name" })),
    eventTypes: Type.Optional(Type.String({ maxLength: 2000, description: 'Comma-separated event types, e.g. read.search,subject.hard_delete' })),
    since: Type.Optional(Type.String({ format: 'date-time', description: 'Rows recorded after this instant, oldest first (a cursor that moves forward); without it, the newest rows, newest first' })),
    before: Type.Optional(Type.String({ maxLength: 64, description: 'Without since: rows older than this audit row id (paging back through the newest-first listing)' })),
    limit: Type.Optional(Type.Integer({ minimum: 1, maximum: 1000, default: 100 })),
  },
  { additionalProperties: false },
);
export type AuditQuery = Static<typeof AuditQuerySchema>;

export const AuditRowSchema = Type.Object(
  {
    id: Type.String(),
    created: Timestamp(),
    actor: Nullable(Type.String({ description: 'The id of the API key that made the call' })),
    actorName: Nullable(Type.String({ description: "The key's name, when it has one" })),
    eventType: Type.String({ description: 'read.<what>, write.<what>, or subject.hard_delete (the tombstone)' }),
    subjectKind: Nullable(Type.String()),
    subjectRef: Nullable(Type.String({ description: 'SHA-256 of project, subject kind and id: the subject is never stored in clear' })),
    query: Nullable(Type.String({ description: "The call's query text; redacted (null) once the subject is hard-deleted" })),
    memoryIds: Nullable(Type.String({ description: 'Comma-separated ids of the memories in the answer (at most 1000), or null' })),
    resultCount: Type.Integer(),
    metadata: Type.Record(Type.String(), Type.Unknown(), { description: 'method, route, statusCode, requestId; on a tombstone: reason, counts, durationMs' }),
  },
  { title: 'AuditRow' },
);
export type AuditRow = Static<typeof AuditRowSchema>;
