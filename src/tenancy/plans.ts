// Plan tiers and what each entitles a project to. A project's entitlements are its plan's, with
// per-project overrides on top. Boolean entitlements gate features; numeric ones are quotas: per
// calendar month for metered counts, a ceiling for counted resources (active alert rules).

export const PLANS = ['free', 'growth', 'enterprise'] as const;
export type Plan = (typeof PLANS)[number];

export const FEATURES = ['predictions', 'memory.compliance', 'health', 'financial', 'FEATURE_MEMORY_INTELLIGENCE'] as const;
export type Feature = (typeof FEATURES)[number];

/** Metered per calendar month (UTC). */
export const METERS = ['events-ingested', 'memory.predictions', 'model-tokens'] as const;
export type Meter = (typeof METERS)[number];

/** Counted, not metered: the number of rows in use may not exceed the limit. */
export const CEILINGS = ['active-triggers'] as const;
export type Ceiling = (typeof CEILINGS)[number];

export type Quota = Meter | Ceiling;
export type Entitlements = Record<Feature, boolean> & Record<Quota, number>;

/** A quota of Infinity is unlimited. */
const CATALOG: Record<Plan, Entitlements> = {
  free: {
    predictions: false,
    'memory.compliance': false,
    health: false,
    financial: false,
    FEATURE_MEMORY_INTELLIGENCE: false,
    'events-ingested': 100_000,
    'memory.predictions': 0,
    'model-tokens': 0,
    'active-triggers': 5,
  },
  growth: {
    predictions: true,
    'memory.compliance': true,
    health: false,
    financial: true,
    FEATURE_MEMORY_INTELLIGENCE: true,
    'events-ingested': 5_000_000,
    'memory.predictions': 100_000,
    'model-tokens': 20_000_000,
    'active-triggers': 100,
  },
  enterprise: {
    predictions: true,
    'memory.compliance': true,
    health: true,
    financial: true,
    FEATURE_MEMORY_INTELLIGENCE: true,
    'events-ingested': Infinity,
    'memory.predictions': Infinity,
    'model-tokens': Infinity,
    'active-triggers': Infinity,
  },
};

export function isPlan(value: string): value is Plan {
  return (PLANS as readonly string[]).includes(value);
}

/** Overrides are stored as JSON: numbers for quotas (null = unlimited), booleans for features. */
export type EntitlementOverrides = Partial<Record<Feature, boolean> & Record<Quota, number | null>>;

export function entitlementsFor(plan: Plan, overrides: EntitlementOverrides = {}): Entitlements {
  const result = { ...CATALOG[plan] };
  for (const feature of FEATURES) {
    const value = overrides[feature];
    if (typeof value === 'boolean') result[feature] = value;
  }
  for (const quota of [...METERS, ...CEILINGS]) {
    const value = overrides[quota];
    if (value === null) result[quota] = Infinity;
    else if (typeof value === 'number' && value >= 0) result[quota] = value;
  }
  return result;
}

/** The cheapest plan above `plan` that includes `feature`, for the upgrade prompt. */
export function upgradeFor(plan: Plan, feature: Feature): Plan | undefined {
  const start = PLANS.indexOf(plan) + 1;
  return PLANS.slice(start).find((p) => CATALOG[p][feature]);
}
