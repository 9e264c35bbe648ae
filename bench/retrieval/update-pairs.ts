// Facts that change, measured: for each update pair (updates.ts: an earlier statement, a later one
// that changes its value, and the question an agent would ask), a subject of its own gets a few
// unrelated statements, the old one, more unrelated ones, then the new one a month later; the
// question is searched within the subject (limit 10) and counts when the current statement ranks
// above the stale one (the stale one superseded, or below it, or absent, while the current one is in
// the top 10). Two ways in: every statement through observe (which supersedes a value it recognises)
// and every statement saved as it is (no slot known: only the search's newer-first rule can help),
// each also without newer first; and an in-memory Porter BM25 over the same statements.
import type { Lattice } from '../../src/modules.js';
import { markdownTable, progress } from '../support.js';
import { Bm25, porterTokens } from './bm25.js';
import { FILLER_FIRST_PERSON, FILLER_THIRD_PERSON, UPDATE_PAIRS, type UpdatePair } from './updates.js';

const LIMIT = 10;
const DAY_MS = 86_400_000;
const START = Date.UTC(2026, 0, 1);
/** Unrelated statements before the old one, and between it and the new one. */
const FILLER_BEFORE = 4;
const FILLER_BETWEEN = 4;

type Way = 'observe' | 'save';

export interface UpdateRow {
  system: string;
  backend: string;
  pairs: number;
  /** The current statement in the top 10 and above the stale one (or the stale one absent). */
  currentFirst: number;
  /** The current statement in the top 10. */
  currentFound: number;
  /** The stale statement superseded (observe) or absent from the top 10. */
  staleGone: number;
}

interface Statement {
  text: string;
  at: Date;
  role: 'old' | 'current' | 'filler';
}

function statementsOf(pair: UpdatePair, index: number): Statement[] {
  const pool = pair.subjectKind === 'user' ? FILLER_FIRST_PERSON : FILLER_THIRD_PERSON;
  const filler = (i: number) => pool[(index * (FILLER_BEFORE + FILLER_BETWEEN) + i) % pool.length]!;
  const day = (d: number) => new Date(START + d * DAY_MS);
  return [
    ...Array.from({ length: FILLER_BEFORE }, (_, i): Statement => ({ text: filler(i), at: day(1 + i), role: 'filler' })),
    { text: pair.old, at: day(10), role: 'old' },
    ...Array.from({ length: FILLER_BETWEEN }, (_, i): Statement => ({ text: filler(FILLER_BEFORE + i), at: day(11 + i), role: 'filler' })),
    { text: pair.current, at: day(40), role: 'current' },
  ];
}

const subjectOf = (pair: UpdatePair, way: Way, run: string) => ({ kind: pair.subjectKind, externalId: `${run}-${way}-${pair.id}` });

/** Lattice on one backend: each way in, with and without newer first. */
export async function runUpdatePairs(ctx: Lattice, backend: string): Promise<UpdateRow[]> {
  const { memory, tenancy } = ctx.apis;
  const run = `u${Date.now().toString(36)}`;
  const project = `retrieval-updates-${run}`;
  await tenancy.createProject(project, { plan: 'enterprise' });
  const reference = new Date(START + 50 * DAY_MS);
  // Which memory holds each pair's old and current statement, per way (observe may keep neither, or split one).
  const held = new Map<string, { old: Set<string>; current: Set<string> }>();
  for (const way of ['observe', 'save'] as const) {
    for (const [i, pair] of UPDATE_PAIRS.entries()) {
      const subject = subjectOf(pair, way, run);
      const ids = { old: new Set<string>(), current: new Set<string>() };
      for (const s of statementsOf(pair, i)) {
        const saved =
          way === 'observe'
            ? (await memory.observe(project, { text: s.text, subject, occurredAt: s.at })).saved
            : [(await memory.save(project, { content: s.text, type: 'fact', scope: 'project', subject, validFrom: s.at })).memory];
        if (s.role !== 'filler') for (const m of saved) ids[s.role].add(m.id);
      }
      held.set(`${way}:${pair.id}`, ids);
      if ((i + 1) % 20 === 0) progress(`[${backend}, update pairs] ${way}: ${i + 1}/${UPDATE_PAIRS.length} subjects written`);
    }
  }
  for (;;) {
    const { embedding } = await memory.stats(project);
    if (embedding.embedded === embedding.total) break;
    progress(`[${backend}, update pairs] embedding ${embedding.embedded}/${embedding.total}`);
    await new Promise((resolve) => setTimeout(resolve, 500));
  }
  const rows: UpdateRow[] = [];
  for (const way of ['observe', 'save'] as const) {
    for (const newerFirst of [true, false]) {
      const row: UpdateRow = { system: `Lattice, ${way}${newerFirst ? '' : ', without newer first'}`, backend, pairs: 0, currentFirst: 0, currentFound: 0, staleGone: 0 };
      for (const pair of UPDATE_PAIRS) {
        const ids = held.get(`${way}:${pair.id}`)!;
        const hits = await memory.search(project, { query: pair.query, subject: subjectOf(pair, way, run), limit: LIMIT, referenceTime: reference, features: { newerFirst } });
        const rank = (set: Set<string>) => {
          const i = hits.findIndex((h) => set.has(h.memory.id));
          return i < 0 ? null : i + 1;
        };
        const [current, old] = [rank(ids.current), ids.current.size === 0 ? null : rank(ids.old)];
        score(row, current, old);
        // BENCH_UPDATES_DETAIL=1: each pair the current statement does not come first in, on stderr.
        if (process.env.BENCH_UPDATES_DETAIL === '1' && newerFirst && !(current !== null && (old === null || current < old))) {
          const shown = hits.map((h, i) => `    ${i + 1}. ${h.score.toFixed(3)} ${h.memory.metadata?.slot ?? '-'} ${h.memory.content}`).join('\n');
          process.stderr.write(`${way} ${pair.id} (${pair.kind}, ${pair.subjectKind}) current #${current ?? '-'} old #${old ?? '-'}: ${pair.query}\n${shown}\n`);
        }
      }
      rows.push(row);
    }
  }
  return rows;
}

function score(row: UpdateRow, current: number | null, old: number | null): void {
  row.pairs++;
  if (current !== null) row.currentFound++;
  if (old === null) row.staleGone++;
  if (current !== null && (old === null || current < old)) row.currentFirst++;
}

/** Porter BM25 over each subject's statements (in memory, the same for every backend). */
export function baselineUpdatePairs(): UpdateRow {
  const row: UpdateRow = { system: 'Porter BM25', backend: 'in the bench', pairs: 0, currentFirst: 0, currentFound: 0, staleGone: 0 };
  for (const [i, pair] of UPDATE_PAIRS.entries()) {
    const statements = statementsOf(pair, i);
    const top = new Bm25(statements.map((s) => porterTokens(s.text))).top(porterTokens(pair.query), LIMIT);
    const rank = (role: Statement['role']) => {
      const at = top.findIndex((doc) => statements[doc]!.role === role);
      return at < 0 ? null : at + 1;
    };
    score(row, rank('current'), rank('old'));
  }
  return row;
}

export function printUpdatePairs(rows: readonly UpdateRow[]): void {
  const share = (n: number, of: number) => `${((100 * n) / Math.max(1, of)).toFixed(1)}% (${n}/${of})`;
  process.stdout.write(
    `\n## Facts that change: ${UPDATE_PAIRS.length} update pairs (bench/retrieval/updates.ts)\n\n` +
      `Each pair's subject holds ${FILLER_BEFORE} unrelated statements, the old one, ${FILLER_BETWEEN} more, and the new one 30 days later; ` +
      `its question is searched within the subject, limit ${LIMIT}. "Current first": the current statement is in the top ${LIMIT} and the stale one is not, or ranks below it.\n\n` +
      markdownTable(
        ['System', 'Backend', 'current first', 'current in top 10', 'stale superseded or absent'],
        rows.map((r) => [r.system, r.backend, share(r.currentFirst, r.pairs), share(r.currentFound, r.pairs), share(r.staleGone, r.pairs)]),
        (i) => i >= 2,
      ) +
      '\n',
  );
}
