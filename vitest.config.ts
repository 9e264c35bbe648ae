import { defineConfig } from 'vitest/config';

export default defineConfig({
  test: {
    include: ['test/**/*.test.ts'],
    testTimeout: 60_000,
    hookTimeout: 120_000,
    // Each file builds its own database (PGlite in memory, or a fresh Postgres database) and queue
    // prefix; two at a time suits a 2-core machine with worker threads for embeddings.
    pool: 'forks',
    maxWorkers: 2,
    reporters: ['default'],
    // A fork is stopped by Vitest, never left to end by itself (test/helpers/fork-lifetime.ts);
    // property tests draw from a fixed seed in CI (test/helpers/property-seed.ts).
    setupFiles: ['test/helpers/fork-lifetime.ts', 'test/helpers/property-seed.ts'],
    // The embedded backend's test databases start from one migrated once per run.
    globalSetup: ['test/helpers/pglite-template.ts'],
  },
});
