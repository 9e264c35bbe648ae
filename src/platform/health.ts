// Liveness and readiness. /healthz: the process answers. /readyz: the database and the queue do
// too, and the encoder has loaded (when the process loads it at start: lattice serve).
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { Type } from 'typebox';
import { withDeadline } from './concurrency.js';
import { SLOW_ACQUIRE_MS } from './db-pg.js';
import type { Db } from './db.js';
import { DependencyUnavailableError } from './errors.js';
import type { JobQueue, JobMapBase } from './queue.js';

type Pingable = Pick<JobQueue<JobMapBase>, 'ping' | 'kind'>;

const PoolStatsSchema = Type.Object({
  max: Type.Integer({ description: 'Connections the pool may open' }),
  open: Type.Integer(),
  idle: Type.Integer(),
  waiting: Type.Integer({ description: 'Callers waiting for a connection now' }),
  acquired: Type.Integer({ description: 'Connections handed out since the process started' }),
  slowAcquires: Type.Integer({ description: `Of those, the ones that waited ${SLOW_ACQUIRE_MS} ms or more (each is also logged, at most one line a pool every 10 s)` }),
  maxWaitMs: Type.Number({ description: 'The longest wait for a connection since start' }),
  meanWaitMs: Type.Number(),
  conflicts: Type.Integer({ description: 'Transactions or statements Postgres aborted as a deadlock or serialization victim since start; each was run again' }),
});

const StatusSchema = Type.Object({
  status: Type.String(),
  database: Type.Optional(Type.String()),
  queue: Type.Optional(Type.String()),
  encoder: Type.Optional(Type.String({ description: '"loaded" once the embedding model has loaded at start (lattice serve); until then /readyz answers 503' })),
  pools: Type.Optional(
    Type.Record(Type.String(), PoolStatsSchema, {
      description:
        'Postgres only: the connection pools by name (transactions: write transactions; statements: lone statements and read-only transactions such as searches) and what callers waited for a connection',
    }),
  ),
});

export interface HealthOptions {
  db: Db;
  queue: Pingable;
  dbTimeoutMs: number;
  /** Whether the encoder the process loads at start has loaded (or failed to); absent when it loads on first use. */
  encoderLoaded?: () => boolean;
}

export const healthRoutes: FastifyPluginAsyncTypebox<HealthOptions> = async (app, { db, queue, dbTimeoutMs, encoderLoaded }) => {
  app.get('/healthz', { schema: { tags: ['health'], summary: 'The process is up', response: { 200: StatusSchema } } }, async () => ({ status: 'ok' }));

  app.get(
    '/readyz',
    {
      schema: {
        tags: ['health'],
        summary: 'The database and the queue are reachable, and the encoder has loaded',
        response: { 200: StatusSchema, 503: Type.Ref('ErrorBody') },
      },
    },
    async () => {
      try {
        // Bounded: a server that accepts connections but never answers is down too.
        await withDeadline(db.query('SELECT 1'), dbTimeoutMs, () => new Error(`no answer within ${dbTimeoutMs} ms`));
      } catch (error) {
        throw new DependencyUnavailableError(`the database (${db.kind}) is unreachable`, { cause: error });
      }
      await queue.ping();
      // A write is embedded as it is saved, and a search embeds its query, only once the model is in memory.
      if (encoderLoaded && !encoderLoaded()) throw new DependencyUnavailableError('the encoder is still loading');
      return {
        status: 'ready',
        database: db.kind,
        queue: queue.kind,
        ...(encoderLoaded ? { encoder: 'loaded' } : {}),
        ...(db.poolStats ? { pools: db.poolStats() } : {}),
      };
    },
  );
};
