// Prediction benchmark. Everything goes through the HTTP API (app.inject on the app buildApp makes,
// with the key of an enterprise project), on PGlite in memory (in-process queue) and, when
// DATABASE_URL is set, on Postgres (a throwaway lattice_bench_* database; with REDIS_URL also set,
// BullMQ under a throwaway QUEUE_PREFIX). Markdown tables go to stdout, progress to stderr.
//   1. Quality on real purchases: bench/data/apparel_trans.csv (600 customers of an apparel retailer,
//      all first seen in January 2005, every purchase to 2010). For each calibration end and horizon h:
//      the customers with a purchase on or before the calibration end; the truth is whether (and on
//      how many distinct days) each bought in (calEnd, calEnd + h]. The calibration purchases are
//      ingested time-shifted so that the calibration end is now (the service predicts as of the wall
//      clock), one project per calibration end, each purchase at noon of its day (same-day repeats
//      +1 min each, which the engine counts as one occurrence: they are within the hour). Every
//      customer is asked POST /memory-intelligence/predict (event_occurrence "purchase", lookback back
//      to the first purchase in the data) once the project's BG/NBD fit (a job the first ask sets off)
//      answers. Scored against two baselines computed from the calibration
//      data alone: the population base rate (the share of customers who bought in (calEnd - h, calEnd],
//      the same for everyone) and the customer's own Poisson rate (calibration purchase days / days
//      since their first purchase; P = 1 - e^(-rate h)). Brier score, log loss (p clipped to
//      [1e-6, 1 - 1e-6]), ECE over 10 equal-width bins beside the ECE that binning noise alone gives
//      a perfectly calibrated forecaster with the same p (median and 95th percentile of 1,000 seeded
//      Bernoulli draws), MAE of the expected count against the
//      holdout count (distinct purchase days), and a reliability table of Lattice per cell.
//      Abstentions are counted and scored with the base rate.
//   2. Speed on synthetic purchases: BENCH_PREDICT_SUBJECTS customers x 50 purchases (seeded):
//      weekly, biweekly and monthly habits with jitter (a biweekly visit buys 2 items, a monthly one
//      5, minutes apart, so every history spans about the last year) and irregular ones (uniform over
//      the year). Ingest through POST /memory-typed/observations in 10,000-row batches (rows/s);
//      mining of the whole project, POST /lattice/patterns/extract {windowDays: 365} (subjects/s);
//      then, once the pattern memories are embedded (so no background embedding competes), the
//      latency of the declared-target predict (event_occurrence, horizon 30; its first call enqueues
//      the project's BG/NBD fit, a job, and the time until BG/NBD answers is reported on its own), of pattern projection (/lattice/predict), of
//      the profile (/lattice/profile; its first call computes the RFM cut points) and of the context
//      bundle (/lattice/context {maxTokens: 2000}: the mean tokensEstimate, and how many answers are
//      over 2,000 tokens, which must be none), 300 random subjects each after 20 warm-up calls.
//      Latency is measured around app.inject: routing, auth, rate limiting, metering and JSON
//      included, no socket. Targets: p95 <= 50 ms; the context bundle, p95 <= 100 ms. Last, the
//      wall time of one POST /lattice/context/batch {maxTokens: 2000} for 500 distinct random
//      subjects (all of them when the project has fewer), three calls with fresh draws, target
//      <= 10 s each; every answer must hold one bundle per subject in request order (externalIds
//      compared), none over 2,000 tokens.
//
// Run after a build (the worker pool loads dist/workers/index.js):
//   npm run bench:predict
//   DATABASE_URL=postgres://postgres@127.0.0.1:5432/postgres REDIS_URL=redis://127.0.0.1:6379 npm run bench:predict
// Settings: BENCH_PREDICT_SUBJECTS (synthetic customers; default 10000 on Postgres, 1000 on PGlite),
// BENCH_PREDICT_CALLS (300 timed calls per operation), BENCH_PREDICT_EMBED_WAIT_S (900: the longest
// wait for the pattern embeddings before timing), BENCH_SKIP_PGLITE=1 (Postgres only).
// This bench sets in its own environment, before the contexts read their config:
// BEHAVIOR_MINING_DEBOUNCE_MS and BEHAVIOR_MINING_MAX_WAIT_MS to a day (no automatic mining in the
// background while measuring), REQUEST_TIMEOUT_MS 600000 (the whole-project extract is awaited
// within it) and RATE_LIMIT_PER_MINUTE 10000000 (the sequential calls would pass the default 6,000).
import { performance } from 'node:perf_hooks';
import { createLogger } from '../src/platform/logger.js';
import type { ObservationInput } from '../src/typed/schemas.js';
import {
  check,
  DAY_MS,
  HOUR_MS,
  holdBackgroundMining,
  ingestBatch as ingest,
  markdownTable,
  ms,
  mulberry32,
  onEachBackendWithApp,
  openProject,
  optionalInt,
  perSecond,
  positiveInt,
  progress,
  runBench,
  sleep,
  summarise,
  tenthsOfSeconds as seconds,
  thousands,
  type AppRun as Run,
} from './support.js';
import { CUSTOMER_KIND as KIND, HABITS, PURCHASE_ATTRIBUTE as ATTRIBUTE, PURCHASES, subjectId, syntheticPurchases } from './customers.js';
import { dayOf, loadPurchases, purchaseObservations, purchasesByCustomer, type Purchase } from './apparel.js';

holdBackgroundMining();

const BATCH = 10_000;

// Part 1. The data's customers all start in January 2005 and buy most in 2005 (1,362 of 3,187
// purchases): the first end sees their first year, the second the same cohort half a year older.
const CAL_ENDS = ['2005-12-31', '2006-06-30'];
const HORIZONS = [90, 180];
const BINS = 10;
const EPS = 1e-6;

// Part 2.
const SUBJECTS_OVERRIDE = optionalInt('BENCH_PREDICT_SUBJECTS');
const PG_SUBJECTS = 10_000;
const PGLITE_SUBJECTS = 1000;
const CALLS = positiveInt('BENCH_PREDICT_CALLS', 300);
const WARMUP = 20;
const EMBED_WAIT_MS = positiveInt('BENCH_PREDICT_EMBED_WAIT_S', 900) * 1000;
const MINING_WINDOW_DAYS = 365;
const SPEED_HORIZON = 30;
const TARGET_MINING_PER_SECOND = 200;
const TARGET_P95_MS = 50;
const CONTEXT_MAX_TOKENS = 2000;
const TARGET_CONTEXT_P95_MS = 100;
const CONTEXT_BATCH = 500;
const CONTEXT_BATCH_RUNS = 3;
const TARGET_CONTEXT_BATCH_MS = 10_000;

const log = createLogger('warn');
const out: string[] = [];
const write = (text = '') => out.push(text);

const fixed = (x: number, digits = 3) => (Number.isFinite(x) ? x.toFixed(digits) : '–');

// ---------------------------------------------------------------------------------------------
// HTTP

interface TargetAnswer {
  targetPrediction: { probability: number | null; value: number | null; model: string | null; explanation: string };
  abstained: boolean;
  abstentionReason: string | null;
}
interface ExtractAnswer {
  contactsProcessed: number;
  patternsCreated: number;
  patternsRefreshed: number;
  patternsDeactivated: number;
  durationMs: number;
  errors?: unknown[];
}
interface ProjectionAnswer {
  predictions: unknown[];
  abstained: boolean;
}
interface ProfileAnswer {
  rfmSegment: string | null;
}
interface ContextAnswer {
  subject: { kind: string; externalId: string };
  tokensEstimate: number;
  truncated: string[];
}

const purchaseTarget = (lookbackDays?: number) => ({ kind: 'event_occurrence', eventType: ATTRIBUTE, ...(lookbackDays === undefined ? {} : { lookbackDays }) });

/**
 * The first ask for a purchase prediction enqueues the project's BG/NBD fit (a job) and is answered
 * from the subject's own rate; asks again until BG/NBD answers. Answers the time from the first ask.
 */
async function untilFitted(ask: () => Promise<TargetAnswer>, limitMs = 600_000): Promise<number> {
  const started = performance.now();
  while ((await ask()).targetPrediction.model !== 'bgnbd') {
    if (performance.now() - started > limitMs) throw new Error(`BG/NBD was not fitted within ${limitMs / 1000} s`);
    await sleep(100);
  }
  return performance.now() - started;
}

// ---------------------------------------------------------------------------------------------
// 1. Quality on real purchases


interface Scored {
  /** P(at least one purchase in the horizon). */
  p: number[];
  /** Expected purchase days in the horizon. */
  expected: number[];
}

interface Metrics {
  meanP: number;
  brier: number;
  logLoss: number;
  ece: number;
  mae: number;
  meanExpected: number;
}

function metrics(s: Scored, y: readonly number[], counts: readonly number[]): Metrics {
  const n = y.length;
  let brier = 0;
  let logLoss = 0;
  let mae = 0;
  for (let i = 0; i < n; i++) {
    const p = Math.min(1 - EPS, Math.max(EPS, s.p[i]!));
    brier += (s.p[i]! - y[i]!) ** 2;
    logLoss -= y[i]! * Math.log(p) + (1 - y[i]!) * Math.log(1 - p);
    mae += Math.abs(s.expected[i]! - counts[i]!);
  }
  const ece = reliability(s.p, y).reduce((sum, b) => sum + (b.n / n) * Math.abs(b.meanP - b.observed), 0);
  const mean = (xs: readonly number[]) => xs.reduce((a, b) => a + b, 0) / n;
  return { meanP: mean(s.p), brier: brier / n, logLoss: logLoss / n, ece, mae: mae / n, meanExpected: mean(s.expected) };
}

const FLOOR_DRAWS = 1000;

/**
 * The ECE that a perfectly calibrated forecaster would show with these very probabilities on this
 * many subjects: outcomes drawn as Bernoulli(p) (seeded), ECE of each draw, the median and the 95th
 * percentile. On 600 customers and 10 bins the binning noise alone is a few hundredths, so an ECE
 * is only evidence of miscalibration above this floor.
 */
function eceFloor(p: readonly number[], seed: number): { median: number; p95: number } {
  const random = mulberry32(seed);
  const draws: number[] = [];
  for (let k = 0; k < FLOOR_DRAWS; k++) {
    const y = p.map((value) => (random() < value ? 1 : 0));
    draws.push(reliability(p, y).reduce((sum, b) => sum + (b.n / p.length) * Math.abs(b.meanP - b.observed), 0));
  }
  draws.sort((a, b) => a - b);
  return { median: draws[Math.floor(FLOOR_DRAWS / 2)]!, p95: draws[Math.floor(FLOOR_DRAWS * 0.95)]! };
}

/** The 10 equal-width bins of p: how many, their mean p, their observed rate (empty bins left out). */
function reliability(p: readonly number[], y: readonly number[]) {
  const bins = Array.from({ length: BINS }, (_, i) => ({ lo: i / BINS, hi: (i + 1) / BINS, n: 0, sumP: 0, sumY: 0 }));
  p.forEach((value, i) => {
    const bin = bins[Math.min(BINS - 1, Math.floor(value * BINS))]!;
    bin.n++;
    bin.sumP += value;
    bin.sumY += y[i]!;
  });
  return bins.filter((b) => b.n > 0).map((b) => ({ lo: b.lo, hi: b.hi, n: b.n, meanP: b.sumP / b.n, observed: b.sumY / b.n }));
}

interface Customer {
  id: string;
  /** Calibration purchases, oldest first. */
  calibration: Purchase[];
  /** Distinct calibration purchase days, ascending. */
  calDays: number[];
  /** Distinct purchase days after the calibration end, ascending. */
  laterDays: number[];
}

async function benchQuality(run: Run, purchases: readonly Purchase[]): Promise<void> {
  const firstDay = Math.min(...purchases.map((p) => p.day));
  const qualityRows: string[][] = [];
  const notes: string[] = [];
  const reliabilityTables: string[] = [];

  for (const calEnd of CAL_ENDS) {
    const endDay = dayOf(calEnd);
    /** The calibration end: the end of its day. */
    const endMs = (endDay + 1) * DAY_MS;
    const customers: Customer[] = [];
    for (const [id, list] of purchasesByCustomer(purchases)) {
      const calibration = list.filter((p) => p.day <= endDay);
      if (calibration.length === 0) continue;
      const distinct = (xs: Purchase[]) => [...new Set(xs.map((p) => p.day))];
      customers.push({ id, calibration, calDays: distinct(calibration), laterDays: distinct(list.filter((p) => p.day > endDay)) });
    }

    // Time-shift: the calibration end becomes now. Noon of the purchase day, same-day repeats +1 min.
    const client = await openProject(run, `predict-quality-${calEnd}`, ATTRIBUTE);
    const shiftMs = Date.now() - endMs;
    const rows = customers.flatMap((c) => purchaseObservations(c.id, c.calibration, shiftMs));
    for (let i = 0; i < rows.length; i += BATCH) await ingest(client, rows.slice(i, i + BATCH));
    const lookbackDays = Math.min(3650, Math.ceil((endMs - (firstDay * DAY_MS + 12 * HOUR_MS)) / DAY_MS));
    progress(`[${run.setup}] quality, calibration end ${calEnd}: ${customers.length} customers, ${rows.length} purchases ingested; lookback ${lookbackDays} days`);

    // Lattice: every customer, every horizon, once the project's BG/NBD fit is ready.
    const answers = new Map<number, TargetAnswer[]>();
    const ask = (id: string, h: number) => client.post<TargetAnswer>('/memory-intelligence/predict', { subject: { kind: KIND, externalId: id }, horizonDays: h, target: purchaseTarget(lookbackDays) });
    const firstCallMs = await untilFitted(() => ask(customers[0]!.id, HORIZONS[0]!));
    for (const h of HORIZONS) {
      const list: TargetAnswer[] = [];
      for (const c of customers) list.push(await ask(c.id, h));
      answers.set(h, list);
      progress(`[${run.setup}] quality, calibration end ${calEnd}, h ${h}: ${list.length} predictions`);
    }
    const firstExplanation = answers.get(HORIZONS[0]!)!.find((a) => a.targetPrediction.model === 'bgnbd')?.targetPrediction.explanation;
    notes.push(
      `Calibration end ${calEnd}: ${customers.length} customers, ${thousands(rows.length)} calibration purchases, lookbackDays ${lookbackDays}; ` +
        `BG/NBD fitted (a job) ${ms(firstCallMs)} after the first predict call.${firstExplanation ? ` Lattice says: "${firstExplanation}"` : ''}`,
    );

    for (const h of HORIZONS) {
      const n = customers.length;
      const count = customers.map((c) => c.laterDays.filter((d) => d <= endDay + h).length);
      const y = count.map((k): number => (k > 0 ? 1 : 0));
      // Base rate: the share who bought in the last h days of the calibration; the mean count there.
      const recent = customers.map((c) => c.calDays.filter((d) => d > endDay - h).length);
      const baseP = recent.filter((k) => k > 0).length / n;
      const baseCount = recent.reduce((a, b) => a + b, 0) / n;
      const base: Scored = { p: customers.map(() => baseP), expected: customers.map(() => baseCount) };
      // The customer's own Poisson rate since their first purchase (noon of its day) to the end.
      const poisson: Scored = { p: [], expected: [] };
      for (const c of customers) {
        const exposure = Math.max(1, (endMs - (c.calDays[0]! * DAY_MS + 12 * HOUR_MS)) / DAY_MS);
        const rate = c.calDays.length / exposure;
        poisson.p.push(1 - Math.exp(-rate * h));
        poisson.expected.push(rate * h);
      }
      // Lattice; an abstention is scored with the base rate.
      const list = answers.get(h)!;
      const lattice: Scored = { p: [], expected: [] };
      const models = new Map<string, number>();
      let abstained = 0;
      const reasons = new Map<string, number>();
      for (const a of list) {
        const t = a.targetPrediction;
        if (a.abstained || t.probability === null) {
          abstained++;
          const reason = (a.abstentionReason ?? 'none given').split(':')[0]!;
          reasons.set(reason, (reasons.get(reason) ?? 0) + 1);
          lattice.p.push(baseP);
          lattice.expected.push(baseCount);
          continue;
        }
        models.set(t.model ?? 'null', (models.get(t.model ?? 'null') ?? 0) + 1);
        lattice.p.push(t.probability);
        lattice.expected.push(t.value ?? NaN);
      }
      const positiveRate = y.reduce((a, b) => a + b, 0) / n;
      const meanCount = count.reduce((a, b) => a + b, 0) / n;
      const modelText = [...models].map(([m, k]) => `${m} ${k}`).join(', ') || 'none';
      const abstainText = abstained === 0 ? '0' : `${abstained} (${[...reasons].map(([r, k]) => `${r} ${k}`).join(', ')}; scored with the base rate)`;
      for (const [name, scored, answered] of [
        ['Lattice', lattice, `${modelText}; abstained ${abstainText}`],
        ['base rate', base, `p ${fixed(baseP)} for all`],
        ['own Poisson rate', poisson, '–'],
      ] as const) {
        const m = metrics(scored, y, count);
        const floor = eceFloor(scored.p, h);
        qualityRows.push([
          calEnd, String(h), String(n), fixed(positiveRate), name, fixed(m.meanP), fixed(m.brier, 4), fixed(m.logLoss, 4), fixed(m.ece, 4),
          `${fixed(floor.median, 4)} / ${fixed(floor.p95, 4)}`, fixed(m.mae), `${fixed(m.meanExpected)} / ${fixed(meanCount)}`, answered,
        ]);
      }
      const bins = reliability(lattice.p, y).map((b) => [`[${b.lo.toFixed(1)}, ${b.hi.toFixed(1)}${b.hi === 1 ? ']' : ')'}`, String(b.n), fixed(b.meanP), fixed(b.observed)]);
      reliabilityTables.push(
        `Reliability of Lattice, calibration end ${calEnd}, h ${h} (${n} customers, observed rate ${fixed(positiveRate)}):\n\n` +
          markdownTable(['Bin of p', 'n', 'Mean predicted', 'Observed'], bins, (i) => i >= 1),
      );
    }
  }

  write('#### 1. Quality on real purchases (bench/data/apparel_trans.csv)');
  write();
  for (const note of notes) write(`- ${note}`);
  write(
    '- Truth: a purchase in (calEnd, calEnd + h]; counts are distinct purchase days (the engine counts activities within an hour as one). ' +
      'Base rate: the share of customers who bought in (calEnd - h, calEnd], for all; own Poisson rate: calibration purchase days / days since the first purchase. ' +
      'Log loss clips p to [1e-6, 1 - 1e-6]; ECE over 10 equal-width bins. ' +
      `ECE if calibrated: the median and 95th percentile of the ECE over ${FLOOR_DRAWS} draws of outcomes from the model's own p (Bernoulli, seeded): ` +
      'what binning noise alone gives on this many customers.',
  );
  write();
  write(
    markdownTable(
      ['Calibration end', 'h (days)', 'Customers', 'Observed rate', 'Model', 'Mean p', 'Brier', 'Log loss', 'ECE', 'ECE if calibrated (median / p95)', 'MAE count', 'Mean count (pred / actual)', 'Answered by'],
      qualityRows,
      (i) => i === 1 || i === 2 || i === 3 || (i >= 5 && i <= 10),
    ),
  );
  write();
  for (const table of reliabilityTables) {
    write(table);
    write();
  }
}

// ---------------------------------------------------------------------------------------------
// 2. Speed on synthetic purchases

interface SpeedRow {
  operation: string;
  n?: number;
  samples?: number[];
  throughput?: string;
  notes?: string;
}

async function timeCalls(count: number, subjects: number, seed: number, call: (subject: string) => Promise<void>): Promise<number[]> {
  const random = mulberry32(seed);
  const samples: number[] = [];
  for (let k = 0; k < count; k++) {
    const subject = subjectId(Math.floor(random() * subjects));
    const t0 = performance.now();
    await call(subject);
    samples.push(performance.now() - t0);
  }
  return samples;
}

async function benchSpeed(run: Run, subjects: number): Promise<void> {
  const { ctx, setup } = run;
  const rows: SpeedRow[] = [];
  const notes: string[] = [];
  const client = await openProject(run, 'predict-speed', ATTRIBUTE);
  const subject = (externalId: string) => ({ kind: KIND, externalId });

  // Ingest: 200 customers (10,000 rows) per call.
  const perBatch = BATCH / PURCHASES;
  const now = Date.now();
  const batchSamples: number[] = [];
  let lastReport = performance.now();
  for (let start = 0; start < subjects; start += perBatch) {
    const batch: ObservationInput[] = [];
    for (let i = start; i < Math.min(subjects, start + perBatch); i++) batch.push(...syntheticPurchases(i, now));
    batchSamples.push(await ingest(client, batch));
    if (performance.now() - lastReport > 2000 || start + perBatch >= subjects) {
      lastReport = performance.now();
      progress(`[${setup}] speed: ingested ${thousands(Math.min(subjects, start + perBatch) * PURCHASES)} of ${thousands(subjects * PURCHASES)} rows`);
    }
  }
  const ingestMs = batchSamples.reduce((a, b) => a + b, 0);
  const totalRows = subjects * PURCHASES;
  rows.push({
    operation: `ingest, POST /memory-typed/observations, ${thousands(BATCH)}-row batches`,
    samples: batchSamples,
    throughput: `${thousands(perSecond(totalRows, ingestMs))} rows/s`,
    notes: `${thousands(totalRows)} rows in ${seconds(ingestMs)}`,
  });

  // Mining, the whole project, awaited.
  progress(`[${setup}] speed: mining ${thousands(subjects)} subjects (POST /lattice/patterns/extract, windowDays ${MINING_WINDOW_DAYS})`);
  const t0 = performance.now();
  try {
    const report = await client.post<ExtractAnswer>('/lattice/patterns/extract', { windowDays: MINING_WINDOW_DAYS });
    const took = performance.now() - t0;
    const rate = perSecond(report.contactsProcessed, took);
    rows.push({
      operation: `mining, POST /lattice/patterns/extract {windowDays: ${MINING_WINDOW_DAYS}}, whole project`,
      n: 1,
      throughput: `${thousands(rate)} subjects/s`,
      notes:
        `${thousands(report.contactsProcessed)} subjects in ${seconds(took)}; ${thousands(report.patternsCreated)} patterns created, ` +
        `${thousands(report.patternsRefreshed)} refreshed, ${thousands(report.patternsDeactivated)} deactivated; ${report.errors?.length ?? 0} errors` +
        (run.postgres ? `; ${check(rate >= TARGET_MINING_PER_SECOND, `≥ ${TARGET_MINING_PER_SECOND} subjects/s`)}` : ''),
    });
    progress(`[${setup}] speed: mined ${report.contactsProcessed} subjects in ${seconds(took)}, ${report.patternsCreated} patterns created`);
  } catch (error) {
    const took = performance.now() - t0;
    const message = error instanceof Error ? error.message : String(error);
    rows.push({ operation: `mining, POST /lattice/patterns/extract {windowDays: ${MINING_WINDOW_DAYS}}, whole project`, n: 1, notes: `❌ failed after ${seconds(took)}: ${message}` });
    progress(`[${setup}] speed: mining failed after ${seconds(took)}: ${message}`);
  }

  // The pattern memories are embedded by background jobs: let them finish before timing reads.
  // (A count on the partial index of unembedded rows, polled once a second: cheap next to the drain.)
  const unembedded = async () =>
    (await ctx.runtime.db.query<{ n: number }>('SELECT count(*)::int AS n FROM memories WHERE project_id = $1 AND embedding IS NULL', [client.projectId])).rows[0]!.n;
  const embedStart = performance.now();
  const patternMemories = (await ctx.runtime.db.query<{ n: number }>('SELECT count(*)::int AS n FROM memories WHERE project_id = $1', [client.projectId])).rows[0]!.n;
  for (;;) {
    const left = await unembedded();
    const waited = performance.now() - embedStart;
    if (left === 0) {
      notes.push(`The ${thousands(patternMemories)} pattern memories were all embedded ${seconds(waited)} after mining answered (the drain runs beside mining too); timing starts after that.`);
      break;
    }
    if (waited > EMBED_WAIT_MS) {
      notes.push(`Timing started with ${thousands(left)} of ${thousands(patternMemories)} pattern memories still to embed after ${seconds(EMBED_WAIT_MS)} (BENCH_PREDICT_EMBED_WAIT_S).`);
      break;
    }
    if (performance.now() - lastReport > 10_000) {
      lastReport = performance.now();
      progress(`[${setup}] speed: waiting for the pattern embeddings, ${thousands(left)} of ${thousands(patternMemories)} left after ${seconds(waited)}`);
    }
    await sleep(1000);
  }

  // Latency: the first calls fit project models, then warm-up, then CALLS random subjects each.
  const tally = { predict: new Map<string, number>(), projectionAbstained: 0, projected: 0, segments: new Map<string, number>(), tokens: [] as number[], truncated: 0 };
  const predictTarget = async (externalId: string) => {
    const answer = await client.post<TargetAnswer>('/memory-intelligence/predict', { subject: subject(externalId), horizonDays: SPEED_HORIZON, target: purchaseTarget() });
    const model = answer.targetPrediction.model ?? 'abstained';
    tally.predict.set(model, (tally.predict.get(model) ?? 0) + 1);
  };
  const projection = async (externalId: string) => {
    const answer = await client.post<ProjectionAnswer>('/lattice/predict', { subject: subject(externalId), horizonDays: SPEED_HORIZON });
    if (answer.abstained) tally.projectionAbstained++;
    tally.projected += answer.predictions.length;
  };
  const profile = async (externalId: string) => {
    const answer = await client.post<ProfileAnswer>('/lattice/profile', { subject: subject(externalId) });
    tally.segments.set(answer.rfmSegment ?? 'null', (tally.segments.get(answer.rfmSegment ?? 'null') ?? 0) + 1);
  };
  const context = async (externalId: string) => {
    const answer = await client.post<ContextAnswer>('/lattice/context', { subject: subject(externalId), maxTokens: CONTEXT_MAX_TOKENS });
    tally.tokens.push(answer.tokensEstimate);
    if (answer.truncated.length > 0) tally.truncated++;
  };
  const tokensText = (tokens: readonly number[]) => {
    const over = tokens.filter((t) => !(t <= CONTEXT_MAX_TOKENS)).length;
    return `mean tokensEstimate ${(tokens.reduce((a, b) => a + b, 0) / Math.max(1, tokens.length)).toFixed(0)}, max ${Math.max(...tokens)}; ${check(over === 0, `${over} over ${thousands(CONTEXT_MAX_TOKENS)}`)}`;
  };

  for (const [operation, call] of [
    ['profile, first call (computes the RFM cut points)', profile],
  ] as const) {
    const started = performance.now();
    await call(subjectId(0));
    rows.push({ operation, n: 1, samples: [performance.now() - started] });
  }
  const fitted = await untilFitted(() => client.post<TargetAnswer>('/memory-intelligence/predict', { subject: subject(subjectId(0)), horizonDays: SPEED_HORIZON, target: purchaseTarget() }));
  rows.push({ operation: `declared-target predict: BG/NBD over ${thousands(subjects)} subjects fitted (a job) after the first call`, n: 1, samples: [fitted] });
  const ops = [
    { operation: `declared-target predict, POST /memory-intelligence/predict (event_occurrence, h ${SPEED_HORIZON})`, call: predictTarget, seed: 11 },
    { operation: `pattern projection, POST /lattice/predict (h ${SPEED_HORIZON})`, call: projection, seed: 12 },
    { operation: 'profile, POST /lattice/profile', call: profile, seed: 13 },
    { operation: `context bundle, POST /lattice/context {maxTokens: ${CONTEXT_MAX_TOKENS}}`, call: context, seed: 14, targetMs: TARGET_CONTEXT_P95_MS },
  ];
  for (const op of ops) {
    progress(`[${setup}] speed: ${op.operation}: ${WARMUP} warm-up, ${CALLS} timed`);
    await timeCalls(WARMUP, subjects, op.seed + 100, op.call);
    tally.predict.clear();
    tally.projectionAbstained = 0;
    tally.projected = 0;
    tally.segments.clear();
    tally.tokens = [];
    tally.truncated = 0;
    const samples = await timeCalls(CALLS, subjects, op.seed, op.call);
    const s = summarise(samples);
    const total = samples.reduce((a, b) => a + b, 0);
    const answered =
      op.call === predictTarget
        ? `models: ${[...tally.predict].map(([m, k]) => `${m} ${k}`).join(', ')}`
        : op.call === projection
          ? `${tally.projectionAbstained} of ${CALLS} abstained; ${(tally.projected / CALLS).toFixed(2)} predictions per call`
          : op.call === profile
            ? `segments: ${[...tally.segments].sort((a, b) => b[1] - a[1]).map(([m, k]) => `${m} ${k}`).join(', ')}`
            : `${tokensText(tally.tokens)}; ${tally.truncated} of ${CALLS} truncated`;
    const targetMs = op.targetMs ?? TARGET_P95_MS;
    rows.push({
      operation: op.operation,
      samples,
      throughput: `${perSecond(CALLS, total).toFixed(0)} calls/s (sequential)`,
      notes: `${answered}; ${check(s.p95 <= targetMs, `p95 ≤ ${targetMs} ms`)}`,
    });
  }

  // Context batches: distinct random subjects (a fresh draw per call), one awaited call each.
  const batchSize = Math.min(CONTEXT_BATCH, subjects);
  const batchOperation = `context batch, POST /lattice/context/batch {${batchSize} subjects, maxTokens: ${CONTEXT_MAX_TOKENS}}, wall time of one call`;
  const wallMs: number[] = [];
  const batchTokens: number[] = [];
  const batchFaults: string[] = [];
  let batchTruncated = 0;
  for (let k = 0; k < CONTEXT_BATCH_RUNS; k++) {
    const random = mulberry32(21 + k);
    const pool = Array.from({ length: subjects }, (_, i) => i);
    for (let i = 0; i < batchSize; i++) {
      const j = i + Math.floor(random() * (subjects - i));
      [pool[i], pool[j]] = [pool[j]!, pool[i]!];
    }
    const ids = pool.slice(0, batchSize).map(subjectId);
    progress(`[${setup}] speed: ${batchOperation}, call ${k + 1} of ${CONTEXT_BATCH_RUNS}`);
    const started = performance.now();
    try {
      const { bundles } = await client.post<{ bundles: ContextAnswer[] }>('/lattice/context/batch', { subjects: ids.map(subject), maxTokens: CONTEXT_MAX_TOKENS });
      wallMs.push(performance.now() - started);
      const misplaced = ids.filter((id, i) => bundles[i]?.subject.kind !== KIND || bundles[i]?.subject.externalId !== id).length;
      if (bundles.length !== batchSize || misplaced > 0) batchFaults.push(`call ${k + 1}: ${bundles.length} bundles, ${misplaced} not in request order`);
      for (const b of bundles) {
        batchTokens.push(b.tokensEstimate);
        if (b.truncated.length > 0) batchTruncated++;
      }
    } catch (error) {
      batchFaults.push(`call ${k + 1} failed after ${seconds(performance.now() - started)}: ${error instanceof Error ? error.message : String(error)}`);
    }
  }
  const batchWall = wallMs.length > 0 ? summarise(wallMs) : undefined;
  rows.push({
    operation: batchOperation,
    samples: wallMs.length > 0 ? wallMs : undefined,
    n: CONTEXT_BATCH_RUNS,
    throughput: batchWall ? `${thousands(perSecond(batchSize, batchWall.p50))} bundles/s (median call)` : undefined,
    notes: [
      wallMs.length > 0 ? `calls ${wallMs.map(seconds).join(', ')}` : undefined,
      batchFaults.length === 0
        ? check(true, `${batchSize} bundles in request order in each of ${CONTEXT_BATCH_RUNS} calls`)
        : check(false, batchFaults.join('; ')),
      batchTokens.length > 0 ? `${tokensText(batchTokens)}; ${batchTruncated} of ${batchTokens.length} truncated` : undefined,
      check(wallMs.length === CONTEXT_BATCH_RUNS && Math.max(...wallMs) <= TARGET_CONTEXT_BATCH_MS, `every call ≤ ${seconds(TARGET_CONTEXT_BATCH_MS)}`),
    ]
      .filter((x) => x !== undefined)
      .join('; '),
  });
  if (batchSize < CONTEXT_BATCH) notes.push(`The project has ${thousands(subjects)} customers: the context batch takes all of them, not ${CONTEXT_BATCH}.`);

  write(`#### 2. Speed (synthetic: ${thousands(subjects)} customers × ${PURCHASES} purchases)`);
  write();
  write(
    `- Habits: ${HABITS.map((h) => `${Math.round(h.share * 100)}% ${h.habit}${h.perVisit > 1 ? ` (${h.perVisit} items per visit)` : ''}`).join(', ')}, over about the last year. ` +
      'Latency is measured around app.inject, one call at a time; throughput is calls over their summed latency.',
  );
  for (const note of notes) write(`- ${note}`);
  write();
  write(
    markdownTable(
      ['Operation', 'n', 'p50', 'p95', 'p99', 'Throughput', 'Notes'],
      rows.map((r) => {
        const s = r.samples ? summarise(r.samples) : undefined;
        return [r.operation, String(s?.n ?? r.n ?? '–'), s ? ms(s.p50) : '–', s ? ms(s.p95) : '–', s ? ms(s.p99) : '–', r.throughput ?? '–', r.notes ?? '–'];
      }),
      (i) => i >= 1 && i <= 4,
    ),
  );
  write();
}

// ---------------------------------------------------------------------------------------------
// Backends

async function runBackend(run: Run, purchases: readonly Purchase[]): Promise<void> {
  await benchQuality(run, purchases);
  await benchSpeed(run, SUBJECTS_OVERRIDE ?? (run.postgres ? PG_SUBJECTS : PGLITE_SUBJECTS));
}

async function main(): Promise<void> {
  const purchases = loadPurchases();
  await onEachBackendWithApp(log, (run) => runBackend(run, purchases), {
    title: 'Prediction benchmark',
    description: 'Through the HTTP API (app.inject), one enterprise project per part and calibration end.',
    out,
  });
}

runBench(main);
