// Who owns each table, and which SQL in the source names whose table (issue 36). Pure functions over
// text, so the architecture test can check the rule on planted code as it does the import rules.
//
// A table's owner comes from its name: the prefix before the first underscore names the domain
// (behavior_mining_queue -> behavior), with a short list of named exceptions (memories -> memory).
// SQL is found in the source's string and template literals whose text reads as SQL (an upper-case
// statement keyword); a table counts when a keyword names it: INSERT INTO, UPDATE, DELETE FROM and
// TRUNCATE write it; ALTER TABLE and CREATE INDEX / TRIGGER ... ON alter it; FROM and JOIN read it,
// and a statement with FOR UPDATE or FOR SHARE locks what it reads. A table's bare name handed to a
// call in a file with SQL (`from('memories', 'm')`) counts as a read.
import ts from 'typescript';

/** Tables whose name does not say their owner. */
export const NAMED_OWNERS: Readonly<Record<string, string>> = {
  memories: 'memory',
  brains: 'memory',
  project_vector_indexes: 'memory',
  vector_indexed_projects: 'memory',
  events: 'events',
  projects: 'tenancy',
  api_keys: 'tenancy',
  meters: 'tenancy',
};

/** A name's prefix (before the first underscore) and the domain it names. */
export const PREFIX_OWNERS: Readonly<Record<string, string>> = {
  alert: 'alerts',
  behavior: 'behavior',
  compliance: 'compliance',
  discovery: 'discovery',
  event: 'events',
  financial: 'financial',
  graph: 'graph',
  learning: 'learning',
  memory: 'memory',
  tenancy: 'tenancy',
  typed: 'typed',
};

export interface TableMap {
  /** Every table and view the migrations leave, by name, with its owner (undefined: none found). */
  owners: Map<string, string | undefined>;
  /** The read views among them: what other domains may read. */
  views: Set<string>;
}

export function ownerOf(name: string): string | undefined {
  return NAMED_OWNERS[name] ?? PREFIX_OWNERS[name.split('_')[0]!];
}

/** The tables and views the migrations create (and do not drop again), in order. */
export function tableMap(migrations: readonly { file: string; text: string }[], owner: (name: string) => string | undefined = ownerOf): TableMap {
  const owners = new Map<string, string | undefined>();
  const views = new Set<string>();
  for (const { text } of migrations) {
    const sql = text.replace(/--[^\n]*/g, '');
    for (const m of sql.matchAll(/\bCREATE\s+(?:UNLOGGED\s+)?TABLE\s+(?:IF\s+NOT\s+EXISTS\s+)?([a-z_][a-z0-9_]*)/gi)) owners.set(m[1]!, owner(m[1]!));
    for (const m of sql.matchAll(/\bCREATE\s+(?:OR\s+REPLACE\s+)?VIEW\s+([a-z_][a-z0-9_]*)/gi)) {
      owners.set(m[1]!, owner(m[1]!));
      views.add(m[1]!);
    }
    for (const m of sql.matchAll(/\bDROP\s+(TABLE|VIEW)\s+(?:IF\s+EXISTS\s+)?([a-z_][a-z0-9_,\s]*)/gi)) {
      for (const name of m[2]!.split(',').map((n) => n.trim().split(/\s+/)[0]!)) {
        owners.delete(name);
        views.delete(name);
      }
    }
  }
  return { owners, views };
}

export type SqlVerb = 'read' | 'lock' | 'write' | 'alter';

export interface SqlUse {
  file: string;
  line: number;
  table: string;
  verb: SqlVerb;
}

const STATEMENT = /\b(SELECT|INSERT|UPDATE|DELETE|ALTER|CREATE|WITH|TRUNCATE)\b/;
const NAME = '([a-z_][a-z0-9_]*)';
const PATTERNS: readonly [SqlVerb, RegExp][] = [
  ['write', new RegExp(`\\bINSERT\\s+INTO\\s+${NAME}`, 'g')],
  ['write', new RegExp(`\\bUPDATE\\s+(?:ONLY\\s+)?${NAME}`, 'g')],
  ['write', new RegExp(`\\bDELETE\\s+FROM\\s+(?:ONLY\\s+)?${NAME}`, 'g')],
  ['write', new RegExp(`\\bTRUNCATE\\s+(?:TABLE\\s+)?${NAME}`, 'g')],
  ['alter', new RegExp(`\\bALTER\\s+TABLE\\s+(?:IF\\s+EXISTS\\s+)?(?:ONLY\\s+)?${NAME}`, 'g')],
  ['alter', new RegExp(`\\bCREATE\\s+(?:UNIQUE\\s+)?INDEX\\b[^;]*?\\bON\\s+(?:ONLY\\s+)?${NAME}`, 'g')],
  ['alter', new RegExp(`\\bCREATE\\s+(?:OR\\s+REPLACE\\s+)?(?:CONSTRAINT\\s+)?TRIGGER\\b[^;]*?\\bON\\s+${NAME}`, 'g')],
  ['read', new RegExp(`(?<!\\bDELETE\\s)\\b(?:FROM|JOIN)\\s+(?:ONLY\\s+)?${NAME}`, 'g')],
];

interface Literal {
  text: string;
  line: number;
  /** A plain string handed to code that builds SQL: a call's argument, or an object's `from`. */
  handed: boolean;
}

/** Whether a plain string literal is handed on, as a call's argument or a `from:` property. */
function handedOn(node: ts.Node): boolean {
  const parent = node.parent;
  if (ts.isCallExpression(parent)) return parent.arguments.includes(node as ts.Expression);
  return ts.isPropertyAssignment(parent) && parent.initializer === node && ts.isIdentifier(parent.name) && parent.name.text === 'from';
}

/** The literals of a source file, each with its line: template parts joined by a placeholder. */
function literals(file: string, text: string): Literal[] {
  const source = ts.createSourceFile(file, text, ts.ScriptTarget.Latest, true);
  const out: Literal[] = [];
  const visit = (node: ts.Node): void => {
    if (ts.isStringLiteral(node) || ts.isNoSubstitutionTemplateLiteral(node)) {
      out.push({ text: node.text, line: source.getLineAndCharacterOfPosition(node.getStart()).line + 1, handed: handedOn(node) });
    } else if (ts.isTemplateExpression(node)) {
      out.push({ text: [node.head.text, ...node.templateSpans.map((s) => s.literal.text)].join(' $x '), line: source.getLineAndCharacterOfPosition(node.getStart()).line + 1, handed: false });
    }
    ts.forEachChild(node, visit);
  };
  visit(source);
  return out;
}

/**
 * The uses of known tables in a file's SQL. In a file with SQL, a table's bare name handed to a
 * call or set as an object's `from` counts as a read too: SQL built from parts (a helper that
 * takes the table, a description of a subject's rows) names the table there.
 */
export function sqlUses(file: string, text: string, tables: ReadonlySet<string>): SqlUse[] {
  const uses: SqlUse[] = [];
  const all = literals(file, text);
  const hasSql = all.some((l) => STATEMENT.test(l.text));
  for (const literal of all) {
    if (hasSql && literal.handed && tables.has(literal.text)) uses.push({ file, line: literal.line, table: literal.text, verb: 'read' });
    if (!STATEMENT.test(literal.text)) continue;
    const locking = /\bFOR\s+(?:NO\s+KEY\s+)?(?:UPDATE|SHARE)\b/.test(literal.text);
    for (const [verb, pattern] of PATTERNS) {
      for (const m of literal.text.matchAll(pattern)) {
        const table = m[1]!;
        if (!tables.has(table)) continue;
        uses.push({ file, line: literal.line, table, verb: verb === 'read' && locking ? 'lock' : verb });
      }
    }
  }
  return uses;
}

/**
 * Where a file's SQL may reach: a domain's files their own tables and other owners' read views;
 * anything else (the platform, the app) no domain's table.
 */
export function trespasses(uses: readonly SqlUse[], map: TableMap, domainOf: (file: string) => string | undefined): string[] {
  const out = new Set<string>();
  for (const use of uses) {
    const owner = map.owners.get(use.table);
    const domain = domainOf(use.file);
    if (owner === domain) continue;
    if (use.verb === 'read' && map.views.has(use.table)) continue;
    out.add(`${use.file}: ${use.verb} ${use.table} (${owner ?? 'no owner'}'s)`);
  }
  return [...out].sort();
}

export interface Placement {
  migration: string;
  kind: 'index' | 'trigger';
  name: string;
  table: string;
}

/**
 * Indexes and triggers a migration puts on a table whose owner is not the migration's: the
 * migration's owner is that of the tables it creates (one owner), else `declared[file]` ('shared'
 * for a schema-wide change such as keys on every table, which may touch any table).
 */
export function foreignPlacements(migrations: readonly { file: string; text: string }[], declared: Readonly<Record<string, string>>): { placements: Placement[]; unowned: string[] } {
  const placements: Placement[] = [];
  const unowned: string[] = [];
  for (const { file, text } of migrations) {
    const sql = text.replace(/--[^\n]*/g, '');
    const created = [...new Set([...sql.matchAll(/\bCREATE\s+(?:UNLOGGED\s+)?TABLE\s+(?:IF\s+NOT\s+EXISTS\s+)?([a-z_][a-z0-9_]*)/gi)].map((m) => ownerOf(m[1]!)))];
    const owner = declared[file] ?? (created.length === 1 ? created[0] : undefined);
    if (owner === undefined) {
      unowned.push(file);
      continue;
    }
    if (owner === 'shared') continue;
    const found: Placement[] = [
      ...[...sql.matchAll(/\bCREATE\s+(?:UNIQUE\s+)?INDEX\s+(?:CONCURRENTLY\s+)?(?:IF\s+NOT\s+EXISTS\s+)?([a-z_][a-z0-9_]*)\s+ON\s+(?:ONLY\s+)?([a-z_][a-z0-9_]*)/gi)].map(
        (m): Placement => ({ migration: file, kind: 'index', name: m[1]!, table: m[2]! }),
      ),
      ...[...sql.matchAll(/\bCREATE\s+(?:OR\s+REPLACE\s+)?(?:CONSTRAINT\s+)?TRIGGER\s+([a-z_][a-z0-9_]*)[\s\S]*?\sON\s+([a-z_][a-z0-9_]*)/gi)].map(
        (m): Placement => ({ migration: file, kind: 'trigger', name: m[1]!, table: m[2]! }),
      ),
    ];
    placements.push(...found.filter((p) => ownerOf(p.table) !== owner));
  }
  return { placements, unowned };
}
