// Shapes of alert rules and their fires.
import { Type, type Static } from 'typebox';

export const DEDUP_ON = ['subject', 'subject+rule', 'rule'] as const;
export type DedupOn = (typeof DEDUP_ON)[number];
export const WRITE_AS_SCOPES = ['project', 'platform', 'user'] as const;

const name = Type.String({ minLength: 1, maxLength: 64 });

export const TriggerSchema = Type.Union(
  [
    Type.Object(
      {
        kind: Type.Literal('engine-event'),
        eventTypes: Type.Array(Type.String({ minLength: 1, maxLength: 200 }), {
          maxItems: 50,
          description: 'Event types that fire the rule; `*` matches any run of characters (typed.*). Empty: every event type',
        }),
      },
      { additionalProperties: false },
    ),
    Type.Object(
      {
        kind: Type.Literal('segment-change'),
        from: Type.Optional(Type.String({ maxLength: 100, description: 'Previous segment; absent: any' })),
        to: Type.String({ minLength: 1, maxLength: 100, description: 'New segment' }),
      },
      { additionalProperties: false, description: 'Fires on `segment.changed` events whose payload has `to` (and `from`, when given)' },
    ),
    Type.Object(
      {
        kind: Type.Literal('pattern-emerged'),
        patternKind: Type.Optional(Type.String({ maxLength: 100, description: 'Pattern kind; absent: any' })),
      },
      { additionalProperties: false, description: 'Fires on `pattern.emerged` events whose payload has this `patternKind`' },
    ),
  ],
  { description: 'What fires the rule' },
);
export type Trigger = Static<typeof TriggerSchema>;

export const FilterSchema = Type.Object(
  {
    subjectKind: Type.Optional(Type.String({ maxLength: 100 })),
    subjectExternalIdPattern: Type.Optional(Type.String({ maxLength: 256, description: 'Glob on the subject externalId; `*` matches any run of characters' })),
    categories: Type.Optional(Type.Array(Type.String({ maxLength: 100 }), { maxItems: 100, description: "The event payload's `category` must be one of these" })),
    metadataMatch: Type.Optional(
      Type.Record(Type.String({ maxLength: 200 }), Type.Union([Type.String(), Type.Number(), Type.Boolean(), Type.Null()]), {
        description: 'Dot-path equality on the event payload: `{ "order.total": 100 }` matches payload.order.total === 100',
      }),
    ),
  },
  { additionalProperties: false, description: 'Narrows which events fire the rule; every given condition must hold' },
);
export type Filter = Static<typeof FilterSchema>;

export const WebhookChannelSchema = Type.Object(
  {
    kind: Type.Literal('webhook'),
    url: Type.String({ minLength: 1, maxLength: 2048, description: 'http(s) target; private, loopback and link-local addresses are refused' }),
    secret: Type.Optional(
      Type.String({
        minLength: 8,
        maxLength: 256,
        description: 'Signing secret: `whsec_` + base64 (Standard Webhooks), or any text used as raw bytes. Generated when absent and returned with the rule',
      }),
    ),
  },
  { additionalProperties: false },
);
export type WebhookChannel = Static<typeof WebhookChannelSchema>;

export const MemoryChannelSchema = Type.Object(
  {
    kind: Type.Literal('memory'),
    writeAs: Type.Object(
      {
        content: Type.String({
          minLength: 1,
          maxLength: 4000,
          description: 'Template; variables {{event.eventType}} {{event.severity}} {{subject.kind}} {{subject.externalId}} {{rule.name}}, and {{event.payload.<dot.path>}}',
        }),
        // Optional, as the public clients type it (writeAs.scope?): the rule is saved with project.
        scope: Type.Optional(Type.Enum(WRITE_AS_SCOPES, { description: 'Default project' })),
        importance: Type.Optional(Type.Integer({ minimum: 0, maximum: 10, description: 'Default 5' })),
      },
      { additionalProperties: false },
    ),
  },
  { additionalProperties: false, description: "Writes a memory (type event, about the event's subject) when the rule fires" },
);
export type MemoryChannel = Static<typeof MemoryChannelSchema>;

export const ChannelSchema = Type.Union([WebhookChannelSchema, MemoryChannelSchema]);
export type Channel = Static<typeof ChannelSchema>;

export const ThrottleSchema = Type.Object(
  {
    maxPerHour: Type.Optional(Type.Integer({ minimum: 1, maximum: 100_000, description: 'At most this many fires with the same dedupe key in any trailing hour' })),
    cooldownMinutes: Type.Optional(Type.Number({ minimum: 0, maximum: 43_200, description: 'No second fire with the same dedupe key within this many minutes' })),
    dedupOn: Type.Optional(
      Type.Enum(DEDUP_ON, {
        description: "Default subject+rule. What fires share a dedupe key: 'subject+rule' (this rule, this subject), 'rule' (this rule, any subject), 'subject' (this subject, any rule)",
      }),
    ),
  },
  { additionalProperties: false },
);
export type Throttle = Static<typeof ThrottleSchema>;

const channels = Type.Array(ChannelSchema, { minItems: 1, maxItems: 10 });

export const CreateRuleBodySchema = Type.Object(
  {
    name,
    description: Type.Optional(Type.Union([Type.String({ maxLength: 2000 }), Type.Null()])),
    enabled: Type.Optional(Type.Boolean({ default: true })),
    trigger: TriggerSchema,
    filter: Type.Optional(Type.Union([FilterSchema, Type.Null()])),
    notify: channels,
    throttle: Type.Optional(Type.Union([ThrottleSchema, Type.Null()])),
  },
  { additionalProperties: false },
);
export type CreateRuleBody = Static<typeof CreateRuleBodySchema>;

export const PatchRuleBodySchema = Type.Object(
  {
    name: Type.Optional(name),
    description: Type.Optional(Type.Union([Type.String({ maxLength: 2000 }), Type.Null()])),
    enabled: Type.Optional(Type.Boolean()),
    trigger: Type.Optional(TriggerSchema),
    filter: Type.Optional(Type.Union([FilterSchema, Type.Null()])),
    notify: Type.Optional(channels),
    throttle: Type.Optional(Type.Union([ThrottleSchema, Type.Null()])),
  },
  { additionalProperties: false, minProperties: 1 },
);
export type PatchRuleBody = Static<typeof PatchRuleBodySchema>;

export const RuleSchema = Type.Object(
  {
    id: Type.String(),
    projectId: Type.String(),
    name: Type.String(),
    description: Type.Union([Type.String(), Type.Null()]),
    enabled: Type.Boolean(),
    trigger: TriggerSchema,
    filter: Type.Union([FilterSchema, Type.Null()]),
    notify: Type.Array(ChannelSchema),
    throttle: Type.Union([ThrottleSchema, Type.Null()]),
    created: Type.String({ format: 'date-time' }),
    updated: Type.String({ format: 'date-time' }),
  },
  { $id: 'AlertRule', title: 'AlertRule' },
);
export type Rule = Static<typeof RuleSchema>;

export const DeliveryResultSchema = Type.Object({
  channel: Type.String({ description: 'webhook or memory' }),
  url: Type.Optional(Type.String({ description: 'The webhook target this delivery goes to' })),
  ok: Type.Boolean(),
  error: Type.Optional(Type.String()),
  pending: Type.Boolean({ description: 'A retry is scheduled (or the first attempt is queued)' }),
  attempts: Type.Integer(),
  statusCode: Type.Optional(Type.Integer()),
  memoryId: Type.Optional(Type.String()),
  lastAttemptAt: Type.Optional(Type.String()),
  nextAttemptAt: Type.Optional(Type.String()),
});
export type DeliveryResult = Static<typeof DeliveryResultSchema>;

export const FireSchema = Type.Object(
  {
    id: Type.String(),
    alertRuleId: Type.String(),
    eventId: Type.Union([Type.String(), Type.Null()]),
    dedupeKey: Type.String(),
    deliveryResults: Type.Array(DeliveryResultSchema),
    firedAt: Type.String(),
  },
  { $id: 'AlertFire', title: 'AlertFire' },
);
export type Fire = Static<typeof FireSchema>;

export const RuleParamsSchema = Type.Object({ projectId: Type.String(), alertId: Type.String({ maxLength: 128 }) });
