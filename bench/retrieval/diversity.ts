// Offline measure of session diversity on the retrieval bench's dump (bench/retrieval.ts with
// BENCH_DUMP=FILE, each question's top 50 hits in the product's order, with each hit's session):
// turn- and session-level recall@10 when at most `cap` of the top 10 come from one session, the
// rest pushed below in their order. Approximate as tune.ts is: only the dumped hits are re-ranked.
//
//   npx tsx bench/retrieval/diversity.ts /tmp/dump.jsonl
import { markdownTable } from '../support.js';
import { readDump, recallAt10, setsOf } from './dump.js';

interface Hit {
  turn: boolean;
  session: boolean;
  sessionKey?: string | null;
}

const lines = readDump<Hit>(process.argv[2] ?? '/tmp/dump.jsonl');
const sets = setsOf(lines);

/** The top `k` of `hits` taking at most `cap` from one session (later ones pushed below, in order). */
export function capPerSession<T extends { sessionKey?: string | null }>(hits: readonly T[], cap: number, k: number): T[] {
  const taken = new Map<string, number>();
  const top: T[] = [];
  const rest: T[] = [];
  for (const hit of hits) {
    const key = hit.sessionKey ?? undefined;
    const n = key === undefined ? 0 : (taken.get(key) ?? 0);
    if (top.length < k && n < cap) {
      top.push(hit);
      if (key !== undefined) taken.set(key, n + 1);
    } else rest.push(hit);
  }
  return [...top, ...rest].slice(0, k);
}

const recall = (set: string, cap: number) => recallAt10(lines, set, (hits) => capPerSession(hits, cap, 10));

const caps = [Infinity, 6, 5, 4, 3, 2, 1];
const rows = caps.map((cap) => [cap === Infinity ? 'none' : String(cap), ...sets.map((set) => {
  const r = recall(set, cap);
  return `${r.turn.toFixed(3)} (${r.session.toFixed(3)})`;
})]);
process.stdout.write(`${markdownTable(['at most per session', ...sets.map((s) => `${s} turn R@10 (session)`)], rows, (c) => c >= 1)}\n`);
