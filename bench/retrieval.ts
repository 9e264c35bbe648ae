// Retrieval benchmark. Measures how well memory search finds the evidence of a question in a long
// conversation, on every development set in one run: BEAM 100K and BEAM 500K (public multi-session
// chats between a user and an assistant, with probing questions whose evidence is given as message
// ids) and RealMem (ten simulated users talking with an assistant over 135 to 276 dated sessions,
// with questions asked inside a later session and evidence given as sessions and, mostly, turns).
// Each set goes into its own project (retrieval-<set>) of one Lattice context: every message or
// turn is saved as a memory of its conversation's subject ("<role>: <text>", sessionKey its session,
// validFrom its time), everything is embedded, then each question with evidence is searched within
// its subject (limit 10). RealMem questions see only the sessions before the one that asks (asOf one
// millisecond before its first turn; validFrom increases through each conversation in file order).
// A question counts as found at k at turn level when a hit of the top k holds an evidence turn
// (questions that label evidence turns only), at session level when a hit holds a turn of an
// evidence session. Systems, in the same run: two in-memory baselines over the same texts (Okapi
// BM25 with Porter stemming, the reference, and without), and Lattice whole, its lexical leg
// alone, its vector leg alone and one row without each other part SearchFeatures can turn off
// (ABLATIONS below). Prints to stdout per set: recall@1/5/10 and MRR@10 at turn and session level,
// turn recall@10 against Porter BM25 and search latency per system and backend, recall@10 per
// question category; then recall@10 per system across the sets. Progress goes to stderr.
//
// The data is never committed (BEAM states no licence; RealMem is 19 MB): build it as
// /work/shared/devsets/README.md says (beam.py writes /tmp/beam/out/beam_100K.json and
// beam_500K.json, realmem.py /tmp/realmem/realmem.json), then, after a build (the pool loads
// dist/workers/index.js):
//   npm run build && npx tsx bench/retrieval.ts                  # or: npm run bench:retrieval
//   BENCH_SKIP_PGLITE=1 DATABASE_URL=postgres://postgres@127.0.0.1:5432/postgres REDIS_URL=redis://127.0.0.1:6379 npx tsx bench/retrieval.ts
// Settings: BENCH_SETS (a comma list of beam100k, beam500k, realmem; default every one whose file
// exists), BENCH_BEAM_100K, BENCH_BEAM_500K, BENCH_REALMEM (the files; defaults the paths above;
// BENCH_BEAM is still read as BENCH_BEAM_100K), BENCH_CONVERSATIONS (the first N conversations of
// each set only), BENCH_QUESTIONS (the first N questions with evidence of each set only),
// BENCH_MAIN_ONLY=1 (the product row alone), BENCH_UPDATES (the update pairs of
// retrieval/update-pairs.ts, facts that change: 1 by default, 0 not, "only" without the sets), BENCH_DUMP (a file: each question's top 50 hits with their score
// parts, for bench/retrieval/tune.ts), BENCH_SKIP_PGLITE=1 (Postgres only), BENCH_DATABASE (a database on DATABASE_URL's server kept
// between runs: the second run finds the sets saved and embedded, and only searches), DATABASE_URL (a throwaway lattice_bench_* database on that
// server), REDIS_URL (BullMQ under a throwaway prefix). Service settings (SEARCH_EXACT_SCAN_MAX_ROWS,
// POOL_MAX_THREADS, ...) are read as the service reads them.
import { existsSync } from 'node:fs';
import { appendFile } from 'node:fs/promises';
import { cpus } from 'node:os';
import { performance } from 'node:perf_hooks';
import type { SaveInput, SearchFeatures, SearchInput } from '../src/memory/index.js';
import { RANKING } from '../src/memory/search/ranking.js';
import type { Lattice } from '../src/modules.js';
import { createLogger } from '../src/platform/logger.js';
import { B, Bm25, K1, plainTokens, porterTokens, STOPWORDS, type Tokenizer } from './retrieval/bm25.js';
import { baselineUpdatePairs, printUpdatePairs, runUpdatePairs, type UpdateRow } from './retrieval/update-pairs.js';
import { loadBeam, loadRealMem, MAX_CONTENT, type DevSet, type Limits, type Question, type SetKey, type Turn } from './retrieval/data.js';
import { configFor, markdownTable, ms, optionalInt, progress, runBench, sleep, summarise, withPgliteContext, withPostgresContext, type Summary } from './support.js';

const SEARCH_LIMIT = 10;
const SAVE_BATCH = 500;
const EMBED_PROGRESS_MS = 5_000;
const LIMITS: Limits = { conversations: optionalInt('BENCH_CONVERSATIONS'), questions: optionalInt('BENCH_QUESTIONS') };

const log = createLogger('warn');

// ---------------------------------------------------------------------------------------------
// The sets

const SETS: Record<SetKey, { path: string; env: string; load: (path: string) => Promise<DevSet> }> = {
  beam100k: {
    path: process.env.BENCH_BEAM_100K || process.env.BENCH_BEAM || '/tmp/beam/out/beam_100K.json',
    env: 'BENCH_BEAM_100K',
    load: (path) => loadBeam('beam100k', path, LIMITS),
  },
  beam500k: { path: process.env.BENCH_BEAM_500K || '/tmp/beam/out/beam_500K.json', env: 'BENCH_BEAM_500K', load: (path) => loadBeam('beam500k', path, LIMITS) },
  realmem: { path: process.env.BENCH_REALMEM || '/tmp/realmem/realmem.json', env: 'BENCH_REALMEM', load: (path) => loadRealMem(path, LIMITS) },
};
const isSetKey = (key: string): key is SetKey => Object.hasOwn(SETS, key);

const BUILD_HELP =
  'The data files are never committed; build them (see /work/shared/devsets/README.md):\n' +
  '  BEAM: fetch github:mohammadtavakoli78/BEAM (a bare git directory GITDIR), then\n' +
  '    mkdir -p /tmp/beam && git --git-dir=GITDIR archive HEAD chats | tar -x -C /tmp/beam\n' +
  '    python3 /work/shared/devsets/beam.py /tmp/beam /tmp/beam/out    # beam_100K.json, beam_500K.json\n' +
  '  RealMem: fetch github:AvatarMemory/RealMemBench (GITDIR), then\n' +
  '    python3 /work/shared/devsets/realmem.py GITDIR /tmp/realmem/realmem.json\n' +
  'and point BENCH_BEAM_100K, BENCH_BEAM_500K and BENCH_REALMEM at the files if they are elsewhere.\n';

/** BENCH_SETS, or every set whose file exists; a named set whose file is missing is an error. */
function selectedSets(): SetKey[] {
  const named = process.env.BENCH_SETS?.split(',').map((s) => s.trim().toLowerCase()).filter(Boolean);
  if (named && named.length > 0) {
    const unknown = named.filter((key) => !isSetKey(key));
    if (unknown.length > 0) throw new Error(`BENCH_SETS: unknown set(s) ${unknown.join(', ')}; the sets are ${Object.keys(SETS).join(', ')}`);
    const keys = [...new Set(named as SetKey[])];
    const missing = keys.filter((key) => !existsSync(SETS[key].path));
    if (missing.length > 0) {
      process.stderr.write(`Missing: ${missing.map((key) => `${key} (${SETS[key].path}, ${SETS[key].env})`).join(', ')}.\n${BUILD_HELP}`);
      process.exit(1);
    }
    return keys;
  }
  const keys = (Object.keys(SETS) as SetKey[]).filter((key) => existsSync(SETS[key].path));
  for (const key of Object.keys(SETS) as SetKey[]) if (!keys.includes(key)) progress(`${key}: ${SETS[key].path} does not exist, skipping it (${SETS[key].env})`);
  if (keys.length === 0) {
    process.stderr.write(`None of the data files exists.\n${BUILD_HELP}`);
    process.exit(1);
  }
  return keys;
}

// ---------------------------------------------------------------------------------------------
// The systems

/** The in-memory baselines; the first is the reference every ratio is taken against. */
const BASELINES: readonly { name: string; tokens: Tokenizer }[] = [
  { name: 'Porter BM25', tokens: porterTokens },
  { name: 'BM25, unstemmed', tokens: plainTokens },
];
const REFERENCE = BASELINES[0]!.name;

/** The boolean keys of SearchFeatures. */
type FeatureSwitch = { [K in keyof SearchFeatures]-?: SearchFeatures[K] extends boolean ? K : never }[keyof SearchFeatures];
/** The parts of retrieval other than the two legs. */
type Part = Exclude<FeatureSwitch, 'vector' | 'lexical'>;

/**
 * One line per part SearchFeatures can turn off besides the two legs (none yet), saying what the
 * row "Lattice without <part>" leaves out. The type asks for every such key: when SearchFeatures
 * gains one, the compiler points here until its line is added, and the row follows from it.
 */
const ABLATIONS: Record<Part, string> = {
  neighbours: 'the words of the turns beside a memory in its session',
  newerFirst: 'a newer value of the same fact ranked above the older',
  time: 'the span of time the question names',
  names: 'the names the question gives, matched in the memories',
  relatedForms: 'related forms of the question\'s words ("allergic" for "allergies")',
};

interface LatticeSystem {
  name: string;
  features: Partial<SearchFeatures>;
}

/** Lattice's rows: the first is the product as it stands (two search passes, for the latency), the others one pass each. */
const LATTICE_SYSTEMS: readonly LatticeSystem[] = [
  { name: 'Lattice', features: {} },
  { name: 'Lattice, lexical leg alone', features: { vector: false } },
  { name: 'Lattice, vector leg alone', features: { lexical: false } },
  ...(Object.keys(ABLATIONS) as Part[]).map((part): LatticeSystem => ({ name: `Lattice without ${part}`, features: { [part]: false } })),
  // Every part off at once: its latency against the first row's cached-vector retrieval is what the parts cost together.
  { name: 'Lattice, two legs and no part', features: Object.fromEntries(Object.keys(ABLATIONS).map((part) => [part, false])) as Partial<SearchFeatures> },
];

// ---------------------------------------------------------------------------------------------
// Scoring

/** 1-based ranks of the first hit holding an evidence turn and of the first holding a turn of an evidence session; null when none does. */
interface Ranks {
  /** Undefined when the question labels no evidence turn. */
  turn?: number | null;
  session: number | null;
}

/** Each hit as the turns it holds that the question may see. */
function ranksOf(hits: readonly (readonly Turn[])[], q: Question): Ranks {
  const first = (found: (turn: Turn) => boolean) => {
    const index = hits.findIndex((turns) => turns.some(found));
    return index < 0 ? null : index + 1;
  };
  return {
    turn: q.evidence.size > 0 ? first((t) => q.evidence.has(t.id)) : undefined,
    session: first((t) => q.evidenceSessions.has(t.session)),
  };
}

interface Quality {
  n: number;
  r1: number;
  r5: number;
  r10: number;
  mrr: number;
}

function quality(ranks: readonly (number | null)[]): Quality {
  const share = (k: number) => ranks.filter((r) => r !== null && r <= k).length / Math.max(1, ranks.length);
  const mrr = ranks.reduce<number>((sum, r) => sum + (r !== null && r <= SEARCH_LIMIT ? 1 / r : 0), 0) / Math.max(1, ranks.length);
  return { n: ranks.length, r1: share(1), r5: share(5), r10: share(10), mrr };
}

type Level = 'turn' | 'session';

interface SystemRun {
  system: string;
  backend: string;
  /** By qid. */
  ranks: Map<string, Ranks>;
  /** Hits that hold no turn the question may see (a turn of the asking session or later): must be 0. */
  leaks: number;
  search?: Summary;
  retrieval?: Summary;
}

function levelQuality(run: SystemRun, questions: readonly Question[], level: Level): Quality {
  const ranks: (number | null)[] = [];
  for (const q of questions) {
    const r = run.ranks.get(q.qid);
    const rank = level === 'turn' ? r?.turn : r?.session;
    if (level === 'turn' && q.evidence.size === 0) continue;
    ranks.push(rank ?? null);
  }
  return quality(ranks);
}

// ---------------------------------------------------------------------------------------------
// The baselines

function runBaseline(set: DevSet, baseline: (typeof BASELINES)[number]): SystemRun {
  const indexes = new Map(set.conversations.map((c) => [c.id, new Bm25(c.turns.map((t) => baseline.tokens(t.text)))]));
  const ranks = new Map<string, Ranks>();
  let leaks = 0;
  for (const q of set.questions) {
    // Only the turns the question may see, with their own statistics (RealMem: the sessions before the asking one).
    const top = indexes.get(q.conversation.id)!.top(baseline.tokens(q.text), SEARCH_LIMIT, q.visible);
    leaks += top.filter((doc) => doc >= q.visible).length;
    ranks.set(q.qid, ranksOf(top.map((doc) => [q.conversation.turns[doc]!]), q));
  }
  return { system: baseline.name, backend: 'in the bench', ranks, leaks };
}

// ---------------------------------------------------------------------------------------------
// Lattice

const seconds = (elapsedMs: number) => `${(elapsedMs / 1000).toFixed(1)} s`;
const thousands = (n: number) => Math.round(n).toLocaleString('en-US');

async function runLattice(ctx: Lattice, setup: string, set: DevSet, notes: string[]): Promise<SystemRun[]> {
  const { memory } = ctx.apis;
  const project = `retrieval-${set.key}`;
  const tag = `[${setup}, ${set.key}]`;
  // On a kept database (BENCH_DATABASE) the project is there from an earlier run: saving again
  // answers the memories saved then (replays), and nothing is embedded again.
  const { rowCount } = await ctx.runtime.db.query('SELECT 1 FROM projects WHERE id = $1', [project]);
  if (rowCount === 0) await ctx.apis.tenancy.createProject(project, { plan: 'enterprise' });

  // 1. Save. A turn repeating an earlier one of its conversation is answered the existing memory.
  const pending = set.conversations.flatMap((conversation) =>
    conversation.turns.map((turn) => ({
      turn,
      input: {
        content: turn.text,
        type: 'fact',
        scope: 'project',
        subject: { kind: 'conversation', externalId: conversation.id },
        sessionKey: turn.session,
        validFrom: turn.validFrom,
      } satisfies SaveInput,
    })),
  );
  const turnsOf = new Map<string, Turn[]>();
  let merged = 0;
  const saveStart = performance.now();
  for (let i = 0; i < pending.length; i += SAVE_BATCH) {
    const batch = pending.slice(i, i + SAVE_BATCH);
    const results = await memory.saveMany(project, batch.map((p) => p.input));
    results.forEach(({ memory: saved, created }, j) => {
      if (!created) merged++;
      const turns = turnsOf.get(saved.id);
      if (turns) turns.push(batch[j]!.turn);
      else turnsOf.set(saved.id, [batch[j]!.turn]);
    });
    progress(`${tag} saving ${thousands(i + batch.length)}/${thousands(pending.length)} turns`);
  }
  const saveMs = performance.now() - saveStart;

  // 2. Embed everything before searching: the writes scheduled embedding jobs, so wait for them
  // (a backfill call beside them would embed the same rows twice).
  const embedStart = performance.now();
  for (;;) {
    const { embedding } = await memory.stats(project);
    progress(`${tag} embedding ${thousands(embedding.embedded)}/${thousands(embedding.total)} (${seconds(performance.now() - embedStart)})`);
    if (embedding.embedded === embedding.total) break;
    await sleep(EMBED_PROGRESS_MS);
  }
  const embedMs = performance.now() - embedStart;

  // 3. Search, system by system. The first (Lattice as it stands) searches twice: the first pass
  // embeds each query (whole search), the second finds its vector cached; the others search once,
  // after it, so their query vectors are cached too.
  const runs: SystemRun[] = [];
  let shortLists = 0;
  let changed = 0;
  const searchStart = performance.now();
  for (const [s, system] of (process.env.BENCH_MAIN_ONLY === '1' ? LATTICE_SYSTEMS.slice(0, 1) : LATTICE_SYSTEMS).entries()) {
    const passes = s === 0 ? 2 : 1;
    const ranks = Array.from({ length: passes }, () => new Map<string, Ranks>());
    const samples = Array.from({ length: passes }, (): number[] => []);
    let leaks = 0;
    for (let pass = 0; pass < passes; pass++) {
      for (const [i, q] of set.questions.entries()) {
        const input: SearchInput = { query: q.text, subject: { kind: 'conversation', externalId: q.conversation.id }, limit: SEARCH_LIMIT, referenceTime: q.referenceTime };
        if (q.asOf) input.asOf = q.asOf;
        if (Object.keys(system.features).length > 0) input.features = system.features;
        const t0 = performance.now();
        const hits = await memory.search(project, input);
        samples[pass]!.push(performance.now() - t0);
        if (s === 0 && pass === 0 && hits.length < SEARCH_LIMIT) shortLists++;
        const seen = hits.map((hit) => {
          const turns = (turnsOf.get(hit.memory.id) ?? []).filter((t) => t.position < q.visible);
          if (turns.length === 0 || (q.asOf && Date.parse(hit.memory.validFrom) > q.asOf.getTime())) leaks++;
          return turns;
        });
        ranks[pass]!.set(q.qid, ranksOf(seen, q));
        if ((i + 1) % 50 === 0 || i + 1 === set.questions.length) {
          progress(`${tag} ${system.name}: searching${passes > 1 ? ` (${pass === 0 ? 'whole search' : 'query vector cached'})` : ''} ${i + 1}/${set.questions.length}`);
        }
      }
    }
    if (passes > 1) {
      changed = set.questions.filter((q) => {
        const [a, b] = [ranks[0]!.get(q.qid)!, ranks[1]!.get(q.qid)!];
        return a.turn !== b.turn || a.session !== b.session;
      }).length;
    }
    runs.push({ system: system.name, backend: setup, ranks: ranks[0]!, leaks, search: summarise(samples[0]!), retrieval: samples[1] && summarise(samples[1]) });
  }
  const searchMs = performance.now() - searchStart;
  if (DUMP_FILE) await dumpCandidates(ctx, project, set, turnsOf);

  const memories = turnsOf.size;
  const exactScanMax = ctx.runtime.config.searchExactScanMaxRows;
  const { embedding: after } = await memory.stats(project);
  const path = after.embedded <= exactScanMax ? 'exact scan' : after.projectIndex ? 'its IVFFlat index' : after.graphReady ? 'HNSW' : 'exact scan (not yet admitted to HNSW)';
  notes.push(
    `${setup}: ${thousands(set.turnCount)} turns saved as ${thousands(memories)} memories (${merged} repeated an earlier turn ` +
      `of their conversation) in ${seconds(saveMs)}, embedded in ${seconds(embedMs)}, ${LATTICE_SYSTEMS.length + 1} search passes in ${seconds(searchMs)}; ` +
      `search path ${path} (SEARCH_EXACT_SCAN_MAX_ROWS=${thousands(exactScanMax)}); ` +
      `${shortLists} search(es) answered fewer than ${SEARCH_LIMIT} hits; ${changed} question(s) ranked differently in the second pass.`,
  );
  return runs;
}

/**
 * BENCH_DUMP: for tuning the ranking's weights offline (bench/retrieval/tune.ts), each question's
 * top DUMP_LIMIT hits of the product as it stands, with their score parts and whether each holds an
 * evidence turn or a turn of an evidence session, one JSON line per question.
 */
const DUMP_FILE = process.env.BENCH_DUMP;
const DUMP_LIMIT = 50;

async function dumpCandidates(ctx: Lattice, project: string, set: DevSet, turnsOf: ReadonlyMap<string, Turn[]>): Promise<void> {
  const lines: string[] = [];
  // The memory of each turn, and each conversation's turns in order: a hit's neighbours in its session.
  const memoryOf = new Map<Turn, string>();
  for (const [id, turns] of turnsOf) for (const t of turns) memoryOf.set(t, id);
  const turnsIn = new Map(set.conversations.map((c) => [c.id, c.turns]));
  for (const [i, q] of set.questions.entries()) {
    const input: SearchInput = { query: q.text, subject: { kind: 'conversation', externalId: q.conversation.id }, limit: DUMP_LIMIT, referenceTime: q.referenceTime };
    if (q.asOf) input.asOf = q.asOf;
    const hits = await ctx.apis.memory.search(project, input);
    lines.push(
      JSON.stringify({
        set: set.key,
        qid: q.qid,
        category: q.category,
        hasTurnEvidence: q.evidence.size > 0,
        hits: hits.map((hit) => {
          const turns = (turnsOf.get(hit.memory.id) ?? []).filter((t) => t.position < q.visible);
          const { semantic, hubness, lexical, context, recency, importance, time, names } = hit.parts;
          // The turns just before and after the hit's first turn in its session (visible ones only).
          const all = turnsIn.get(q.conversation.id) ?? [];
          const beside = (first: Turn | undefined, step: number) => {
            const t = first ? all[first.position + step] : undefined;
            if (!t || t.session !== first!.session || t.position >= q.visible) return null;
            return { id: memoryOf.get(t), turn: q.evidence.has(t.id), session: q.evidenceSessions.has(t.session) };
          };
          return {
            id: hit.memory.id,
            score: hit.score,
            prev: beside(turns[0], -1),
            next: beside(turns[0], 1),
            turn: turns.some((t) => q.evidence.has(t.id)),
            session: turns.some((t) => q.evidenceSessions.has(t.session)),
            sessionKey: hit.memory.sessionKey,
            semantic, hubness, lexical, context, recency, importance,
            // As shares in [0, 1], before their weights.
            time: time / RANKING.timeWeight, names: names / RANKING.nameWeight,
          };
        }),
      }),
    );
    if ((i + 1) % 200 === 0) progress(`[${set.key}] dumping candidates ${i + 1}/${set.questions.length}`);
  }
  await appendFile(DUMP_FILE!, `${lines.join('\n')}\n`);
}

// ---------------------------------------------------------------------------------------------
// Output

const fixed = (x: number) => x.toFixed(3);
const latency = (s: Summary | undefined) => (s ? `${ms(s.p50)} / ${ms(s.p95)}` : '–');
const ratio = (x: number, reference: number) => (reference === 0 ? (x === 0 ? '–' : '∞') : `${(x / reference).toFixed(2)}×`);
const label = (run: SystemRun) => (run.backend === 'in the bench' ? run.system : `${run.system}, ${run.backend}`);
const counted = (set: DevSet) => {
  const turn = set.questions.filter((q) => q.evidence.size > 0).length;
  return turn === set.questions.length ? thousands(turn) : `${thousands(turn)} / ${thousands(set.questions.length)}`;
};

function describe(set: DevSet): string {
  return (
    `${set.path} (${set.source}): ${set.conversations.length} conversations, ${thousands(set.turnCount)} turns, ${thousands(set.questionCount)} questions ` +
    `(${set.withoutEvidence} without evidence, skipped; ${thousands(set.questions.length)} searched, ${thousands(set.questions.filter((q) => q.evidence.size > 0).length)} of them with evidence turns).`
  );
}

function printSet(set: DevSet, runs: readonly SystemRun[], notes: readonly string[]): void {
  const reference = runs.find((run) => run.system === REFERENCE)!;
  const referenceTurn = levelQuality(reference, set.questions, 'turn');
  process.stdout.write(`\n## ${set.title}\n\n${describe(set)}\n`);
  const leaks = runs.filter((run) => run.leaks > 0);
  const extra = [
    ...set.notes,
    `${set.truncated} turn(s) longer than ${thousands(MAX_CONTENT)} characters were truncated to it (for every system).`,
    leaks.length === 0
      ? 'No system returned a turn the question may not see.'
      : `WRONG: hits holding only turns the question may not see: ${leaks.map((run) => `${label(run)} ${run.leaks}`).join(', ')}.`,
    ...notes,
  ];
  for (const note of extra) process.stdout.write(`${note}\n`);
  process.stdout.write('\n');

  const rows = runs.map((run) => {
    const turn = levelQuality(run, set.questions, 'turn');
    const session = levelQuality(run, set.questions, 'session');
    return [
      run.system,
      run.backend,
      counted(set),
      fixed(turn.r1),
      fixed(turn.r5),
      fixed(turn.r10),
      fixed(turn.mrr),
      fixed(session.r1),
      fixed(session.r5),
      fixed(session.r10),
      fixed(session.mrr),
      run === reference ? '–' : ratio(turn.r10, referenceTurn.r10),
      latency(run.search),
      latency(run.retrieval),
    ];
  });
  const header = [
    'System',
    'Backend',
    set.questions.every((q) => q.evidence.size > 0) ? 'Questions' : 'Questions (turn / session)',
    'Turn R@1',
    'Turn R@5',
    'Turn R@10',
    'Turn MRR@10',
    'Session R@1',
    'Session R@5',
    'Session R@10',
    'Session MRR@10',
    `Turn R@10 vs ${REFERENCE}`,
    'Search p50 / p95',
    'Retrieval (cached vector) p50 / p95',
  ];
  process.stdout.write(`${markdownTable(header, rows, (i) => i >= 2)}\n\n`);

  // Lattice as it stands against the reference, per category.
  const compared = runs.filter((run) => run === reference || run.system === LATTICE_SYSTEMS[0]!.name);
  const categories = [...new Set(set.questions.map((q) => q.category))].sort();
  const byCategory = [...categories, 'all'].map((category) => {
    const questions = category === 'all' ? set.questions : set.questions.filter((q) => q.category === category);
    const turnCount = questions.filter((q) => q.evidence.size > 0).length;
    return [
      category,
      turnCount === questions.length ? String(turnCount) : `${turnCount} / ${questions.length}`,
      ...compared.map((run) => `${fixed(levelQuality(run, questions, 'turn').r10)} / ${fixed(levelQuality(run, questions, 'session').r10)}`),
    ];
  });
  const columns = ['Category', 'Questions', ...compared.map(label)];
  process.stdout.write(`Recall@10 per category (turn / session):\n\n${markdownTable(columns, byCategory, (i) => i >= 1)}\n\n`);

  // Where Lattice and the reference disagree: the questions only one of them finds in its top 10.
  for (const run of compared.filter((r) => r !== reference)) {
    for (const level of ['turn', 'session'] as const) {
      const questions = level === 'turn' ? set.questions.filter((q) => q.evidence.size > 0) : set.questions;
      const found = (r: SystemRun, q: Question) => {
        const ranks = r.ranks.get(q.qid);
        return (level === 'turn' ? ranks?.turn : ranks?.session) != null;
      };
      const count = (a: boolean, b: boolean) => questions.filter((q) => found(reference, q) === a && found(run, q) === b).length;
      process.stdout.write(
        `${run.backend}, ${level} level: in the top 10 of both ${count(true, true)}, of ${REFERENCE} only ${count(true, false)}, ` +
          `of Lattice only ${count(false, true)}, of neither ${count(false, false)}.\n`,
      );
    }
  }
}

function printSummary(sets: readonly DevSet[], runsOf: ReadonlyMap<SetKey, SystemRun[]>): void {
  const labels = [...new Set(sets.flatMap((set) => (runsOf.get(set.key) ?? []).map(label)))];
  const rows = labels.map((name) => [
    name,
    ...sets.flatMap((set) => {
      const runs = runsOf.get(set.key) ?? [];
      const run = runs.find((r) => label(r) === name);
      const reference = runs.find((r) => r.system === REFERENCE);
      if (!run || !reference) return ['–', '–', '–'];
      const turn = levelQuality(run, set.questions, 'turn').r10;
      return [fixed(turn), run === reference ? '–' : ratio(turn, levelQuality(reference, set.questions, 'turn').r10), fixed(levelQuality(run, set.questions, 'session').r10)];
    }),
  ]);
  const header = ['System', ...sets.flatMap((set) => [`${set.title} turn R@10`, `vs ${REFERENCE}`, `${set.title} session R@10`])];
  process.stdout.write(`\n## Across the sets\n\n${markdownTable(header, rows, (i) => i >= 1)}\n`);
}

// ---------------------------------------------------------------------------------------------

async function main(): Promise<void> {
  if (process.env.BENCH_BEAM && process.env.BENCH_BEAM_100K) throw new Error('set BENCH_BEAM_100K or its older name BENCH_BEAM, not both');
  // BENCH_UPDATES: the update pairs too (default), 0 not, only the update pairs and no set.
  const updates = process.env.BENCH_UPDATES ?? '1';
  const keys = updates === 'only' ? [] : selectedSets();
  const cpu = cpus()[0]?.model.trim() ?? 'unknown CPU';
  const started = new Date().toISOString().slice(0, 16).replace('T', ' ');
  const sets: DevSet[] = [];
  for (const key of keys) {
    const set = await SETS[key].load(SETS[key].path);
    sets.push(set);
    progress(`loaded ${set.path}: ${set.conversations.length} conversations, ${thousands(set.turnCount)} turns, ${set.questions.length} questions to search`);
  }

  // The baselines first (in memory, quick), then Lattice on each backend, set after set.
  const runsOf = new Map<SetKey, SystemRun[]>(sets.map((set) => [set.key, BASELINES.map((baseline) => runBaseline(set, baseline))]));
  const notesOf = new Map<SetKey, string[]>(sets.map((set) => [set.key, []]));
  const updateRows: UpdateRow[] = updates === '0' ? [] : [baselineUpdatePairs()];
  const onBackend = async (ctx: Lattice, setup: string) => {
    for (const set of sets) runsOf.get(set.key)!.push(...(await runLattice(ctx, setup, set, notesOf.get(set.key)!)));
    if (updates !== '0') updateRows.push(...(await runUpdatePairs(ctx, setup)));
  };
  const machine: string[] = [];
  try {
    if (process.env.BENCH_SKIP_PGLITE === '1') progress('BENCH_SKIP_PGLITE=1: skipping the PGlite run');
    else await withPgliteContext(log, onBackend);
    const serverUrl = process.env.DATABASE_URL;
    if (serverUrl) {
      await withPostgresContext(serverUrl, process.env.REDIS_URL, log, async (ctx, setup) => {
        const { rows } = await ctx.runtime.db.query<{ pg: string; vector: string }>(
          `SELECT current_setting('server_version') AS pg, (SELECT extversion FROM pg_extension WHERE extname = 'vector') AS vector`,
        );
        machine.push(`Postgres ${rows[0]!.pg}, pgvector ${rows[0]!.vector}.`);
        await onBackend(ctx, setup);
      });
    } else progress('DATABASE_URL is not set: skipping the Postgres run');
  } finally {
    // On failure, still print what was measured.
    const config = configFor({});
    const ablations = Object.entries(ABLATIONS).map(([part, what]) => `"Lattice without ${part}" leaves out ${what}.`);
    process.stdout.write(
      `\nRetrieval benchmark, ${started} UTC: Node ${process.version}, ${cpus().length} × ${cpu}; sets ${sets.map((set) => set.title).join(', ')}` +
        `${LIMITS.conversations || LIMITS.questions ? ` (BENCH_CONVERSATIONS=${LIMITS.conversations ?? 'all'}, BENCH_QUESTIONS=${LIMITS.questions ?? 'all'} per set)` : ''}; ` +
        `search limit ${SEARCH_LIMIT}, embedding model ${config.embeddingModel}, ${config.poolMaxThreads} pool thread(s). ${machine.join(' ')}\n` +
        `${REFERENCE} and BM25, unstemmed: Okapi BM25 k1 ${K1}, b ${B}, per conversation over the same "<role>: <text>" turns (those the question may see, ` +
        `with their own statistics), Unicode letter and digit runs lowercased, ${STOPWORDS.size} stopwords (Lucene's English set), then Porter stemming ` +
        `(the stemmer package) or none. Lattice rows: ctx.apis.memory.search within the conversation's subject, limit ${SEARCH_LIMIT}; ` +
        `"lexical leg alone" is features { vector: false }, "vector leg alone" features { lexical: false }; those and the ablation rows search once, ` +
        `after Lattice's two passes, so they find the query vector cached. ${ablations.join(' ')}\n`,
    );
    for (const set of sets) printSet(set, runsOf.get(set.key)!, notesOf.get(set.key)!);
    if (sets.length > 1) printSummary(sets, runsOf);
    if (updateRows.length > 0) printUpdatePairs(updateRows);
  }
}

runBench(main);
