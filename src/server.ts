// Starts the processes: `serve` (the API, plus job consumers when there is no Redis or
// SERVE_RUNS_JOBS is set) and `worker` (BullMQ consumers only).
import type { FastifyInstance } from 'fastify';
import { buildApp } from './app.js';
import { ConfigError, type Config } from './config.js';
import { createContext, type AppContext } from './context.js';
import { createLogger } from './platform/logger.js';
import { bootstrap } from './tenancy/bootstrap.js';

export interface Running {
  app?: FastifyInstance;
  ctx: AppContext;
  stop(): Promise<void>;
}

function onSignals(stop: () => Promise<void>): void {
  let stopping = false;
  const handler = (signal: string) => {
    if (stopping) return;
    stopping = true;
    process.stderr.write(`lattice: ${signal} received, shutting down\n`);
    stop().then(
      () => process.exit(0),
      () => process.exit(1),
    );
  };
  process.once('SIGINT', handler);
  process.once('SIGTERM', handler);
}

export async function serve(config: Config): Promise<Running> {
  const log = createLogger(config.logLevel);
  const starting = createContext(config, { log });
  let app: FastifyInstance | undefined;
  let stopping = false;
  const stop = async () => {
    stopping = true;
    const ctx = await starting;
    await app?.close();
    await ctx.close();
  };
  // Installed before anything opens, so a signal during start-up waits for the database to be
  // open (PGlite must not be killed mid-write) and then shuts down cleanly.
  onSignals(stop);
  const ctx = await starting;
  try {
    const provisioned = await bootstrap(config, ctx.tenancy);
    if (provisioned.demo) {
      process.stdout.write(
        [
          '',
          '  Lattice created the project "demo". Its API key is shown this once:',
          '',
          `    ${provisioned.demo.apiKey}`,
          '',
          `  Try: curl -X POST -H "Authorization: Bearer ${provisioned.demo.apiKey}" \\`,
          `         http://localhost:${config.port}/api/v1/projects/demo/admin/memory/embeddings/backfill`,
          '',
          '',
        ].join('\n'),
      );
    }
    if (config.serveRunsJobs) await ctx.startConsumers();
    app = await buildApp(ctx);
    await app.listen({ port: config.port, host: config.host });
    log.info(
      { database: ctx.db.kind, queue: ctx.queue.kind, jobsInProcess: config.serveRunsJobs, embedder: ctx.embedder.model },
      `lattice listening on ${config.host}:${config.port} (OpenAPI at /openapi.json, docs at /docs)`,
    );
  } catch (error) {
    // A signal during start-up closes the database under the steps above; the signal handler
    // exits once shutdown completes, so this failure is expected and not reported.
    if (stopping) return new Promise<never>(() => {});
    await app?.close();
    await ctx.close();
    throw error;
  }
  return { app, ctx, stop };
}

export async function worker(config: Config): Promise<Running> {
  if (config.redisUrl === undefined) {
    throw new ConfigError(['lattice worker consumes BullMQ jobs and needs REDIS_URL; without Redis, `lattice serve` runs jobs in-process']);
  }
  const log = createLogger(config.logLevel, 'lattice-worker');
  const starting = createContext(config, { log });
  const stop = async () => (await starting).close();
  onSignals(stop);
  const ctx = await starting;
  await ctx.startConsumers();
  log.info({ database: ctx.db.kind, concurrency: config.workerConcurrency }, 'lattice worker consuming jobs');
  return { ctx, stop };
}
