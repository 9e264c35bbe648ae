// node-postgres adapter behind the Db interface. Two pools: write transactions take connections
// from one, lone statements and read-only transactions from the other, so a search never waits for
// a connection because write transactions hold them all. Each pool counts what its callers waited.
import type { FastifyBaseLogger } from 'fastify';
import pg from 'pg';
import { isConnectionError, retryingConflicts, type Db, type PoolStats, type Queryable, type QueryResult, type TransactionOptions } from './db.js';

// int8 and numeric come back as strings by default; counts and sums here fit in a double.
pg.types.setTypeParser(pg.types.builtins.INT8, (v) => Number(v));
pg.types.setTypeParser(pg.types.builtins.NUMERIC, (v) => Number(v));

function wrap(client: pg.PoolClient): Queryable {
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
  /** Connections for write transactions (DB_POOL_MAX). */
  max?: number;
  /** Connections for lone statements and read-only transactions (DB_STATEMENT_POOL_MAX; default `max`). */
  statementMax?: number;
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
  /** Where waits of SLOW_ACQUIRE_MS or more for a connection are reported (at most one line a pool every 10 s). */
  log?: Pick<FastifyBaseLogger, 'warn'>;
}

export const DEFAULT_CONNECT_TIMEOUT_MS = 1000;
export const DEFAULT_ACQUIRE_TIMEOUT_MS = 10_000;
/** A wait for a connection this long is slow: counted, and logged. */
export const SLOW_ACQUIRE_MS = 20;
const SLOW_LOG_EVERY_MS = 10_000;

/** A pg.Pool that times every wait for a connection. */
/**
 * Whether Postgres is reachable, as the pools find it: down from a failed connection until a
 * statement is answered again, which the listeners hear of (once per outage, whichever pool sees
 * it first).
 */
class ConnectionWatch {
  private down = false;
  private readonly listeners: (() => void)[] = [];

  failed(): void {
    this.down = true;
  }

  connected(): void {
    if (!this.down) return;
    this.down = false;
    for (const listener of this.listeners) listener();
  }

  onReconnect(listener: () => void): void {
    this.listeners.push(listener);
  }
}

class GaugedPool {
  private acquired = 0;
  private slowAcquires = 0;
  private totalWaitMs = 0;
  private maxWaitMs = 0;
  private slowSinceLog = 0;
  private lastLog = 0;
  private conflicts = 0;

  constructor(
    readonly name: string,
    readonly pool: pg.Pool,
    private readonly max: number,
    private readonly watch: ConnectionWatch,
    private readonly log?: Pick<FastifyBaseLogger, 'warn'>,
  ) {}

  async connect(): Promise<pg.PoolClient> {
    const start = performance.now();
    let client: pg.PoolClient;
    try {
      client = await this.pool.connect();
    } catch (error) {
      if (isConnectionError(error)) this.watch.failed();
      throw error;
    }
    const waited = performance.now() - start;
    this.acquired++;
    this.totalWaitMs += waited;
    this.maxWaitMs = Math.max(this.maxWaitMs, waited);
    if (waited >= SLOW_ACQUIRE_MS) this.noteSlow(waited);
    return client;
  }

  private noteSlow(waited: number): void {
    this.slowAcquires++;
    this.slowSinceLog++;
    const now = Date.now();
    if (this.log && now - this.lastLog >= SLOW_LOG_EVERY_MS) {
      this.log.warn(
        { pool: this.name, waitedMs: Math.round(waited), slowSinceLastReport: this.slowSinceLog, ...this.stats() },
        `waited ${Math.round(waited)} ms for a database connection (${this.name} pool)`,
      );
      this.lastLog = now;
      this.slowSinceLog = 0;
    }
  }

  stats(): PoolStats {
    return {
      max: this.max,
      open: this.pool.totalCount,
      idle: this.pool.idleCount,
      waiting: this.pool.waitingCount,
      acquired: this.acquired,
      slowAcquires: this.slowAcquires,
      maxWaitMs: Math.round(this.maxWaitMs * 10) / 10,
      meanWaitMs: this.acquired === 0 ? 0 : Math.round((this.totalWaitMs / this.acquired) * 100) / 100,
      conflicts: this.conflicts,
    };
  }

  /** Runs `work` on a connection, again when Postgres aborts it as a conflict's victim (counted). */
  retrying<T>(work: (client: pg.PoolClient) => Promise<T>): Promise<T> {
    return retryingConflicts(
      () => this.use(work),
      () => this.conflicts++,
    );
  }

  /** Runs `work` on a connection of this pool; one whose connection failed is not handed out again. */
  async use<T>(work: (client: pg.PoolClient) => Promise<T>): Promise<T> {
    const client = await this.connect();
    try {
      const result = await work(client);
      client.release();
      // A statement answered: Postgres is reachable (again).
      this.watch.connected();
      return result;
    } catch (error) {
      const lost = isConnectionError(error);
      if (lost) this.watch.failed();
      client.release(lost ? (error as Error) : undefined);
      throw error;
    }
  }
}

export function createPgDb(options: PgDbOptions): Db {
  // pg-pool uses one setting both for waiting on a busy pool and for making a connection; a client
  // class of our own gives the second its shorter bound.
  const connectTimeoutMs = options.connectTimeoutMs ?? DEFAULT_CONNECT_TIMEOUT_MS;
  class Client extends pg.Client {
    constructor(config?: pg.ClientConfig) {
      super({ ...config, connectionTimeoutMillis: connectTimeoutMs });
    }
  }
  const open = (name: string, max: number) => {
    const pool = new pg.Pool({
      Client,
      connectionString: options.connectionString,
      max,
      connectionTimeoutMillis: Math.max(connectTimeoutMs, options.acquireTimeoutMs ?? DEFAULT_ACQUIRE_TIMEOUT_MS),
      // Connections stay open a minute idle (pg's default is 10 s), so a burst after a pause finds
      // them open rather than making them all at once.
      idleTimeoutMillis: 60_000,
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
    return new GaugedPool(name, pool, max, watch, options.log);
  };
  const max = options.max ?? 10;
  const watch = new ConnectionWatch();
  return fromPools(open('transactions', max), open('statements', options.statementMax ?? max), watch);
}

function fromPools(transactions: GaugedPool, statements: GaugedPool, watch: ConnectionWatch): Db {
  return {
    kind: 'pg',
    query<T>(text: string, params?: readonly unknown[]): Promise<QueryResult<T>> {
      // A lone statement is its own transaction: one aborted by a conflict is simply sent again.
      return statements.retrying((client) => wrap(client).query<T>(text, params));
    },
    async exec(sql: string): Promise<void> {
      await statements.use((client) => client.query(sql));
    },
    transaction<T>(fn: (tx: Queryable) => Promise<T>, options: TransactionOptions = {}): Promise<T> {
      const pool = options.readOnly ? statements : transactions;
      return pool.retrying((client) => inTransaction(client, fn, options));
    },
    async withAdvisoryLock<T>(key: bigint, fn: (session: Db) => Promise<T>): Promise<T> {
      return transactions.use(async (client) => {
        await client.query('SELECT pg_advisory_lock($1)', [key.toString()]);
        try {
          return await fn(sessionDb(client));
        } finally {
          await client.query('SELECT pg_advisory_unlock($1)', [key.toString()]);
        }
      });
    },
    async withAdvisoryLockIfFree<T>(key: bigint, fn: (session: Db) => Promise<T>): Promise<T | undefined> {
      return transactions.use(async (client) => {
        const { rows } = await client.query<{ locked: boolean }>('SELECT pg_try_advisory_lock($1) AS locked', [key.toString()]);
        if (!rows[0]!.locked) return undefined;
        try {
          return await fn(sessionDb(client));
        } finally {
          await client.query('SELECT pg_advisory_unlock($1)', [key.toString()]);
        }
      });
    },
    poolStats: () => ({ transactions: transactions.stats(), statements: statements.stats() }),
    onReconnect: (listener) => watch.onReconnect(listener),
    async close(): Promise<void> {
      await Promise.all([transactions.pool.end(), statements.pool.end()]);
    },
  };
}

async function inTransaction<T>(client: pg.PoolClient, fn: (tx: Queryable) => Promise<T>, options: TransactionOptions = {}): Promise<T> {
  const begin = options.readOnly ? 'BEGIN READ ONLY' : 'BEGIN';
  await client.query(options.settings ? `${begin}; ${options.settings}` : begin);
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
    transaction: <T>(fn: (tx: Queryable) => Promise<T>, options?: TransactionOptions) => inTransaction(client, fn, options),
    withAdvisoryLock: () => Promise.reject(new Error('advisory locks do not nest')),
    withAdvisoryLockIfFree: () => Promise.reject(new Error('advisory locks do not nest')),
    close: async () => {},
  };
}
