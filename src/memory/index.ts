// The memory domain's face: what agents learn about their subjects, written verbatim or extracted
// from conversation (observe), found again by hybrid search, and curated (dedup, decay). Builds the
// module from its sub-features; other code reaches memory only through the api below.
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import type { EmbeddingsApi } from '../embeddings/index.js';
import type { Subject } from '../platform/common-schemas.js';
import type { Queryable } from '../platform/db.js';
import { bindMethods, type DomainModule } from '../platform/module.js';
import { domainQueue } from '../platform/queue.js';
import type { Runtime } from '../platform/runtime.js';
import type { TenancyApi } from '../tenancy/index.js';
import { curationJobs, MemoryCuration, type CurationJobs } from './curation/curation.js';
import { curationRoutes } from './curation/routes.js';
import { memoryTools } from './mcp.js';
import { ModelPass } from './observe/model-pass.js';
import { MemoryObserver, observeJobs, type ObserveJobs } from './observe/observe.js';
import { observeRoutes } from './observe/routes.js';
import { MemoryReflection } from './reflect/reflect.js';
import { ObservationConsolidation } from './consolidate/consolidate.js';
import { consolidateRoutes } from './consolidate/routes.js';
import { Brains } from './brains/brains.js';
import { brainMcpEndpoint } from './brains/mcp.js';
import { ensureEmbeddingDimension } from './search/dimension.js';
import { brainRoutes } from './brains/routes.js';
import { BrainSchema } from './brains/schemas.js';
import { ConversationContexts } from './context/context.js';
import { MemoryFeedback } from './feedback/feedback.js';
import { feedbackRoutes } from './feedback/routes.js';
import { PrecedencePolicies } from './precedence/policies.js';
import { precedenceRoutes } from './precedence/routes.js';
import { conversationContextRoutes } from './context/routes.js';
import { reflectRoutes } from './reflect/routes.js';
import { memoryRoutes } from './routes.js';
import { MemorySchema } from './schemas.js';
import { HNSW_ADMISSION_EVERY_MS, ProjectVectorIndexes, type ProjectIndexChanges } from './search/project-index.js';
import { searchRoutes } from './search/routes.js';
import { MemorySearch } from './search/search.js';
import { embeddingJobs, EmbeddingPipeline, type EmbeddingJobs } from './embedding/pipeline.js';
import { MemoryService } from './service.js';
import { countEmbedded, lockKeyedMemories, patchKeyedMemories, type KeyedPatch } from './store.js';
import { memorySubjectData } from './subject-data.js';

export type { ConsolidateOptions, DedupOptions } from './curation/curation.js';
export type { ConsolidateResult, DedupResult } from './curation/schemas.js';
export type { ObserveInput, ObserveResult } from './observe/observe.js';
export type { GraphBonus, SearchFeatures, SearchHit, SearchInput } from './search/search.js';
export type { SaveInput, SaveResult } from './service.js';
export type { KeyedMemory, KeyedPatch, KeyedWrite } from './store.js';

export type ProjectIndexJobs = {
  'memory.project-indexes': { payload: Record<string, never>; result: ProjectIndexChanges };
  'memory.hnsw-admission': { payload: Record<string, never>; result: { admitted: ProjectIndexChanges['admitted'] } };
};

export type MemoryJobs = EmbeddingJobs & CurationJobs & ObserveJobs & ProjectIndexJobs;

/** The face's methods, named once: its api type and its bound api both read them. */
const MEMORY_SERVICE_METHODS = ['save', 'saveMany', 'saveInTransaction', 'confidences', 'upsertKeyed', 'afterKeyedCommit', 'get', 'getMany', 'list', 'recall', 'supersede', 'stats', 'backfillEmbeddings'] as const;
const MEMORY_SEARCH_METHODS = ['search', 'setGraphBonus'] as const;
const MEMORY_OBSERVER_METHODS = ['observe'] as const;
const MEMORY_CURATION_METHODS = ['dedup', 'consolidate', 'consolidateAll'] as const;

export type MemoryApi = {
  /** Admits the projects past the exact-scan threshold to the HNSW graph, and builds, rebuilds and drops the large projects' IVFFlat indexes, now (the memory.project-indexes job). */
  maintainVectorIndexes(): Promise<ProjectIndexChanges>;
  /** Locks keyed (mined) memories in id order inside the caller's transaction; answers their metadata. */
  lockKeyed(q: Queryable, projectId: string, ids: readonly string[]): Promise<Map<string, Record<string, unknown>>>;
  /** Revises keyed memories' confidence and metadata keys in place (only while metadata[key] equals a value, with onlyIf); answers how many changed. */
  patchKeyed(q: Queryable, projectId: string, patches: readonly KeyedPatch[], onlyIf?: { key: string; equals: string }): Promise<number>;
} & Pick<MemoryService, (typeof MEMORY_SERVICE_METHODS)[number]> &
  Pick<MemorySearch, (typeof MEMORY_SEARCH_METHODS)[number]> &
  Pick<MemoryObserver, (typeof MEMORY_OBSERVER_METHODS)[number]> &
  Pick<MemoryCuration, (typeof MEMORY_CURATION_METHODS)[number]>;

/** Checks the stored vectors' dimension against the configuration (at first boot, fixes it, and builds the HNSW index), then builds memory. */
export async function createMemoryModule(
  runtime: Pick<Runtime, 'config' | 'db' | 'log' | 'pool' | 'queue' | 'stopping' | 'gateway'>,
  deps: { embeddings: Pick<EmbeddingsApi, 'embed' | 'embedQuery' | 'embedNow' | 'model'>; tenancy: Pick<TenancyApi, 'entitled' | 'listProjects'> },
): Promise<DomainModule<MemoryApi, MemoryJobs>> {
  const { config, db, log, pool } = runtime;
  await ensureEmbeddingDimension(db, config.embeddingDimensions, config.searchHnswBuildMemoryMb);
  // Each service sees the queue typed with its own jobs only.
  const embedding = new EmbeddingPipeline(db, domainQueue<EmbeddingJobs>(runtime.queue, 'memory'), deps.embeddings, runtime.stopping);
  const memory = new MemoryService(db, embedding);
  const indexes = new ProjectVectorIndexes(db, {
    exactScanMaxRows: config.searchExactScanMaxRows,
    minRows: config.searchIvfMinRows,
    probes: config.searchIvfProbes,
    buildMemoryMb: config.searchHnswBuildMemoryMb,
    dimensions: config.embeddingDimensions,
  });
  const policies = new PrecedencePolicies(db);
  const search = new MemorySearch(db, deps.embeddings, log, { exactScanMaxRows: config.searchExactScanMaxRows, efSearch: config.searchHnswEfSearch }, indexes, policies);
  const curation = new MemoryCuration(db, pool, domainQueue<CurationJobs>(runtime.queue, 'memory'), async () => (await deps.tenancy.listProjects()).map((p) => p.id));
  const modelPass = new ModelPass(runtime.gateway, (projectId) => deps.tenancy.entitled(projectId, 'FEATURE_MEMORY_INTELLIGENCE'), log, { enabled: config.llmExtraction });
  const observer = new MemoryObserver(db, memory, domainQueue<ObserveJobs>(runtime.queue, 'memory'), config, modelPass);
  const reflection = new MemoryReflection(memory, runtime.gateway, { enabled: config.reflection });
  const consolidation = new ObservationConsolidation(db, memory, runtime.gateway, (projectId) => deps.tenancy.entitled(projectId, 'FEATURE_MEMORY_INTELLIGENCE'));
  const contexts = new ConversationContexts(db, search, pool);
  const feedback = new MemoryFeedback(db);
  const brains = new Brains(db);

  const routes: FastifyPluginAsyncTypebox = async (app) => {
    await app.register(memoryRoutes, { memory, observer });
    await app.register(searchRoutes, { search, brains });
    await app.register(curationRoutes, { curation });
    await app.register(observeRoutes, { observer });
    await app.register(reflectRoutes, { reflection });
    await app.register(consolidateRoutes, { consolidation });
    await app.register(brainRoutes, { brains });
    await app.register(conversationContextRoutes, { contexts, brains });
    await app.register(feedbackRoutes, { feedback });
    await app.register(precedenceRoutes, { policies });
  };

  return {
    name: 'memory',
    api: {
      ...bindMethods(memory, MEMORY_SERVICE_METHODS),
      ...bindMethods(search, MEMORY_SEARCH_METHODS),
      ...bindMethods(observer, MEMORY_OBSERVER_METHODS),
      ...bindMethods(curation, MEMORY_CURATION_METHODS),
      maintainVectorIndexes: () => indexes.maintain(),
      lockKeyed: (q, projectId, ids) => lockKeyedMemories(q, projectId, ids),
      patchKeyed: (q, projectId, patches, onlyIf) => patchKeyedMemories(q, projectId, patches, onlyIf),
    },
    routes,
    schemas: [MemorySchema, BrainSchema],
    jobs: {
      ...embeddingJobs(embedding),
      ...curationJobs(curation),
      ...observeJobs(observer),
      'memory.project-indexes': () => indexes.maintain(),
      'memory.hnsw-admission': async () => ({ admitted: await indexes.admitDue() }),
    },
    schedules: [
      // The nightly consolidation: dedup and decay in every project, at 03:00 UTC.
      { id: 'memory.nightly-consolidation', job: 'memory.consolidate-all', payload: {}, cron: '0 3 * * *' },
      // Memories whose embedding job was lost (a crash, a queue outage, a shutdown) are embedded.
      { id: 'memory.embed-sweep', job: 'memory.embed-sweep', payload: {}, everyMs: 60_000 },
      // Projects past SEARCH_IVF_MIN_ROWS get (and keep up to date) an IVFFlat index of their own.
      { id: 'memory.project-indexes', job: 'memory.project-indexes', payload: {}, everyMs: config.searchIvfEveryMs },
      // Projects past SEARCH_EXACT_SCAN_MAX_ROWS join the HNSW graph within a minute.
      { id: 'memory.hnsw-admission', job: 'memory.hnsw-admission', payload: {}, everyMs: HNSW_ADMISSION_EVERY_MS },
    ],
    // What the last run left unembedded is embedded now rather than at the first sweep.
    onStart: async () => void (await embedding.sweepUnembedded()),
    tools: memoryTools({ memory, search, observer, contexts, feedback }),
    mcpEndpoints: [brainMcpEndpoint({ brains, search, contexts })],
    subjectData: memorySubjectData(db),
    backlog: async (projectId) => {
      const { total, embedded, oldestPendingAt } = await countEmbedded(db, projectId);
      const description =
        'Memories waiting for their embedding (a job embeds writes a second behind; until then search finds them by full text only). Counted over memories of every status.';
      return [{ name: 'embeddings', description, pending: total - embedded, done: embedded, total, oldestPendingAt }];
    },
  };
}
