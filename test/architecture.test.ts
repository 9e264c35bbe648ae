// Guards the module boundaries: the platform at the bottom, domains that meet only through their
// face (src/<d>/index.ts, type-only) or their shapes (src/<d>/schemas.ts), one composition root
// (src/modules.ts) that wires values together, and workers that stand alone. Reading the import
// graph keeps these boundaries from eroding one convenient import at a time.
// The rules are pure functions over an edge list; reading files is kept apart so that the rules
// can be checked against a small planted graph (at the end), and a rule that can never fail shows.
import { readdirSync, readFileSync, statSync } from 'node:fs';
import { join, posix, sep } from 'node:path';
import { fileURLToPath } from 'node:url';
import ts from 'typescript';
import { describe, expect, it } from 'vitest';
import { foreignPlacements, NAMED_OWNERS, sqlUses, tableMap, trespasses, type SqlUse, type TableMap } from './helpers/sql-ownership.js';

type Edge = { from: string; to: string; typeOnly: boolean };
type EnvRead = { file: string; line: number };
type Zone = { kind: 'platform' | 'shell' | 'workers' | 'outside' } | { kind: 'domain'; domain: string };

// ---- Reading source (pure over text) ---------------------------------------------------------

type ModuleRef = { specifier: string; typeOnly: boolean };

// An empty list (`import {} from`) is not "all typed": it still loads the module.
const allTyped = (elements: readonly { isTypeOnly: boolean }[]): boolean => elements.length > 0 && elements.every((e) => e.isTypeOnly);

function importIsTypeOnly(clause: ts.ImportClause | undefined): boolean {
  if (!clause) return false; // a side-effect import runs the module
  if (clause.phaseModifier === ts.SyntaxKind.TypeKeyword) return true;
  if (clause.name) return false; // a default import is a value
  return clause.namedBindings !== undefined && ts.isNamedImports(clause.namedBindings) && allTyped(clause.namedBindings.elements);
}

function moduleRefs(fileName: string, text: string): ModuleRef[] {
  const refs: ModuleRef[] = [];
  const add = (specifier: ts.Node | undefined, typeOnly: boolean): void => {
    if (specifier && ts.isStringLiteralLike(specifier)) refs.push({ specifier: specifier.text, typeOnly });
  };
  const visit = (node: ts.Node): void => {
    if (ts.isImportDeclaration(node)) add(node.moduleSpecifier, importIsTypeOnly(node.importClause));
    else if (ts.isExportDeclaration(node)) {
      const clause = node.exportClause;
      add(node.moduleSpecifier, node.isTypeOnly || (clause !== undefined && ts.isNamedExports(clause) && allTyped(clause.elements)));
    } else if (ts.isImportEqualsDeclaration(node) && ts.isExternalModuleReference(node.moduleReference)) {
      add(node.moduleReference.expression, node.isTypeOnly);
    } else if (ts.isCallExpression(node) && node.expression.kind === ts.SyntaxKind.ImportKeyword) add(node.arguments[0], false);
    else if (ts.isImportTypeNode(node) && ts.isLiteralTypeNode(node.argument)) add(node.argument.literal, true);
    ts.forEachChild(node, visit);
  };
  visit(ts.createSourceFile(fileName, text, ts.ScriptTarget.Latest, true));
  return refs;
}

/** Where a relative specifier lands, as a repo-relative path; undefined for a package. */
function resolveSpecifier(from: string, specifier: string, isFile: (path: string) => boolean): string | undefined {
  if (!specifier.startsWith('.')) return undefined;
  const base = posix.normalize(posix.join(posix.dirname(from), specifier)).replace(/\/$/, '');
  const candidates = [base.replace(/\.js$/, '.ts'), base.replace(/\.mjs$/, '.mts'), base, `${base}.ts`, `${base}/index.ts`];
  return candidates.find(isFile) ?? base;
}

function envReads(file: string, text: string): EnvRead[] {
  const source = ts.createSourceFile(file, text, ts.ScriptTarget.Latest, true);
  const reads: EnvRead[] = [];
  // `process` or `globalThis.process`
  const isProcess = (e: ts.Node): boolean =>
    (ts.isIdentifier(e) && e.text === 'process') || (ts.isPropertyAccessExpression(e) && e.name.text === 'process');
  const namesEnv = (elements: readonly (ts.BindingElement | ts.ImportSpecifier)[]): boolean =>
    elements.some((e) => (e.propertyName ?? e.name).getText(source) === 'env');
  const visit = (node: ts.Node): void => {
    const hit =
      (ts.isPropertyAccessExpression(node) && node.name.text === 'env' && isProcess(node.expression)) ||
      (ts.isElementAccessExpression(node) && isProcess(node.expression) &&
        ts.isStringLiteralLike(node.argumentExpression) && node.argumentExpression.text === 'env') ||
      // const { env } = process
      (ts.isVariableDeclaration(node) && node.initializer !== undefined && isProcess(node.initializer) &&
        ts.isObjectBindingPattern(node.name) && namesEnv(node.name.elements)) ||
      // import { env } from 'node:process'
      (ts.isImportDeclaration(node) && ts.isStringLiteral(node.moduleSpecifier) &&
        ['process', 'node:process'].includes(node.moduleSpecifier.text) &&
        node.importClause?.namedBindings !== undefined && ts.isNamedImports(node.importClause.namedBindings) &&
        namesEnv(node.importClause.namedBindings.elements));
    if (hit) reads.push({ file, line: source.getLineAndCharacterOfPosition(node.getStart(source)).line + 1 });
    ts.forEachChild(node, visit);
  };
  visit(source);
  return reads;
}

// ---- Reading the repository (I/O) ------------------------------------------------------------

const ROOT = fileURLToPath(new URL('..', import.meta.url));
const isFile = (path: string): boolean => statSync(join(ROOT, path), { throwIfNoEntry: false })?.isFile() ?? false;

function scanRepository(): { files: string[]; edges: Edge[]; env: EnvRead[] } {
  const files = ['src', 'workers']
    .flatMap((dir) => readdirSync(join(ROOT, dir), { recursive: true, encoding: 'utf8' }).map((f) => `${dir}/${f.split(sep).join('/')}`))
    .filter((f) => f.endsWith('.ts') && isFile(f))
    .sort();
  // One edge per pair of files; it is type-only only if every reference between them is.
  const edges = new Map<string, Edge>();
  const env: EnvRead[] = [];
  for (const file of files) {
    const text = readFileSync(join(ROOT, file), 'utf8');
    env.push(...envReads(file, text));
    for (const ref of moduleRefs(file, text)) {
      const to = resolveSpecifier(file, ref.specifier, isFile);
      if (to === undefined) continue;
      const known = edges.get(`${file} ${to}`);
      edges.set(`${file} ${to}`, { from: file, to, typeOnly: ref.typeOnly && (known?.typeOnly ?? true) });
    }
  }
  return { files, edges: [...edges.values()], env };
}

// ---- The rules (pure over edges) -------------------------------------------------------------

function zoneOf(path: string): Zone {
  const parts = path.split('/');
  if (parts[0] === 'workers') return { kind: 'workers' };
  if (parts[0] !== 'src') return { kind: 'outside' };
  if (parts.length === 2 || parts[1] === 'mcp') return { kind: 'shell' };
  if (parts[1] === 'platform') return { kind: 'platform' };
  return { kind: 'domain', domain: parts[1]! };
}
const domainOf = (path: string): string | undefined => {
  const zone = zoneOf(path);
  return zone.kind === 'domain' ? zone.domain : undefined;
};
const isFace = (path: string): boolean => domainOf(path) !== undefined && path === `src/${domainOf(path)}/index.ts`;
// The two doors into a domain: its face and its shared shapes.
const isDoor = (path: string): boolean => isFace(path) || (domainOf(path) !== undefined && path === `src/${domainOf(path)}/schemas.ts`);
const COMPOSITION_AND_APP = ['src/modules.ts', 'src/app.ts', 'src/server.ts', 'src/cli.ts'];

const show = (e: Edge): string => `${e.from} -> ${e.to} (${e.typeOnly ? 'type' : 'value'})`;
const offending = (edges: Edge[], bad: (e: Edge) => boolean): string[] => [...new Set(edges.filter(bad).map(show))].sort();

/** Tarjan's strongly connected components. */
function stronglyConnected(next: Map<string, string[]>): string[][] {
  let counter = 0;
  const [index, low] = [new Map<string, number>(), new Map<string, number>()];
  const [stack, onStack, components]: [string[], Set<string>, string[][]] = [[], new Set(), []];
  const connect = (v: string): void => {
    index.set(v, counter);
    low.set(v, counter++);
    stack.push(v);
    onStack.add(v);
    for (const w of next.get(v) ?? []) {
      if (!index.has(w)) {
        connect(w);
        low.set(v, Math.min(low.get(v)!, low.get(w)!));
      } else if (onStack.has(w)) low.set(v, Math.min(low.get(v)!, index.get(w)!));
    }
    if (low.get(v) !== index.get(v)) return;
    const component: string[] = [];
    let w: string;
    do {
      w = stack.pop()!;
      onStack.delete(w);
      component.push(w);
    } while (w !== v);
    components.push(component.sort());
  };
  for (const v of [...next.keys()].sort()) if (!index.has(v)) connect(v);
  return components;
}

/** The shortest loop from `start` back to itself, to show a reader one concrete circle. */
function loopThrough(start: string, members: Set<string>, next: Map<string, string[]>): string[] {
  const previous = new Map<string, string>();
  const queue = [start];
  while (queue.length > 0) {
    const v = queue.shift()!;
    for (const w of next.get(v) ?? []) {
      if (w === start) {
        const path = [start];
        for (let at = v; at !== start; at = previous.get(at)!) path.splice(1, 0, at);
        return [...path, start];
      }
      if (members.has(w) && !previous.has(w)) {
        previous.set(w, v);
        queue.push(w);
      }
    }
  }
  return [start];
}

const rules = {
  circles(edges: Edge[]): string[] {
    const next = new Map<string, string[]>();
    for (const e of edges) next.set(e.from, [...(next.get(e.from) ?? []), e.to].sort());
    return stronglyConnected(next)
      .filter((c) => c.length > 1 || (next.get(c[0]!) ?? []).includes(c[0]!))
      .map((c) => {
        const members = new Set(c);
        const inside = offending(edges, (e) => members.has(e.from) && members.has(e.to));
        return [`circle of ${c.length}: ${c.join(', ')}`, `  e.g. ${loopThrough(c[0]!, members, next).join(' -> ')}`, ...inside.map((e) => `  ${e}`)].join('\n    ');
      })
      .sort();
  },
  platformImportsUp: (edges: Edge[]): string[] =>
    offending(edges, (e) => zoneOf(e.from).kind === 'platform' &&
      (zoneOf(e.to).kind === 'domain' || (zoneOf(e.to).kind === 'shell' && e.to !== 'src/config.ts'))),
  domainReachesPastFace: (edges: Edge[]): string[] =>
    offending(edges, (e) => domainOf(e.from) !== undefined && domainOf(e.to) !== undefined && domainOf(e.from) !== domainOf(e.to) && !isDoor(e.to)),
  // The app-level files (app.ts, server.ts, cli.ts, the MCP adapter, the root itself) are
  // adapters over the domains as the routes are, and get the same doors.
  shellReachesPastFace: (edges: Edge[]): string[] =>
    offending(edges, (e) => zoneOf(e.from).kind === 'shell' && domainOf(e.to) !== undefined && !isDoor(e.to)),
  domainValueImportsFace: (edges: Edge[]): string[] =>
    offending(edges, (e) => !e.typeOnly && isFace(e.to) && domainOf(e.from) !== undefined && domainOf(e.from) !== domainOf(e.to)),
  faceValueImportedOutsideRoot: (edges: Edge[]): string[] =>
    offending(edges, (e) => !e.typeOnly && isFace(e.to) && e.from !== 'src/modules.ts'),
  lowerImportsRootOrApp: (edges: Edge[]): string[] =>
    offending(edges, (e) => {
      const from = zoneOf(e.from).kind;
      return ((from === 'domain' || from === 'platform') && COMPOSITION_AND_APP.includes(e.to)) ||
        (from === 'domain' && zoneOf(e.to).kind === 'shell' && e.to !== 'src/config.ts');
    }),
  workersImportSrc: (edges: Edge[]): string[] =>
    offending(edges, (e) => zoneOf(e.from).kind === 'workers' && e.to.startsWith('src/')),
} satisfies Record<string, (edges: Edge[]) => string[]>;

const envOutsideConfig = (reads: EnvRead[]): string[] =>
  [...new Set(reads.filter((r) => r.file.startsWith('src/') && r.file !== 'src/config.ts').map((r) => `${r.file}:${r.line} reads process.env`))].sort();

function expectNone(offenders: string[], rule: string): void {
  expect(offenders.length, `${rule}; ${offenders.length} offender(s):\n    ${offenders.join('\n    ')}\n`).toBe(0);
}

// ---- The specification ----------------------------------------------------------------------

describe('module architecture', () => {
  const { files, edges, env } = scanRepository();

  it('reads every source file and finds its imports', () => {
    expect(files).toContain('src/app.ts');
    expect(files.some((f) => f.startsWith('workers/'))).toBe(true);
    expect(edges.filter((e) => e.from === 'src/app.ts').length).toBeGreaterThan(0);
  });
  it('has no import circle, type imports included', () => expectNone(rules.circles(edges), 'import circles'));
  it('keeps the platform below everything but src/config.ts', () =>
    expectNone(rules.platformImportsUp(edges), 'the platform imports a domain or the shell'));
  it('lets a domain reach another only through its face or its schemas', () =>
    expectNone(rules.domainReachesPastFace(edges), "a domain imports another domain's internals"));
  it('lets the app-level files (app, server, CLI, MCP, the root) reach a domain only through its face or its schemas', () =>
    expectNone(rules.shellReachesPastFace(edges), "an app-level file imports a domain's internals"));
  it("imports another domain's face for types only", () =>
    expectNone(rules.domainValueImportsFace(edges), "a domain value-imports another domain's face"));
  it('leaves value imports of a face to the composition root', () =>
    expectNone(rules.faceValueImportedOutsideRoot(edges), 'a face is value-imported outside src/modules.ts'));
  it('keeps domains and the platform from importing the composition root, the app or MCP (domains may read src/config.ts)', () =>
    expectNone(rules.lowerImportsRootOrApp(edges), 'a domain or the platform imports the root, the app or MCP'));
  it('keeps workers free of src/', () => expectNone(rules.workersImportSrc(edges), 'workers import src/'));
  it('reads process.env only in src/config.ts', () => expectNone(envOutsideConfig(env), 'process.env outside src/config.ts'));
});

// ---- Who owns each table (issue 36) ---------------------------------------------------------

/**
 * SQL that names another owner's table today. The list can only shrink: a new trespass fails the
 * test, and so does an entry that no longer occurs (take it off). Empty since issue 36: keep it so.
 */
const KNOWN_TRESPASSES: readonly string[] = [];

function readTables(files: readonly string[]): { map: TableMap; uses: SqlUse[] } {
  const migrations = readdirSync(join(ROOT, 'migrations'))
    .filter((f) => f.endsWith('.sql'))
    .sort()
    .map((f) => ({ file: `migrations/${f}`, text: readFileSync(join(ROOT, 'migrations', f), 'utf8') }));
  const map = tableMap(migrations);
  const tables = new Set(map.owners.keys());
  return { map, uses: files.flatMap((f) => sqlUses(f, readFileSync(join(ROOT, f), 'utf8'), tables)) };
}

describe('table ownership', () => {
  const { files } = scanRepository();
  const { map, uses } = readTables(files);
  const domains = new Set(files.flatMap((f) => (domainOf(f) ? [domainOf(f)!] : [])));

  it('finds every table of the migrations and an owner for each, a domain of src/', () => {
    expect(map.owners.size).toBeGreaterThan(30);
    expect(map.owners.get('memories')).toBe('memory');
    expect(map.owners.get('behavior_mining_queue')).toBe('behavior');
    expect(map.owners.has('event_clocks'), 'a dropped table is gone').toBe(false);
    const unowned = [...map.owners].filter(([, owner]) => owner === undefined || !domains.has(owner)).map(([t, owner]) => `${t} -> ${owner ?? '?'}`);
    expectNone(unowned, 'tables without an owning domain (name them in NAMED_OWNERS or give them their domain\'s prefix)');
    for (const owner of Object.values(NAMED_OWNERS)) expect(domains.has(owner), owner).toBe(true);
  });
  it('finds SQL in the source', () => {
    expect(uses.filter((u) => u.table === 'memories' && u.file.startsWith('src/memory/')).length).toBeGreaterThan(20);
  });
  it("keeps each domain's SQL on its own tables and other owners' read views; the known trespasses only shrink", () => {
    const found = trespasses(uses, map, domainOf);
    expectNone(found.filter((t) => !KNOWN_TRESPASSES.includes(t)), "SQL names another owner's table (read it through the owner's api or a read view it publishes)");
    expectNone(KNOWN_TRESPASSES.filter((t) => !found.includes(t)), 'known trespasses that no longer occur: take them off KNOWN_TRESPASSES');
  });
});

/** Migrations that create no table of one owner, and whose they are ('shared': a schema-wide change). */
const MIGRATION_OWNERS: Record<string, string> = {
  'migrations/0003_memory_core.sql': 'memory',
  'migrations/0004_typed_events_alerts.sql': 'shared',
  'migrations/0005_memories_inline_rows.sql': 'memory',
  'migrations/0009_embed_claims.sql': 'memory',
  'migrations/0013_project_keys.sql': 'shared',
  'migrations/0015_concurrent_writes.sql': 'shared',
  'migrations/0018_word_statistics_slots.sql': 'memory',
  'migrations/0025_read_views.sql': 'shared',
  'migrations/0026_drop_unread_views.sql': 'shared',
  'migrations/0027_citus_triggers.sql': 'shared',
};

/** Indexes and triggers a domain keeps on another owner's table, each with the reason it is there. */
const DECLARED_PLACEMENTS: Record<string, string> = {
  'index memories_activity on memories': "behaviour's activity scan (the predicate of activity/store.ts ACTIVITY_MEMORY)",
  'index events_activity on events': "behaviour's activity scan of the event log (the engine's own event types left out)",
  'index memories_pattern_key on memories': 'mined patterns are keyed memories: the miner finds a subject\'s by key',
  'index memories_pattern_next on memories': "the pattern monitor's overdue scan",
  'trigger behavior_patterns_source_delete on memories': 'a pattern loses a deleted source memory in the same transaction',
  'trigger behavior_enqueue_memories on memories': 'mining is crash-safe: an activity memory queues its subject in the writing transaction',
  'trigger behavior_enqueue_events on events': 'the same for an event',
  'trigger behavior_enqueue_observations on typed_observations': 'the same for a typed observation',
  'index memories_project_id_id on memories': "the key graph_mentions' foreign key names",
  'index memories_sources on memories': "compliance finds the memories derived from a subject's (their sourceMemoryIds)",
};

describe('indexes and triggers on another owner\'s table', () => {
  const migrations = readdirSync(join(ROOT, 'migrations'))
    .filter((f) => f.endsWith('.sql'))
    .sort()
    .map((f) => ({ file: `migrations/${f}`, text: readFileSync(join(ROOT, 'migrations', f), 'utf8') }));
  const { placements, unowned } = foreignPlacements(migrations, MIGRATION_OWNERS);
  const found = [...new Set(placements.map((p) => `${p.kind} ${p.name} on ${p.table}`))].sort();

  it('knows whose each migration is', () => expectNone(unowned, 'migrations creating no table of one owner, not in MIGRATION_OWNERS'));
  it('finds each declared, with its reason, and nothing else', () => {
    expectNone(found.filter((f) => !(f in DECLARED_PLACEMENTS)), "an index or trigger on another owner's table (declare it, with the reason, or move it to the owner)");
    expectNone(Object.keys(DECLARED_PLACEMENTS).filter((d) => !found.includes(d)), 'declared placements that no migration makes any more');
  });
  it('reads placements from planted migrations', () => {
    const planted = foreignPlacements(
      [
        { file: 'a.sql', text: 'CREATE TABLE behavior_x (id text);\nCREATE INDEX behavior_x_id ON behavior_x (id);\nCREATE INDEX memories_b ON memories (id);\nCREATE TRIGGER t AFTER INSERT ON events FOR EACH ROW EXECUTE FUNCTION f();' },
        { file: 'b.sql', text: 'CREATE INDEX memories_c ON memories (id);' },
        { file: 'c.sql', text: 'CREATE INDEX events_d ON events (id);' },
      ],
      { 'c.sql': 'shared' },
    );
    expect(planted.placements.map((p) => `${p.migration} ${p.kind} ${p.name} ${p.table}`)).toEqual(['a.sql index memories_b memories', 'a.sql trigger t events']);
    expect(planted.unowned).toEqual(['b.sql']);
  });
});

describe('table ownership rules, on planted code', () => {
  const map = tableMap([
    { file: '0001.sql', text: 'CREATE TABLE memories (id text);\nCREATE TABLE alpha_items (id text); -- CREATE TABLE commented_out (x int)\nCREATE TABLE alpha_gone (id text);' },
    { file: '0002.sql', text: 'CREATE VIEW alpha_items_read AS SELECT id FROM alpha_items;\nDROP TABLE IF EXISTS alpha_gone;\nCREATE TABLE mystery (id text);' },
  ], (name) => (name === 'memories' ? 'memory' : name.startsWith('alpha_') ? 'alpha' : undefined));
  const owner = (f: string) => /^src\/([^/]+)\//.exec(f)?.[1];
  const check = (file: string, code: string) => trespasses(sqlUses(file, code, new Set(map.owners.keys())), map, (f) => (owner(f) === 'platform' ? undefined : owner(f)));

  it('reads owners from names, views from CREATE VIEW, and forgets dropped tables', () => {
    expect([...map.owners]).toEqual([
      ['memories', 'memory'],
      ['alpha_items', 'alpha'],
      ['mystery', undefined],
      ['alpha_items_read', 'alpha'],
    ]);
    expect([...map.views]).toEqual(['alpha_items_read']);
  });
  it("passes a domain's SQL on its own tables, and reads of another's view", () => {
    expect(check('src/alpha/store.ts', "db.query('SELECT id FROM alpha_items WHERE id = $1'); db.query(`DELETE FROM alpha_items WHERE id = ${x}`)")).toEqual([]);
    expect(check('src/beta/store.ts', "db.query('SELECT r.id FROM alpha_items_read r')")).toEqual([]);
    // Words in prose and lower-case SQL-like text are not statements.
    expect(check('src/beta/store.ts', "throw new Error('nothing from alpha_items here'); const s = 'select * from memories'")).toEqual([]);
  });
  it('catches reads, locks, writes and alterations of another owner\'s table, and SQL in the platform', () => {
    expect(check('src/beta/store.ts', "db.query('SELECT m.id FROM memories m JOIN alpha_items a ON a.id = m.id')")).toEqual([
      "src/beta/store.ts: read alpha_items (alpha's)",
      "src/beta/store.ts: read memories (memory's)",
    ]);
    expect(check('src/beta/store.ts', "db.query('SELECT id FROM memories WHERE id = $1 FOR UPDATE')")).toEqual(["src/beta/store.ts: lock memories (memory's)"]);
    expect(check('src/beta/store.ts', "db.query(`UPDATE memories SET x = 1 WHERE project_id = ${p}`)")).toEqual(["src/beta/store.ts: write memories (memory's)"]);
    expect(check('src/beta/store.ts', "db.query('INSERT INTO alpha_items (id) VALUES ($1) ON CONFLICT (id) DO UPDATE SET id = EXCLUDED.id')")).toEqual(["src/beta/store.ts: write alpha_items (alpha's)"]);
    expect(check('src/beta/store.ts', "tx.exec('ALTER TABLE memories ALTER COLUMN embedding SET STORAGE MAIN'); tx.exec('CREATE INDEX m_idx ON memories USING hnsw (e)')")).toEqual([
      "src/beta/store.ts: alter memories (memory's)",
    ]);
    expect(check('src/alpha/store.ts', "db.query('DELETE FROM memories WHERE id = $1')")).toEqual(["src/alpha/store.ts: write memories (memory's)"]);
    expect(check('src/platform/maintenance.ts', "db.query('SELECT count(*) FROM alpha_items')")).toEqual(["src/platform/maintenance.ts: read alpha_items (alpha's)"]);
    expect(check('src/beta/store.ts', "db.query('SELECT id FROM mystery')")).toEqual(["src/beta/store.ts: read mystery (no owner's)"]);
  });
  it("catches another owner's table named to SQL built from parts, in a file with SQL", () => {
    const built = "const from = (t: string, a: string) => `s JOIN ${t} ${a} ON true`;\n";
    expect(check('src/beta/store.ts', built + "db.query(`SELECT x FROM ${from('memories', 'm')}`)")).toEqual(["src/beta/store.ts: read memories (memory's)"]);
    expect(check('src/beta/store.ts', "export const ROWS = { from: 'alpha_items', where: 'project_id = $1' };\ndb.query('SELECT 1 FROM beta_x')")).toEqual(["src/beta/store.ts: read alpha_items (alpha's)"]);
    // Its own table, a published view, or the word in a file without SQL (a section's name) pass.
    expect(check('src/alpha/store.ts', "export const ROWS = { from: 'alpha_items' };\ndb.query('SELECT 1 FROM alpha_items')")).toEqual([]);
    expect(check('src/beta/store.ts', built + "db.query(`SELECT x FROM ${from('alpha_items_read', 'a')}`)")).toEqual([]);
    expect(check('src/beta/context.ts', "if (include.has('memories')) take('memories');")).toEqual([]);
  });
});

describe('architecture rules, on a planted graph', () => {
  const edge = (from: string, to: string, typeOnly = false): Edge => ({ from, to, typeOnly });
  const clean: Edge[] = [
    edge('src/platform/db.ts', 'src/config.ts'),
    edge('src/platform/pool.ts', 'workers/tasks.ts', true),
    edge('src/alpha/service.ts', 'src/platform/db.ts'),
    edge('src/alpha/index.ts', 'src/alpha/service.ts'),
    edge('src/beta/search/rank.ts', 'src/alpha/index.ts', true),
    edge('src/beta/search/rank.ts', 'src/alpha/schemas.ts'),
    edge('src/modules.ts', 'src/alpha/index.ts'),
    edge('src/modules.ts', 'src/beta/index.ts'),
    edge('src/mcp/tools.ts', 'src/alpha/index.ts', true),
    edge('src/app.ts', 'src/modules.ts'),
    edge('workers/index.ts', 'workers/tasks.ts'),
  ];
  const planted = (rule: (edges: Edge[]) => string[], ...bad: Edge[]): string[] => rule([...clean, ...bad]);

  it('passes a clean graph on every rule', () => {
    for (const [name, rule] of Object.entries(rules)) expect(rule(clean), name).toEqual([]);
  });
  it('finds a circle made of type imports, and a self-import', () => {
    expect(planted(rules.circles, edge('src/alpha/index.ts', 'src/beta/search/rank.ts', true))).toEqual([
      [
        'circle of 2: src/alpha/index.ts, src/beta/search/rank.ts',
        '  e.g. src/alpha/index.ts -> src/beta/search/rank.ts -> src/alpha/index.ts',
        '  src/alpha/index.ts -> src/beta/search/rank.ts (type)',
        '  src/beta/search/rank.ts -> src/alpha/index.ts (type)',
      ].join('\n    '),
    ]);
    expect(planted(rules.circles, edge('src/app.ts', 'src/app.ts'))).toHaveLength(1);
  });
  it('catches each kind of boundary crossing', () => {
    expect(planted(rules.platformImportsUp, edge('src/platform/db.ts', 'src/alpha/service.ts', true), edge('src/platform/db.ts', 'src/jobs.ts'))).toHaveLength(2);
    expect(planted(rules.domainReachesPastFace, edge('src/beta/search/rank.ts', 'src/alpha/store.ts', true))).toEqual([
      'src/beta/search/rank.ts -> src/alpha/store.ts (type)',
    ]);
    expect(planted(rules.shellReachesPastFace, edge('src/mcp/tools.ts', 'src/alpha/search/routes.ts'), edge('src/cli.ts', 'src/alpha/service.ts', true))).toHaveLength(2);
    expect(planted(rules.domainValueImportsFace, edge('src/beta/service.ts', 'src/alpha/index.ts'))).toHaveLength(1);
    expect(planted(rules.faceValueImportedOutsideRoot, edge('src/app.ts', 'src/alpha/index.ts'), edge('src/alpha/service.ts', 'src/alpha/index.ts'))).toHaveLength(2);
    expect(planted(rules.lowerImportsRootOrApp, edge('src/alpha/service.ts', 'src/modules.ts', true), edge('src/alpha/service.ts', 'src/mcp/tools.ts', true), edge('src/platform/db.ts', 'src/cli.ts'), edge('src/alpha/service.ts', 'src/jobs.ts', true))).toHaveLength(4);
    expect(planted(rules.lowerImportsRootOrApp, edge('src/alpha/service.ts', 'src/config.ts', true))).toEqual([]);
    expect(planted(rules.workersImportSrc, edge('workers/embed.ts', 'src/platform/ids.ts', true))).toHaveLength(1);
  });
  it('tells type-only references from value ones, in every import form', () => {
    const source = [
      "import type { A } from './a.js';", "import { type B, type C } from './b.js';", "import { type D, e } from './c.js';",
      "import './d.js';", "import * as ns from './e.js';", "import f from './f.js';", "export type { G } from './g.js';",
      "export * from './h.js';", "export { type I } from './i.js';", "import j = require('./j.js');",
      "const k = await import('./k.js');", "type L = import('./l.js').L;", "import { m } from 'package';",
    ].join('\n');
    const refs = moduleRefs('src/x/y.ts', source).map((r) => `${r.specifier} ${r.typeOnly ? 'type' : 'value'}`);
    expect(refs).toEqual([
      './a.js type', './b.js type', './c.js value', './d.js value', './e.js value', './f.js value', './g.js type',
      './h.js value', './i.js type', './j.js value', './k.js value', './l.js type', 'package value',
    ]);
  });
  it('resolves .js to .ts and a directory to its index.ts', () => {
    const present = new Set(['src/alpha/store.ts', 'src/alpha/index.ts']);
    const has = (p: string): boolean => present.has(p);
    expect(resolveSpecifier('src/beta/x.ts', '../alpha/store.js', has)).toBe('src/alpha/store.ts');
    expect(resolveSpecifier('src/beta/x.ts', '../alpha', has)).toBe('src/alpha/index.ts');
    expect(resolveSpecifier('src/beta/x.ts', '../alpha/index.js', has)).toBe('src/alpha/index.ts');
    expect(resolveSpecifier('src/beta/x.ts', 'typebox', has)).toBeUndefined();
  });
  it('finds process.env in code but not in comments or strings, and only outside src/config.ts', () => {
    const reads = envReads('src/alpha/x.ts', "// process.env.A\nconst s = 'process.env';\nconst a = process.env.A;\nconst { env } = process;\nconst b = globalThis.process['env'];");
    expect(reads.map((r) => r.line)).toEqual([3, 4, 5]);
    expect(envOutsideConfig([...reads, { file: 'src/config.ts', line: 1 }, { file: 'workers/embed.ts', line: 1 }])).toEqual([
      'src/alpha/x.ts:3 reads process.env', 'src/alpha/x.ts:4 reads process.env', 'src/alpha/x.ts:5 reads process.env',
    ]);
  });
});

// ---- The guide and the manual (issue 36) ----------------------------------------------------

describe('the README and docs/', () => {
  const { files } = scanRepository();
  const domains = [...new Set(files.flatMap((f) => (domainOf(f) ? [domainOf(f)!] : [])))].sort();
  const read = (path: string): string => readFileSync(join(ROOT, path), 'utf8');
  const unnamed = (text: string): string[] => domains.map((d) => `src/${d}/`).filter((folder) => !text.includes(folder));

  it('names every domain folder of src/ in docs/architecture.md', () => {
    expect(domains).toContain('memory');
    expectNone(unnamed(read('docs/architecture.md')), 'domain folders docs/architecture.md does not name (add them to its table of domains)');
  });
  it('gives every domain folder of src/ a page in the API index, docs/api/README.md', () => {
    expectNone(unnamed(read('docs/api/README.md')), 'domain folders the API index does not name (give each a page under docs/api/)');
  });
  it('keeps the README a guide of at most 250 lines', () => {
    const lines = read('README.md').split('\n');
    // The file's last newline ends its last line; it does not begin another.
    expect(lines.at(-1) === '' ? lines.length - 1 : lines.length).toBeLessThanOrEqual(250);
  });
});
