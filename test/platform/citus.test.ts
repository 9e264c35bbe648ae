// Lattice on a Citus cluster (issue 37): the distribution `lattice citus distribute` makes, on a
// fresh and on a populated database, and the routing of a project's hot statements (save, search,
// emit, ingest) to one shard, read from EXPLAIN of the very statements the service sent. Runs only
// with CITUS_URL, a coordinator with workers (scripts/citus/cluster.sh start); skipped otherwise.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildApp } from '../../src/app.js';
import { createLattice, type Lattice } from '../../src/modules.js';
import { distribute } from '../../src/platform/citus.js';
import type { Db, Queryable } from '../../src/platform/db.js';
import { createPgDb } from '../../src/platform/db-pg.js';
import { loadMigrations, migrate, type Migration } from '../../src/platform/migrations.js';
import { createLogger } from '../../src/platform/logger.js';
import { CITUS_URL, createCitusDatabase, dropCitusDatabase, onEveryNode, onEveryServer } from '../helpers/citus.js';
import { createHarness, testConfig, uniqueName, type Harness } from '../helpers/harness.js';

interface Statement {
  text: string;
  params: readonly unknown[];
}

/** The database, recording every statement sent through it, its transactions' and sessions' too. */
function recording(db: Db, log: Statement[]): Db {
  const queryable = <Q extends Queryable>(q: Q): Q =>
    new Proxy(q, {
      get(target, prop, receiver) {
        if (prop === 'query') {
          return (text: string, params: readonly unknown[] = []) => {
            log.push({ text, params });
            return target.query(text, params);
          };
        }
        if (prop === 'transaction') return (fn: (tx: Queryable) => Promise<unknown>, options?: unknown) => (target as unknown as Db).transaction((tx) => fn(queryable(tx)), options as never);
        if (prop === 'withAdvisoryLock' || prop === 'withAdvisoryLockIfFree') {
          return (key: bigint, fn: (session: Db) => Promise<unknown>) => (target as unknown as Db)[prop](key, (session) => fn(queryable(session)));
        }
        const value = Reflect.get(target, prop, receiver) as unknown;
        return typeof value === 'function' ? (value as (...a: unknown[]) => unknown).bind(target) : value;
      },
    });
  return queryable(db);
}

describe.skipIf(!CITUS_URL)('on a Citus cluster (skipped without CITUS_URL: scripts/citus/cluster.sh start)', () => {
  describe('distribution', () => {
    let h: Harness;
    beforeAll(async () => {
      h = await createHarness();
    });
    afterAll(async () => h?.close());

    it('distributes every project-owned table by project_id, colocated with memories, and keyed tables as reference tables', async () => {
      const { rows } = await h.db.query<{ table: string; method: string; colocated: boolean; by_project: boolean }>(
        `SELECT c.relname AS table, p.partmethod::text AS method,
                p.colocationid = (SELECT colocationid FROM pg_dist_partition WHERE logicalrelid = 'memories'::regclass) AS colocated,
                EXISTS (SELECT 1 FROM pg_attribute a WHERE a.attrelid = c.oid AND a.attname = 'project_id') AS by_project
           FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace
           LEFT JOIN pg_dist_partition p ON p.logicalrelid = c.oid
          WHERE n.nspname = 'public' AND c.relkind = 'r' ORDER BY 1`,
      );
      const byName = new Map(rows.map((r) => [r.table, r]));
      expect(byName.get('projects')?.method).toBe('n');
      expect(byName.get('api_keys')?.method).toBe('n');
      expect(byName.get('schema_migrations')?.method).toBeNull();
      const distributed = rows.filter((r) => r.by_project && r.table !== 'api_keys');
      expect(distributed.length).toBeGreaterThan(30);
      expect(distributed.filter((r) => r.method !== 'h' || !r.colocated).map((r) => r.table)).toEqual([]);
    });

    it("sets the database's settings on every node: JIT off, as Lattice's own sessions have it, for the sessions Citus opens on the workers", async () => {
      const { rows } = await h.db.query<{ nodes: number }>(`SELECT count(*)::int AS nodes FROM pg_dist_node WHERE isactive`);
      expect(rows[0]!.nodes).toBeGreaterThanOrEqual(3);
      expect(await onEveryNode(h.db, `SELECT (current_setting('jit') = 'off')::int`)).toBe(rows[0]!.nodes);
    });

    it('is idempotent: a second run changes nothing', async () => {
      const again = await distribute(h.db);
      expect(again.distributed).toEqual([]);
      expect(again.referenceTables).toEqual([]);
      expect(again.unchanged.length).toBeGreaterThan(30);
      expect(again.settings).toEqual(['jit = off']);
    });
  });

  describe('a populated database', () => {
    const name = uniqueName('lattice_t').toLowerCase();
    let url: string;
    let db: Db;
    let lattice: Lattice;
    beforeAll(async () => {
      url = await createCitusDatabase(CITUS_URL!, name, { distribute: false });
      db = createPgDb({ connectionString: url, max: 5 });
    });
    afterAll(async () => {
      await lattice?.close();
      await db?.close();
      await dropCitusDatabase(CITUS_URL!, name);
    });

    it('distributes tables that hold rows, and every row and answer is there after', async () => {
      const database = { url, open: async () => db, drop: async () => {} };
      const config = testConfig(database);
      lattice = await createLattice(config, { log: createLogger('silent'), db });
      await lattice.apis.tenancy.createProject('populated', { plan: 'enterprise' });
      const subject = { kind: 'user', externalId: 'u-1' };
      for (const content of ['Prefers window seats on long flights', 'Allergic to peanuts', 'Lives in Lisbon since 2024']) {
        await lattice.apis.memory.save('populated', { content, type: 'fact', subject });
      }
      await lattice.apis.events.emit('populated', { eventType: 'order.placed', subject, payload: { amount: 12 } });
      const counts = async () =>
        (await db.query<{ memories: number; events: number; terms: number }>(
          `SELECT (SELECT count(*) FROM memories)::int AS memories, (SELECT count(*) FROM events)::int AS events, (SELECT count(*) FROM memory_terms)::int AS terms`,
        )).rows[0]!;
      const before = await counts();
      expect(before.memories).toBe(3);
      const report = await distribute(db);
      expect(report.distributed[0]).toBe('memories');
      expect(report.referenceTables).toEqual(['projects', 'api_keys']);
      expect(await counts()).toEqual(before);
      const found = await lattice.apis.memory.search('populated', { query: 'peanut allergy', limit: 3 });
      expect(found.map((hit) => hit.memory.content)).toContain('Allergic to peanuts');
      const { rows } = await db.query<{ n: number }>(`SELECT count(*)::int AS n FROM pg_dist_partition WHERE logicalrelid = 'memories'::regclass`);
      expect(rows[0]!.n).toBe(1);
      // The triggers are on again on the shards: a new memory counts its words and queues its subject.
      await lattice.apis.memory.save('populated', { content: 'Bought hiking boots in Porto', type: 'event', subject, metadata: { eventType: 'purchase' } });
      const after = await counts();
      expect(after.memories).toBe(4);
      expect(after.terms).toBeGreaterThan(before.terms);
      const queued = await db.query(`SELECT 1 FROM behavior_mining_queue WHERE project_id = 'populated' AND subject_external_id = 'u-1'`);
      expect(queued.rows.length).toBeGreaterThan(0);
    });
  });

  describe('a later migration', () => {
    const name = uniqueName('lattice_t').toLowerCase();
    let db: Db;
    beforeAll(async () => {
      const url = await createCitusDatabase(CITUS_URL!, name);
      // As on a cluster whose nodes were not configured for triggers: off for every session of this
      // database on every node. Lattice's triggers then still fire; only their creation is checked.
      await onEveryServer(CITUS_URL!, `ALTER DATABASE ${name} SET citus.enable_unsafe_triggers = off`);
      db = createPgDb({ connectionString: url, max: 2 });
    });
    afterAll(async () => {
      await db?.close();
      await dropCitusDatabase(CITUS_URL!, name);
    });

    it('distributes the table it creates and may add a trigger to a distributed table, with citus.enable_unsafe_triggers off on every node', async () => {
      const { rows: setting } = await db.query<{ on: string }>(`SELECT current_setting('citus.enable_unsafe_triggers') AS on`);
      expect(setting[0]!.on).toBe('off');
      await expect(db.exec(`CREATE TRIGGER refused AFTER INSERT ON memories FOR EACH ROW EXECUTE FUNCTION suppress_redundant_updates_trigger()`)).rejects.toThrow(/triggers are not supported on distributed tables/);
      const later: Migration = {
        version: 9000,
        name: 'later',
        sql: `CREATE TABLE later_notes (project_id text NOT NULL, id text NOT NULL, note text NOT NULL, PRIMARY KEY (project_id, id));
              CREATE FUNCTION later_note() RETURNS trigger LANGUAGE plpgsql AS $$
              BEGIN
                INSERT INTO later_notes (project_id, id, note) VALUES (NEW.project_id, NEW.id, 'saved');
                RETURN NULL;
              END $$;
              CREATE TRIGGER later_note AFTER INSERT ON memories FOR EACH ROW EXECUTE FUNCTION later_note();`,
      };
      const result = await migrate(db, [...(await loadMigrations()), later]);
      expect(result.applied).toEqual(['9000_later']);
      const { rows } = await db.query<{ method: string; colocated: boolean }>(
        `SELECT partmethod::text AS method, colocationid = (SELECT colocationid FROM pg_dist_partition WHERE logicalrelid = 'memories'::regclass) AS colocated
           FROM pg_dist_partition WHERE logicalrelid = 'later_notes'::regclass`,
      );
      expect(rows).toEqual([{ method: 'h', colocated: true }]);
      await db.exec(`INSERT INTO projects (id, name) VALUES ('later', 'later')`);
      await db.exec(`INSERT INTO memories (id, project_id, content, content_hash, type) VALUES ('m-later', 'later', 'Walks to work', 'h-later', 'fact')`);
      const { rows: notes } = await db.query(`SELECT project_id, id, note FROM later_notes`);
      expect(notes).toEqual([{ project_id: 'later', id: 'm-later', note: 'saved' }]);
    });
  });

  describe("a project's hot statements", () => {
    const log: Statement[] = [];
    let h: Harness;
    let app: Awaited<ReturnType<typeof buildApp>>;
    let lattice: Lattice;
    let project: { projectId: string; apiKey: string };

    beforeAll(async () => {
      h = await createHarness({ consumers: false });
      project = await h.project();
      lattice = await createLattice(h.config, { log: createLogger('silent'), db: recording(h.db, log), skipMigrations: true });
      app = await buildApp(lattice, { logger: false });
      await app.ready();
    });
    afterAll(async () => {
      await app?.close();
      await lattice?.close();
      await h?.close();
    });

    const call = (path: string, body: unknown) =>
      app.inject({ method: 'POST', url: `/api/v1/projects/${project.projectId}${path}`, headers: { authorization: `Bearer ${project.apiKey}` }, payload: body as object });

    /** EXPLAIN of each statement that reaches a distributed table: how many shards it runs on. */
    async function tasks(statements: readonly Statement[]): Promise<{ text: string; tasks: number }[]> {
      const out: { text: string; tasks: number }[] = [];
      for (const s of statements) {
        if (!/^\s*(WITH|SELECT|INSERT|UPDATE|DELETE)\b/i.test(s.text)) continue;
        const plan = (await h.db.query<{ 'QUERY PLAN': string }>(`EXPLAIN ${s.text}`, s.params)).rows.map((r) => r['QUERY PLAN']).join('\n');
        if (!plan.includes('Citus')) continue;
        const counts = [...plan.matchAll(/Task Count: (\d+)/g)].map((m) => Number(m[1]));
        out.push({ text: s.text.replace(/\s+/g, ' ').slice(0, 120), tasks: counts.length === 0 ? 1 : Math.max(...counts) });
      }
      return out;
    }

    it('routes save, search, emit and ingest to one shard each', async () => {
      const subject = { kind: 'customer', externalId: 'c-1' };
      const paths: [string, unknown][] = [
        ['/admin/memory', { content: 'Prefers oat milk in every drink', type: 'preference', subject }],
        ['/memory/search', { query: 'what milk does the customer like', subject, limit: 5 }],
        ['/lattice/events/emit', { eventType: 'order.placed', subject, payload: { amount: 4.5 } }],
        ['/memory-typed/observations', { observations: [{ attributeKey: 'spend', subjectKind: subject.kind, subjectExternalId: subject.externalId, valueNumeric: 4.5 }] }],
      ];
      for (const [path, body] of paths) {
        log.length = 0;
        const res = await call(path, body);
        expect(res.statusCode, `${path}: ${res.body}`).toBeLessThan(300);
        const planned = await tasks(log);
        expect(planned.length, path).toBeGreaterThan(0);
        expect(planned.filter((p) => p.tasks !== 1), path).toEqual([]);
      }
    });
  });
});
