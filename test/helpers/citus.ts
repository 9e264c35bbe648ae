// A fresh database on the Citus cluster at CITUS_URL (scripts/citus/cluster.sh): created on the
// coordinator and every worker, Citus in each, the workers registered, Lattice's migrations applied
// and every table distributed (`lattice citus distribute`), so a test file starts where an operator
// does after the recipe. Few shards per table (4) unless asked: a file's database is made in seconds.
// The benches (bench/support.ts, bench/lattice-process.ts) make theirs here too, with Citus's 32.
import pg from 'pg';
import { distribute } from '../../src/platform/citus.js';
import type { Queryable } from '../../src/platform/db.js';
import { createPgDb } from '../../src/platform/db-pg.js';
import { migrate } from '../../src/platform/migrations.js';

export const CITUS_URL = process.env.CITUS_URL;

/** The URL of `database` on the server of `url` (on another port of that host when `port` is given). */
export function withDatabase(url: string, database: string, port?: number): string {
  const parsed = new URL(url);
  if (port !== undefined) parsed.port = String(port);
  parsed.pathname = `/${database}`;
  return parsed.toString();
}

/** Runs statements in order on one connection to `url` (a database of one node). */
export async function run(url: string, statements: readonly string[]): Promise<pg.QueryResult[]> {
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  try {
    const results: pg.QueryResult[] = [];
    for (const sql of statements) results.push(await client.query(sql));
    return results;
  } finally {
    await client.end();
  }
}

/** The workers' ports, as the coordinator's `postgres` database registers them. */
async function workerPorts(coordinator: string): Promise<number[]> {
  const [result] = await run(withDatabase(coordinator, 'postgres'), [`SELECT nodeport FROM pg_dist_node WHERE groupid <> 0 AND isactive ORDER BY nodeport`]);
  return result!.rows.map((r: { nodeport: number }) => r.nodeport);
}

/**
 * Creates `name` on every node of the cluster, migrated and (unless `distribute: false`, for a test
 * that distributes a populated database itself) distributed; answers its URL on the coordinator.
 */
export async function createCitusDatabase(coordinator: string, name: string, options: CitusDatabaseOptions = {}): Promise<string> {
  // One file's set-up at a time: adding the nodes to a database writes the cluster's shared
  // catalogs (its roles), and two at once fail with "tuple concurrently updated".
  const lock = new pg.Client({ connectionString: withDatabase(coordinator, 'postgres') });
  await lock.connect();
  try {
    await lock.query('SELECT pg_advisory_lock($1)', [SETUP_LOCK]);
    return await setUp(coordinator, name, options);
  } finally {
    await lock.end();
  }
}

export interface CitusDatabaseOptions {
  /** false: migrated only, for a test that distributes a populated database itself. */
  distribute?: boolean;
  /** Shards per distributed table (citus.shard_count for the database); 4 by default. */
  shardCount?: number;
}

/** Any constant shared by the test processes; "citusset" in ASCII. */
const SETUP_LOCK = '7163657375746963';

async function setUp(coordinator: string, name: string, options: CitusDatabaseOptions): Promise<string> {
  const shardCount = options.shardCount ?? 4;
  if (!Number.isInteger(shardCount) || shardCount < 1 || shardCount > 1024) throw new Error('shardCount must be an integer from 1 to 1024');
  const workers = await workerPorts(coordinator);
  const coordinatorPort = Number(new URL(coordinator).port || 5432);
  for (const port of [coordinatorPort, ...workers]) await run(withDatabase(coordinator, 'postgres', port), [`CREATE DATABASE ${name}`]);
  for (const port of workers) await run(withDatabase(coordinator, name, port), ['CREATE EXTENSION citus']);
  const url = withDatabase(coordinator, name);
  await run(url, [
    'CREATE EXTENSION citus',
    `SELECT citus_set_coordinator_host('${new URL(coordinator).hostname}', ${coordinatorPort})`,
    ...workers.map((port) => `SELECT citus_add_node('${new URL(coordinator).hostname}', ${port})`),
    `ALTER DATABASE ${name} SET citus.shard_count = ${shardCount}`,
  ]);
  const db = createPgDb({ connectionString: url, max: 2 });
  try {
    await migrate(db);
    if (options.distribute !== false) await distribute(db);
  } finally {
    await db.close();
  }
  return url;
}

/** Runs `sql` on the `postgres` database of the coordinator and of every worker. */
export async function onEveryServer(coordinator: string, sql: string): Promise<void> {
  const coordinatorPort = Number(new URL(coordinator).port || 5432);
  for (const port of [coordinatorPort, ...(await workerPorts(coordinator))]) await run(withDatabase(coordinator, 'postgres', port), [sql]);
}

/** Drops `name` from every node. */
export async function dropCitusDatabase(coordinator: string, name: string): Promise<void> {
  await onEveryServer(coordinator, `DROP DATABASE IF EXISTS ${name} WITH (FORCE)`);
}

/**
 * A count or sum of server state (pg_stat_activity, pg_stat_user_indexes) over every node that
 * holds rows: on Citus the coordinator and the workers, where a shard's statements wait and its
 * indexes are scanned; otherwise the one server. `sql` answers one numeric column; it takes no
 * parameters (run_command_on_all_nodes passes none). Shard tables and indexes carry a suffix
 * (`memories_102008`): match names with `shardName('memories')`.
 */
export async function onEveryNode(db: Queryable, sql: string): Promise<number> {
  if (!CITUS_URL) return Number((await db.query<{ n: unknown }>(`SELECT (${sql}) AS n`)).rows[0]!.n);
  const { rows } = await db.query<{ success: boolean; result: string }>(`SELECT success, result FROM run_command_on_all_nodes($1)`, [sql]);
  for (const r of rows) if (!r.success) throw new Error(`on a node: ${r.result}`);
  return rows.reduce((sum, r) => sum + Number(r.result || 0), 0);
}

/** A regular expression (for `~`) matching a table or index name, on a shard too (schema-qualified, suffixed). */
export const shardName = (name: string) => `(public\\.)?${name}(_[0-9]+)?`;
