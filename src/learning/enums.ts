// The learning loop's enumerations, alone and free of dependencies, so that the console (console/)
// can import the lists the API validates against. schemas.ts re-exports them.
export const REF_TYPES = ['pattern', 'prediction', 'observation', 'collective'] as const;
export type RefType = (typeof REF_TYPES)[number];
export const DECISION_STATUSES = ['proposed', 'executed', 'skipped'] as const;
export const RESULTS = ['success', 'failure', 'partial'] as const;
export type OutcomeResult = (typeof RESULTS)[number];
export const GROUP_BY = ['action_type', 'decision_type', 'policy', 'pattern_kind'] as const;
export type GroupBy = (typeof GROUP_BY)[number];
