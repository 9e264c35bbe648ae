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
  const ctx = await createContext(config, { log });
  let app: FastifyInstance | undefined;
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
    await app?.close();
    await ctx.close();
    throw error;
  }
  const stop = async () => {
    await app!.close();
    await ctx.close();
  };
  onSignals(stop);
  return { app, ctx, stop };
}

export async function worker(config: Config): Promise<Running> {
  if (config.redisUrl === undefined) {
    throw new ConfigError(['lattice worker consumes BullMQ jobs and needs REDIS_URL; without Redis, `lattice serve` runs jobs in-process']);
  }
  const log = createLogger(config.logLevel, 'lattice-worker');
  const ctx = await createContext(config, { log });
  await ctx.startConsumers();
  log.info({ database: ctx.db.kind, concurrency: config.workerConcurrency }, 'lattice worker consuming jobs');
  const stop = () => ctx.close();
  onSignals(stop);
  return { ctx, stop };
}
