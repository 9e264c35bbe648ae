// Liveness and readiness. /healthz: the process answers. /readyz: the database and the queue do too.
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { Type } from 'typebox';
import { withDeadline } from './concurrency.js';
import type { Db } from './db.js';
import { DependencyUnavailableError } from './errors.js';
import type { JobQueue, JobMapBase } from './queue.js';

type Pingable = Pick<JobQueue<JobMapBase>, 'ping' | 'kind'>;

const StatusSchema = Type.Object({
  status: Type.String(),
  database: Type.Optional(Type.String()),
  queue: Type.Optional(Type.String()),
});

export const healthRoutes: FastifyPluginAsyncTypebox<{ db: Db; queue: Pingable; dbTimeoutMs: number }> = async (app, { db, queue, dbTimeoutMs }) => {
  app.get('/healthz', { schema: { tags: ['health'], summary: 'The process is up', response: { 200: StatusSchema } } }, async () => ({ status: 'ok' }));

  app.get(
    '/readyz',
    {
      schema: {
        tags: ['health'],
        summary: 'The database and the queue are reachable',
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
      return { status: 'ready', database: db.kind, queue: queue.kind };
    },
  );
};
