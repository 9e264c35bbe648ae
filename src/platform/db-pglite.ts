// PGlite adapter behind the Db interface: Postgres compiled to WASM, in this process, with pgvector.
// One process may open a data directory at a time; a lock file in the directory enforces it so
// that a CLI command never opens the files under a running server.
import { mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { PGlite, types, type Transaction } from '@electric-sql/pglite';
import { vector } from '@electric-sql/pglite-pgvector';
import type { Db, Queryable, QueryResult, TransactionOptions } from './db.js';
import { DataDirLockedError } from './errors.js';

function wrap(client: PGlite | Transaction): Queryable {
  return {
    async query<T>(text: string, params?: readonly unknown[]): Promise<QueryResult<T>> {
      const result = await client.query<T>(text, params as unknown[] | undefined);
      return { rows: result.rows, rowCount: result.affectedRows ?? result.rows.length };
    },
    async exec(sql: string): Promise<void> {
      await client.exec(sql);
    },
  };
}

const LOCK_FILE = 'lattice.lock';

function isAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === 'EPERM';
  }
}

/** Takes the data directory for this process, or throws naming the process that holds it. */
function lockDataDir(dataDir: string): () => void {
  mkdirSync(dataDir, { recursive: true });
  const path = join(dataDir, LOCK_FILE);
  for (let attempt = 0; attempt < 2; attempt++) {
    try {
      writeFileSync(path, String(process.pid), { flag: 'wx' });
      return () => rmSync(path, { force: true });
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== 'EEXIST') throw error;
      const holder = Number(readFileSync(path, 'utf8').trim());
      if (Number.isInteger(holder) && holder > 0 && holder !== process.pid && isAlive(holder)) {
        throw new DataDirLockedError(dataDir, holder);
      }
      rmSync(path, { force: true }); // stale: its process is gone
    }
  }
  throw new DataDirLockedError(dataDir, -1);
}

export interface PgliteDbOptions {
  /** A directory, or undefined for an in-memory database (tests). */
  dataDir?: string;
  /** An in-memory database's starting contents: a dump of another's data directory (PGlite's dumpDataDir). */
  loadDataDir?: Blob;
}

// The PGlite instance behind each Db, for what the Db interface does not carry (a bench's COPY from a
// blob). Not for the service's own code.
const instances = new WeakMap<Db, PGlite>();

/** The PGlite instance behind a Db made by createPgliteDb, or undefined for any other. */
export function pgliteOf(db: Db): PGlite | undefined {
  return instances.get(db);
}

export async function createPgliteDb(options: PgliteDbOptions = {}): Promise<Db> {
  const unlock = options.dataDir === undefined ? () => {} : lockDataDir(options.dataDir);
  let pglite: PGlite;
  try {
    pglite = await PGlite.create({
      dataDir: options.dataDir === undefined ? 'memory://' : join(options.dataDir, 'pglite'),
      extensions: { vector },
      ...(options.loadDataDir === undefined ? {} : { loadDataDir: options.loadDataDir }),
      parsers: { [types.INT8]: Number, [types.NUMERIC]: Number },
    });
  } catch (error) {
    unlock();
    throw error;
  }
  const releaseOnExit = () => unlock();
  process.once('exit', releaseOnExit);

  // Session-level work (migrations) is serialised in-process; the lock file keeps other processes out.
  let chain: Promise<unknown> = Promise.resolve();
  const held = new Set<bigint>();
  const base = wrap(pglite);
  const db: Db = {
    kind: 'pglite',
    ...base,
    // One connection: transactions run one after another and never meet, so nothing to retry.
    transaction: <T>(fn: (tx: Queryable) => Promise<T>, options?: TransactionOptions) =>
      pglite.transaction(async (tx) => {
        const opening = [options?.readOnly ? 'SET TRANSACTION READ ONLY' : '', options?.settings ?? ''].filter(Boolean).join('; ');
        if (opening) await tx.exec(opening);
        return fn(wrap(tx));
      }),
    withAdvisoryLock<T>(_key: bigint, fn: (session: Db) => Promise<T>): Promise<T> {
      const run = chain.then(() => fn(db));
      chain = run.catch(() => {});
      return run;
    },
    // One process holds the database: a lock is held while a run under its key is in flight here.
    async withAdvisoryLockIfFree<T>(key: bigint, fn: (session: Db) => Promise<T>): Promise<T | undefined> {
      if (held.has(key)) return undefined;
      held.add(key);
      try {
        return await db.withAdvisoryLock(key, fn);
      } finally {
        held.delete(key);
      }
    },
    async close(): Promise<void> {
      if (!pglite.closed) await pglite.close();
      process.off('exit', releaseOnExit);
      unlock();
    },
  };
  instances.set(db, pglite);
  return db;
}
