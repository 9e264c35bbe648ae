import { defineConfig } from 'vitest/config';

// Files that mock a module (vi.mock) get a fresh module registry; every other file shares its
// fork's, so the app is imported once per fork rather than once per file (about 2.8 s a file).
const ISOLATED = ['test/reliability/ssrf.test.ts'];

export default defineConfig({
  test: {
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
    projects: [
      { extends: true, test: { name: 'shared', include: ['test/**/*.test.ts'], exclude: ISOLATED, isolate: false } },
      { extends: true, test: { name: 'isolated', include: ISOLATED } },
    ],
  },
});
