// Wires a process together: database, queue, pool, embedder and domain services. Both `serve` and
// `worker` start from here; tests build one per file.
import type { FastifyBaseLogger } from 'fastify';
import type { Config } from './config.js';
import { ensureEmbeddingDimension } from './embeddings/dimension.js';
import { createEmbedder, QueryEmbedder, type Embedder } from './embeddings/embedder.js';
import { jobHandlers, JOB_NAMES, registerSchedules, type AppQueue, type JobMap } from './jobs.js';
import { MemoryCuration } from './memory/curation.js';
import { MemoryObserver } from './memory/observe.js';
import { MemorySearch } from './memory/search.js';
import { MemoryService } from './memory/service.js';
import type { Db } from './platform/db.js';
import { createPgDb } from './platform/db-pg.js';
import { createPgliteDb } from './platform/db-pglite.js';
import { migrate } from './platform/migrations.js';
import { WorkerPool } from './platform/pool.js';
import { checkHandlers } from './platform/queue.js';
import { BullQueue } from './platform/queue-bullmq.js';
import { InProcessQueue } from './platform/queue-inprocess.js';
import { TenancyService } from './tenancy/service.js';
import { AlertService } from './alerts/service.js';
import { EventLog } from './events/service.js';
import { TypedService } from './typed/service.js';

export interface AppContext {
  config: Config;
  log: FastifyBaseLogger;
  db: Db;
  queue: AppQueue;
  pool: WorkerPool;
  embedder: Embedder;
  queryEmbedder: QueryEmbedder;
  tenancy: TenancyService;
  memory: MemoryService;
  search: MemorySearch;
  curation: MemoryCuration;
  observer: MemoryObserver;
  alerts: AlertService;
  events: EventLog;
  typed: TypedService;
  /** Starts consuming jobs in this process. */
  startConsumers(): Promise<void>;
  close(): Promise<void>;
}

export function openDatabase(config: Config): Promise<Db> {
  return config.databaseUrl === undefined
    ? createPgliteDb({ dataDir: config.dataDir })
    : Promise.resolve(createPgDb({ connectionString: config.databaseUrl }));
}

export interface ContextOptions {
  log: FastifyBaseLogger;
  /** Use this database instead of opening one from the config (tests). */
  db?: Db;
  /** Skip migrations (they already ran). */
  skipMigrations?: boolean;
}

export async function createContext(config: Config, options: ContextOptions): Promise<AppContext> {
  const { log } = options;
  const db = options.db ?? (await openDatabase(config));
  try {
    if (!options.skipMigrations) {
      const { applied } = await migrate(db);
      if (applied.length > 0) log.info({ applied }, 'applied migrations');
    }
    await ensureEmbeddingDimension(db, config.embeddingDimensions);
  } catch (error) {
    if (!options.db) await db.close();
    throw error;
  }

  const queue: AppQueue =
    config.redisUrl === undefined
      ? new InProcessQueue<JobMap>({ concurrency: config.workerConcurrency, defaultTimeoutMs: config.jobTimeoutMs, log })
      : new BullQueue<JobMap>({
          redisUrl: config.redisUrl,
          prefix: config.queuePrefix,
          concurrency: config.workerConcurrency,
          defaultTimeoutMs: config.jobTimeoutMs,
          log,
        });
  const pool = new WorkerPool({
    maxThreads: config.poolMaxThreads,
    maxQueue: config.poolMaxQueue,
    taskTimeoutMs: config.poolTaskTimeoutMs,
  });
  const embedder = createEmbedder(config, pool);
  const tenancy = new TenancyService(db);
  const memory = new MemoryService(db, queue, embedder);
  const queryEmbedder = new QueryEmbedder(embedder);
  // The graph module supplies the associative-recall bonus when MEMORY_ASSOCIATIVE_RECALL_ENABLED is on.
  const search = new MemorySearch(db, queryEmbedder, log, config.searchExactScanMaxRows);
  const curation = new MemoryCuration(db, pool, queue);
  const observer = new MemoryObserver(db, memory, queue, config);
  const alerts = new AlertService(
    db,
    queue,
    memory,
    {
      allowPrivateTargets: config.webhookAllowPrivateTargets,
      timeoutMs: config.webhookTimeoutMs,
      maxAttempts: config.webhookMaxAttempts,
      retryBaseMs: config.webhookRetryBaseMs,
    },
    log,
  );
  const events = new EventLog(db, alerts);
  const typed = new TypedService(db, queue, tenancy, events, log);
  const handlers = jobHandlers({ memory, curation, observer, typed, alerts });
  checkHandlers(JOB_NAMES, handlers);

  let closed = false;
  return {
    config,
    log,
    db,
    queue,
    pool,
    embedder,
    queryEmbedder,
    tenancy,
    memory,
    search,
    curation,
    observer,
    alerts,
    events,
    typed,
    async startConsumers() {
      await queue.startConsumers(handlers);
      await registerSchedules(queue);
      // Batches queued before a restart are ingested now rather than at the first sweep.
      await typed.sweepQueued(0).catch((error: unknown) => log.warn({ err: error }, 'typed ingest sweep at start failed'));
      await alerts.sweepDeliveries().catch((error: unknown) => log.warn({ err: error }, 'alert delivery sweep at start failed'));
    },
    async close() {
      if (closed) return;
      closed = true;
      await queue.close();
      await pool.destroy();
      if (!options.db) await db.close();
    },
  };
}
