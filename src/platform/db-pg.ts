// node-postgres adapter behind the Db interface.
import pg from 'pg';
import type { Db, Queryable, QueryResult } from './db.js';

// int8 and numeric come back as strings by default; counts and sums here fit in a double.
pg.types.setTypeParser(pg.types.builtins.INT8, (v) => Number(v));
pg.types.setTypeParser(pg.types.builtins.NUMERIC, (v) => Number(v));

function wrap(client: pg.Pool | pg.PoolClient): Queryable {
  return {
    async query<T>(text: string, params?: readonly unknown[]): Promise<QueryResult<T>> {
      const result = await client.query(text, params as unknown[] | undefined);
      return { rows: result.rows as T[], rowCount: result.rowCount ?? 0 };
    },
    async exec(sql: string): Promise<void> {
      await client.query(sql);
    },
  };
}

export interface PgDbOptions {
  connectionString: string;
  max?: number;
  statementTimeoutMs?: number;
  /**
   * How long making a new connection may take before it fails with a connection error (a 503): a
   * Postgres that is down or unreachable is reported in about this time.
   */
  connectTimeoutMs?: number;
  /**
   * How long a caller may wait for a free connection of a busy pool (a burst, not an outage) before
   * the same error.
   */
  acquireTimeoutMs?: number;
}

export const DEFAULT_CONNECT_TIMEOUT_MS = 1000;
export const DEFAULT_ACQUIRE_TIMEOUT_MS = 10_000;

export function createPgDb(options: PgDbOptions): Db {
  // pg-pool uses one setting both for waiting on a busy pool and for making a connection; a client
  // class of our own gives the second its shorter bound.
  const connectTimeoutMs = options.connectTimeoutMs ?? DEFAULT_CONNECT_TIMEOUT_MS;
  class Client extends pg.Client {
    constructor(config?: pg.ClientConfig) {
      super({ ...config, connectionTimeoutMillis: connectTimeoutMs });
    }
  }
  const pool = new pg.Pool({
    Client,
    connectionString: options.connectionString,
    max: options.max ?? 10,
    connectionTimeoutMillis: Math.max(connectTimeoutMs, options.acquireTimeoutMs ?? DEFAULT_ACQUIRE_TIMEOUT_MS),
    statement_timeout: options.statementTimeoutMs ?? 60_000,
    // JIT compilation costs hundreds of milliseconds and never pays off for these short queries
    // (it fires on the inflated costs of planner steering such as enable_sort = off).
    options: '-c jit=off',
  });
  // A client whose connection drops (a server crash or restart) emits 'error': the pool listens
  // while the client is idle, but a checked-out client between two statements of a transaction, or
  // holding an advisory lock, has no listener, and an unheard 'error' would end the process. Its
  // next query fails instead, with a connection error that maps to 503, and the pool discards it.
  pool.on('error', () => {});
  pool.on('connect', (client) => client.on('error', () => {}));
  return fromPool(pool);
}

function fromPool(pool: pg.Pool): Db {
  const base = wrap(pool);
  return {
    kind: 'pg',
    ...base,
    async transaction<T>(fn: (tx: Queryable) => Promise<T>): Promise<T> {
      const client = await pool.connect();
      try {
        return await inTransaction(client, fn);
      } finally {
        client.release();
      }
    },
    async withAdvisoryLock<T>(key: bigint, fn: (session: Db) => Promise<T>): Promise<T> {
      const client = await pool.connect();
      try {
        await client.query('SELECT pg_advisory_lock($1)', [key.toString()]);
        try {
          return await fn(sessionDb(client));
        } finally {
          await client.query('SELECT pg_advisory_unlock($1)', [key.toString()]);
        }
      } finally {
        client.release();
      }
    },
    async close(): Promise<void> {
      await pool.end();
    },
  };
}

async function inTransaction<T>(client: pg.PoolClient, fn: (tx: Queryable) => Promise<T>): Promise<T> {
  await client.query('BEGIN');
  try {
    const result = await fn(wrap(client));
    await client.query('COMMIT');
    return result;
  } catch (error) {
    await client.query('ROLLBACK').catch(() => {});
    throw error;
  }
}

/** A Db over one checked-out client: its transactions run on that client. */
function sessionDb(client: pg.PoolClient): Db {
  const base = wrap(client);
  return {
    kind: 'pg',
    ...base,
    transaction: <T>(fn: (tx: Queryable) => Promise<T>) => inTransaction(client, fn),
    withAdvisoryLock: () => Promise.reject(new Error('advisory locks do not nest')),
    close: async () => {},
  };
}
