// Offline tuning of the ranking's weights on the retrieval bench's dump (bench/retrieval.ts with
// BENCH_DUMP=FILE): each question's top 50 hits with their score parts. Re-scores the hits under a
// grid of weights and prints, per set, turn- and session-level recall@10 of the best settings, so
// the weights in memory/search/ranking.ts and store.ts can be chosen with the figures that chose
// them. Approximate in one way: only the 50 hits the product found are re-ranked.
//
//   npx tsx bench/retrieval/tune.ts /tmp/dump.jsonl
import { markdownTable } from '../support.js';
import { readDump, recallAt10, setsOf } from './dump.js';

interface Hit {
  turn: boolean;
  session: boolean;
  semantic: number | null;
  hubness: number;
  lexical: number;
  context: number;
  recency: number;
  importance: number;
  /** Nearness to the span of time the question names, in [0, 1] (0 in dumps made before it). */
  time?: number;
  /** Share of the question's names the memory holds, in [0, 1] (0 in dumps made before it). */
  names?: number;
}
interface Weights {
  semantic: number;
  lexical: number;
  hubness: number;
  /** Scales the neighbours' part of the lexical score (1: as dumped). */
  context: number;
  recency: number;
  time: number;
  names: number;
}

const lines = readDump<Hit>(process.argv[2] ?? '/tmp/dump.jsonl');
const sets = setsOf(lines);

function recall(weights: Weights, set: string): { turn: number; session: number } {
  return recallAt10(lines, set, (hits) => {
    const words = hits.map((h) => h.lexical - h.context + weights.context * h.context);
    const best = Math.max(1e-9, ...words);
    const scored = hits.map((h, i) => ({
      h,
      score:
        0.85 * (weights.semantic * (h.semantic === null ? 0 : h.semantic - weights.hubness * h.hubness) + weights.lexical * (words[i]! / best)) +
        weights.recency * h.recency +
        0.1 * h.importance +
        weights.time * (h.time ?? 0) +
        weights.names * (h.names ?? 0),
    }));
    return scored.sort((a, b) => b.score - a.score).slice(0, 10).map((x) => x.h);
  });
}

const grid: Weights[] = [];
for (const semantic of [0.5, 0.6, 0.7, 0.75, 0.8])
  for (const hubness of [0.5, 1])
    for (const context of [0, 1])
      for (const recency of [0, 0.025, 0.05])
        for (const time of [0, 0.05, 0.1])
          for (const names of [0, 0.02, 0.05]) grid.push({ semantic, lexical: 1 - semantic, hubness, context, recency, time, names });

const results = grid.map((w) => {
  const per = sets.map((set) => recall(w, set));
  return { w, per, mean: per.reduce((sum, r) => sum + r.turn, 0) / per.length };
});
results.sort((a, b) => b.mean - a.mean);
const current = results.find((r) => r.w.semantic === 0.75 && r.w.hubness === 1 && r.w.context === 1 && r.w.recency === 0.05 && r.w.time === 0.1 && r.w.names === 0.05);
const rows = [...results.slice(0, 15), ...(current ? [current] : [])].map((r, i) => [
  i === 15 ? 'as dumped' : String(i + 1),
  `sem ${r.w.semantic} / lex ${r.w.lexical.toFixed(2)} / hub ${r.w.hubness} / ctx ${r.w.context} / rec ${r.w.recency} / time ${r.w.time} / names ${r.w.names}`,
  ...r.per.map((p) => `${p.turn.toFixed(3)} (${p.session.toFixed(3)})`),
  r.mean.toFixed(3),
]);
process.stdout.write(`${markdownTable(['#', 'weights', ...sets.map((s) => `${s} turn R@10 (session)`), 'mean turn R@10'], rows, (c) => c >= 2)}\n`);
