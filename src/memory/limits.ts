// Numeric limits of the memory API, in one place for schemas, services and docs.
export const BACKFILL_DEFAULT_BATCH = 500;
export const BACKFILL_MAX_BATCH = 10_000;
