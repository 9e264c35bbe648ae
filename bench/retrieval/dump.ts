// The retrieval bench's dump (bench/retrieval.ts with BENCH_DUMP=FILE), read back by the offline
// measures (tune.ts, diversity.ts, lift.ts): one JSON line per question, its top hits in the
// product's order, each saying whether it holds an evidence turn or a turn of an evidence session.
import { readFileSync } from 'node:fs';

/** What every dumped hit says about the question's evidence. */
export interface Labelled {
  turn: boolean;
  session: boolean;
}

export interface DumpLine<H extends Labelled> {
  set: string;
  hasTurnEvidence: boolean;
  hits: H[];
}

export function readDump<H extends Labelled>(path: string): DumpLine<H>[] {
  return readFileSync(path, 'utf8')
    .split('\n')
    .filter(Boolean)
    .map((l) => JSON.parse(l) as DumpLine<H>);
}

/** The sets the dump holds, in order of first appearance. */
export const setsOf = (lines: readonly DumpLine<Labelled>[]): string[] => [...new Set(lines.map((l) => l.set))];

/**
 * Turn- and session-level recall@10 of one set when each question's top 10 is what `top10` makes
 * of its dumped hits: turn level over the questions that label evidence turns, session level over all.
 */
export function recallAt10<H extends Labelled>(lines: readonly DumpLine<H>[], set: string, top10: (hits: H[]) => readonly Labelled[]): { turn: number; session: number } {
  let turn = 0;
  let turnN = 0;
  let session = 0;
  let sessionN = 0;
  for (const line of lines) {
    if (line.set !== set) continue;
    const top = top10(line.hits);
    if (line.hasTurnEvidence) {
      turnN++;
      if (top.some((h) => h.turn)) turn++;
    }
    sessionN++;
    if (top.some((h) => h.session)) session++;
  }
  return { turn: turn / Math.max(1, turnN), session: session / Math.max(1, sessionN) };
}
