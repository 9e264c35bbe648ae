// The memory enumerations, alone and free of dependencies, so that the console (console/) can
// import the very lists the API validates against. schemas.ts re-exports them.
export const MEMORY_TYPES = [
  'fact', 'preference', 'event', 'insight', 'observation', 'rule', 'correction', 'summary', 'procedure',
  'behavior_pattern', 'consent', 'estimate', 'decision', 'outcome',
] as const;
export type MemoryType = (typeof MEMORY_TYPES)[number];
export const MEMORY_SCOPES = ['platform', 'project', 'location', 'agent', 'user', 'session'] as const;
export type MemoryScope = (typeof MEMORY_SCOPES)[number];
export const MEMORY_STATUSES = ['pending', 'confirmed', 'superseded', 'rejected'] as const;
export type MemoryStatus = (typeof MEMORY_STATUSES)[number];
export const REVIEW_REASONS = ['pending', 'flagged', 'low_confidence', 'stale'] as const;
