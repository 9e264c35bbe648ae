// Liveness and readiness. /healthz: the process answers. /readyz: the database and the queue do too.
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { Type } from 'typebox';
import type { Db } from './db.js';
import { DependencyUnavailableError } from './errors.js';
import type { JobQueue, JobMapBase } from './queue.js';

type Pingable = Pick<JobQueue<JobMapBase>, 'ping' | 'kind'>;

const StatusSchema = Type.Object({
  status: Type.String(),
  database: Type.Optional(Type.String()),
  queue: Type.Optional(Type.String()),
});

/** `SELECT 1`, failing after `timeoutMs` (a server that accepts connections but never answers). */
async function pingDatabase(db: Db, timeoutMs: number): Promise<void> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`no answer within ${timeoutMs} ms`)), timeoutMs);
  });
  try {
    await Promise.race([db.query('SELECT 1'), timeout]);
  } finally {
    clearTimeout(timer);
  }
}

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
        await pingDatabase(db, dbTimeoutMs);
      } catch (error) {
        throw new DependencyUnavailableError(`the database (${db.kind}) is unreachable`, { cause: error });
      }
      await queue.ping();
      return { status: 'ready', database: db.kind, queue: queue.kind };
    },
  );
};
