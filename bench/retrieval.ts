// Retrieval benchmark. Measures how well memory search finds the evidence of a question in a long
// conversation, on BEAM (public multi-session chats between a user and an assistant, with probing
// questions whose evidence is given as message ids), against a plain BM25 computed here over the same
// messages in the same run. Every message is saved as a memory of its conversation's subject
// ("<role>: <content>"), everything is embedded, then each question with evidence is searched within
// its subject (limit 10); a question counts as found at k when a hit of the top k holds an evidence
// message. Prints to stdout: recall@1/5/10, MRR@10, recall@10 against BM25 and search latency per
// system and backend, then recall@10 per question category. Progress goes to stderr.
//
// The data is never committed (its repository states no licence): build it as
// /work/shared/devsets/README.md says, then, after a build (the pool loads dist/workers/index.js):
//   npm run build && npx tsx bench/retrieval.ts                  # or: npm run bench:retrieval
//   BENCH_SKIP_PGLITE=1 DATABASE_URL=postgres://postgres@127.0.0.1:5432/postgres REDIS_URL=redis://127.0.0.1:6379 npx tsx bench/retrieval.ts
// Settings: BENCH_BEAM (the data file, default /tmp/beam/out/beam_100K.json), BENCH_CONVERSATIONS
// (the first N conversations only), BENCH_QUESTIONS (the first N questions with evidence only),
// BENCH_SKIP_PGLITE=1 (Postgres only), DATABASE_URL (a throwaway lattice_bench_* database on that
// server), REDIS_URL (BullMQ under a throwaway prefix). Service settings (SEARCH_EXACT_SCAN_MAX_ROWS,
// POOL_MAX_THREADS, ...) are read as the service reads them.
import { existsSync } from 'node:fs';
import { readFile } from 'node:fs/promises';
import { cpus } from 'node:os';
import { performance } from 'node:perf_hooks';
import type { SaveInput } from '../src/memory/index.js';
import type { Lattice } from '../src/modules.js';
import { createLogger } from '../src/platform/logger.js';
import { configFor, markdownTable, ms, progress, runBench, sleep, summarise, withPgliteContext, withPostgresContext, type Summary } from './support.js';

const optionalPositiveInt = (key: string): number | undefined => {
  const raw = process.env[key];
  if (raw === undefined || raw === '') return undefined;
  const value = Number(raw);
  if (!Number.isInteger(value) || value < 1) throw new Error(`${key} must be a positive integer`);
  return value;
};

const DATA_FILE = process.env.BENCH_BEAM ?? '/tmp/beam/out/beam_100K.json';
const MAX_CONVERSATIONS = optionalPositiveInt('BENCH_CONVERSATIONS');
const MAX_QUESTIONS = optionalPositiveInt('BENCH_QUESTIONS');
const PROJECT = 'retrieval';
const SEARCH_LIMIT = 10;
const SAVE_BATCH = 500;
const EMBED_PROGRESS_MS = 5_000;
/** The API refuses longer content; the baseline sees the same truncated text. */
const MAX_CONTENT = 20_000;
/** For messages with no date of their own, so validFrom is still in the past and in order. */
const FALLBACK_DATE = Date.UTC(2024, 0, 1);


const log = createLogger('warn');

// ---------------------------------------------------------------------------------------------
// The data

type MessageId = number | string;
interface BeamMessage {
  id: MessageId;
  role: string;
  content: string;
  time_anchor?: string | null;
}
interface BeamSession {
  session_id: string;
  time_anchor: string | null;
  messages: BeamMessage[];
}
interface BeamQuestion {
  qid: string;
  category: string;
  question: string;
  evidence_message_ids: MessageId[];
}
interface BeamConversation {
  conversation_id: string;
  sessions: BeamSession[];
  questions: BeamQuestion[];
}
interface BeamFile {
  source: string;
  conversations: BeamConversation[];
}

/** One message as both systems see it. */
interface Message {
  id: string;
  text: string;
  validFrom: Date;
}
interface Conversation {
  id: string;
  messages: Message[];
}
interface Question {
  qid: string;
  category: string;
  text: string;
  conversation: Conversation;
  evidence: Set<string>;
}
interface Corpus {
  source: string;
  conversations: Conversation[];
  questions: Question[];
  messageCount: number;
  truncated: number;
  questionCount: number;
  withoutEvidence: number;
}

const MONTHS = ['january', 'february', 'march', 'april', 'may', 'june', 'july', 'august', 'september', 'october', 'november', 'december'];

/** BEAM dates look like `March-15-2024`; anything else is no date. */
function parseAnchor(anchor: string | null | undefined): number | undefined {
  const match = /^([A-Za-z]+)-(\d{1,2})-(\d{4})$/.exec(anchor?.trim() ?? '');
  const month = match ? MONTHS.indexOf(match[1]!.toLowerCase()) : -1;
  return match && month >= 0 ? Date.UTC(Number(match[3]), month, Number(match[2])) : undefined;
}

/** By code points, as the API's maxLength counts. */
function truncate(text: string): { text: string; truncated: boolean } {
  if (text.length <= MAX_CONTENT) return { text, truncated: false };
  const points = Array.from(text);
  return points.length <= MAX_CONTENT ? { text, truncated: false } : { text: points.slice(0, MAX_CONTENT).join(''), truncated: true };
}

async function loadCorpus(path: string): Promise<Corpus> {
  const data = JSON.parse(await readFile(path, 'utf8')) as BeamFile;
  if (!Array.isArray(data.conversations)) throw new Error(`${path} has no conversations array: not a BEAM file built by beam.py`);
  const conversations: Conversation[] = [];
  const questions: Question[] = [];
  let truncated = 0;
  let questionCount = 0;
  let withoutEvidence = 0;
  for (const raw of data.conversations.slice(0, MAX_CONVERSATIONS)) {
    const conversation: Conversation = { id: raw.conversation_id, messages: [] };
    for (const session of raw.sessions) {
      // In BEAM the date comes on a session's first message; it holds for the rest of the session.
      let base = parseAnchor(session.time_anchor);
      for (const message of session.messages) {
        base = parseAnchor(message.time_anchor) ?? base;
        const cut = truncate(`${message.role}: ${message.content}`);
        if (cut.truncated) truncated++;
        // The position in seconds keeps the conversation's order among messages of one date.
        const position = conversation.messages.length;
        conversation.messages.push({ id: String(message.id), text: cut.text, validFrom: new Date((base ?? FALLBACK_DATE) + position * 1000) });
      }
    }
    conversations.push(conversation);
    for (const q of raw.questions) {
      questionCount++;
      // Abstention questions (and a few others) have no evidence to find.
      if (q.evidence_message_ids.length === 0) withoutEvidence++;
      else questions.push({ qid: q.qid, category: q.category, text: q.question, conversation, evidence: new Set(q.evidence_message_ids.map(String)) });
    }
  }
  return {
    source: data.source,
    conversations,
    questions: questions.slice(0, MAX_QUESTIONS),
    messageCount: conversations.reduce((sum, c) => sum + c.messages.length, 0),
    truncated,
    questionCount,
    withoutEvidence,
  };
}

// ---------------------------------------------------------------------------------------------
// The baseline: textbook Okapi BM25 per conversation, no stemming

// Lucene's classic English stop set.
const STOPWORDS = new Set(
  'a an and are as at be but by for if in into is it no not of on or such that the their then there these they this to was will with'.split(' '),
);
const K1 = 1.2;
const B = 0.75;

const tokens = (text: string): string[] => (text.toLowerCase().match(/[\p{L}\p{N}]+/gu) ?? []).filter((t) => !STOPWORDS.has(t));

class Bm25 {
  /** term -> (document index, term frequency) */
  private readonly postings = new Map<string, { doc: number; tf: number }[]>();
  private readonly lengths: number[];
  private readonly avgLength: number;

  constructor(documents: readonly string[]) {
    this.lengths = documents.map((text, doc) => {
      const terms = tokens(text);
      const counts = new Map<string, number>();
      for (const term of terms) counts.set(term, (counts.get(term) ?? 0) + 1);
      for (const [term, tf] of counts) {
        const list = this.postings.get(term);
        if (list) list.push({ doc, tf });
        else this.postings.set(term, [{ doc, tf }]);
      }
      return terms.length;
    });
    this.avgLength = this.lengths.reduce((sum, n) => sum + n, 0) / Math.max(1, documents.length);
  }

  /** Indexes of the best `k` documents that share a term with the query; ties go to the earlier one. */
  top(query: string, k: number): number[] {
    const n = this.lengths.length;
    const scores = new Float64Array(n);
    for (const term of new Set(tokens(query))) {
      const list = this.postings.get(term);
      if (!list) continue;
      const idf = Math.log(1 + (n - list.length + 0.5) / (list.length + 0.5));
      for (const { doc, tf } of list) {
        scores[doc]! += (idf * tf * (K1 + 1)) / (tf + K1 * (1 - B + (B * this.lengths[doc]!) / this.avgLength));
      }
    }
    const matched: number[] = [];
    for (let doc = 0; doc < n; doc++) if (scores[doc]! > 0) matched.push(doc);
    return matched.sort((x, y) => scores[y]! - scores[x]! || x - y).slice(0, k);
  }
}

// ---------------------------------------------------------------------------------------------
// Scoring

/** 1-based rank of the first hit holding an evidence message, or null when none of the hits does. */
function firstEvidenceRank(hits: readonly (readonly string[])[], evidence: ReadonlySet<string>): number | null {
  const index = hits.findIndex((messageIds) => messageIds.some((id) => evidence.has(id)));
  return index < 0 ? null : index + 1;
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

interface SystemRun {
  system: string;
  backend: string;
  /** By qid. */
  ranks: Map<string, number | null>;
  search?: Summary;
  retrieval?: Summary;
}

function runBaseline(corpus: Corpus): SystemRun {
  const indexes = new Map(corpus.conversations.map((c) => [c.id, new Bm25(c.messages.map((m) => m.text))]));
  const ranks = new Map<string, number | null>();
  for (const q of corpus.questions) {
    const top = indexes.get(q.conversation.id)!.top(q.text, SEARCH_LIMIT);
    ranks.set(q.qid, firstEvidenceRank(top.map((doc) => [q.conversation.messages[doc]!.id]), q.evidence));
  }
  return { system: 'BM25 (baseline)', backend: 'in the bench', ranks };
}

// ---------------------------------------------------------------------------------------------
// Lattice

const seconds = (elapsedMs: number) => `${(elapsedMs / 1000).toFixed(1)} s`;
const thousands = (n: number) => Math.round(n).toLocaleString('en-US');

async function runLattice(ctx: Lattice, setup: string, corpus: Corpus, notes: string[]): Promise<SystemRun> {
  const { memory } = ctx.apis;
  await ctx.apis.tenancy.createProject(PROJECT, { plan: 'enterprise' });

  // 1. Save. A message repeating an earlier one of its conversation is answered the existing memory.
  const pending = corpus.conversations.flatMap((conversation) =>
    conversation.messages.map((message) => ({
      message,
      input: {
        content: message.text,
        type: 'fact',
        scope: 'project',
        subject: { kind: 'conversation', externalId: conversation.id },
        validFrom: message.validFrom,
      } satisfies SaveInput,
    })),
  );
  const messagesOf = new Map<string, string[]>();
  let merged = 0;
  const saveStart = performance.now();
  for (let i = 0; i < pending.length; i += SAVE_BATCH) {
    const batch = pending.slice(i, i + SAVE_BATCH);
    const results = await memory.saveMany(PROJECT, batch.map((p) => p.input));
    results.forEach(({ memory: saved, created }, j) => {
      if (!created) merged++;
      const ids = messagesOf.get(saved.id);
      if (ids) ids.push(batch[j]!.message.id);
      else messagesOf.set(saved.id, [batch[j]!.message.id]);
    });
    progress(`[${setup}] saving ${thousands(i + batch.length)}/${thousands(pending.length)} messages`);
  }
  const saveMs = performance.now() - saveStart;

  // 2. Embed everything before searching: the writes scheduled embedding jobs, so wait for them
  // (a backfill call beside them would embed the same rows twice).
  const embedStart = performance.now();
  for (;;) {
    const { embedding } = await memory.stats(PROJECT);
    progress(`[${setup}] embedding ${thousands(embedding.embedded)}/${thousands(embedding.total)} (${seconds(performance.now() - embedStart)})`);
    if (embedding.embedded === embedding.total) break;
    await sleep(EMBED_PROGRESS_MS);
  }
  const embedMs = performance.now() - embedStart;

  // 3. Search twice: the first pass embeds each query (whole search), the second finds its vector cached.
  const passes = [new Map<string, number | null>(), new Map<string, number | null>()] as const;
  const samples: [number[], number[]] = [[], []];
  let shortLists = 0;
  const searchStart = performance.now();
  for (const [pass, ranks] of passes.entries()) {
    for (const [i, q] of corpus.questions.entries()) {
      const t0 = performance.now();
      const hits = await memory.search(PROJECT, { query: q.text, subject: { kind: 'conversation', externalId: q.conversation.id }, limit: SEARCH_LIMIT });
      samples[pass]!.push(performance.now() - t0);
      if (pass === 0 && hits.length < SEARCH_LIMIT) shortLists++;
      ranks.set(q.qid, firstEvidenceRank(hits.map((hit) => messagesOf.get(hit.memory.id) ?? []), q.evidence));
      if ((i + 1) % 50 === 0 || i + 1 === corpus.questions.length) {
        progress(`[${setup}] searching (${pass === 0 ? 'whole search' : 'query vector cached'}) ${i + 1}/${corpus.questions.length}`);
      }
    }
  }
  const searchMs = performance.now() - searchStart;

  const memories = messagesOf.size;
  const exactScanMax = ctx.runtime.config.searchExactScanMaxRows;
  const changed = corpus.questions.filter((q) => passes[0].get(q.qid) !== passes[1].get(q.qid)).length;
  notes.push(
    `${setup}: ${thousands(corpus.messageCount)} messages saved as ${thousands(memories)} memories (${merged} repeated an earlier message ` +
      `of their conversation) in ${seconds(saveMs)}, embedded in ${seconds(embedMs)}, two search passes in ${seconds(searchMs)}; ` +
      `search path ${memories <= exactScanMax ? 'exact scan' : 'HNSW'} (SEARCH_EXACT_SCAN_MAX_ROWS=${thousands(exactScanMax)}); ` +
      `${shortLists} search(es) answered fewer than ${SEARCH_LIMIT} hits; ${changed} question(s) ranked differently in the second pass.`,
  );
  return { system: 'Lattice', backend: setup, ranks: passes[0], search: summarise(samples[0]), retrieval: summarise(samples[1]) };
}

// ---------------------------------------------------------------------------------------------
// Output

const fixed = (x: number) => x.toFixed(3);
const latency = (s: Summary | undefined) => (s ? `${ms(s.p50)} / ${ms(s.p95)}` : '–');

function printTables(corpus: Corpus, runs: readonly SystemRun[]): void {
  const ranksOf = (run: SystemRun, questions: readonly Question[]) => questions.map((q) => run.ranks.get(q.qid) ?? null);
  const baseline = quality(ranksOf(runs[0]!, corpus.questions));
  const rows = runs.map((run, i) => {
    const q = quality(ranksOf(run, corpus.questions));
    const ratio = i === 0 ? '–' : baseline.r10 === 0 ? '∞' : `${(q.r10 / baseline.r10).toFixed(2)}×`;
    return [run.system, run.backend, String(q.n), fixed(q.r1), fixed(q.r5), fixed(q.r10), fixed(q.mrr), ratio, latency(run.search), latency(run.retrieval)];
  });
  const header = ['System', 'Backend', 'Questions', 'Recall@1', 'Recall@5', 'Recall@10', 'MRR@10', 'Recall@10 vs BM25', 'Search p50 / p95', 'Retrieval (cached vector) p50 / p95'];
  process.stdout.write(`${markdownTable(header, rows, (i) => i >= 2)}\n\n`);

  const categories = [...new Set(corpus.questions.map((q) => q.category))].sort();
  const byCategory = [...categories, 'all'].map((category) => {
    const questions = category === 'all' ? corpus.questions : corpus.questions.filter((q) => q.category === category);
    return [category, String(questions.length), ...runs.map((run) => fixed(quality(ranksOf(run, questions)).r10))];
  });
  const columns = ['Category', 'Questions', ...runs.map((run) => (run.system === 'Lattice' ? `Lattice, ${run.backend}` : run.system))];
  process.stdout.write(`Recall@10 per category:\n\n${markdownTable(columns, byCategory, (i) => i >= 1)}\n`);
}

/** Where the systems disagree: the questions only one of them finds in its top 10. */
function agreement(baseline: SystemRun, run: SystemRun, questions: readonly Question[]): string {
  const found = (r: SystemRun, q: Question) => (r.ranks.get(q.qid) ?? null) !== null;
  const count = (a: boolean, b: boolean) => questions.filter((q) => found(baseline, q) === a && found(run, q) === b).length;
  return `${run.backend}: in the top 10 of both ${count(true, true)}, of BM25 only ${count(true, false)}, of Lattice only ${count(false, true)}, of neither ${count(false, false)}.`;
}

// ---------------------------------------------------------------------------------------------

async function main(): Promise<void> {
  if (!existsSync(DATA_FILE)) {
    process.stderr.write(
      `The BEAM data file ${DATA_FILE} does not exist. It is never committed; build it (see /work/shared/devsets/README.md):\n` +
        '  fetch github:mohammadtavakoli78/BEAM (a bare git directory GITDIR), then\n' +
        '  mkdir -p /tmp/beam && git --git-dir=GITDIR archive HEAD chats | tar -x -C /tmp/beam\n' +
        '  python3 /work/shared/devsets/beam.py /tmp/beam /tmp/beam/out    # beam_100K.json, beam_500K.json\n' +
        'and point BENCH_BEAM at the file (default /tmp/beam/out/beam_100K.json).\n',
    );
    process.exit(1);
  }
  const cpu = cpus()[0]?.model.trim() ?? 'unknown CPU';
  const started = new Date().toISOString().slice(0, 16).replace('T', ' ');
  const corpus = await loadCorpus(DATA_FILE);
  progress(`loaded ${DATA_FILE}: ${corpus.conversations.length} conversations, ${thousands(corpus.messageCount)} messages, ${corpus.questions.length} questions to search`);

  const notes: string[] = [];
  const runs: SystemRun[] = [runBaseline(corpus)];
  try {
    if (process.env.BENCH_SKIP_PGLITE === '1') progress('BENCH_SKIP_PGLITE=1: skipping the PGlite run');
    else await withPgliteContext(log, async (ctx, setup) => void runs.push(await runLattice(ctx, setup, corpus, notes)));
    const serverUrl = process.env.DATABASE_URL;
    if (serverUrl) {
      await withPostgresContext(serverUrl, process.env.REDIS_URL, log, async (ctx, setup) => {
        const { rows } = await ctx.runtime.db.query<{ pg: string; vector: string }>(
          `SELECT current_setting('server_version') AS pg, (SELECT extversion FROM pg_extension WHERE extname = 'vector') AS vector`,
        );
        notes.push(`Postgres ${rows[0]!.pg}, pgvector ${rows[0]!.vector}.`);
        runs.push(await runLattice(ctx, setup, corpus, notes));
      });
    } else progress('DATABASE_URL is not set: skipping the Postgres run');
  } finally {
    // On failure, still print what was measured.
    const config = configFor({});
    const repeated = corpus.questions.length - new Set(corpus.questions.map((q) => q.text)).size;
    process.stdout.write(
      `\nRetrieval benchmark, ${started} UTC: Node ${process.version}, ${cpus().length} × ${cpu}; ${DATA_FILE} (${corpus.source}): ` +
        `${corpus.conversations.length} conversations, ${thousands(corpus.messageCount)} messages, ${corpus.questionCount} questions ` +
        `(${corpus.withoutEvidence} without evidence, skipped; ${corpus.questions.length} searched); search limit ${SEARCH_LIMIT}, ` +
        `embedding model ${config.embeddingModel}, ${config.poolMaxThreads} pool thread(s).\n`,
    );
    const extra = [
      `${corpus.truncated} message(s) longer than ${thousands(MAX_CONTENT)} characters were truncated to it (for both systems).`,
      `BM25: k1 ${K1}, b ${B}, per conversation over the same "<role>: <content>" texts, Unicode letter and digit runs, ${STOPWORDS.size} stopwords, no stemming.`,
      ...(repeated > 0 ? [`${repeated} question text(s) repeat an earlier one (in another conversation): their first-pass search finds the query vector cached.`] : []),
      ...runs.slice(1).map((run) => agreement(runs[0]!, run, corpus.questions)),
    ];
    for (const note of [...extra, ...notes]) process.stdout.write(`${note}\n`);
    process.stdout.write('\n');
    printTables(corpus, runs);
  }
}

runBench(main);
