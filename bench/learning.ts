// Learning benchmark: does the closed loop (decisions, outcomes, the Beta-Binomial update of the
// evidence they cite) learn what is true, and are recorded predictions calibrated once scored?
// Everything the loop does goes through the HTTP API (app.inject on the app buildApp makes, with
// the key of an enterprise project), on PGlite in memory (in-process queue) and, when DATABASE_URL
// is set, on Postgres (a throwaway lattice_bench_* database; with REDIS_URL also set, BullMQ under a
// throwaway QUEUE_PREFIX). Markdown tables go to stdout, progress to stderr.
//   1. Convergence (simulated, seeded): K patterns written as behavior_pattern memories through
//      lattice.apis.memory.upsertKeyed (as mining writes them), each with mined hits and misses drawn
//      at random (0 to 40 mined periods, so the priors differ in mean and in strength, up to the cap
//      of 10 pseudo-outcomes) and a true success rate drawn uniformly in [0.05, 0.95], independent
//      of its mined confidence. One agent per pattern, all agents at once, each acting on its
//      pattern again and again: POST /lattice/decisions citing it (refType pattern), then
//      POST /lattice/outcomes with success drawn Bernoulli(true rate), else failure (no partials).
//      One decision per outcome by default (the realistic flow, two calls per outcome;
//      BENCH_LEARNING_OUTCOMES_PER_DECISION=10 records ten outcomes on each decision instead).
//      After N = 10, 100 and 1,000 outcomes each agent reads its pattern back through
//      GET /lattice/patterns/{id}; the table gives the mean absolute error of that confidence
//      against the true rates beside two same-run baselines: the mined prior alone (no learning)
//      and the raw success frequency (successes / N). Checked at every N, and the run fails if not:
//      the confidence read back equals the posteriorConfidence of the last outcome's `updates`
//      (within 1e-9) and the conjugate update computed here, (c s + H) / (s + H + M) with
//      c = (hits + 1) / (hits + misses + 2) and s = min(10, hits + misses + 2) of the mined counts.
//      Each decision and outcome is also a memory that jobs embed behind; the backlog left when the
//      last outcome answers is reported. This part runs after part 2 (printed in this order): the
//      drain jobs of that backlog hold the job consumers for minutes and would delay the BG/NBD fit.
//   2. Calibration on the apparel development set (bench/data/apparel_trans.csv, as bench/predict.ts
//      reads it): calibration end 2005-12-31, horizons 90 and 180 days, one project per horizon (so
//      the report holds the predictions of one horizon). The calibration purchases are ingested
//      through POST /memory-typed/observations time-shifted so that the calibration end is now, each
//      at noon of its day (same-day repeats +1 min). The project's BG/NBD fit is set off by asking
//      the first customer with horizonDays 365 until BG/NBD answers: those warm-up predictions are
//      recorded too but fall due after the scoring time used below, so they are never scored and
//      stay out of the Brier score and the ECE (they count in the report's prediction total). Then
//      every customer is asked POST /memory-intelligence/predict (event_occurrence "purchase", horizon
//      h) once. Then the holdout purchases of (calEnd, calEnd + h] are ingested through the same
//      route with the same time shift: their observedAt lies in the future, which the route accepts
//      (it checks only that observedAt parses). The first is at noon of the day after the
//      calibration end, 12 h after "now": after every prediction was made, and the last at least
//      12 h before the predictions fall due. lattice.apis.behavior.scoreDue(now + (h + 1) days) is called
//      until it scores none (a hit: a purchase in (madeAt, dueAt]), then GET /lattice/calibration
//      ?bucketCount=10. The bench recomputes the Brier score and the ECE (the same 10 equal-width
//      buckets) from the answers and the data; the run fails if they differ from the report's by
//      more than 1e-6, or if the report scored another number of predictions than answered. Beside
//      them, the same-run baseline: the base rate (the share of customers who bought in the last h
//      days of the calibration, the same p for all) scored on the same customers.
//
// Run after a build (the worker pool loads dist/workers/index.js):
//   npm run bench:learning
//   BENCH_SKIP_PGLITE=1 DATABASE_URL=postgres://postgres@127.0.0.1:5432/postgres REDIS_URL=redis://127.0.0.1:6379 npm run bench:learning
// Settings: BENCH_LEARNING_PATTERNS (K; default 30 on Postgres, 10 on PGlite, where the calls run
// one at a time on its single connection), BENCH_LEARNING_OUTCOMES_PER_DECISION (1),
// BENCH_LEARNING_PARTS (1,2: the parts to run), BENCH_SKIP_PGLITE=1 (Postgres only). This bench
// sets in its own environment, before the contexts read their config: BEHAVIOR_MINING_DEBOUNCE_MS
// and BEHAVIOR_MINING_MAX_WAIT_MS to a day (no mining in the background: it would re-mine the
// simulated patterns and the apparel customers), REQUEST_TIMEOUT_MS 600000 and
// RATE_LIMIT_PER_MINUTE 10000000 (the calls would pass the default 6,000 a minute).
import { performance } from 'node:perf_hooks';
import { createLogger } from '../src/platform/logger.js';
import type { ObservationInput } from '../src/typed/schemas.js';
import {
  DAY_MS,
  HOUR_MS,
  holdBackgroundMining,
  ingestBatch,
  markdownTable,
  mulberry32,
  onEachBackendWithApp,
  openProject,
  optionalInt,
  perSecond,
  positiveInt,
  ProjectClient,
  progress,
  runBench,
  sleep,
  tenthsOfSeconds as seconds,
  thousands,
  type AppRun as Run,
} from './support.js';
import { CUSTOMER_KIND as KIND, PURCHASE_ATTRIBUTE as ATTRIBUTE } from './customers.js';
import { dayOf, loadPurchases, purchaseObservations, purchasesByCustomer, type Purchase } from './apparel.js';

holdBackgroundMining();

const BATCH = 10_000;

// Part 1.
const PATTERNS_OVERRIDE = optionalInt('BENCH_LEARNING_PATTERNS');
const PG_PATTERNS = 30;
const PGLITE_PATTERNS = 10;
const CHECKPOINTS = [10, 100, 1000];
const OUTCOMES = CHECKPOINTS.at(-1)!;
const OUTCOMES_PER_DECISION = positiveInt('BENCH_LEARNING_OUTCOMES_PER_DECISION', 1);
const MAX_MINED_PERIODS = 40;
const PRIOR_CAP = 10;
const EXACT = 1e-9;

// Part 2.
const CAL_END = '2005-12-31';
const HORIZONS = [90, 180];
const WARMUP_HORIZON = 365;
const BINS = 10;
const AGREE = 1e-6;
const FIT_WAIT_MS = 600_000;

const PARTS = new Set((process.env.BENCH_LEARNING_PARTS ?? '1,2').split(',').map((x) => x.trim()));

const log = createLogger('warn');
const out: string[] = [];
const write = (text = '') => out.push(text);
type Write = (text?: string) => void;

const fixed = (x: number | null, digits = 4) => (x !== null && Number.isFinite(x) ? x.toFixed(digits) : '–');
const sci = (x: number) => (x === 0 ? '0' : x.toExponential(1));

// ---------------------------------------------------------------------------------------------
// 1. Convergence of pattern confidence to the true success rate

interface RefUpdate {
  refId: string;
  refType: string;
  priorConfidence: number;
  posteriorConfidence: number;
  hits: number;
  misses: number;
}
interface OutcomeAnswer {
  outcomeId: string;
  attributed: boolean;
  updates: RefUpdate[];
}
interface PatternAnswer {
  id: string;
  confidence: number;
  metadata: { hits: number; misses: number; minedConfidence?: number; outcomeHits?: number; outcomeMisses?: number };
}

interface SimPattern {
  index: number;
  id: string;
  subject: string;
  minedHits: number;
  minedMisses: number;
  trueRate: number;
  /** At each checkpoint: the confidence read back, the successes so far. */
  read: Map<number, { confidence: number; successes: number }>;
}

const minedConfidence = (p: SimPattern) => (p.minedHits + 1) / (p.minedHits + p.minedMisses + 2);
const priorStrength = (p: SimPattern) => Math.min(PRIOR_CAP, p.minedHits + p.minedMisses + 2);
/** The conjugate update, computed here independently of the service. */
const expectedPosterior = (p: SimPattern, hits: number, misses: number) =>
  (minedConfidence(p) * priorStrength(p) + hits) / (priorStrength(p) + hits + misses);

async function benchConvergence(run: Run, k: number, w: Write): Promise<void> {
  const { ctx, setup } = run;
  const client = await openProject(run, 'learning-convergence', ATTRIBUTE);
  const random = mulberry32(20_251);
  const now = Date.now();
  const patterns: SimPattern[] = [];
  const rows = [];
  for (let i = 0; i < k; i++) {
    const periods = Math.floor(random() * (MAX_MINED_PERIODS + 1));
    const minedHits = Math.floor(random() * (periods + 1));
    const minedMisses = periods - minedHits;
    const trueRate = 0.05 + 0.9 * random();
    const subject = `agent-subject-${String(i).padStart(3, '0')}`;
    patterns.push({ index: i, id: '', subject, minedHits, minedMisses, trueRate, read: new Map() });
    const confidence = (minedHits + 1) / (periods + 2);
    rows.push({
      key: `recurring_event:sim-${i}`,
      subjectKind: KIND,
      subjectExternalId: subject,
      type: 'behavior_pattern' as const,
      content: `Simulated habit ${i}: ${subject} buys about every ${7 + (i % 4) * 7} days (${minedHits} of ${periods} periods held)`,
      confidence,
      metadata: {
        patternKind: 'recurring_event',
        eventType: ATTRIBUTE,
        confidence,
        hits: minedHits,
        misses: minedMisses,
        active: true,
        lastObservedAt: new Date(now - DAY_MS).toISOString(),
        observationCount: minedHits + 1,
        observationWindowDays: 365,
      },
      source: 'mining',
      sourceMemoryIds: [],
      validFrom: new Date(now - 365 * DAY_MS),
      validTo: null,
    });
  }
  const written = await ctx.apis.memory.upsertKeyed(client.projectId, rows);
  for (const w of written) patterns[Number(w.key.slice('recurring_event:sim-'.length))]!.id = w.id;
  if (patterns.some((p) => !p.id)) throw new Error('upsertKeyed did not answer every simulated pattern');
  progress(`[${setup}] convergence: ${k} patterns written; ${k} agents × ${thousands(OUTCOMES)} outcomes, ${OUTCOMES_PER_DECISION} outcome(s) per decision`);

  let outcomesDone = 0;
  let decisionsDone = 0;
  let maxUpdateGap = 0;
  let maxFormulaGap = 0;
  let lastReport = performance.now();
  const started = performance.now();

  const agent = async (p: SimPattern): Promise<void> => {
    const draw = mulberry32(0x5eed + p.index * 7919);
    let successes = 0;
    let decisionId = '';
    let last: OutcomeAnswer | undefined;
    for (let n = 1; n <= OUTCOMES; n++) {
      if ((n - 1) % OUTCOMES_PER_DECISION === 0) {
        const decision = await client.post<{ decisionId: string }>('/lattice/decisions', {
          subject: { kind: KIND, externalId: p.subject },
          decisionType: 'retention_offer',
          actionType: 'send_reminder',
          policy: 'bench-learning',
          informedBy: [{ memoryId: p.id, refType: 'pattern' }],
        });
        decisionId = decision.decisionId;
        decisionsDone++;
      }
      const success = draw() < p.trueRate;
      if (success) successes++;
      last = await client.post<OutcomeAnswer>('/lattice/outcomes', { decisionId, result: success ? 'success' : 'failure' });
      outcomesDone++;
      const update = last.updates[0];
      if (!last.attributed || last.updates.length !== 1 || !update || update.refId !== p.id || update.refType !== 'pattern') {
        throw new Error(`outcome ${n} of pattern ${p.id}: expected one attributed pattern update, got ${JSON.stringify(last)}`);
      }
      if (update.hits !== successes || update.misses !== n - successes) {
        throw new Error(`outcome ${n} of pattern ${p.id}: the update counts ${update.hits} hits / ${update.misses} misses, the agent ${successes} / ${n - successes}`);
      }
      if (CHECKPOINTS.includes(n)) {
        const pattern = await client.get<PatternAnswer>(`/lattice/patterns/${p.id}`);
        const updateGap = Math.abs(pattern.confidence - update.posteriorConfidence);
        const formulaGap = Math.abs(pattern.confidence - expectedPosterior(p, successes, n - successes));
        maxUpdateGap = Math.max(maxUpdateGap, updateGap);
        maxFormulaGap = Math.max(maxFormulaGap, formulaGap);
        if (!(updateGap <= EXACT)) {
          throw new Error(`pattern ${p.id} after ${n} outcomes: GET answers confidence ${pattern.confidence}, the last outcome's update ${update.posteriorConfidence}`);
        }
        if (!(formulaGap <= EXACT)) {
          throw new Error(
            `pattern ${p.id} after ${n} outcomes (${successes} successes; mined ${p.minedHits}/${p.minedMisses}): confidence ${pattern.confidence}, ` +
              `(c s + H) / (s + H + M) = ${expectedPosterior(p, successes, n - successes)}`,
          );
        }
        if (pattern.metadata.outcomeHits !== successes || pattern.metadata.outcomeMisses !== n - successes) {
          throw new Error(`pattern ${p.id} after ${n} outcomes: metadata outcomeHits/outcomeMisses ${pattern.metadata.outcomeHits}/${pattern.metadata.outcomeMisses}, expected ${successes}/${n - successes}`);
        }
        p.read.set(n, { confidence: pattern.confidence, successes });
      }
      if (performance.now() - lastReport > 5000) {
        lastReport = performance.now();
        progress(`[${setup}] convergence: ${thousands(outcomesDone)} of ${thousands(k * OUTCOMES)} outcomes (${thousands(perSecond(outcomesDone, performance.now() - started))}/s)`);
      }
    }
  };
  await Promise.all(patterns.map(agent));
  const took = performance.now() - started;
  progress(`[${setup}] convergence: ${thousands(outcomesDone)} outcomes and ${thousands(decisionsDone)} decisions in ${seconds(took)}`);

  // Every decision and outcome is mirrored as a memory, embedded behind by jobs: how far behind.
  const memories = (
    await ctx.runtime.db.query<{ total: number; unembedded: number }>(
      'SELECT count(*)::int AS total, (count(*) FILTER (WHERE embedding IS NULL))::int AS unembedded FROM memories WHERE project_id = $1',
      [client.projectId],
    )
  ).rows[0]!;

  const mae = (f: (p: SimPattern) => number) => patterns.reduce((s, p) => s + Math.abs(f(p) - p.trueRate), 0) / patterns.length;
  const priorMae = mae(minedConfidence);
  const table = CHECKPOINTS.map((n) => [
    thousands(n),
    fixed(mae((p) => p.read.get(n)!.confidence)),
    fixed(priorMae),
    fixed(mae((p) => p.read.get(n)!.successes / n)),
  ]);
  const strengths = patterns.map(priorStrength);
  w(`#### 1. Convergence: ${k} patterns with known true success rates, ${thousands(OUTCOMES)} outcomes each`);
  w();
  w(
    `- Priors: mined periods uniform in 0 to ${MAX_MINED_PERIODS}, mined hits uniform among them; prior strength min(${PRIOR_CAP}, hits + misses + 2): ` +
      `${strengths.filter((s) => s === PRIOR_CAP).length} of ${k} at the cap, the others ${Math.min(...strengths)} to ${Math.max(...strengths.filter((s) => s < PRIOR_CAP), 0) || '–'}. ` +
      `True rates uniform in [0.05, 0.95], independent of the mined confidence. Outcomes Bernoulli(true rate), success or failure (seeded).`,
  );
  w(
    `- ${k} agents at once, one per pattern: ${thousands(decisionsDone)} decisions (POST /lattice/decisions, ${OUTCOMES_PER_DECISION === 1 ? 'one outcome' : `${OUTCOMES_PER_DECISION} outcomes`} each) and ` +
      `${thousands(outcomesDone)} outcomes (POST /lattice/outcomes) in ${seconds(took)} (${thousands(perSecond(outcomesDone, took))} outcomes/s); ` +
      `confidence read back by GET /lattice/patterns/{id} at each N.`,
  );
  w(
    `- ✅ Consistency at every N and every pattern: the confidence read back equals the last outcome's posteriorConfidence (max |difference| ${sci(maxUpdateGap)}) ` +
      `and (c s + H) / (s + H + M) computed here (max |difference| ${sci(maxFormulaGap)}); tolerance ${sci(EXACT)}.`,
  );
  const dataWeight = (n: number) => strengths.reduce((sum, st) => sum + n / (st + n), 0) / k;
  w(
    `- The posterior weighs the outcomes n / (s + n) against the prior: on average ${CHECKPOINTS.map((n) => `${fixed(dataWeight(n), 2)} at N = ${thousands(n)}`).join(', ')}. ` +
      'The priors here know nothing of the true rates (by construction), so at small N the posterior is pulled toward an uninformative mean.',
  );
  w(
    `- Each decision and outcome is also stored as a memory (type decision, outcome), embedded behind by jobs: when the last outcome answered, ` +
      `${thousands(memories.unembedded)} of the project's ${thousands(memories.total)} memories were still without a vector.`,
  );
  w();
  w(markdownTable(['N (outcomes per pattern)', 'MAE Lattice posterior', 'MAE prior only', 'MAE raw frequency'], table, (i) => i >= 0));
  w();
  // The patterns' own calibration, as the report gives it: every outcome against the confidence the
  // pattern had when it came.
  const report = await client.get<CalibrationReport>('/lattice/calibration?bucketCount=10');
  const rowsWithData = report.buckets.filter((b) => b.patternOutcomes > 0);
  const total = rowsWithData.reduce((s, b) => s + b.patternOutcomes, 0);
  const ece = rowsWithData.reduce((s, b) => s + (b.patternOutcomes / total) * Math.abs(b.patternMeanConfidence! - b.patternHits / b.patternOutcomes), 0);
  w(
    `Pattern calibration from GET /lattice/calibration?bucketCount=10 (each outcome against the pattern's confidence when it came; ${thousands(total)} outcomes; ECE ${fixed(ece, 4)}):`,
  );
  w();
  w(
    markdownTable(
      ['Confidence then', 'Outcomes', 'Mean confidence', 'Success rate'],
      rowsWithData.map((b) => [`[${b.lower.toFixed(1)}, ${b.upper.toFixed(1)}${b.upper === 1 ? ']' : ')'}`, thousands(b.patternOutcomes), fixed(b.patternMeanConfidence, 3), fixed(b.patternHits / b.patternOutcomes, 3)]),
      (i) => i >= 1,
    ),
  );
  w();
}

// ---------------------------------------------------------------------------------------------
// 2. Calibration of the recorded predictions on the apparel development set


interface TargetAnswer {
  targetPrediction: { probability: number | null; model: string | null; predictionId: string | null; explanation: string };
  abstained: boolean;
  abstentionReason: string | null;
}

interface CalibrationReport {
  buckets: { lower: number; upper: number; predictions: number; hits: number; misses: number; realizedHitRate: number; hasData: boolean; meanPredicted: number | null; patternOutcomes: number; patternHits: number; patternMeanConfidence: number | null }[];
  totalPatterns: number;
  totalPredictions: number;
  scoredPredictions: number;
  brierScore: number | null;
  expectedCalibrationError: number | null;
}

/** Brier score and ECE over BINS equal-width buckets (the last one closed), as the report bins. */
function score(p: readonly number[], y: readonly number[]): { brier: number; ece: number } {
  const bins = Array.from({ length: BINS }, () => ({ n: 0, sumP: 0, sumY: 0 }));
  let brier = 0;
  p.forEach((value, i) => {
    brier += (value - y[i]!) ** 2;
    const bin = bins[Math.min(BINS - 1, Math.floor(value * BINS))]!;
    bin.n++;
    bin.sumP += value;
    bin.sumY += y[i]!;
  });
  const ece = bins.reduce((sum, b) => (b.n === 0 ? sum : sum + (b.n / p.length) * Math.abs(b.sumP / b.n - b.sumY / b.n)), 0);
  return { brier: brier / p.length, ece };
}

/** Ingests the rows in batches of BATCH; every row must be accepted. */
async function ingest(client: ProjectClient, rows: readonly ObservationInput[]): Promise<void> {
  for (let i = 0; i < rows.length; i += BATCH) await ingestBatch(client, rows.slice(i, i + BATCH));
}

async function benchCalibration(run: Run, purchases: readonly Purchase[], w: Write): Promise<void> {
  const { ctx, setup } = run;
  const endDay = dayOf(CAL_END);
  /** The calibration end: the end of its day. */
  const endMs = (endDay + 1) * DAY_MS;
  const firstDay = Math.min(...purchases.map((p) => p.day));
  const lookbackDays = Math.min(3650, Math.ceil((endMs - (firstDay * DAY_MS + 12 * HOUR_MS)) / DAY_MS));
  const customers = purchasesByCustomer(purchases)
    .map(([id, list]) => ({ id, calibration: list.filter((p) => p.day <= endDay), later: list.filter((p) => p.day > endDay) }))
    .filter((c) => c.calibration.length > 0);

  const rows: string[][] = [];
  const notes: string[] = [];
  const reliability: string[] = [];
  for (const h of HORIZONS) {
    const started = performance.now();
    const client = await openProject(run, `learning-calibration-${CAL_END}-h${h}`, ATTRIBUTE);
    const shiftMs = Date.now() - endMs;
    const calibrationRows = customers.flatMap((c) => purchaseObservations(c.id, c.calibration, shiftMs));
    await ingest(client, calibrationRows);
    progress(`[${setup}] calibration, h ${h}: ${customers.length} customers, ${calibrationRows.length} calibration purchases ingested`);

    // Set off the BG/NBD fit with warm-up asks that fall due after the scoring time (never scored).
    const ask = (id: string, horizonDays: number) =>
      client.post<TargetAnswer>('/memory-intelligence/predict', { subject: { kind: KIND, externalId: id }, horizonDays, target: { kind: 'event_occurrence', eventType: ATTRIBUTE, lookbackDays } });
    let warmups = 0;
    const fitStarted = performance.now();
    let lastFitReport = fitStarted;
    for (;;) {
      const answer = await ask(customers[0]!.id, WARMUP_HORIZON);
      if (!answer.abstained) warmups++;
      if (answer.targetPrediction.model === 'bgnbd') break;
      if (performance.now() - fitStarted > FIT_WAIT_MS) throw new Error(`BG/NBD was not fitted within ${seconds(FIT_WAIT_MS)}; the last answer: ${answer.targetPrediction.explanation}`);
      if (performance.now() - lastFitReport > 10_000) {
        lastFitReport = performance.now();
        progress(`[${setup}] calibration, h ${h}: waiting for BG/NBD (${seconds(performance.now() - fitStarted)}): ${answer.targetPrediction.model}, ${answer.targetPrediction.explanation.slice(0, 160)}`);
      }
      await sleep(100);
    }
    const fitMs = performance.now() - fitStarted;

    const answers: { customer: (typeof customers)[number]; answer: TargetAnswer }[] = [];
    for (const c of customers) answers.push({ customer: c, answer: await ask(c.id, h) });
    const answered = answers.filter((a) => !a.answer.abstained && a.answer.targetPrediction.probability !== null);
    const models = new Map<string, number>();
    for (const a of answered) models.set(a.answer.targetPrediction.model ?? 'null', (models.get(a.answer.targetPrediction.model ?? 'null') ?? 0) + 1);
    progress(`[${setup}] calibration, h ${h}: ${answers.length} predictions asked (${answers.length - answered.length} abstained), BG/NBD fitted after ${seconds(fitMs)}`);

    // The holdout: purchases of (calEnd, calEnd + h], the same shift (observedAt in the future).
    const holdoutRows = customers.flatMap((c) => purchaseObservations(c.id, c.later.filter((p) => p.day <= endDay + h), shiftMs));
    await ingest(client, holdoutRows);
    const scoreAt = new Date(Date.now() + (h + 1) * DAY_MS);
    let scored = 0;
    for (let n; (n = await ctx.apis.behavior.scoreDue(scoreAt)) > 0; ) scored += n;
    progress(`[${setup}] calibration, h ${h}: ${holdoutRows.length} holdout purchases ingested; scoreDue(now + ${h + 1} days) scored ${scored}`);
    const report = await client.get<CalibrationReport>(`/lattice/calibration?bucketCount=${BINS}`);

    // The bench's own numbers, from the answers and the data.
    const bought = (c: (typeof customers)[number]): number => (c.later.some((p) => p.day <= endDay + h) ? 1 : 0);
    const p = answered.map((a) => a.answer.targetPrediction.probability!);
    const y = answered.map((a) => bought(a.customer));
    const mine = score(p, y);
    const baseP = customers.filter((c) => c.calibration.some((q) => q.day > endDay - h)).length / customers.length;
    const base = score(p.map(() => baseP), y);
    const brierGap = Math.abs((report.brierScore ?? NaN) - mine.brier);
    const eceGap = Math.abs((report.expectedCalibrationError ?? NaN) - mine.ece);
    if (report.scoredPredictions !== answered.length) {
      throw new Error(`calibration h ${h}: the report scored ${report.scoredPredictions} predictions, the bench has ${answered.length} answers (scoreDue scored ${scored})`);
    }
    if (!(brierGap <= AGREE)) throw new Error(`calibration h ${h}: Brier ${report.brierScore} in the report, ${mine.brier} recomputed`);
    if (!(eceGap <= AGREE)) throw new Error(`calibration h ${h}: ECE ${report.expectedCalibrationError} in the report, ${mine.ece} recomputed`);

    const observed = y.reduce((a, b) => a + b, 0) / y.length;
    rows.push([
      CAL_END, String(h), String(report.totalPredictions), String(report.scoredPredictions), fixed(observed, 3),
      fixed(report.brierScore), fixed(report.expectedCalibrationError), fixed(mine.brier), fixed(mine.ece), `${fixed(base.brier)} (p ${fixed(baseP, 3)})`,
    ]);
    notes.push(
      `h ${h}: ${customers.length} customers, ${thousands(calibrationRows.length)} calibration and ${thousands(holdoutRows.length)} holdout purchases; ` +
        `answered by ${[...models].map(([m, n]) => `${m} ${n}`).join(', ')}${answers.length > answered.length ? `, ${answers.length - answered.length} abstained (not recorded)` : ''}; ` +
        `${warmups} warm-up prediction(s) (horizon ${WARMUP_HORIZON}, unscored) while BG/NBD fitted (${seconds(fitMs)}); ` +
        `report vs recomputed: |ΔBrier| ${sci(brierGap)}, |ΔECE| ${sci(eceGap)} ✅; ${seconds(performance.now() - started)} in all.`,
    );
    reliability.push(
      `Reliability from the report, calibration end ${CAL_END}, h ${h} (buckets with scored predictions):\n\n` +
        markdownTable(
          ['Bucket', 'Scored', 'Mean predicted', 'Realized hit rate'],
          report.buckets
            .filter((b) => b.hits + b.misses > 0)
            .map((b) => [`[${b.lower.toFixed(1)}, ${b.upper.toFixed(1)}${b.upper === 1 ? ']' : ')'}`, String(b.hits + b.misses), fixed(b.meanPredicted, 3), fixed(b.realizedHitRate, 3)]),
          (i) => i >= 1,
        ),
    );
  }

  w(`#### 2. Calibration report on the apparel development set (calibration end ${CAL_END})`);
  w();
  for (const note of notes) w(`- ${note}`);
  w(
    '- Predictions: recorded by the report (warm-ups included); scored: those scoreDue settled (a purchase in (madeAt, dueAt] is a hit). ' +
      `Brier and ECE (${BINS} equal-width buckets) from GET /lattice/calibration, then recomputed by the bench from the answers and the data. ` +
      'Base rate: the share of customers who bought in the last h days of the calibration, as p for everyone, on the same customers.',
  );
  w();
  w(
    markdownTable(
      ['Calibration end', 'h', 'Predictions', 'Scored', 'Observed rate', 'Brier (report)', 'ECE (report)', 'Brier (recomputed)', 'ECE (recomputed)', 'Base-rate Brier'],
      rows,
      (i) => i >= 1,
    ),
  );
  w();
  for (const table of reliability) {
    w(table);
    w();
  }
}

// ---------------------------------------------------------------------------------------------
// Backends

/**
 * The calibration runs first: the convergence leaves a backlog of decision and outcome memories to
 * embed, whose drain jobs would hold every job consumer and delay the BG/NBD fit (a job). Its
 * section is printed second, as numbered.
 */
async function runBackend(run: Run, purchases: readonly Purchase[]): Promise<void> {
  const calibration: string[] = [];
  if (PARTS.has('2')) await benchCalibration(run, purchases, (text = '') => calibration.push(text));
  try {
    if (PARTS.has('1')) await benchConvergence(run, PATTERNS_OVERRIDE ?? (run.postgres ? PG_PATTERNS : PGLITE_PATTERNS), write);
  } finally {
    out.push(...calibration);
  }
}

async function main(): Promise<void> {
  const purchases = loadPurchases();
  await onEachBackendWithApp(log, (run) => runBackend(run, purchases), {
    title: 'Learning benchmark',
    description: 'Through the HTTP API (app.inject), one enterprise project for the simulation and one per horizon for the calibration.',
    out,
  });
}

runBench(main);
