// Starts the processes: `serve` (the API, plus job consumers when there is no Redis or
// SERVE_RUNS_JOBS is set) and `worker` (BullMQ consumers only).
import type { FastifyInstance } from 'fastify';
import { buildApp } from './app.js';
import { ConfigError, type Config } from './config.js';
import { createLattice, type Lattice } from './modules.js';
import { createLogger } from './platform/logger.js';

export interface Running {
  app?: FastifyInstance;
  lattice: Lattice;
  stop(): Promise<void>;
}

/**
 * SIGTERM or SIGINT: stop within the deadline, then exit 0. What did not finish in time (a job
 * still running) is left where the next start picks it up: BullMQ hands a stalled job to another
 * worker, and the embedding sweep finds memories without a vector.
 */
function onSignals(stop: () => Promise<void>, deadlineMs: number, force: () => void = () => {}): void {
  let stopping = false;
  const handler = (signal: string) => {
    if (stopping) return;
    stopping = true;
    process.stderr.write(`lattice: ${signal} received, shutting down (at most ${deadlineMs} ms)\n`);
    const deadline = setTimeout(() => {
      process.stderr.write(`lattice: still busy after ${deadlineMs} ms; exiting, unfinished work is picked up at the next start\n`);
      force();
      process.exit(0);
    }, deadlineMs);
    deadline.unref();
    stop().then(
      () => process.exit(0),
      (error: unknown) => {
        process.stderr.write(`lattice: shutdown failed: ${error instanceof Error ? error.message : String(error)}\n`);
        process.exit(1);
      },
    );
  };
  process.once('SIGINT', handler);
  process.once('SIGTERM', handler);
}

export async function serve(config: Config): Promise<Running> {
  const log = createLogger(config.logLevel);
  const starting = createLattice(config, { log });
  let app: FastifyInstance | undefined;
  let stopping = false;
  const stop = async () => {
    stopping = true;
    const lattice = await starting;
    if (app) {
      // close() refuses new connections and ends idle ones once; a connection whose request was
      // in flight becomes idle after its answer, so idle ones are ended again until all are gone.
      const server = app.server;
      const sweep = setInterval(() => server.closeIdleConnections(), 100);
      await app.close().finally(() => clearInterval(sweep));
    }
    await lattice.close();
  };
  // Installed before anything opens, so a signal during start-up waits for the database to be
  // open (PGlite must not be killed mid-write) and then shuts down cleanly. At the deadline, the
  // connections still open are cut.
  onSignals(stop, config.shutdownTimeoutMs, () => app?.server.closeAllConnections());
  const lattice = await starting;
  try {
    const provisioned = await lattice.apis.tenancy.bootstrap();
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
    // The encoder loads while the server starts listening; /readyz waits for it, so that a write
    // right after start is embedded as it is saved and found by meaning at once.
    let encoderLoaded = false;
    void lattice.apis.embeddings
      .warm()
      .catch((error: unknown) => log.warn({ err: error }, 'the encoder did not load at start; it loads again on first use'))
      .finally(() => {
        encoderLoaded = true;
      });
    if (config.serveRunsJobs) await lattice.startConsumers();
    app = await buildApp(lattice, { encoderLoaded: () => encoderLoaded });
    await app.listen({ port: config.port, host: config.host });
    // The port it got: PORT=0 asks the system for a free one.
    const port = (app.server.address() as { port: number } | null)?.port ?? config.port;
    log.info(
      { database: lattice.runtime.db.kind, queue: lattice.runtime.queue.kind, jobsInProcess: config.serveRunsJobs, embedder: lattice.apis.embeddings.model },
      `lattice listening on ${config.host}:${port} (OpenAPI at /openapi.json, docs at /docs)`,
    );
  } catch (error) {
    // A signal during start-up closes the database under the steps above; the signal handler
    // exits once shutdown completes, so this failure is expected and not reported.
    if (stopping) return new Promise<never>(() => {});
    await app?.close();
    await lattice.close();
    throw error;
  }
  return { app, lattice, stop };
}

export async function worker(config: Config): Promise<Running> {
  if (config.redisUrl === undefined) {
    throw new ConfigError(['lattice worker consumes BullMQ jobs and needs REDIS_URL; without Redis, `lattice serve` runs jobs in-process']);
  }
  const log = createLogger(config.logLevel, 'lattice-worker');
  const starting = createLattice(config, { log });
  const stop = async () => (await starting).close();
  onSignals(stop, config.shutdownTimeoutMs);
  const lattice = await starting;
  await lattice.startConsumers();
  log.info({ database: lattice.runtime.db.kind, concurrency: config.workerConcurrency }, 'lattice worker consuming jobs');
  return { lattice, stop };
}
