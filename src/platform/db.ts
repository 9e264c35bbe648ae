// One database interface with two adapters: node-postgres for real deployments and PGlite for the
// embedded default. Stores take a `Queryable`, so the same function runs inside or outside a
// transaction.
import { AppError, DependencyUnavailableError, ValidationError, WriteConflictError } from './errors.js';

export interface QueryResult<T> {
  rows: T[];
  rowCount: number;
}

export interface Queryable {
  /** One parameterised statement. */
  query<T = Record<string, unknown>>(text: string, params?: readonly unknown[]): Promise<QueryResult<T>>;
  /** Several statements without parameters (migrations, DDL). */
  exec(sql: string): Promise<void>;
}

export interface TransactionOptions {
  /**
   * The transaction only reads (a search that sets planner options for itself): it runs READ ONLY,
   * and on Postgres on the statements' pool, so that it never waits behind write transactions.
   */
  readOnly?: boolean;
  /**
   * Statements the transaction starts with (`SET LOCAL ...`, no parameters): on Postgres sent with
   * its BEGIN, in one round trip.
   */
  settings?: string;
}

/** One connection pool's figures: its size and what callers waited for a connection. */
export interface PoolStats {
  max: number;
  open: number;
  idle: number;
  /** Callers waiting for a connection now. */
  waiting: number;
  /** Connections handed out since start. */
  acquired: number;
  /** Of those, the ones that waited SLOW_ACQUIRE_MS or more. */
  slowAcquires: number;
  /** The longest wait since start, and the mean, in milliseconds. */
  maxWaitMs: number;
  meanWaitMs: number;
  /** Transactions or statements of this pool that Postgres aborted as a deadlock or serialization victim (each was run again). */
  conflicts: number;
}

export interface Db extends Queryable {
  readonly kind: 'pg' | 'pglite';
  /**
   * Runs `fn` in a transaction. On Postgres, a transaction aborted as a deadlock victim or a
   * serialization failure is run again (RETRY_ATTEMPTS in all, after a jittered pause), so `fn`
   * must only touch the database through `tx` (or do what is safe to do twice).
   */
  transaction<T>(fn: (tx: Queryable) => Promise<T>, options?: TransactionOptions): Promise<T>;
  /**
   * Runs `fn` holding a session-level advisory lock. On Postgres the lock and `fn` share one
   * connection, so work done through the passed handle is serialised across processes.
   */
  withAdvisoryLock<T>(key: bigint, fn: (session: Db) => Promise<T>): Promise<T>;
  /**
   * The same when nobody holds the lock now; otherwise answers undefined at once, without running
   * `fn` or waiting (a periodic job whose previous run, here or in another process, is still at
   * work skips its turn rather than hold a connection while it waits).
   */
  withAdvisoryLockIfFree<T>(key: bigint, fn: (session: Db) => Promise<T>): Promise<T | undefined>;
  /** The connection pools' figures, by pool name (Postgres only). */
  poolStats?(): Record<string, PoolStats>;
  /**
   * Calls `listener` each time a connection is made again after connections failed (Postgres
   * restarted or came back from an outage). PGlite runs in the process and has none to lose.
   */
  onReconnect?(listener: () => void): void;
  close(): Promise<void>;
}

/**
 * Failures of the connection itself, which node-postgres and ioredis report without a code: the
 * server went away mid-query, a pool could not connect in time, a client is no longer usable, a
 * Redis command could not be sent.
 */
const CONNECTION_MESSAGES = [
  /^Connection terminated/,
  /connection error and is not queryable/,
  /timeout exceeded when trying to connect/,
  /^timeout expired$/, // a pg client's own connect timeout (connectionTimeoutMillis)
  /^Connection is closed\.?$/,
  /enableOfflineQueue options is false/,
  /^Reached the max retries per request limit/,
  /^Command timed out$/,
];

/** Network failures, as Node reports them in `code`. */
const NETWORK_CODES = new Set(['ECONNREFUSED', 'ECONNRESET', 'ETIMEDOUT', 'ENOTFOUND', 'EPIPE', 'EHOSTUNREACH']);

/** SQLSTATE class 22, data exception: a value Postgres cannot hold or compare (the client's input). */
export function isDataException(error: unknown): boolean {
  const code = (error as { code?: unknown } | null)?.code;
  return typeof code === 'string' && /^22[0-9A-Z]{3}$/.test(code);
}

/**
 * Whether a failure means a dependency (Postgres, Redis) is unreachable or going away, not that the
 * request was wrong: SQLSTATE connection classes, network codes, and the code-less messages above.
 */
export function isConnectionError(error: unknown): boolean {
  const code = (error as { code?: unknown } | null)?.code;
  const message = error instanceof Error ? error.message : undefined;
  if (typeof code !== 'string') return message !== undefined && CONNECTION_MESSAGES.some((pattern) => pattern.test(message));
  return (
    code.startsWith('08') || // connection exception
    code === '57P01' || // admin shutdown
    code === '57P02' || // crash shutdown
    code === '57P03' || // cannot connect now
    code === '53300' || // too many connections
    NETWORK_CODES.has(code)
  );
}

/**
 * A failure from below (Postgres, Redis) as the caller's error, for every surface that answers one
 * (the REST error handler, MCP tools): a value Postgres refuses is the caller's 400 (the backstop
 * behind the input guard), a dependency that is unreachable a 503, and so is a write that lost
 * every retry to concurrent writes (WRITE_CONFLICT). Anything else: undefined.
 */
export function asAppError(error: unknown): AppError | undefined {
  if (error instanceof AppError) return error;
  if (isDataException(error)) {
    return new ValidationError(`a value in the request cannot be stored: ${error instanceof Error ? error.message : 'invalid value'}`, undefined, { cause: error });
  }
  if (isConnectionError(error)) return new DependencyUnavailableError('a dependency is unavailable; retry shortly', { cause: error });
  if (isWriteConflict(error)) return new WriteConflictError({ cause: error });
  return undefined;
}

export const UNIQUE_VIOLATION = '23505';

/**
 * Batches smaller than this insert with ON CONFLICT straight away: for them the savepoint's two
 * round trips cost more than ON CONFLICT does, and under load every round trip waits its turn.
 */
export const FAST_INSERT_MIN_ROWS = 100;

/**
 * Inside a transaction: runs `fast` (say, an insert without ON CONFLICT, which is much cheaper in
 * bulk) and, should it hit a unique violation, rolls back to a savepoint and runs `safe` instead.
 */
export async function fastUnlessConflict<T>(tx: Queryable, fast: () => Promise<T>, safe: () => Promise<T>): Promise<T> {
  await tx.query('SAVEPOINT fast_unless_conflict');
  try {
    const result = await fast();
    await tx.query('RELEASE SAVEPOINT fast_unless_conflict');
    return result;
  } catch (error) {
    if ((error as { code?: unknown } | null)?.code !== UNIQUE_VIOLATION) throw error;
    await tx.query('ROLLBACK TO SAVEPOINT fast_unless_conflict');
    const result = await safe();
    await tx.query('RELEASE SAVEPOINT fast_unless_conflict');
    return result;
  }
}

/** SQLSTATEs after which the whole transaction (or the lone statement) may simply be run again. */
const RETRYABLE = new Set(['40P01', '40001']); // deadlock_detected, serialization_failure

/** Whether Postgres aborted the work as a deadlock victim or a serialization failure. */
export function isWriteConflict(error: unknown): boolean {
  const code = (error as { code?: unknown } | null)?.code;
  return typeof code === 'string' && RETRYABLE.has(code);
}

/** How many times in all a conflicting transaction or statement is run. */
export const RETRY_ATTEMPTS = 5;

/**
 * Runs `run` again, up to RETRY_ATTEMPTS times in all, when Postgres aborted it as a deadlock
 * victim or a serialization failure: after a pause drawn at random below a cap that doubles each
 * time (10, 20, 40, 80 ms), so that the transactions that met do not meet again. The last
 * failure is thrown (the error handler answers it 503 with Retry-After).
 */
export async function retryingConflicts<T>(run: () => Promise<T>, onConflict?: () => void): Promise<T> {
  for (let attempt = 1; ; attempt++) {
    try {
      return await run();
    } catch (error) {
      if (!isWriteConflict(error)) throw error;
      onConflict?.();
      if (attempt >= RETRY_ATTEMPTS) throw error;
      await new Promise((resolve) => setTimeout(resolve, Math.random() * 10 * 2 ** (attempt - 1)));
    }
  }
}
