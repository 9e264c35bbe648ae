// The plan vocabulary as shapes, for the routes of domains that show a project's plan (the project
// overview): one list of features, meters and ceilings, the catalog's (plans.ts).
import { Type } from 'typebox';
import { CEILINGS, FEATURES, METERS, PLANS } from './plans.js';

export const PlanSchema = Type.Enum(PLANS);
export const MeterSchema = Type.Enum(METERS);
export const CeilingSchema = Type.Enum(CEILINGS);

/** A quota on the wire: Infinity cannot travel as JSON, so an unlimited one is null. */
const QuotaSchema = Type.Union([Type.Number({ minimum: 0 }), Type.Null()]);

export const EntitlementsSchema = Type.Object({
  features: Type.Object(Object.fromEntries(FEATURES.map((f) => [f, Type.Boolean()])), { description: 'Each feature of the plan (and overrides): whether the project may use it' }),
  quotas: Type.Object(Object.fromEntries([...METERS, ...CEILINGS].map((q) => [q, QuotaSchema])), {
    description: 'Monthly quotas of the meters and ceilings of counted resources; null is unlimited',
  }),
});
