// Keeps Postgres shardable by project. DESIGN: "Every project-owned table's primary key and unique
// constraints include project_id (and foreign keys between project tables carry it)". A row can
// then live on its project's shard, and uniqueness and references are checkable within one shard.
// Read from the catalog of a freshly migrated database, so the guard sees what the migrations
// actually build (a unique index counts as much as a UNIQUE constraint), on PGlite and Postgres.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Db } from '../../src/platform/db.js';
import { migrate } from '../../src/platform/migrations.js';
import { backend, createTestDatabase, type TestDatabase } from '../helpers/harness.js';

/** Tables with a project_id that are nonetheless not project-owned, and why. */
const TENANT_DIRECTORY: Record<string, string> = {
  api_keys: 'looked up by key hash before the project is known; a reference table when sharded',
};

// Tables that predate the rule. Migration 0013 gave the last six (memories, events, typed_attributes,
// typed_ingest_batches, alert_rules, alert_fires) project-scoped keys; an entry names the offending
// key itself, not just the table, so a new offence on a listed table would still fail.
const KNOWN_EXCEPTIONS: Record<string, string[]> = {};

interface Catalog {
  /** Every table in public with a project_id column. */
  withProjectId: string[];
  /** Primary keys, UNIQUE constraints and unique indexes, by their key columns. */
  uniques: { table: string; name: string; kind: string; columns: string; hasProjectId: boolean }[];
  foreignKeys: { table: string; name: string; columns: string; referenced: string; referencedColumns: string; carriesProjectId: boolean }[];
}

async function readCatalog(db: Db): Promise<Catalog> {
  const withProjectId = await db.query<{ table: string }>(`
    SELECT c.relname::text AS table
      FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace
     WHERE n.nspname = 'public' AND c.relkind IN ('r', 'p')
       AND EXISTS (SELECT 1 FROM pg_attribute a
                    WHERE a.attrelid = c.oid AND a.attname = 'project_id' AND a.attnum > 0 AND NOT a.attisdropped)
     ORDER BY 1`);
  // Every unique index, whether it backs a PRIMARY KEY, a UNIQUE constraint or stands alone. Only key
  // columns count (INCLUDE columns do not make anything unique); an expression is shown as written.
  const uniques = await db.query<Catalog['uniques'][number]>(`
    SELECT t.relname::text AS table,
           i.relname::text AS name,
           CASE con.contype WHEN 'p' THEN 'primary key' WHEN 'u' THEN 'unique constraint' ELSE 'unique index' END AS kind,
           (SELECT string_agg(pg_get_indexdef(x.indexrelid, k, true), ', ' ORDER BY k)
              FROM generate_series(1, x.indnkeyatts::int) k) AS columns,
           EXISTS (SELECT 1 FROM generate_series(1, x.indnkeyatts::int) k
                    WHERE pg_get_indexdef(x.indexrelid, k, true) = 'project_id') AS "hasProjectId"
      FROM pg_index x
      JOIN pg_class t ON t.oid = x.indrelid
      JOIN pg_class i ON i.oid = x.indexrelid
      JOIN pg_namespace n ON n.oid = t.relnamespace
      LEFT JOIN pg_constraint con ON con.conindid = x.indexrelid AND con.conrelid = x.indrelid AND con.contype IN ('p', 'u')
     WHERE n.nspname = 'public' AND x.indisunique
     ORDER BY 1, 2`);
  // A foreign key carries project_id when it pairs the local project_id with the referenced one;
  // that is what keeps the referenced row on the same shard.
  const foreignKeys = await db.query<Catalog['foreignKeys'][number]>(`
    SELECT t.relname::text AS table,
           con.conname::text AS name,
           r.relname::text AS referenced,
           (SELECT string_agg(a.attname::text, ', ' ORDER BY k.n)
              FROM unnest(con.conkey) WITH ORDINALITY k(attnum, n)
              JOIN pg_attribute a ON a.attrelid = con.conrelid AND a.attnum = k.attnum) AS columns,
           (SELECT string_agg(a.attname::text, ', ' ORDER BY k.n)
              FROM unnest(con.confkey) WITH ORDINALITY k(attnum, n)
              JOIN pg_attribute a ON a.attrelid = con.confrelid AND a.attnum = k.attnum) AS "referencedColumns",
           EXISTS (SELECT 1 FROM unnest(con.conkey, con.confkey) p(local, remote)
                     JOIN pg_attribute l ON l.attrelid = con.conrelid AND l.attnum = p.local
                     JOIN pg_attribute f ON f.attrelid = con.confrelid AND f.attnum = p.remote
                    WHERE l.attname = 'project_id' AND f.attname = 'project_id') AS "carriesProjectId"
      FROM pg_constraint con
      JOIN pg_class t ON t.oid = con.conrelid
      JOIN pg_class r ON r.oid = con.confrelid
      JOIN pg_namespace n ON n.oid = t.relnamespace
      JOIN pg_namespace rn ON rn.oid = r.relnamespace
     WHERE con.contype = 'f' AND n.nspname = 'public' AND rn.nspname = 'public'
     ORDER BY 1, 2`);
  return { withProjectId: withProjectId.rows.map((r) => r.table), uniques: uniques.rows, foreignKeys: foreignKeys.rows };
}

type Breach = { table: string; rule: 'A' | 'B'; description: string };

function breaches(catalog: Catalog): Breach[] {
  const owned = new Set(catalog.withProjectId.filter((t) => !(t in TENANT_DIRECTORY)));
  const a: Breach[] = catalog.uniques
    .filter((u) => owned.has(u.table) && !u.hasProjectId)
    .map((u) => ({ table: u.table, rule: 'A', description: `rule A: ${u.kind} ${u.name} (${u.columns})` }));
  const b: Breach[] = catalog.foreignKeys
    .filter((f) => owned.has(f.table) && owned.has(f.referenced) && !f.carriesProjectId)
    .map((f) => ({
      table: f.table,
      rule: 'B',
      description: `rule B: foreign key ${f.name} (${f.columns}) -> ${f.referenced} (${f.referencedColumns})`,
    }));
  return [...a, ...b];
}

const isKnown = (breach: Breach): boolean => (KNOWN_EXCEPTIONS[breach.table] ?? []).includes(breach.description);
const listed = (lines: string[]): string => `\n    ${[...lines].sort().join('\n    ')}\n`;

describe(`schema guard on ${backend}: project-owned tables stay shardable by project_id`, () => {
  let database: TestDatabase | undefined;
  let catalog: Catalog;
  beforeAll(async () => {
    database = await createTestDatabase();
    const db = await database.open();
    await migrate(db);
    catalog = await readCatalog(db);
  });
  afterAll(async () => {
    await database?.drop();
  });

  it('reads the catalog: finds project tables, their keys and their foreign keys', () => {
    // Guards against a catalog query that silently finds nothing, which would pass every rule.
    expect(catalog.withProjectId).toEqual(expect.arrayContaining(['memories', 'meters', 'api_keys']));
    expect(catalog.withProjectId).not.toContain('projects');
    expect(catalog.uniques).toContainEqual(expect.objectContaining({ table: 'memories', name: 'memories_live_unique', kind: 'unique index' }));
    expect(catalog.foreignKeys).toContainEqual(expect.objectContaining({ table: 'meters', referenced: 'projects' }));
  });

  it('exempts only tenant directory tables that exist and have a project_id', () => {
    const missing = Object.keys(TENANT_DIRECTORY).filter((t) => !catalog.withProjectId.includes(t));
    expect(missing, 'tenant directory entries without a project_id column: drop them from the list').toEqual([]);
  });

  it('includes project_id in every primary key, UNIQUE constraint and unique index of a project-owned table (rule A)', () => {
    const found = breaches(catalog).filter((b) => b.rule === 'A' && !isKnown(b));
    const lines = found.map((b) => `${b.table}: ${b.description}`);
    expect(lines, `keys without project_id on project-owned tables:${listed(lines)}`).toEqual([]);
  });

  it('carries project_id in every foreign key between project-owned tables (rule B)', () => {
    const found = breaches(catalog).filter((b) => b.rule === 'B' && !isKnown(b));
    const lines = found.map((b) => `${b.table}: ${b.description}`);
    expect(lines, `foreign keys between project-owned tables without project_id:${listed(lines)}`).toEqual([]);
  });

  it('lists only known exceptions that still break their rule', () => {
    const current = new Set(breaches(catalog).map((b) => `${b.table}: ${b.description}`));
    const stale = Object.entries(KNOWN_EXCEPTIONS)
      .flatMap(([table, descriptions]) => descriptions.map((d) => `${table}: ${d}`))
      .filter((line) => !current.has(line));
    expect(stale, `no longer broken, remove it from the known exceptions:${listed(stale)}`).toEqual([]);
  });
});
