// Curation routes: dedup and consolidate, run as jobs and awaited.
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { Type } from 'typebox';
import { SubjectSchema } from '../../platform/common-schemas.js';
import { CONSOLIDATE_DEFAULTS, DEDUP_DEFAULTS, MERGE_DEFAULTS, type MemoryCuration } from './curation.js';
import { ConsolidateResultSchema, DedupResultSchema, MergeResultSchema } from './schemas.js';

const WRITE = { permission: 'WRITE_MEMORY' } as const;
const tags = ['memory'];

const threshold = Type.Number({
  minimum: 0.5,
  maximum: 1,
  default: DEDUP_DEFAULTS.threshold,
  description:
    'Near-duplicate similarity at or above which two memories are duplicates: 0.75 x words + 0.25 x cosine, where words is the cubed overlap of their normalised words ' +
    '(case, punctuation, articles and other function words, contractions and inflection aside; negations and numbers count), halved when the shared words swap roles ' +
    '("tea over coffee" / "coffee over tea"). At the default 0.92 two memories group only when they say the same words in an equivalent order and their cosine is at least 0.68: ' +
    'one differing word ("Porto" / "Lisbon", "2" / "3", "not") keeps them apart.',
});

export const curationRoutes: FastifyPluginAsyncTypebox<{ curation: MemoryCuration }> = async (app, { curation }) => {
  app.post(
    '/admin/memory/dedup',
    {
      config: { ...WRITE, audit: 'write.dedup' },
      schema: {
        tags,
        summary: 'Supersede near-duplicate memories, keeping the strongest of each group',
        description:
          'Groups live, embedded memories of the same scope and subject whose near-duplicate similarity reaches `threshold` (single linkage), in the worker pool. ' +
          'In each group the strongest is kept (confirmed over pending, then importance, confidence, most recently true or recalled, oldest id) and the rest are marked superseded by it. ' +
          'Nothing is deleted, and validTo is left alone (a duplicate was as true as its twin). Memories not yet embedded are not considered.',
        body: Type.Object(
          {
            threshold: Type.Optional(threshold),
            scanLimit: Type.Optional(Type.Integer({ minimum: 1, maximum: DEDUP_DEFAULTS.maxScanLimit, default: DEDUP_DEFAULTS.scanLimit })),
            dryRun: Type.Optional(Type.Boolean({ default: false, description: 'Report the groups without changing anything' })),
          },
          { additionalProperties: false },
        ),
        response: { 200: Type.Object({ ...DedupResultSchema.properties, durationMs: Type.Number() }) },
      },
    },
    async (request) => {
      const started = performance.now();
      const result = await curation.dedup(request.principal.projectId, request.body);
      return { ...result, durationMs: performance.now() - started };
    },
  );

  app.post(
    '/admin/memory/merge',
    {
      config: { ...WRITE, audit: 'write.merge' },
      schema: {
        tags,
        summary: 'Merge clusters of near-duplicate memories into one each (a dry run unless dryRun is false)',
        description:
          'Finds the groups dedup finds (live, embedded memories of the same scope and subject, near-duplicate similarity at or above `threshold`, single linkage, among the newest 10,000), the largest first, at most `maxClusters`. ' +
          'A group is merged into its strongest member (confirmed over pending, then importance, confidence, most recently true or recalled, oldest id): its provenance (sourceMemoryIds, also in metadata.sourceMemoryIds) gains the others, its importance and confidence become the group\'s highest, and the others are superseded by it (nothing is deleted). ' +
          'It abstains, with the reason, on a group it is unsure of: more than `maxClusterSize` members, or two members that are not near duplicates of each other (single linkage chained them through a third). ' +
          'Each group is merged in one transaction. Without `dryRun: false` nothing changes and the answer says what would be merged.',
        body: Type.Object(
          {
            dryRun: Type.Optional(Type.Boolean({ default: true })),
            threshold: Type.Optional(threshold),
            maxClusters: Type.Optional(Type.Integer({ minimum: 1, maximum: MERGE_DEFAULTS.maxClustersCap, default: MERGE_DEFAULTS.maxClusters })),
            maxClusterSize: Type.Optional(Type.Integer({ minimum: 2, maximum: MERGE_DEFAULTS.maxClusterSizeCap, default: MERGE_DEFAULTS.maxClusterSize })),
            subject: Type.Optional(SubjectSchema),
          },
          { additionalProperties: false },
        ),
        response: { 200: Type.Object({ ...MergeResultSchema.properties, durationMs: Type.Number() }) },
      },
    },
    async (request) => {
      const started = performance.now();
      const result = await curation.merge(request.principal.projectId, request.body);
      return { ...result, durationMs: performance.now() - started };
    },
  );

  app.post(
    '/admin/memory/consolidate',
    {
      config: { ...WRITE, audit: 'write.consolidate' },
      schema: {
        tags,
        summary: 'Dedup and decay: the nightly consolidation pass, on demand',
        description:
          `Runs dedup over the newest ${DEDUP_DEFAULTS.maxScanLimit} memories, then multiplies the importance of live memories neither true-from nor recalled within \`windowDays\` by ${CONSOLIDATE_DEFAULTS.decayFactor}, ` +
          `never below ${CONSOLIDATE_DEFAULTS.importanceFloor}; a memory that reaches the floor is flagged \`stale\` for review. The same job runs every night at 03:00 UTC for every project.`,
        body: Type.Object(
          {
            subject: Type.Optional(SubjectSchema),
            windowDays: Type.Optional(Type.Integer({ minimum: 1, maximum: 365, default: CONSOLIDATE_DEFAULTS.windowDays, description: 'Idle days before importance decays' })),
            threshold: Type.Optional(threshold),
            dryRun: Type.Optional(Type.Boolean({ default: false })),
          },
          { additionalProperties: false },
        ),
        response: {
          200: Type.Object({ ...ConsolidateResultSchema.properties, durationMs: Type.Number() }),
        },
      },
    },
    async (request) => {
      const started = performance.now();
      const result = await curation.consolidate(request.principal.projectId, request.body);
      return { ...result, durationMs: performance.now() - started };
    },
  );
};
