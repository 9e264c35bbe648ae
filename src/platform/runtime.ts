// The shared resources of one process, created before any domain: the database (migrated), the
// job queue, the worker pool and the logger. The composition root hands them to every module.
import type { FastifyBaseLogger } from 'fastify';
import type { Config } from '../config.js';
import type { Db } from './db.js';
import { createPgDb } from './db-pg.js';
import { createPgliteDb } from './db-pglite.js';
import { ModelGateway } from './gateway.js';
import { migrate } from './migrations.js';
import { WorkerPool } from './pool.js';
import type { JobMapBase, JobQueue } from './queue.js';
import { BullQueue } from './queue-bullmq.js';
import { InProcessQueue } from './queue-inprocess.js';

export interface Runtime {
  readonly config: Config;
  readonly log: FastifyBaseLogger;
  readonly db: Db;
  /** Untyped: each module sees it through `domainQueue`, typed with its own jobs. */
  readonly queue: JobQueue<JobMapBase>;
  /** CPU work that a request waits on: query and inline embeddings, clustering, estimators. */
  readonly pool: WorkerPool;
  /**
   * CPU work nobody waits on (embedding behind writes), at a lower OS priority
   * (POOL_BACKGROUND_NICENESS) so that it takes only the cycles requests leave idle.
   */
  readonly backgroundPool: WorkerPool;
  /** The OpenAI-compatible model gateway (MODEL_GATEWAY_URL); unset, its calls refuse with NOT_CONFIGURED. */
  readonly gateway: ModelGateway;
  /**
   * Aborted when the process starts shutting down: long jobs check it between batches and stop,
   * leaving the rest of their work where the next start (or a sweep) picks it up.
   */
  readonly stopping: AbortSignal;
  close(): Promise<void>;
}

export interface RuntimeOptions {
  log: FastifyBaseLogger;
  /** Use this database instead of opening one from the config (tests); it is not closed with the runtime. */
  db?: Db;
  /** Skip migrations (they already ran). */
  skipMigrations?: boolean;
}

export function openDatabase(config: Config, log?: FastifyBaseLogger): Promise<Db> {
  return config.databaseUrl === undefined
    ? createPgliteDb({ dataDir: config.dataDir })
    : Promise.resolve(
        createPgDb({
          connectionString: config.databaseUrl,
          max: config.dbPoolMax,
          statementMax: config.dbStatementPoolMax,
          connectTimeoutMs: config.dbConnectTimeoutMs,
          acquireTimeoutMs: config.dbAcquireTimeoutMs,
          log,
        }),
      );
}

export async function createRuntime(config: Config, options: RuntimeOptions): Promise<Runtime> {
  const { log } = options;
  const db = options.db ?? (await openDatabase(config, log));
  if (!options.skipMigrations) {
    try {
      const { applied } = await migrate(db);
      if (applied.length > 0) log.info({ applied }, 'applied migrations');
    } catch (error) {
      if (!options.db) await db.close();
      throw error;
    }
  }
  const queueOptions = { concurrency: config.workerConcurrency, defaultTimeoutMs: config.jobTimeoutMs, log };
  const queue: JobQueue<JobMapBase> =
    config.redisUrl === undefined
      ? new InProcessQueue<JobMapBase>(queueOptions)
      : new BullQueue<JobMapBase>({ ...queueOptions, redisUrl: config.redisUrl, prefix: config.queuePrefix, commandTimeoutMs: config.queueCommandTimeoutMs });
  const pool = new WorkerPool({ maxThreads: config.poolMaxThreads, maxQueue: config.poolMaxQueue, taskTimeoutMs: config.poolTaskTimeoutMs, idleTimeoutMs: config.poolIdleTimeoutMs });
  const backgroundPool = new WorkerPool({
    maxThreads: config.poolBackgroundThreads,
    maxQueue: config.poolMaxQueue,
    taskTimeoutMs: config.poolTaskTimeoutMs,
    idleTimeoutMs: config.poolIdleTimeoutMs,
    niceness: config.poolBackgroundNiceness,
  });

  const gateway = new ModelGateway({
    url: config.modelGatewayUrl,
    apiKey: config.modelGatewayApiKey,
    timeoutMs: config.modelGatewayTimeoutMs,
    models: { chat: config.modelGatewayChatModel, vision: config.modelGatewayVisionModel, transcription: config.modelGatewayTranscriptionModel },
    maxAttempts: config.modelGatewayMaxAttempts,
    retryBaseMs: config.modelGatewayRetryBaseMs,
  });

  let closed = false;
  const shutdown = new AbortController();
  return {
    config,
    log,
    db,
    queue,
    pool,
    backgroundPool,
    gateway,
    stopping: shutdown.signal,
    async close() {
      if (closed) return;
      closed = true;
      shutdown.abort();
      await queue.close();
      await Promise.all([pool.destroy(), backgroundPool.destroy()]);
      if (!options.db) await db.close();
    },
  };
}
