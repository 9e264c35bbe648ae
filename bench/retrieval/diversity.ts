// Offline measure of session diversity on the retrieval bench's dump (bench/retrieval.ts with
// BENCH_DUMP=FILE, each question's top 50 hits in the product's order, with each hit's session):
// turn- and session-level recall@10 when at most `cap` of the top 10 come from one session, the
// rest pushed below in their order. Approximate as tune.ts is: only the dumped hits are re-ranked.
//
//   npx tsx bench/retrieval/diversity.ts /tmp/dump.jsonl
import { readFileSync } from 'node:fs';
import { markdownTable } from '../support.js';

interface Hit {
  turn: boolean;
  session: boolean;
  sessionKey?: string | null;
}
interface Line {
  set: string;
  hasTurnEvidence: boolean;
  hits: Hit[];
}

const lines: Line[] = readFileSync(process.argv[2] ?? '/tmp/dump.jsonl', 'utf8')
  .split('\n')
  .filter(Boolean)
  .map((l) => JSON.parse(l) as Line);
const sets = [...new Set(lines.map((l) => l.set))];

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

function recall(set: string, cap: number): { turn: number; session: number } {
  let turn = 0;
  let turnN = 0;
  let session = 0;
  let sessionN = 0;
  for (const line of lines) {
    if (line.set !== set) continue;
    const top = capPerSession(line.hits, cap, 10);
    if (line.hasTurnEvidence) {
      turnN++;
      if (top.some((h) => h.turn)) turn++;
    }
    sessionN++;
    if (top.some((h) => h.session)) session++;
  }
  return { turn: turn / Math.max(1, turnN), session: session / Math.max(1, sessionN) };
}

const caps = [Infinity, 6, 5, 4, 3, 2, 1];
const rows = caps.map((cap) => [cap === Infinity ? 'none' : String(cap), ...sets.map((set) => {
  const r = recall(set, cap);
  return `${r.turn.toFixed(3)} (${r.session.toFixed(3)})`;
})]);
process.stdout.write(`${markdownTable(['at most per session', ...sets.map((s) => `${s} turn R@10 (session)`)], rows, (c) => c >= 1)}\n`);
