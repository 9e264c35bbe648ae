// Offline measure of neighbour lifting on the retrieval bench's dump (bench/retrieval.ts with
// BENCH_DUMP=FILE: each question's top 50 hits with their score and the turns just before and
// after each in its session): the top `top` hits lift the turn before and after them to at least
// `share` of their own score (a turn that is not among the hits enters with that score), then the
// top 10 is taken again. Prints turn- and session-level recall@10 per setting.
//
//   npx tsx bench/retrieval/lift.ts /tmp/dump.jsonl
import { markdownTable } from '../support.js';
import { readDump, recallAt10, setsOf } from './dump.js';

interface Beside {
  id?: string;
  turn: boolean;
  session: boolean;
}
interface Hit {
  id: string;
  score: number;
  turn: boolean;
  session: boolean;
  prev: Beside | null;
  next: Beside | null;
}
const lines = readDump<Hit>(process.argv[2] ?? '/tmp/dump.jsonl');
const sets = setsOf(lines);

function lifted(hits: readonly Hit[], top: number, share: number): { turn: boolean; session: boolean }[] {
  const scored = new Map(hits.map((h) => [h.id, { score: h.score, turn: h.turn, session: h.session }]));
  for (const h of hits.slice(0, top)) {
    for (const n of [h.prev, h.next]) {
      if (!n?.id) continue;
      const lift = share * h.score;
      const had = scored.get(n.id);
      if (!had) scored.set(n.id, { score: lift, turn: n.turn, session: n.session });
      else if (had.score < lift) had.score = lift;
    }
  }
  return [...scored.values()].sort((a, b) => b.score - a.score).slice(0, 10);
}

const recall = (set: string, top: number, share: number) => recallAt10(lines, set, (hits) => lifted(hits, top, share));

const rows: string[][] = [];
for (const top of [0, 1, 2, 3, 5])
  for (const share of top === 0 ? [0] : [0.5, 0.7, 0.8, 0.9, 0.95])
    rows.push([top === 0 ? 'none' : `top ${top}, ${share}`, ...sets.map((set) => {
      const r = recall(set, top, share);
      return `${r.turn.toFixed(3)} (${r.session.toFixed(3)})`;
    })]);
process.stdout.write(`${markdownTable(['lift', ...sets.map((s) => `${s} turn R@10 (session)`)], rows, (c) => c >= 1)}\n`);
