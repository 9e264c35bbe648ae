// The suite's shared shapes: one row of the table (a figure beside its same-run reference, their
// ratio and the goal its issue set), the run of one backend, and the helpers the parts share.
import type { FastifyInstance } from 'fastify';
import type { Lattice } from '../../src/modules.js';
import { check, ms, optionalInt, positiveInt, progress, type Summary } from '../support.js';

/** One measured value: what it is, its number, its unit (the JSON keeps all three). */
export interface Measured {
  /** What was measured, in words (e.g. "raw vector candidate statement, p95"). */
  what: string;
  value: number;
  unit: 'ms' | 'rows/s' | 'share';
  /** The value as the table shows it, with its spread where there is one. */
  text: string;
  /** The full latency summary, when the value is one of its percentiles. */
  summary?: Summary;
}

/** What an issue asked of the figure: `met` is decided only on the backend the goal is for (Postgres). */
export interface Goal {
  /** "#8: p95 ≤ 15 ms at 100k". */
  text: string;
  ok: (figure: number) => boolean;
  /** When the run is smaller than the scale the goal was set at: why it is not checked (e.g. "measured at 20k"). */
  offScale?: string;
}

export interface SuiteRow {
  row: string;
  backend: string;
  figure?: Measured;
  reference?: Measured;
  /** figure ÷ reference. */
  ratio?: number;
  goal?: string;
  /** Undefined: not checked (no goal, not measured, a goal for Postgres on PGlite, or a goal set at a larger scale). */
  met?: boolean;
  /** Why a goal was not checked. */
  unchecked?: string;
  notes: string[];
  /** Set when the row could not be measured: why. */
  failed?: string;
}

export interface Run {
  ctx: Lattice;
  app: FastifyInstance;
  /** Backend and queue, as the table names it. */
  setup: string;
  postgres: boolean;
  rows: SuiteRow[];
}

/** Adds a row: the ratio is figure ÷ reference; the goal is checked on Postgres only (the issues set them there). */
export function addRow(
  run: Run,
  row: string,
  figure: Measured,
  reference: Measured | undefined,
  goal: Goal | undefined,
  notes: (string | undefined)[] = [],
  noGoal = 'no goal set',
): SuiteRow {
  const entry: SuiteRow = {
    row,
    backend: run.setup,
    figure,
    reference,
    ratio: reference && reference.value !== 0 ? figure.value / reference.value : undefined,
    goal: goal?.text ?? noGoal,
    met: goal && run.postgres && goal.offScale === undefined ? goal.ok(figure.value) : undefined,
    unchecked: !goal ? undefined : !run.postgres ? 'a Postgres goal: not checked here' : goal.offScale === undefined ? undefined : `not checked: ${goal.offScale}`,
    notes: notes.filter((n): n is string => n !== undefined),
  };
  run.rows.push(entry);
  return entry;
}

/** A row that could not be measured, and why. */
export function failedRow(run: Run, row: string, reason: string): void {
  run.rows.push({ row, backend: run.setup, notes: [], failed: reason });
  progress(`[${run.setup}] ${row}: ${reason}`);
}

/** Longest a part waits for the work the parts before it left behind. */
const SETTLE_LIMIT_MS = 300_000;

/**
 * Waits until the work earlier parts left running behind is done (memories awaiting their
 * embedding, and every project's jobs running or waiting), so that no part is timed while the
 * previous one's embedding drain or index build shares the two cores. Delayed jobs (the next
 * sweep) do not count. Gives up after SETTLE_LIMIT_MS and says so.
 */
async function settle(run: Run): Promise<void> {
  const started = performance.now();
  const busy = async () => {
    const { rows } = await run.ctx.runtime.db.query<{ unembedded: number; projects: string[] }>(
      `SELECT (SELECT count(*)::int FROM memories WHERE embedding IS NULL) AS unembedded, (SELECT coalesce(array_agg(id), '{}') FROM projects) AS projects`,
    );
    const { unembedded, projects } = rows[0]!;
    let jobs = 0;
    for (const projectId of projects) jobs += (await run.ctx.runtime.queue.inFlight(projectId)).jobs.filter((j) => j.state !== 'delayed').length;
    return { unembedded, jobs };
  };
  for (let left = await busy(); left.unembedded > 0 || left.jobs > 0; left = await busy()) {
    if (performance.now() - started > SETTLE_LIMIT_MS) {
      progress(`[${run.setup}] still busy after ${SETTLE_LIMIT_MS / 1000} s (${left.unembedded} memories unembedded, ${left.jobs} jobs): going on`);
      return;
    }
    await new Promise((resolve) => setTimeout(resolve, 500));
  }
  const waited = performance.now() - started;
  if (waited > 1000) progress(`[${run.setup}] waited ${(waited / 1000).toFixed(1)} s for the earlier parts' work to finish`);
}

/** Runs one part of the suite once earlier parts' work has settled; a failure becomes a row saying so, and the suite goes on. */
export async function part(run: Run, name: string, fn: () => Promise<void>): Promise<void> {
  await settle(run);
  const started = performance.now();
  progress(`[${run.setup}] --- ${name}`);
  try {
    await fn();
    progress(`[${run.setup}] --- ${name}: done in ${((performance.now() - started) / 1000).toFixed(1)} s`);
  } catch (error) {
    const message = error instanceof Error ? error.message : String(error);
    if (error instanceof Error && error.stack) progress(error.stack);
    failedRow(run, name, `❌ failed after ${((performance.now() - started) / 1000).toFixed(1)} s: ${message.split('\n')[0]}`);
  }
}

/** A latency as the table compares it: its p95 (p50 and n beside it). */
export const latencyMeasure = (what: string, s: Summary): Measured => ({
  what,
  value: s.p95,
  unit: 'ms',
  text: `p95 ${ms(s.p95)} (p50 ${ms(s.p50)}, n ${s.n})`,
  summary: s,
});

export const ratioText = (r: number | undefined) => (r === undefined || !Number.isFinite(r) ? '–' : r >= 100 ? `${r.toFixed(0)}×` : r >= 10 ? `${r.toFixed(1)}×` : `${r.toFixed(2)}×`);

export const goalCell = (r: SuiteRow) => {
  if (r.goal === undefined) return '–';
  if (r.met === undefined) return r.unchecked ? `${r.goal} (${r.unchecked})` : r.goal;
  return check(r.met, r.goal);
};

/** A size setting: BENCH_SUITE_X on Postgres, BENCH_SUITE_PGLITE_X on PGlite, else the backend's default. */
export function sized(postgres: boolean, key: string, pgDefault: number, pgliteDefault: number): number {
  return postgres ? positiveInt(key, pgDefault) : (optionalInt(key.replace(/^BENCH_SUITE_/, 'BENCH_SUITE_PGLITE_')) ?? pgliteDefault);
}

/** Timed calls of `fn` on `count` inputs (warm-up first, untimed): the samples in ms. */
export async function timeEach<T>(
  label: string,
  setup: string,
  inputs: readonly T[],
  warmup: number,
  fn: (input: T) => Promise<unknown>,
): Promise<number[]> {
  for (const input of inputs.slice(0, warmup)) await fn(input);
  const samples: number[] = [];
  let last = performance.now();
  const timed = inputs.slice(warmup);
  for (const [i, input] of timed.entries()) {
    const t0 = performance.now();
    await fn(input);
    samples.push(performance.now() - t0);
    if (performance.now() - last > 5000 || i === timed.length - 1) {
      last = performance.now();
      progress(`[${setup}] ${label}: ${i + 1}/${timed.length}`);
    }
  }
  return samples;
}

/** Polls `left` (a count still to go) until 0 or the deadline; progress every 10 s. Answers the wait and what was left. */
export async function waitUntilNone(setup: string, label: string, left: () => Promise<number>, limitMs: number): Promise<{ ms: number; left: number }> {
  const started = performance.now();
  let last = started;
  for (;;) {
    const n = await left();
    const waited = performance.now() - started;
    if (n === 0 || waited > limitMs) return { ms: waited, left: n };
    if (performance.now() - last > 10_000) {
      last = performance.now();
      progress(`[${setup}] ${label}: ${n} left after ${(waited / 1000).toFixed(0)} s`);
    }
    await new Promise((resolve) => setTimeout(resolve, 500));
  }
}
