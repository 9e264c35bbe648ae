// Discovery benchmark. Everything the service is asked goes through the HTTP API (app.inject on the
// app buildApp makes, with the key of an enterprise project), except the feature refresh, which is
// called on the domain's face (lattice.apis.discovery.refresh) to time it; on PGlite in memory
// (in-process queue) and, when DATABASE_URL is set, on Postgres (a throwaway lattice_bench_*
// database; with REDIS_URL also set, BullMQ under a throwaway QUEUE_PREFIX). Markdown tables go to
// stdout, progress to stderr.
//
// The population (seeded, mulberry32): four planted behavior groups in equal shares (assigned by a
// seeded shuffle, so a subject's id says nothing of its group), each subject's purchases of the
// last year (typed observations of the attribute "purchase", numeric, unit USD, so the value is
// the amount), at a uniformly random time of the (UTC) day, so no group has a time-of-day habit:
//   weekly:   every 7 days on the same weekday, the latest 1 to 7 days ago, back to 357 days ago;
//             $60 to $100 a purchase (a subject's own level) -- high spend, active now;
//   monthly:  every 30 days, the latest 1 to 30 days ago, 12 visits; $8 to $15 -- low spend, active now;
//   lapsed:   every 10 days (so no weekday habit) from a year ago until their last purchase 150 to
//             210 days ago, nothing since; $30 to $50;
//   sporadic: 3 to 5 purchases: the latest 30 to 90 days ago, the others at random 90 to 360 days
//             ago; $20 to $40.
// Noise, at three levels (low / medium / high): each regular visit is moved by a normal jitter of
// 2% / 5% / 10% of its group's period (the time of day is uniform on top of that) and missed with
// probability 2% / 8% / 20%; a subject makes a stray purchase at a uniformly random time of the
// last 360 days with probability 0 / 15% / 40% (a second one with that probability squared); a
// purchase's amount is its subject's level times a uniform factor in 1 +- 10% / 25% / 50%.
// A visit that would fall in the last hour moves back a day; one more than 360 days before
// today's midnight is dropped.
//
//   1. Quality, per noise level, BENCH_DISCOVER_QUALITY_SUBJECTS subjects (300) in a project of
//      their own: ingest through POST /memory-typed/observations (10,000-row batches), mine with
//      POST /lattice/patterns/extract {windowDays: 365} (a job the call awaits), wait until the
//      jobs mining sets off have written every subject's features, then call
//      lattice.apis.discovery.refresh(projectId) (every subject active in the last year) and time it
//      (subjects/s: the feature refresh throughput at this size), then POST /lattice/discover with
//      the default simThreshold, minClusterSize and minStability, and maxMembers 500 (the largest
//      allowed) so that every behavior lists all its members (checked: a behavior listing fewer
//      than its size is reported, and its unlisted members then count as unassigned). The adjusted
//      Rand index (Hubert and Arabie, J. Classification 2, 1985; computed here, checked first on
//      worked examples) between the planted groups and the discovered behaviors, where the subjects
//      in no behavior form one extra "noise" cluster (so leaving subjects out costs ARI); the share
//      of subjects in a behavior; the behaviors, their labels, sizes and which planted groups they
//      hold. Same-run baseline: the subjects grouped by their RFM segment alone (read from the stored
//      features, lattice.apis.discovery.all), ARI computed the same way. Diagnostics from the same
//      features: what each planted group looks like to them (pattern kinds, cadence, RFM score
//      ranges, segments), and whether the groups are separated at the default threshold in the
//      features' own metric (distance = 1 - similarity, the Euclidean distance of the stored
//      vectors; no entity elements here, no activity names one): the largest distance inside a
//      group and the smallest between groups. When every within-group distance is <= 1 - simThreshold
//      and every between-group one above it, the threshold clustering can only return the planted
//      groups; a shortfall then is the clustering's, otherwise it is the features'.
//   2. Speed, for each size in BENCH_DISCOVER_SUBJECTS (1,000 and 10,000 on Postgres, 1,000 on
//      PGlite), the same population at medium noise (about 20 purchases a subject on average:
//      weekly 47, monthly 11, lapsed 17, sporadic 4; fewer than 50 each, which keeps the
//      10,000-subject ingest near 200,000 rows), a project per size: ingest (rows/s), mining
//      (subjects/s), the time until the post-mining feature jobs have written every subject, then
//      (once the pattern memories are all embedded, so no background embedding competes) the
//      timed refresh of every subject (subjects/s) with the planner statistics as the server left
//      them (the Postgres this was written on runs with autovacuum off, so no table is ever
//      analyzed, and the per-subject activity read then hashes every observation of the project
//      for each chunk of 250 subjects), then an ANALYZE of the database and the timed refresh
//      again; then BENCH_DISCOVER_CALLS (3) calls of POST /lattice/discover with defaults,
//      each timed end to end around app.inject (routing, auth, the job it awaits, JSON; no
//      socket) beside the durationMs the service reports; the median call against the target (10,000
//      subjects <= 5 s); `sampled` (over 2,000 subjects discovery clusters a fixed sample of 2,000
//      and assigns the rest). Where every behavior lists all its members (size <= 500), the ARI
//      against the planted groups is given too. Then the cohort latency: POST /lattice/cohort
//      {subject} (default k) for BENCH_DISCOVER_COHORT_CALLS (300) random subjects (seeded) after
//      20 warm-up calls, one at a time, around app.inject; p50 / p95 / p99 against the target (p95
//      <= 100 ms at 10,000 subjects), and the share of the members returned that come from the
//      target's own planted group (a cohort's purity; 25% would be chance).
//
// Run after a build (the worker pool loads dist/workers/index.js):
//   npm run bench:discover
//   BENCH_SKIP_PGLITE=1 DATABASE_URL=postgres://postgres@127.0.0.1:5432/postgres REDIS_URL=redis://127.0.0.1:6379 npm run bench:discover
// Settings: BENCH_DISCOVER_SUBJECTS (the speed sizes, comma-separated; default 1000,10000 on
// Postgres, 1000 on PGlite), BENCH_DISCOVER_QUALITY_SUBJECTS (300 per noise level),
// BENCH_DISCOVER_CALLS (3), BENCH_DISCOVER_COHORT_CALLS (300), BENCH_DISCOVER_EMBED_WAIT_S (900: the longest wait for the pattern
// embeddings before timing), BENCH_DISCOVER_PARTS (1,2: the parts to run), BENCH_SKIP_PGLITE=1
// (Postgres only). This bench sets in its own environment, before the contexts read their config:
// BEHAVIOR_MINING_DEBOUNCE_MS and BEHAVIOR_MINING_MAX_WAIT_MS to a day (no automatic mining in the
// background while measuring), REQUEST_TIMEOUT_MS 600000 (the whole-project extract and the
// discovery are awaited within it), RATE_LIMIT_PER_MINUTE and PATTERN_EXTRACT_PER_MINUTE 10000000.
import { performance } from 'node:perf_hooks';
import type { SubjectFeatures } from '../src/discovery/features.js';
import { COHORT, DISCOVERY, type Behavior, type CohortMember, type DiscoverResponse } from '../src/discovery/schemas.js';
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
  perSecond,
  positiveInt,
  ProjectClient,
  progress,
  runBench,
  sleep,
  summarise,
  tenthsOfSeconds as seconds,
  thousands,
  type AppRun,
} from './support.js';
import { CUSTOMER_KIND as KIND, PURCHASE_ATTRIBUTE as ATTRIBUTE } from './customers.js';

holdBackgroundMining({ PATTERN_EXTRACT_PER_MINUTE: '10000000' });

const sizesFrom = (key: string): number[] | undefined => {
  const text = process.env[key];
  if (text === undefined) return undefined;
  const sizes = text.split(',').map((s) => Number(s.trim()));
  if (sizes.length === 0 || sizes.some((n) => !Number.isInteger(n) || n < 4)) throw new Error(`${key} must be a comma-separated list of integers >= 4`);
  return sizes;
};

const BATCH = 10_000;
const WINDOW_DAYS = 365;
/** No purchase older than this (the mining and RFM windows are 365 days). */
const OLDEST_DAYS = 360;

const QUALITY_SUBJECTS = positiveInt('BENCH_DISCOVER_QUALITY_SUBJECTS', 300);
const SIZES_OVERRIDE = sizesFrom('BENCH_DISCOVER_SUBJECTS');
const PG_SIZES = [1000, 10_000];
const PGLITE_SIZES = [1000];
const CALLS = positiveInt('BENCH_DISCOVER_CALLS', 3);
const COHORT_CALLS = positiveInt('BENCH_DISCOVER_COHORT_CALLS', 300);
const COHORT_WARMUP = 20;
const TARGET_COHORT_P95_MS = 100;
const EMBED_WAIT_MS = positiveInt('BENCH_DISCOVER_EMBED_WAIT_S', 900) * 1000;
const PARTS = new Set((process.env.BENCH_DISCOVER_PARTS ?? '1,2').split(',').map((s) => s.trim()));
/** The largest maxMembers the route allows: behaviors up to this size list every member. */
const ALL_MEMBERS = DISCOVERY.maxMembers.max;
const TARGET_DISCOVER_MS = 5000;
const TARGET_AT = 10_000;
const FEATURE_WAIT_MS = 600_000;

const log = createLogger('warn');
const out: string[] = [];
const write = (text = '') => out.push(text);

const fixed = (x: number, digits = 3) => (Number.isFinite(x) ? x.toFixed(digits) : '–');
const pct = (x: number) => `${(x * 100).toFixed(0)}%`;
const median = (xs: readonly number[]) => {
  const s = [...xs].sort((a, b) => a - b);
  return s.length === 0 ? NaN : s.length % 2 === 1 ? s[(s.length - 1) / 2]! : (s[s.length / 2 - 1]! + s[s.length / 2]!) / 2;
};

// ---------------------------------------------------------------------------------------------
// Adjusted Rand index

const pairs = (k: number) => (k * (k - 1)) / 2;

/**
 * The adjusted Rand index of two partitions of the same items, given as one label per item
 * (Hubert and Arabie 1985): (index - expected) / (max - expected), with index the sum over the
 * contingency table of C(n_ij, 2), expected = sum_i C(a_i, 2) sum_j C(b_j, 2) / C(n, 2) and max the
 * mean of the two row sums. 1 for identical partitions (up to the names of their clusters), about 0
 * for independent ones. Two trivial partitions alike (both one cluster, or both all singletons)
 * make the denominator 0: 1, as is usual.
 */
export function adjustedRandIndex(a: readonly string[], b: readonly string[]): number {
  if (a.length !== b.length) throw new Error(`adjustedRandIndex: ${a.length} labels against ${b.length}`);
  const cells = new Map<string, number>();
  const rowsA = new Map<string, number>();
  const colsB = new Map<string, number>();
  const bump = (m: Map<string, number>, key: string) => m.set(key, (m.get(key) ?? 0) + 1);
  a.forEach((x, i) => {
    bump(cells, `${x}\0${b[i]!}`);
    bump(rowsA, x);
    bump(colsB, b[i]!);
  });
  const sum = (m: Map<string, number>) => [...m.values()].reduce((s, k) => s + pairs(k), 0);
  const index = sum(cells);
  const sa = sum(rowsA);
  const sb = sum(colsB);
  const expected = a.length < 2 ? 0 : (sa * sb) / pairs(a.length);
  const max = (sa + sb) / 2;
  return max === expected ? 1 : (index - expected) / (max - expected);
}

/** Worked examples (the second and third as in scikit-learn's documentation); the run stops if one fails. */
function checkAdjustedRandIndex(): string {
  const cases: [string[], string[], number][] = [
    [['a', 'a', 'b', 'b', 'c', 'c'], ['x', 'x', 'y', 'y', 'z', 'z'], 1],
    [['0', '0', '1', '1'], ['0', '0', '1', '2'], 4 / 7],
    [['0', '0', '0', '1', '1', '1'], ['0', '0', '1', '1', '2', '2'], 8 / 33],
    [['0', '0', '0', '0'], ['0', '1', '2', '3'], 0],
  ];
  for (const [x, y, want] of cases) {
    const got = adjustedRandIndex(x, y);
    const back = adjustedRandIndex(y, x);
    if (Math.abs(got - want) > 1e-12 || Math.abs(back - want) > 1e-12) {
      throw new Error(`adjustedRandIndex self-check: ${JSON.stringify(x)} vs ${JSON.stringify(y)} gave ${got} (and ${back} reversed), want ${want}`);
    }
  }
  return `ARI self-check passed: relabelled identical partitions 1; [0,0,1,1] vs [0,0,1,2] 4/7; [0,0,0,1,1,1] vs [0,0,1,1,2,2] 8/33; one cluster vs all singletons 0 (both orders).`;
}

// ---------------------------------------------------------------------------------------------
// HTTP

/** The answer of POST /lattice/discover (its schema refers to Behavior by $ref, which Static leaves unknown). */
type DiscoverAnswer = Omit<DiscoverResponse, 'behaviors'> & { behaviors: Behavior[] };

interface CohortAnswer {
  members: CohortMember[];
  candidateCount: number;
}

interface ExtractAnswer {
  contactsProcessed: number;
  patternsCreated: number;
  patternsRefreshed: number;
  patternsDeactivated: number;
  durationMs: number;
  errors?: unknown[];
}

interface Run extends AppRun {
  /** What keeps the planner statistics here (autovacuum's setting on Postgres). */
  statistics: string;
}

// ---------------------------------------------------------------------------------------------
// The planted population

const GROUPS = ['weekly', 'monthly', 'lapsed', 'sporadic'] as const;
type Group = (typeof GROUPS)[number];

interface Noise {
  name: 'low' | 'medium' | 'high';
  /** The sd of a regular visit's displacement, as a share of its group's period. */
  jitter: number;
  /** The chance that a regular visit does not happen. */
  miss: number;
  /** The chance of a stray purchase (of a second one: its square). */
  stray: number;
  /** A purchase's amount is the subject's level times a uniform factor in 1 +- this. */
  amountSpread: number;
}

const NOISE: Noise[] = [
  { name: 'low', jitter: 0.02, miss: 0.02, stray: 0, amountSpread: 0.1 },
  { name: 'medium', jitter: 0.05, miss: 0.08, stray: 0.15, amountSpread: 0.25 },
  { name: 'high', jitter: 0.1, miss: 0.2, stray: 0.4, amountSpread: 0.5 },
];
const SPEED_NOISE = NOISE[1]!;

const noiseText = (n: Noise) =>
  `jitter ${pct(n.jitter)} of the period, ${pct(n.miss)} of visits missed, stray purchase chance ${pct(n.stray)}, amounts ±${pct(n.amountSpread)}`;

interface Planted {
  externalId: string;
  group: Group;
}

interface Population {
  subjects: Planted[];
  rows: ObservationInput[];
}

const subjectId = (i: number) => `s-${String(i).padStart(6, '0')}`;

/** `n` subjects in equal shares of the four groups (seeded shuffle) and their purchases, ending before `now`. */
function plantPopulation(n: number, noise: Noise, seed: number, now: number): Population {
  const shuffle = mulberry32(seed);
  const order = Array.from({ length: n }, (_, i) => i);
  for (let i = n - 1; i > 0; i--) {
    const j = Math.floor(shuffle() * (i + 1));
    [order[i], order[j]] = [order[j]!, order[i]!];
  }
  const subjects: Planted[] = [];
  const rows: ObservationInput[] = [];
  for (let i = 0; i < n; i++) {
    const group = GROUPS[order[i]! % GROUPS.length]!;
    const externalId = subjectId(i);
    subjects.push({ externalId, group });
    for (const { at, amount } of purchasesOf(group, noise, mulberry32((seed ^ Math.imul(i + 1, 2654435761)) >>> 0), now)) {
      rows.push({
        attributeKey: ATTRIBUTE,
        subjectKind: KIND,
        subjectExternalId: externalId,
        valueNumeric: amount,
        observedAt: new Date(at).toISOString(),
        source: 'bench-discover',
      });
    }
  }
  return { subjects, rows };
}

function purchasesOf(group: Group, noise: Noise, random: () => number, now: number): { at: number; amount: number }[] {
  const normal = () => Math.sqrt(-2 * Math.log(1 - random())) * Math.cos(2 * Math.PI * random());
  const between = (lo: number, hi: number) => lo + random() * (hi - lo);
  const today = Math.floor(now / DAY_MS) * DAY_MS;
  // Bounds by the day, not the hour, so the same seed drops the same visits all day long.
  const oldest = today - OLDEST_DAYS * DAY_MS;
  const latest = now - HOUR_MS;
  const times: number[] = [];
  /** Visits every `period` days, the most recent `lastDaysAgo` days ago, back to `fromDaysAgo`. */
  const regular = (period: number, lastDaysAgo: number, fromDaysAgo: number) => {
    for (let back = lastDaysAgo; back <= fromDaysAgo; back += period) {
      if (random() < noise.miss) continue;
      // Midnight of the visit's day, a uniform time of day, the jitter.
      let at = today - back * DAY_MS + random() * DAY_MS + normal() * noise.jitter * period * DAY_MS;
      while (at > latest) at -= DAY_MS;
      if (at >= oldest) times.push(at);
    }
  };
  let level: number;
  switch (group) {
    case 'weekly':
      regular(7, 1 + Math.floor(random() * 7), 357);
      level = between(60, 100);
      break;
    case 'monthly':
      regular(30, 1 + Math.floor(random() * 30), 357);
      level = between(8, 15);
      break;
    case 'lapsed':
      regular(10, 150 + Math.floor(random() * 61), 357);
      level = between(30, 50);
      break;
    case 'sporadic': {
      times.push(now - between(30, 90) * DAY_MS);
      const more = 2 + Math.floor(random() * 3);
      for (let k = 0; k < more; k++) times.push(now - between(90, OLDEST_DAYS) * DAY_MS);
      level = between(20, 40);
      break;
    }
  }
  if (random() < noise.stray) times.push(now - between(1 / 24 + 0.01, OLDEST_DAYS) * DAY_MS);
  if (random() < noise.stray ** 2) times.push(now - between(1 / 24 + 0.01, OLDEST_DAYS) * DAY_MS);
  times.sort((a, b) => a - b);
  return times.map((at) => ({ at: Math.round(at), amount: Math.round(level * (1 + noise.amountSpread * (2 * random() - 1)) * 100) / 100 }));
}

// ---------------------------------------------------------------------------------------------
// Ingest, mine, features

interface Prepared {
  client: ProjectClient;
  population: Population;
  ingestMs: number;
  ingestCalls: number;
  mining: { ms: number; report?: ExtractAnswer; error?: string };
  /** From mining's answer until every subject's features were written by the jobs mining set off. */
  featuresReadyMs: number;
  featuresWritten: number;
  embedNote?: string;
  refresh: { ms: number; refreshed: number; segmentChanges: number };
  /** With options.analyze: ANALYZE of the whole database, then the refresh again. */
  analyzed?: { analyzeMs: number; refresh: { ms: number; refreshed: number; segmentChanges: number } };
}

async function prepare(run: Run, projectId: string, population: Population, label: string, options: { waitForEmbeddings: boolean; analyze: boolean }): Promise<Prepared> {
  const { ctx, setup } = run;
  const client = await openProject(run, projectId, ATTRIBUTE);
  let ingestMs = 0;
  let ingestCalls = 0;
  let lastReport = performance.now();
  for (let i = 0; i < population.rows.length; i += BATCH) {
    ingestMs += await ingest(client, population.rows.slice(i, i + BATCH));
    ingestCalls++;
    if (performance.now() - lastReport > 5000) {
      lastReport = performance.now();
      progress(`[${setup}] ${label}: ingested ${thousands(Math.min(population.rows.length, i + BATCH))} of ${thousands(population.rows.length)} rows`);
    }
  }
  progress(`[${setup}] ${label}: ${thousands(population.subjects.length)} subjects, ${thousands(population.rows.length)} purchases ingested in ${seconds(ingestMs)}; mining`);

  const miningStart = new Date();
  const t0 = performance.now();
  const mining: Prepared['mining'] = { ms: 0 };
  try {
    mining.report = await client.post<ExtractAnswer>('/lattice/patterns/extract', { windowDays: WINDOW_DAYS });
  } catch (error) {
    mining.error = error instanceof Error ? error.message : String(error);
  }
  mining.ms = performance.now() - t0;
  progress(`[${setup}] ${label}: mining ${mining.error ? `failed: ${mining.error}` : `answered in ${seconds(mining.ms)}, ${mining.report!.patternsCreated} patterns created`}`);

  // The jobs mining enqueued (one per chunk of mined subjects) write the features behind.
  const written = async () =>
    (await ctx.runtime.db.query<{ n: number }>('SELECT count(*)::int AS n FROM discovery_features WHERE project_id = $1 AND computed_at >= $2', [projectId, miningStart])).rows[0]!.n;
  const waitStart = performance.now();
  let featuresWritten = 0;
  for (;;) {
    featuresWritten = await written();
    if (featuresWritten >= population.subjects.length || performance.now() - waitStart > FEATURE_WAIT_MS) break;
    await sleep(100);
  }
  const featuresReadyMs = performance.now() - waitStart;

  let embedNote: string | undefined;
  if (options.waitForEmbeddings) {
    const unembedded = async () => (await ctx.runtime.db.query<{ n: number }>('SELECT count(*)::int AS n FROM memories WHERE embedding IS NULL')).rows[0]!.n;
    const embedStart = performance.now();
    for (;;) {
      const left = await unembedded();
      const waited = performance.now() - embedStart;
      if (left === 0) {
        embedNote = `pattern memories all embedded ${seconds(waited)} after the features were written`;
        break;
      }
      if (waited > EMBED_WAIT_MS) {
        embedNote = `${thousands(left)} memories still to embed after ${seconds(EMBED_WAIT_MS)} (BENCH_DISCOVER_EMBED_WAIT_S); timed anyway`;
        break;
      }
      if (performance.now() - lastReport > 10_000) {
        lastReport = performance.now();
        progress(`[${setup}] ${label}: waiting for the pattern embeddings, ${thousands(left)} left after ${seconds(waited)}`);
      }
      await sleep(500);
    }
  }

  const r0 = performance.now();
  const refreshed = await ctx.apis.discovery.refresh(projectId);
  const refresh = { ms: performance.now() - r0, ...refreshed };
  progress(`[${setup}] ${label}: features refreshed for ${refresh.refreshed} subjects in ${seconds(refresh.ms)}`);
  let analyzed: Prepared['analyzed'];
  if (options.analyze) {
    const a0 = performance.now();
    await ctx.runtime.db.query('ANALYZE');
    const analyzeMs = performance.now() - a0;
    const r1 = performance.now();
    const again = await ctx.apis.discovery.refresh(projectId);
    analyzed = { analyzeMs, refresh: { ms: performance.now() - r1, ...again } };
    progress(`[${setup}] ${label}: ANALYZE in ${seconds(analyzeMs)}, then features refreshed for ${again.refreshed} subjects in ${seconds(analyzed.refresh.ms)}`);
  }
  return { client, population, ingestMs, ingestCalls, mining, featuresReadyMs, featuresWritten, embedNote, refresh, analyzed };
}

// ---------------------------------------------------------------------------------------------
// Scoring a discovery against the planted groups

const NOISE_CLUSTER = '(no behavior)';

interface Scored {
  ari: number;
  assigned: number;
  /** Behaviors whose memberSubjects lists fewer than their size. */
  partial: number;
  /** Subjects listed in more than one behavior. */
  overlapping: number;
  /** The behavior index (1-based) of each planted subject, or NOISE_CLUSTER. */
  labels: string[];
}

function scoreDiscovery(planted: readonly Planted[], answer: DiscoverAnswer): Scored {
  const behaviorOf = new Map<string, string>();
  let partial = 0;
  let overlapping = 0;
  answer.behaviors.forEach((b, k) => {
    if (b.memberSubjects.length < b.size) partial++;
    for (const m of b.memberSubjects) {
      if (m.kind !== KIND) continue;
      if (behaviorOf.has(m.externalId)) overlapping++;
      else behaviorOf.set(m.externalId, String(k + 1));
    }
  });
  const labels = planted.map((p) => behaviorOf.get(p.externalId) ?? NOISE_CLUSTER);
  return {
    ari: adjustedRandIndex(
      planted.map((p) => p.group),
      labels,
    ),
    assigned: labels.filter((l) => l !== NOISE_CLUSTER).length / planted.length,
    partial,
    overlapping,
    labels,
  };
}

const composition = (planted: readonly Planted[], labels: readonly string[], label: string) => {
  const counts = new Map<Group, number>();
  planted.forEach((p, i) => {
    if (labels[i] === label) counts.set(p.group, (counts.get(p.group) ?? 0) + 1);
  });
  return GROUPS.filter((g) => counts.has(g))
    .map((g) => `${g} ${counts.get(g)}`)
    .join(', ');
};

/** Euclidean distance of two stored vectors (1 - the similarity discovery uses). */
function distance(a: readonly number[], b: readonly number[]): number {
  let s = 0;
  for (let i = 0; i < Math.max(a.length, b.length); i++) s += ((a[i] ?? 0) - (b[i] ?? 0)) ** 2;
  return Math.sqrt(s);
}

interface Separation {
  maxWithin: Map<Group, number>;
  minBetween: number;
  minBetweenPair: string;
  withinOver: number;
  betweenUnder: number;
  withinPairs: number;
  betweenPairs: number;
}

function separation(planted: readonly Planted[], features: Map<string, SubjectFeatures>, radius: number): Separation {
  const items = planted.flatMap((p) => {
    const f = features.get(p.externalId);
    return f ? [{ group: p.group, v: f.vector }] : [];
  });
  const maxWithin = new Map<Group, number>(GROUPS.map((g) => [g, 0]));
  let minBetween = Infinity;
  let minBetweenPair = '';
  let withinOver = 0;
  let betweenUnder = 0;
  let withinPairs = 0;
  let betweenPairs = 0;
  for (let i = 0; i < items.length; i++) {
    for (let j = i + 1; j < items.length; j++) {
      const d = distance(items[i]!.v, items[j]!.v);
      const gi = items[i]!.group;
      const gj = items[j]!.group;
      if (gi === gj) {
        withinPairs++;
        if (d > maxWithin.get(gi)!) maxWithin.set(gi, d);
        if (d > radius + 1e-12) withinOver++;
      } else {
        betweenPairs++;
        if (d < minBetween) [minBetween, minBetweenPair] = [d, [gi, gj].sort().join(' / ')];
        if (d <= radius + 1e-12) betweenUnder++;
      }
    }
  }
  return { maxWithin, minBetween, minBetweenPair, withinOver, betweenUnder, withinPairs, betweenPairs };
}

/** What one planted group looks like to the features: pattern kinds, cadence, RFM score ranges, segments. */
function groupProfile(members: readonly SubjectFeatures[]): string[] {
  const n = members.length;
  const kinds = ['recurring_event', 'day_of_week', 'time_of_day', 'declining_engagement']
    .map((k) => `${k.replace(/_.*/, '')} ${pct(members.filter((m) => m.patternKinds.includes(k)).length / Math.max(1, n))}`)
    .join(', ');
  const cadences = members.flatMap((m) => (m.cadenceDays === null ? [] : [m.cadenceDays]));
  const range = (f: (m: SubjectFeatures) => number | null) => {
    const xs = members.flatMap((m) => (f(m) === null ? [] : [f(m)!]));
    return xs.length === 0 ? '–' : `${Math.min(...xs)}–${Math.max(...xs)}`;
  };
  const segments = new Map<string, number>();
  for (const m of members) segments.set(m.rfmSegment ?? 'none', (segments.get(m.rfmSegment ?? 'none') ?? 0) + 1);
  const purchases = members.map((m) => m.activityCount);
  return [
    String(n),
    kinds,
    cadences.length === 0 ? '–' : `${fixed(median(cadences), 1)} (${cadences.length})`,
    `${range((m) => m.recencyScore)} / ${range((m) => m.frequencyScore)} / ${range((m) => m.monetaryScore)}`,
    fixed(median(purchases), 0),
    [...segments]
      .sort((a, b) => b[1] - a[1] || (a[0] < b[0] ? -1 : 1))
      .map(([s, k]) => `${s} ${k}`)
      .join(', '),
  ];
}

// ---------------------------------------------------------------------------------------------
// 1. Quality

async function benchQuality(run: Run): Promise<void> {
  const { ctx, setup } = run;
  const summaryRows: string[][] = [];
  const behaviorTables: string[] = [];
  const profileRows: string[][] = [];
  const separationRows: string[][] = [];
  const notes: string[] = [];
  const radius = 1 - DISCOVERY.simThreshold.default;

  for (const [index, noise] of NOISE.entries()) {
    const label = `quality, ${noise.name} noise`;
    const population = plantPopulation(QUALITY_SUBJECTS, noise, 1001 + index, Date.now());
    const projectId = `discover-quality-${noise.name}`;
    const prepared = await prepare(run, projectId, population, label, { waitForEmbeddings: false, analyze: false });
    const t0 = performance.now();
    const answer = await prepared.client.post<DiscoverAnswer>('/lattice/discover', { maxMembers: ALL_MEMBERS });
    const discoverMs = performance.now() - t0;
    progress(`[${setup}] ${label}: ${answer.behaviors.length} behaviors in ${ms(discoverMs)}`);

    const planted = population.subjects;
    const scored = scoreDiscovery(planted, answer);
    const features = new Map((await ctx.apis.discovery.all(projectId)).filter((f) => f.subject.kind === KIND).map((f) => [f.subject.externalId, f]));
    const segmentLabels = planted.map((p) => features.get(p.externalId)?.rfmSegment ?? 'none');
    const baselineAri = adjustedRandIndex(
      planted.map((p) => p.group),
      segmentLabels,
    );
    const sep = separation(planted, features, radius);
    const separated = sep.withinOver === 0 && sep.betweenUnder === 0;

    summaryRows.push([
      noise.name,
      String(planted.length),
      thousands(population.rows.length),
      String(answer.subjectsAnalyzed),
      String(answer.behaviors.length),
      pct(scored.assigned),
      fixed(scored.ari),
      `${fixed(baselineAri)} (${new Set(segmentLabels).size} segments)`,
      separated ? '✅ yes' : `no: ${sep.withinOver} of ${thousands(sep.withinPairs)} within-group pairs > ${fixed(radius, 2)}, ${sep.betweenUnder} of ${thousands(sep.betweenPairs)} between-group pairs ≤ ${fixed(radius, 2)}`,
      `${thousands(perSecond(prepared.refresh.refreshed, prepared.refresh.ms))} subjects/s (${prepared.refresh.refreshed} in ${ms(prepared.refresh.ms)})`,
      ms(discoverMs),
    ]);
    if (scored.partial > 0 || scored.overlapping > 0) {
      notes.push(`${noise.name} noise: ${scored.partial} behavior(s) listed fewer members than their size, ${scored.overlapping} subject(s) were listed in two behaviors.`);
    }
    if (prepared.mining.error) notes.push(`${noise.name} noise: mining failed: ${prepared.mining.error}`);
    if (prepared.featuresWritten < planted.length) notes.push(`${noise.name} noise: the post-mining jobs wrote the features of only ${prepared.featuresWritten} of ${planted.length} subjects within ${seconds(FEATURE_WAIT_MS)}.`);
    if (answer.subjectsAnalyzed !== planted.length) notes.push(`${noise.name} noise: discovery analyzed ${answer.subjectsAnalyzed} subjects, ${planted.length} were planted.`);

    const rows = answer.behaviors.map((b, k) => [String(k + 1), b.label, String(b.size), fixed(b.stability), composition(planted, scored.labels, String(k + 1))]);
    const unassigned = scored.labels.filter((l) => l === NOISE_CLUSTER).length;
    if (unassigned > 0) rows.push(['–', NOISE_CLUSTER, String(unassigned), '–', composition(planted, scored.labels, NOISE_CLUSTER)]);
    behaviorTables.push(
      `Behaviors found at ${noise.name} noise (ARI ${fixed(scored.ari)}; baseline by RFM segment ${fixed(baselineAri)}):\n\n` +
        markdownTable(['#', 'Label', 'Size', 'Stability', 'Planted groups in it'], rows, (i) => i === 0 || i === 2 || i === 3),
    );

    for (const g of GROUPS) {
      const members = planted.filter((p) => p.group === g).flatMap((p) => (features.has(p.externalId) ? [features.get(p.externalId)!] : []));
      profileRows.push([noise.name, g, ...groupProfile(members)]);
    }
    separationRows.push([noise.name, ...GROUPS.map((g) => fixed(sep.maxWithin.get(g)!)), `${fixed(sep.minBetween)} (${sep.minBetweenPair})`]);
  }

  write(`#### 1. Quality: planted groups recovered (${QUALITY_SUBJECTS} subjects per noise level, a project each)`);
  write();
  write(`- ${checkAdjustedRandIndex()}`);
  write(
    '- Groups (equal shares): weekly (every 7 days on one weekday, $60–100, active now), monthly (every 30 days, $8–15, active now), ' +
      'lapsed (every 10 days until 150–210 days ago, nothing since, $30–50), sporadic (3–5 purchases, the latest 30–90 days ago, $20–40); ' +
      'each purchase at a uniformly random time of its day.',
  );
  for (const noise of NOISE) write(`- ${noise.name} noise: ${noiseText(noise)}.`);
  write(
    `- Discovery: POST /lattice/discover with the defaults (simThreshold ${DISCOVERY.simThreshold.default}, minClusterSize ${DISCOVERY.minClusterSize.default}, ` +
      `minStability ${DISCOVERY.minStability.default}) and maxMembers ${ALL_MEMBERS}, so each behavior lists all its members. ` +
      `ARI (Hubert and Arabie 1985) against the planted groups, the subjects in no behavior counted as one more cluster, "${NOISE_CLUSTER}". ` +
      'Baseline: the subjects grouped by their RFM segment alone (from the stored features), ARI the same way.',
  );
  write(
    `- Separated: whether, in the stored feature vectors, every two subjects of a planted group are within ${fixed(radius, 2)} (1 - simThreshold) of each other ` +
      'and every two of different groups farther apart. If so, the threshold clustering has only the planted groups to find; if not, the features do not separate them.',
  );
  write(`- Feature refresh: lattice.apis.discovery.refresh(projectId) over every subject, timed after the jobs mining set off had written them all.`);
  for (const note of notes) write(`- ${note}`);
  write();
  write(
    markdownTable(
      ['Noise', 'Subjects', 'Purchases', 'Analyzed', 'Behaviors', 'Assigned', 'ARI', 'ARI, RFM segment baseline', 'Separated at the threshold', 'Feature refresh', 'Discover (end to end)'],
      summaryRows,
      (i) => (i >= 1 && i <= 6) || i === 10,
    ),
  );
  write();
  for (const table of behaviorTables) {
    write(table);
    write();
  }
  write('What the stored features show of each planted group (pattern kinds: share of the group with an active pattern of that kind; cadence: median period of the recurring pattern, and how many have one):');
  write();
  write(markdownTable(['Noise', 'Planted group', 'n', 'Pattern kinds', 'Cadence days', 'R / F / M scores (range)', 'Median purchases', 'RFM segments'], profileRows, (i) => i === 2 || i === 4 || i === 6));
  write();
  write(`Distances in the features' metric (1 - similarity; the default threshold is a distance of ${fixed(radius, 2)}):`);
  write();
  write(
    markdownTable(
      ['Noise', ...GROUPS.map((g) => `Largest inside ${g}`), 'Least between two groups'],
      separationRows,
      (i) => i >= 1,
    ),
  );
  write();
}

// ---------------------------------------------------------------------------------------------
// 2. Speed

interface SpeedRow {
  operation: string;
  n?: number;
  value?: string;
  throughput?: string;
  notes?: string;
}

async function benchSpeed(run: Run, sizes: readonly number[]): Promise<void> {
  const { setup } = run;
  const rows: SpeedRow[] = [];
  const notes: string[] = [];
  let perGroup = '';
  for (const size of sizes) {
    const label = `speed, ${thousands(size)} subjects`;
    const population = plantPopulation(size, SPEED_NOISE, 2001 + size, Date.now());
    const prepared = await prepare(run, `discover-speed-${size}`, population, label, { waitForEmbeddings: true, analyze: true });
    const at = `${thousands(size)} subjects`;
    const n = population.rows.length;
    perGroup = `${(n / size).toFixed(1)} a subject on average at ${thousands(size)} subjects (${GROUPS.map((g) => {
      const ids = new Set(population.subjects.filter((p) => p.group === g).map((p) => p.externalId));
      return `${g} ${(population.rows.filter((r) => ids.has(r.subjectExternalId!)).length / Math.max(1, ids.size)).toFixed(1)}`;
    }).join(', ')})`;
    rows.push({
      operation: `${at}: ingest, POST /memory-typed/observations, ${thousands(BATCH)}-row batches`,
      n: prepared.ingestCalls,
      value: seconds(prepared.ingestMs),
      throughput: `${thousands(perSecond(n, prepared.ingestMs))} rows/s`,
      notes: `${thousands(n)} purchases (${(n / size).toFixed(1)} a subject)`,
    });
    const report = prepared.mining.report;
    rows.push({
      operation: `${at}: mining, POST /lattice/patterns/extract {windowDays: ${WINDOW_DAYS}}`,
      n: 1,
      value: seconds(prepared.mining.ms),
      throughput: report ? `${thousands(perSecond(report.contactsProcessed, prepared.mining.ms))} subjects/s` : '–',
      notes: report
        ? `${thousands(report.contactsProcessed)} subjects; ${thousands(report.patternsCreated)} patterns created; ${report.errors?.length ?? 0} errors`
        : `❌ failed: ${prepared.mining.error}`,
    });
    rows.push({
      operation: `${at}: features written by the jobs mining set off, after mining answered`,
      n: 1,
      value: seconds(prepared.featuresReadyMs),
      notes:
        `${thousands(prepared.featuresWritten)} of ${thousands(size)} subjects` +
        (prepared.featuresWritten < size ? ` ❌ (gave up after ${seconds(FEATURE_WAIT_MS)})` : '') +
        (prepared.embedNote ? `; then ${prepared.embedNote}` : ''),
    });
    rows.push({
      operation: `${at}: feature refresh, lattice.apis.discovery.refresh(projectId), every subject`,
      n: 1,
      value: seconds(prepared.refresh.ms),
      throughput: `${thousands(perSecond(prepared.refresh.refreshed, prepared.refresh.ms))} subjects/s`,
      notes: `${thousands(prepared.refresh.refreshed)} refreshed, ${prepared.refresh.segmentChanges} segment changes; the tables' statistics as the server left them`,
    });
    if (prepared.analyzed) {
      const a = prepared.analyzed;
      rows.push({
        operation: `${at}: feature refresh again, after ANALYZE`,
        n: 1,
        value: seconds(a.refresh.ms),
        throughput: `${thousands(perSecond(a.refresh.refreshed, a.refresh.ms))} subjects/s`,
        notes: `${thousands(a.refresh.refreshed)} refreshed, ${a.refresh.segmentChanges} segment changes; ANALYZE of the database took ${seconds(a.analyzeMs)}`,
      });
    }

    const wall: number[] = [];
    const server: number[] = [];
    const answers: DiscoverAnswer[] = [];
    for (let k = 0; k < CALLS; k++) {
      progress(`[${setup}] ${label}: POST /lattice/discover, call ${k + 1} of ${CALLS}`);
      const t0 = performance.now();
      const answer = await prepared.client.post<DiscoverAnswer>('/lattice/discover', {});
      wall.push(performance.now() - t0);
      server.push(answer.durationMs);
      answers.push(answer);
    }
    const first = answers[0]!;
    const same = answers.every((a) => JSON.stringify(a.behaviors) === JSON.stringify(first.behaviors));
    const mid = median(wall);
    const assigned = first.behaviors.reduce((s, b) => s + b.size, 0) / Math.max(1, first.subjectsAnalyzed);
    const target = size === TARGET_AT ? `; ${check(mid <= TARGET_DISCOVER_MS, `median ≤ ${seconds(TARGET_DISCOVER_MS)}`)}` : '';
    rows.push({
      operation: `${at}: discovery, POST /lattice/discover {} (defaults), end to end`,
      n: CALLS,
      value: `median ${ms(mid)}`,
      throughput: `${thousands(perSecond(first.subjectsAnalyzed, mid))} subjects/s`,
      notes:
        `calls ${wall.map(ms).join(', ')} (service's durationMs ${server.map(ms).join(', ')}); sampled ${first.sampled}; ` +
        `${first.subjectsAnalyzed} analyzed; ${first.behaviors.length} behaviors holding ${pct(assigned)} of them (sizes ${first.behaviors.map((b) => b.size).join(', ')}); ` +
        `${same ? 'the same behaviors every call' : '❌ the behaviors differ between calls'}${target}`,
    });

    // Cohorts: random subjects (seeded), one call at a time, after a warm-up.
    progress(`[${setup}] ${label}: POST /lattice/cohort, ${COHORT_WARMUP} warm-up, ${COHORT_CALLS} timed`);
    const groupOf = new Map(population.subjects.map((p) => [p.externalId, p.group]));
    const pick = mulberry32(31 + size);
    const cohortSamples: number[] = [];
    let sameGroup = 0;
    let members = 0;
    let empty = 0;
    let candidates = 0;
    for (let k = 0; k < COHORT_WARMUP + COHORT_CALLS; k++) {
      const target = population.subjects[Math.floor(pick() * population.subjects.length)]!;
      const t0 = performance.now();
      const answer = await prepared.client.post<CohortAnswer>('/lattice/cohort', { subject: { kind: KIND, externalId: target.externalId } });
      const took = performance.now() - t0;
      if (k < COHORT_WARMUP) continue;
      cohortSamples.push(took);
      if (answer.members.length === 0) empty++;
      candidates = answer.candidateCount;
      for (const m of answer.members) {
        members++;
        if (groupOf.get(m.subject.externalId) === target.group) sameGroup++;
      }
    }
    const cohort = summarise(cohortSamples);
    const cohortTarget = size === TARGET_AT ? `; ${check(cohort.p95 <= TARGET_COHORT_P95_MS, `p95 ≤ ${TARGET_COHORT_P95_MS} ms`)}` : '';
    rows.push({
      operation: `${at}: cohort, POST /lattice/cohort {subject} (k ${COHORT.k.default}), end to end`,
      n: cohort.n,
      value: `p50 ${ms(cohort.p50)}, p95 ${ms(cohort.p95)}, p99 ${ms(cohort.p99)}`,
      throughput: `${thousands(perSecond(cohort.n, cohortSamples.reduce((a, b) => a + b, 0)))} calls/s (sequential)`,
      notes:
        `random subjects after ${COHORT_WARMUP} warm-up calls; ${thousands(candidates)} candidates a call; ${empty} empty; ` +
        `${pct(sameGroup / Math.max(1, members))} of the members from the target's planted group${cohortTarget}`,
    });

    // Every behavior lists all its members only up to maxMembers; then the ARI can be computed here.
    if (first.behaviors.every((b) => b.size <= ALL_MEMBERS)) {
      const full = await prepared.client.post<DiscoverAnswer>('/lattice/discover', { maxMembers: ALL_MEMBERS });
      const scored = scoreDiscovery(population.subjects, full);
      const held = full.behaviors.map((b, k) => `${b.size} (${b.label}: ${composition(population.subjects, scored.labels, String(k + 1))})`);
      const unassigned = scored.labels.filter((l) => l === NOISE_CLUSTER).length;
      if (unassigned > 0) held.push(`${unassigned} in no behavior (${composition(population.subjects, scored.labels, NOISE_CLUSTER)})`);
      notes.push(
        `${at}: ARI against the planted groups ${fixed(scored.ari)}, ${pct(scored.assigned)} assigned (a fourth call with maxMembers ${ALL_MEMBERS}, untimed). ` +
          `Behaviors: ${held.join('; ')}.`,
      );
    } else {
      notes.push(`${at}: no ARI: a behavior is larger than ${ALL_MEMBERS}, the most members discovery lists. Planted groups are ${thousands(size / 4)} subjects each.`);
    }
  }

  write(`#### 2. Speed (the planted population at ${SPEED_NOISE.name} noise; ${sizes.map(thousands).join(' and ')} subjects, a project each)`);
  write();
  write(
    `- Purchases: ${perGroup}, fewer than 50 each. ` +
      'Timing of the refresh and of discovery starts once the jobs mining set off have written every subject\'s features and every pattern memory is embedded.',
  );
  write(
    '- The feature refresh is timed twice: first with the planner statistics as the server left them after the ingest and mining ' +
      `(${run.statistics}), then after an explicit ANALYZE of the database. The discovery calls come after the ANALYZE.`,
  );
  write(
    `- Discovery is timed around app.inject, one call at a time: routing, auth, the job the route awaits (${run.ctx.runtime.queue.kind} queue), JSON. ` +
      `Over ${thousands(DISCOVERY.sample)} subjects it clusters a fixed sample of ${thousands(DISCOVERY.sample)} and assigns the rest (sampled true).`,
  );
  for (const note of notes) write(`- ${note}`);
  write();
  write(
    markdownTable(
      ['Operation', 'n', 'Time', 'Throughput', 'Notes'],
      rows.map((r) => [r.operation, r.n === undefined ? '–' : String(r.n), r.value ?? '–', r.throughput ?? '–', r.notes ?? '–']),
      (i) => i >= 1 && i <= 3,
    ),
  );
  write();
}

// ---------------------------------------------------------------------------------------------
// Backends

async function runBackend(base: AppRun): Promise<void> {
  const { ctx, postgres } = base;
  const sizes = SIZES_OVERRIDE ?? (postgres ? PG_SIZES : PGLITE_SIZES);
  const autovacuum = postgres ? (await ctx.runtime.db.query<{ setting: string }>(`SELECT current_setting('autovacuum') AS setting`)).rows[0]!.setting : undefined;
  const statistics =
    autovacuum === undefined
      ? 'PGlite runs no autovacuum: no statistics until an ANALYZE'
      : autovacuum === 'on'
        ? 'autovacuum on: its ANALYZE may or may not have run since the ingest'
        : `autovacuum ${autovacuum} on this server: no statistics until an ANALYZE`;
  const run: Run = { ...base, statistics };
  if (PARTS.has('1')) await benchQuality(run);
  if (PARTS.has('2')) await benchSpeed(run, sizes);
}

async function main(): Promise<void> {
  checkAdjustedRandIndex();
  await onEachBackendWithApp(log, runBackend, {
    title: 'Discovery benchmark',
    description: 'Through the HTTP API (app.inject), one enterprise project per noise level and size.',
    out,
  });
}

runBench(main);
