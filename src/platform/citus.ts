// Scale-out on Citus (issue 37): every project-owned table is distributed by `project_id` and
// colocated with `memories`, so that all of a project's rows sit on one node and a project's
// statements route to one shard group; the tables not keyed by project (`projects`, and
// `api_keys`, unique by key hash) become reference tables, copied to every node. `lattice citus distribute` runs it
// once; after that the migrations distribute the tables they create (migrate() calls
// distributeNew). Idempotent: a table already distributed is left as it is.
import type { Db, Queryable } from './db.js';

/** The table the others are colocated with: the first distributed, without `colocate_with`. */
const ANCHOR = 'memories';

/** Tables that stay on the coordinator alone: the migrations' own bookkeeping. */
const COORDINATOR_ONLY = new Set(['schema_migrations']);

export interface DistributionReport {
  /** Tables made reference tables by this run. */
  referenceTables: string[];
  /** Tables distributed by `project_id` by this run, the anchor first. */
  distributed: string[];
  /** Tables found already distributed or reference. */
  unchanged: string[];
  /** Foreign keys between project-owned tables dropped for the distribution and added back. */
  foreignKeys: string[];
  /** The database's settings on every node (NODE_SETTINGS), set on each run. */
  settings: string[];
}

/**
 * Settings of the database on every node, set by each run of `distribute` (`ALTER DATABASE ... SET`,
 * which Citus sends to every worker; run it again after adding a node). Lattice's own connections set
 * these for their sessions, but a statement routed to a shard runs in a session Citus opened on the
 * worker, which takes the database's settings:
 *   - jit off: search steers the planner with enable_sort = off, whose inflated costs set JIT
 *     compilation off on every search (60 ms a statement on a worker, where the walk takes 3 ms).
 */
const NODE_SETTINGS: readonly [string, string][] = [['jit', 'off']];

interface TableRow {
  name: string;
  /** Whether it has triggers of its own (not a constraint's). */
  triggers: boolean;
  /** Whether every unique index holds `project_id`, as Citus asks of a table distributed by it. */
  by_project: boolean;
  method: string | null;
  /** How many other tables of the schema it references (reference tables go in that order). */
  references: number;
}

interface ForeignKey {
  table: string;
  name: string;
  definition: string;
}

/** Whether the database has the Citus extension. */
export async function citusInstalled(db: Queryable): Promise<boolean> {
  return (await db.query(`SELECT 1 FROM pg_extension WHERE extname = 'citus'`)).rows.length > 0;
}

/** Whether `lattice citus distribute` has run here (the anchor is distributed). */
export async function citusDistributed(db: Queryable): Promise<boolean> {
  if (!(await citusInstalled(db))) return false;
  const { rows } = await db.query(`SELECT 1 FROM pg_dist_partition WHERE logicalrelid = to_regclass($1)`, [ANCHOR]);
  return rows.length > 0;
}

async function tables(db: Queryable): Promise<TableRow[]> {
  const { rows } = await db.query<TableRow>(
    `SELECT c.relname AS name,
            EXISTS (SELECT 1 FROM pg_attribute a WHERE a.attrelid = c.oid AND a.attname = 'project_id' AND NOT a.attisdropped)
              AND NOT EXISTS (SELECT 1 FROM pg_index i WHERE i.indrelid = c.oid AND i.indisunique
                                 AND NOT EXISTS (SELECT 1 FROM pg_attribute a WHERE a.attrelid = c.oid AND a.attname = 'project_id' AND a.attnum = ANY (i.indkey))) AS by_project,
            (SELECT p.partmethod::text FROM pg_dist_partition p WHERE p.logicalrelid = c.oid) AS method,
            (SELECT count(*) FROM pg_constraint f WHERE f.conrelid = c.oid AND f.contype = 'f' AND f.confrelid <> c.oid)::int AS references,
            EXISTS (SELECT 1 FROM pg_trigger t WHERE t.tgrelid = c.oid AND NOT t.tgisinternal) AS triggers
       FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace
      WHERE n.nspname = current_schema() AND c.relkind IN ('r', 'p') AND NOT c.relispartition
      ORDER BY c.relname`,
  );
  return rows.filter((t) => !COORDINATOR_ONLY.has(t.name));
}

/** Foreign keys from one project-owned table to another (they must be dropped while either is not yet distributed). */
async function projectForeignKeys(db: Queryable, names: readonly string[]): Promise<ForeignKey[]> {
  const { rows } = await db.query<ForeignKey>(
    `SELECT c.conrelid::regclass::text AS table, c.conname AS name, pg_get_constraintdef(c.oid) AS definition
       FROM pg_constraint c
      WHERE c.contype = 'f' AND c.conrelid::regclass::text = ANY($1::text[]) AND c.confrelid::regclass::text = ANY($1::text[])
      ORDER BY 1, 2`,
    [names],
  );
  return rows;
}

const quote = (name: string) => `"${name.replace(/"/g, '""')}"`;

/**
 * Distributes every table not yet distributed. The order is the one Citus accepts: the reference
 * tables first (a distributed table may reference one), then the foreign keys between tables still
 * to distribute are dropped, the anchor is distributed, then every other table colocated with it,
 * and the keys are added back (they carry `project_id`, so Citus accepts them between colocated
 * tables). `citus.enable_unsafe_triggers` lets the tables keep their triggers (the mining queue's
 * and the word statistics'), whose functions write only rows of the same project, so of the same
 * shard group.
 */
export async function distribute(db: Db): Promise<DistributionReport> {
  if (!(await citusInstalled(db))) throw new Error('Citus is not installed in this database: run CREATE EXTENSION citus on the coordinator first');
  const report: DistributionReport = { referenceTables: [], distributed: [], unchanged: [], foreignKeys: [], settings: [] };
  const { rows: current } = await db.query<{ name: string }>('SELECT current_database() AS name');
  for (const [name, value] of NODE_SETTINGS) {
    await db.exec(`ALTER DATABASE ${quote(current[0]!.name)} SET ${name} = ${value}`);
    report.settings.push(`${name} = ${value}`);
  }
  const all = await tables(db);
  // A table keyed by something other than its project (projects; api_keys, found by key hash on
  // every request before the project is known) is small and read everywhere: a reference table.
  const reference = all.filter((t) => !t.by_project && t.method === null).sort((a, b) => a.references - b.references || (a.name < b.name ? -1 : 1));
  const pending = all.filter((t) => t.by_project && t.method === null).map((t) => t.name);
  report.unchanged = all.filter((t) => t.method !== null).map((t) => t.name);
  if (reference.length === 0 && pending.length === 0) return report;

  await db.transaction(async (tx) => {
    await tx.exec(`SET LOCAL citus.enable_unsafe_triggers = on`);
    // Rows copied to the shards in one transaction: sequential, so the copy and the DDL after it
    // share the connections (Citus refuses parallel shard access after sequential in one transaction).
    await tx.exec(`SET LOCAL citus.multi_shard_modify_mode = 'sequential'`);
    for (const t of reference) {
      await tx.query(`SELECT create_reference_table($1)`, [t.name]);
      report.referenceTables.push(t.name);
    }
    // The rows a populated table's distribution copies into its shards are not new writes: their
    // trigger work (word statistics, the mining queue) is in the tables copied beside them, and
    // the tables those triggers write may not be distributed yet. Off while copying, on after.
    const triggered = all.filter((t) => t.triggers && pending.includes(t.name)).map((t) => t.name);
    for (const name of triggered) await tx.exec(`ALTER TABLE ${quote(name)} DISABLE TRIGGER USER`);
    const keys = await projectForeignKeys(tx, pending);
    for (const k of keys) await tx.exec(`ALTER TABLE ${quote(k.table)} DROP CONSTRAINT ${quote(k.name)}`);
    const anchorDistributed = report.unchanged.includes(ANCHOR);
    const order = anchorDistributed ? pending : [ANCHOR, ...pending.filter((n) => n !== ANCHOR)];
    for (const name of order) {
      if (name === ANCHOR && !anchorDistributed) await tx.query(`SELECT create_distributed_table($1, 'project_id')`, [name]);
      else await tx.query(`SELECT create_distributed_table($1, 'project_id', colocate_with => $2)`, [name, ANCHOR]);
      report.distributed.push(name);
    }
    for (const k of keys) {
      await tx.exec(`ALTER TABLE ${quote(k.table)} ADD CONSTRAINT ${quote(k.name)} ${k.definition}`);
      report.foreignKeys.push(`${k.table}.${k.name}`);
    }
    for (const name of triggered) await tx.exec(`ALTER TABLE ${quote(name)} ENABLE TRIGGER USER`);
  });
  return report;
}

/** After migrations: on a distributed deployment, distributes the tables they created. */
export async function distributeNew(db: Db): Promise<DistributionReport | undefined> {
  return (await citusDistributed(db)) ? distribute(db) : undefined;
}
