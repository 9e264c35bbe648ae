// The behavioural profile (SPEC.md "Profile"; SDK-WIRE.md 4.5 getProfile).
import { Type, type Static } from 'typebox';
import { SubjectSchema, Timestamp } from '../../platform/common-schemas.js';

export const RFM_SEGMENTS = [
  'champions', 'loyal_customers', 'potential_loyalists', 'new_customers', 'promising', 'need_attention',
  'about_to_sleep', 'at_risk', 'cant_lose_them', 'hibernating', 'lost',
] as const;
export type RfmSegment = (typeof RFM_SEGMENTS)[number];

export const RiskSchema = Type.Object({
  kind: Type.String({ description: 'declining_engagement, rfm_at_risk_high_value, rfm_cant_lose_them or cadence_missed' }),
  description: Type.String(),
  severity: Type.Number({ minimum: 0, maximum: 1 }),
  sourcePatternId: Type.Union([Type.String(), Type.Null()], { description: 'The pattern behind the risk; null for a risk read from RFM scores' }),
});

export const ProfileBodySchema = Type.Object({ subject: SubjectSchema }, { additionalProperties: false });

export const ProfileSchema = Type.Object(
  {
    subject: SubjectSchema,
    rfmSegment: Type.Union([Type.Enum(RFM_SEGMENTS), Type.Null()], { description: 'Null when the subject has no activity in the last 365 days' }),
    recencyScore: Type.Union([Type.Integer({ minimum: 1, maximum: 5 }), Type.Null()]),
    frequencyScore: Type.Union([Type.Integer({ minimum: 1, maximum: 5 }), Type.Null()]),
    monetaryScore: Type.Union([Type.Integer({ minimum: 1, maximum: 5 }), Type.Null()], { description: 'Null when no activity carries an amount' }),
    topEntity: Type.Union([Type.String(), Type.Null()]),
    cadenceSummary: Type.Union([Type.String(), Type.Null()]),
    risks: Type.Array(RiskSchema),
    contributingPatternIds: Type.Array(Type.String()),
    activityCount: Type.Integer({ description: 'Occurrences in the last 365 days' }),
    lastActivityAt: Type.Union([Timestamp(), Type.Null()]),
    generatedAt: Timestamp(),
    durationMs: Type.Number(),
  },
  { $id: 'Profile', title: 'Profile' },
);
export type Profile = Static<typeof ProfileSchema>;
