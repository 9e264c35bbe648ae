// Memory routes: the HTTP adapter over MemoryService. The admin surface (SPEC.md "Admin HTTP")
// requires WRITE_MEMORY throughout.
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { Type } from 'typebox';
import {
  BackfillBodySchema,
  BackfillResultSchema,
  InsightSchema,
  ConfirmBodySchema,
  CreateMemoryBodySchema,
  ListMemoriesQuerySchema,
  MemoryParamsSchema,
  PageQuerySchema,
  PatchMemoryBodySchema,
  PromoteBodySchema,
  StatsSchema,
} from './schemas.js';
import type { MemoryObserver } from './observe/observe.js';
import type { MemoryService } from './service.js';

const WRITE = { permission: 'WRITE_MEMORY' } as const;
const READ = { permission: 'READ_MEMORY' } as const;
const tags = ['memory'];
const MemoryList = Type.Array(Type.Ref('Memory'));

export const memoryRoutes: FastifyPluginAsyncTypebox<{ memory: MemoryService; observer: Pick<MemoryObserver, 'saveRevising'> }> = async (app, { memory, observer }) => {
  // The list and one memory are served twice: under /admin/memory (WRITE_MEMORY, as SPEC.md has
  // them) and under /memory for a READ_MEMORY key (the console, an agent that only reads), as
  // search is (/admin/memory/search and /memory/search).
  const listSchema = {
    tags,
    description: 'Filters combine with AND. Without `status` or `asOf`, only live memories (pending, confirmed) are listed. `asOf` returns the bi-temporal slice valid at that instant, superseded memories included. `limit` above 500 is refused.',
    querystring: ListMemoriesQuerySchema,
    response: { 200: MemoryList },
  };
  for (const [url, config, summary] of [
    ['/admin/memory', WRITE, 'List memories, newest first'],
    ['/memory', READ, 'List memories, newest first (READ_MEMORY; the same as GET /admin/memory)'],
  ] as const) {
    app.get(url, { config: { ...config, audit: 'read.list' }, schema: { ...listSchema, summary } }, async (request) => {
      const q = request.query;
      return memory.list(request.principal.projectId, {
        type: q.type,
        scope: q.scope,
        status: q.status,
        source: q.source,
        category: q.category,
        agentId: q.chatbotId,
        userId: q.chatIdentityId,
        subjectKind: q.subjectKind,
        subjectExternalId: q.subjectExternalId,
        derivedFrom: q.derivedFrom,
        asOf: q.asOf === undefined ? undefined : new Date(q.asOf),
        limit: q.limit,
        offset: q.offset,
      });
    });
  }

  app.get(
    '/memory/mine',
    {
      config: { ...READ, audit: 'read.list' },
      schema: {
        tags,
        summary: "The caller's own memories, newest first",
        description:
          'A project key speaks for the project, not for one person: with `userId`, the memories of that end user (written for them, chatIdentityId, or about them, subject user:<userId>, as observe and reflect read userId); ' +
          'without it, the memories written for no end user and about no subject (the project\'s own). Live memories only, every scope; `limit` above 500 is refused.',
        querystring: Type.Object({ ...PageQuerySchema.properties, userId: Type.Optional(Type.String({ minLength: 1, maxLength: 256 })) }, { additionalProperties: false }),
        response: { 200: MemoryList },
      },
    },
    async (request) => {
      const { userId, limit, offset } = request.query;
      const whose = userId === undefined ? { noEndUser: true, noSubject: true } : { endUser: userId };
      return memory.list(request.principal.projectId, { ...whose, liveOnly: true, limit, offset });
    },
  );

  app.get(
    '/admin/memory/platform',
    {
      config: { ...WRITE, audit: 'read.list' },
      schema: {
        tags,
        summary: 'List platform-scoped memories',
        querystring: Type.Object({ status: Type.Optional(ListMemoriesQuerySchema.properties.status), ...PageQuerySchema.properties }, { additionalProperties: false }),
        response: { 200: MemoryList },
      },
    },
    async (request) =>
      memory.list(request.principal.projectId, { scope: 'platform', status: request.query.status, limit: request.query.limit, offset: request.query.offset }),
  );

  for (const [url, config, summary] of [
    ['/admin/memory/review', WRITE, 'The review queue: pending and flagged memories'],
    ['/memory/review', READ, 'The review queue: pending and flagged memories (READ_MEMORY; the same as GET /admin/memory/review)'],
  ] as const) {
    app.get(
      url,
      {
        config: { ...config, audit: 'read.review' },
        schema: {
          tags,
          summary,
          description: 'Each item carries `reviewReason`: pending, flagged, low_confidence or stale. Confirming, rejecting and promoting need WRITE_MEMORY (/admin/memory/{memoryId}/...).',
          querystring: PageQuerySchema,
          response: { 200: MemoryList },
        },
      },
      async (request) => memory.review(request.principal.projectId, request.query.limit, request.query.offset),
    );
  }

  app.get(
    '/admin/memory/stats',
    { config: WRITE, schema: { tags, summary: 'Counts by scope, status and type; embedding coverage; pattern count', response: { 200: StatsSchema } } },
    async (request) => memory.stats(request.principal.projectId),
  );

  app.get(
    '/admin/memory/insights',
    {
      config: { ...WRITE, audit: 'read.insights' },
      schema: {
        tags,
        summary: 'Per-subject roll-up: recency, silence, importance',
        description: 'Subjects ordered by their most important memory, then by recency.',
        querystring: PageQuerySchema,
        response: { 200: Type.Object({ subjects: Type.Array(InsightSchema), generatedAt: Type.String({ format: 'date-time' }) }) },
      },
    },
    async (request) => ({
      subjects: await memory.insights(request.principal.projectId, request.query.limit, request.query.offset),
      generatedAt: new Date().toISOString(),
    }),
  );

  app.post(
    '/admin/memory',
    {
      config: { ...WRITE, audit: 'write.memory' },
      schema: {
        tags,
        summary: 'Create a memory in any scope',
        description:
          'Saves the content verbatim (default type fact, scope project, status confirmed, importance 5, confidence 1). ' +
          'A memory about a subject whose content states one single-valued fact about it (a slot observe recognises: plan, residence, employer ...), given no `metadata.slot`, gets that slot in `metadata.slot` and revises what is known as observe does: an older live memory of the same subject, scope and slot is superseded by it. ' +
          'Idempotent: if a live memory with the same scope, type, subject and normalised content (for an event given its `validFrom`, also that time: the same words at another time are another event) exists (or the given id exists), it is answered with 200 instead of 201. The memory is embedded before the write answers (within 250 ms, and only when a worker thread is free; otherwise a job embeds it a moment later), so a search right after finds it by meaning.',
        body: CreateMemoryBodySchema,
        response: { 200: Type.Ref('Memory'), 201: Type.Ref('Memory') },
      },
    },
    async (request, reply) => {
      const b = request.body;
      const { memory: saved, created } = await observer.saveRevising(request.principal.projectId, {
        id: b.id,
        content: b.content,
        type: b.type ?? b.kind,
        scope: b.scope,
        status: b.status,
        category: b.category,
        importance: b.importance,
        confidence: b.confidence,
        source: b.source,
        subject: b.subject,
        agentId: b.chatbotId,
        userId: b.chatIdentityId,
        sessionKey: b.sessionKey,
        metadata: b.metadata,
        impact: b.impact,
        validFrom: b.validFrom === undefined ? undefined : new Date(b.validFrom),
        sourceMemoryIds: b.sourceMemoryIds,
      });
      return reply.code(created ? 201 : 200).send(saved);
    },
  );

  for (const [url, config, summary] of [
    ['/admin/memory/:memoryId', WRITE, 'Fetch one memory (does not count as an access)'],
    ['/memory/:memoryId', READ, 'Fetch one memory (READ_MEMORY; the same as GET /admin/memory/{memoryId})'],
  ] as const) {
    app.get(url, { config: { ...config, audit: 'read.memory' }, schema: { tags, summary, params: MemoryParamsSchema, response: { 200: Type.Ref('Memory') } } }, async (request) =>
      memory.get(request.principal.projectId, request.params.memoryId),
    );
  }

  app.patch(
    '/admin/memory/:memoryId',
    {
      config: { ...WRITE, audit: 'write.memory' },
      schema: {
        tags,
        summary: 'Edit a memory',
        description: 'Changes only the fields given. A new content is re-embedded. Identity and history fields (id, created, recordedAt, contentHash, supersededById, subject, ...) cannot be changed: naming one is a 400.',
        params: MemoryParamsSchema,
        body: PatchMemoryBodySchema,
        response: { 200: Type.Ref('Memory') },
      },
    },
    async (request) => memory.patch(request.principal.projectId, request.params.memoryId, request.body),
  );

  app.post(
    '/admin/memory/:memoryId/confirm',
    {
      config: { ...WRITE, audit: 'write.memory' },
      schema: {
        tags,
        summary: 'Confirm or reject a memory awaiting review',
        description: 'Only a pending (or flagged) memory can be confirmed or rejected; anything else answers 409 CONFLICT.',
        params: MemoryParamsSchema,
        body: ConfirmBodySchema,
        response: { 200: Type.Ref('Memory') },
      },
    },
    async (request) =>
      memory.confirm(request.principal.projectId, request.params.memoryId, request.body.status, request.principal.keyPrefix),
  );

  app.post(
    '/admin/memory/:memoryId/promote',
    {
      config: { ...WRITE, audit: 'write.memory' },
      schema: {
        tags,
        summary: 'Move a memory to another scope',
        description: 'A scope change, not a copy (SPEC.md). 409 if an identical live memory already exists in the target scope.',
        params: MemoryParamsSchema,
        body: PromoteBodySchema,
        response: { 200: Type.Ref('Memory') },
      },
    },
    async (request) => memory.promote(request.principal.projectId, request.params.memoryId, request.body.targetScope),
  );

  const deleteSchema = { tags, summary: 'Delete a memory (hard delete)', params: MemoryParamsSchema, response: { 204: Type.Null() } };
  for (const [url, summary] of [
    ['/admin/memory/:memoryId', deleteSchema.summary],
    ['/memory/:memoryId', 'Delete a memory (caller surface; same as the admin route)'],
  ] as const) {
    app.delete(url, { config: { ...WRITE, audit: 'write.delete' }, schema: { ...deleteSchema, summary } }, async (request, reply) => {
      await memory.delete(request.principal.projectId, request.params.memoryId);
      return reply.code(204).send(null);
    });
  }

  app.post(
    '/admin/memory/embeddings/backfill',
    {
      config: WRITE,
      schema: {
        tags,
        summary: 'Embed memories that have no embedding yet',
        description:
          'Embeds up to `batch` memories of the project that lack a vector, in the worker pool, and answers how many it embedded, how many remain, ' +
          "this call's rate and, at that rate, the seconds until none remain (`etaSeconds`). " +
          'Call repeatedly until `embedded` is 0. Runs as a job and waits for it (503 JOB_TIMEOUT if it takes longer than JOB_TIMEOUT_MS; the job still completes). ' +
          'Writes are also embedded automatically a second or so after they land.',
        body: BackfillBodySchema,
        response: { 200: BackfillResultSchema },
      },
    },
    async (request) => memory.backfillEmbeddings(request.principal.projectId, request.body.batch),
  );
};
