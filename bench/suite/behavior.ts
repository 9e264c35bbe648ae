// Behaviour rows of the suite, in one project of N synthetic customers with 50 purchases each (the
// population of bench/predict.ts's speed part: weekly, biweekly, monthly and irregular habits over the
// last year): predict, profile and the context bundle through the API, each beside the plainest SQL
// read of the same subject's rows, and discovery beside grouping the same subjects by RFM segment.
import { performance } from 'node:perf_hooks';
import type { Lattice } from '../../src/modules.js';
import type { ObservationInput } from '../../src/typed/schemas.js';
import { ms, mulberry32, perSecond, progress, ProjectClient, seconds, sleep, summarise, thousands } from '../support.js';
import { CUSTOMER_KIND as KIND, PURCHASE_ATTRIBUTE as ATTRIBUTE, PURCHASES, subjectId, syntheticPurchases } from '../customers.js';
import { addRow, latencyMeasure, waitUntilNone, type Measured, type Run } from './common.js';

const BATCH = 10_000;
const WINDOW_DAYS = 365;
const HORIZON_DAYS = 30;
const CONTEXT_TOKENS = 2000;
const WARMUP = 20;
const DAY_MS = 86_400_000;
const HOUR_MS = 3_600_000;
const MINUTE_MS = 60_000;

// Issue 9's goals (Postgres, 10k subjects with 50 events each) and issue 11's (discovery at 10k subjects).
const GOAL_PREDICT_P95_MS = 50;
const GOAL_PROFILE_P95_MS = 50;
const GOAL_CONTEXT_P95_MS = 100;
const GOAL_DISCOVER_MS = 5000;
const GOAL_AT = 10_000;


const offScale = (subjects: number) => (subjects < GOAL_AT ? `measured at ${thousands(subjects)} subjects` : undefined);

interface TargetAnswer {
  targetPrediction: { model: string | null };
}
interface ContextAnswer {
  tokensEstimate: number;
}
interface DiscoverAnswer {
  subjectsAnalyzed: number;
  sampled: boolean;
  behaviors: { size: number }[];
  durationMs: number;
}

const median = (xs: readonly number[]) => [...xs].sort((a, b) => a - b)[Math.floor((xs.length - 1) / 2)]!;

async function count(ctx: Lattice, sql: string, params: unknown[]): Promise<number> {
  return (await ctx.runtime.db.query<{ n: number }>(sql, params)).rows[0]!.n;
}

export async function benchBehavior(run: Run, subjects: number, calls: number, discoverCalls: number, embedWaitMs: number): Promise<void> {
  const { ctx, app, setup } = run;
  const db = ctx.runtime.db;
  const projectId = 'suite-behavior';
  const key = await ctx.apis.tenancy.createProjectWithKey(projectId, 'enterprise', ['READ_MEMORY', 'WRITE_MEMORY'], 'suite');
  if (!key) throw new Error(`project ${projectId} already exists`);
  const principal = await ctx.apis.tenancy.authenticate(key.apiKey, projectId);
  const client = new ProjectClient(app, projectId, key.apiKey);
  await ctx.apis.typed.defineAttribute(projectId, { attributeKey: ATTRIBUTE, dataType: 'numeric', unit: 'USD' });

  // Setup (untimed for the table, reported in the notes): ingest, mining, the jobs mining sets off.
  const now = Date.now();
  const perBatch = BATCH / PURCHASES;
  const ingestStart = performance.now();
  let lastReport = ingestStart;
  for (let start = 0; start < subjects; start += perBatch) {
    const batch: ObservationInput[] = [];
    for (let i = start; i < Math.min(subjects, start + perBatch); i++) batch.push(...syntheticPurchases(i, now));
    const report = await ctx.apis.typed.ingest(principal, batch);
    if (report.accepted !== batch.length) throw new Error(`ingest accepted ${report.accepted} of ${batch.length} purchases`);
    if (performance.now() - lastReport > 5000 || start + perBatch >= subjects) {
      lastReport = performance.now();
      progress(`[${setup}] behaviour: ingested ${thousands(Math.min(subjects, start + perBatch) * PURCHASES)} of ${thousands(subjects * PURCHASES)} purchases`);
    }
  }
  const ingestMs = performance.now() - ingestStart;

  progress(`[${setup}] behaviour: mining ${thousands(subjects)} subjects (POST /lattice/patterns/extract {windowDays: ${WINDOW_DAYS}})`);
  const miningStart = new Date();
  const m0 = performance.now();
  const mined = await client.post<{ contactsProcessed: number; patternsCreated: number }>('/lattice/patterns/extract', { windowDays: WINDOW_DAYS });
  const miningMs = performance.now() - m0;
  progress(`[${setup}] behaviour: mined ${thousands(mined.contactsProcessed)} subjects in ${seconds(miningMs)}, ${thousands(mined.patternsCreated)} patterns`);
  const features = await waitUntilNone(
    setup,
    'behaviour: subjects whose discovery features the mining jobs have still to write',
    async () => Math.max(0, subjects - (await count(ctx, 'SELECT count(*)::int AS n FROM discovery_features WHERE project_id = $1 AND computed_at >= $2', [projectId, miningStart]))),
    600_000,
  );
  // The pattern memories are embedded behind (a drain job): timing starts once no embedding competes.
  const embedded = await waitUntilNone(
    setup,
    'behaviour: pattern memories still to embed',
    () => count(ctx, 'SELECT count(*)::int AS n FROM memories WHERE project_id = $1 AND embedding IS NULL', [projectId]),
    embedWaitMs,
  );
  const patternMemories = await count(ctx, 'SELECT count(*)::int AS n FROM memories WHERE project_id = $1', [projectId]);
  progress(`[${setup}] behaviour: ANALYZE`);
  await db.exec('ANALYZE');
  const setupNote =
    `${thousands(subjects)} customers × ${PURCHASES} purchases ingested in ${seconds(ingestMs)} (${thousands(perSecond(subjects * PURCHASES, ingestMs))} rows/s), ` +
    `mined in ${seconds(miningMs)} (${thousands(perSecond(mined.contactsProcessed, miningMs))} subjects/s); features written ${seconds(features.ms)} later` +
    `${features.left > 0 ? ` (❌ ${features.left} still missing)` : ''}; ${thousands(patternMemories)} pattern memories, ` +
    (embedded.left === 0 ? `all embedded ${seconds(embedded.ms)} later` : `${thousands(embedded.left)} still unembedded after ${seconds(embedded.ms)} (BENCH_SUITE_EMBED_WAIT_S): timed anyway`);

  // The first calls fit the project's models: the profile's RFM cut points, then BG/NBD (a job the first predict sets off).
  const subject = (externalId: string) => ({ kind: KIND, externalId });
  await client.post('/lattice/profile', { subject: subject(subjectId(0)) });
  const fitStart = performance.now();
  const predictBody = (externalId: string) => ({ subject: subject(externalId), horizonDays: HORIZON_DAYS, target: { kind: 'event_occurrence', eventType: ATTRIBUTE } });
  while ((await client.post<TargetAnswer>('/memory-intelligence/predict', predictBody(subjectId(0)))).targetPrediction.model !== 'bgnbd') {
    if (performance.now() - fitStart > 600_000) throw new Error('BG/NBD was not fitted within 600 s');
    await sleep(100);
  }
  progress(`[${setup}] behaviour: BG/NBD fitted ${seconds(performance.now() - fitStart)} after the first predict`);

  // Each operation and its reference, on the same random subjects, alternated call by call.
  const ops: {
    name: string;
    call: (externalId: string) => Promise<unknown>;
    reference: { what: string; call: (externalId: string) => Promise<unknown> };
    goal: { ms: number; issue: string };
    seed: number;
  }[] = [
    {
      name: `predict, POST /memory-intelligence/predict (event_occurrence, horizon ${HORIZON_DAYS} days)`,
      call: (id) => client.post('/memory-intelligence/predict', predictBody(id)),
      reference: {
        what: "raw SQL read of the subject's purchases (its whole series, oldest first)",
        call: (id) =>
          db.query(
            `SELECT observed_at, value_numeric FROM typed_observations
              WHERE project_id = $1 AND subject_kind = $2 AND subject_external_id = $3 AND attribute_key = $4 AND status = 'accepted' ORDER BY observed_at`,
            [projectId, KIND, id, ATTRIBUTE],
          ),
      },
      goal: { ms: GOAL_PREDICT_P95_MS, issue: '#9' },
      seed: 11,
    },
    {
      name: 'profile, POST /lattice/profile',
      call: (id) => client.post('/lattice/profile', { subject: subject(id) }),
      reference: {
        what: "raw SQL aggregate of the subject's recency, frequency and spend over the year",
        call: (id) =>
          db.query(
            `SELECT max(observed_at) AS last, count(*)::int AS frequency, sum(value_numeric) AS monetary FROM typed_observations
              WHERE project_id = $1 AND subject_kind = $2 AND subject_external_id = $3 AND status = 'accepted' AND observed_at > now() - interval '${WINDOW_DAYS} days'`,
            [projectId, KIND, id],
          ),
      },
      goal: { ms: GOAL_PROFILE_P95_MS, issue: '#9' },
      seed: 13,
    },
    {
      name: `context bundle, POST /lattice/context {maxTokens: ${CONTEXT_TOKENS}}`,
      call: async (id) => {
        const bundle = await client.post<ContextAnswer>('/lattice/context', { subject: subject(id), maxTokens: CONTEXT_TOKENS });
        if (!(bundle.tokensEstimate <= CONTEXT_TOKENS)) throw new Error(`a context bundle of ${bundle.tokensEstimate} tokens`);
      },
      reference: {
        what: "raw SQL read of the subject's live memories (most important first, 50) and its latest reading of each attribute",
        call: async (id) => {
          await db.query(
            `SELECT id, type, content, importance, metadata, valid_from FROM memories
              WHERE project_id = $1 AND subject_kind = $2 AND subject_external_id = $3 AND status IN ('pending', 'confirmed')
              ORDER BY importance DESC, created_at DESC LIMIT 50`,
            [projectId, KIND, id],
          );
          await db.query(
            `SELECT DISTINCT ON (attribute_key) attribute_key, value_numeric, observed_at FROM typed_observations
              WHERE project_id = $1 AND subject_kind = $2 AND subject_external_id = $3 AND status = 'accepted' ORDER BY attribute_key, observed_at DESC`,
            [projectId, KIND, id],
          );
        },
      },
      goal: { ms: GOAL_CONTEXT_P95_MS, issue: '#9' },
      seed: 14,
    },
  ];
  for (const [index, op] of ops.entries()) {
    progress(`[${setup}] behaviour: ${op.name}: ${WARMUP} warm-up and ${calls} timed calls, each beside its reference`);
    const random = mulberry32(op.seed);
    const figure: number[] = [];
    const reference: number[] = [];
    for (let k = 0; k < WARMUP + calls; k++) {
      const id = subjectId(Math.floor(random() * subjects));
      let t0 = performance.now();
      await op.call(id);
      const took = performance.now() - t0;
      t0 = performance.now();
      await op.reference.call(id);
      const refTook = performance.now() - t0;
      if (k < WARMUP) continue;
      figure.push(took);
      reference.push(refTook);
      if ((k + 1 - WARMUP) % 100 === 0) progress(`[${setup}] behaviour: ${op.name}: ${k + 1 - WARMUP}/${calls}`);
    }
    addRow(
      run,
      `${op.name}, ${thousands(subjects)} subjects`,
      latencyMeasure('the API (app.inject: routing, auth, metering, the service, JSON)', summarise(figure)),
      latencyMeasure(op.reference.what, summarise(reference)),
      { text: `${op.goal.issue}: p95 ≤ ${op.goal.ms} ms at ${thousands(GOAL_AT)} subjects`, ok: (v) => v <= op.goal.ms, offScale: offScale(subjects) },
      [index === 0 ? setupNote : undefined, index === 0 && !run.postgres ? `PGlite runs ${thousands(subjects)} subjects by default (at 10,000 the wait for the pattern memories' embeddings alone takes minutes): BENCH_SUITE_PGLITE_SUBJECTS sets it` : undefined],
    );
  }

  // Discovery, whole project, against grouping the same subjects by the RFM segment of their stored features.
  const wall: number[] = [];
  const served: number[] = [];
  const grouped: number[] = [];
  let answer: DiscoverAnswer | undefined;
  let segments = 0;
  for (let k = 0; k < discoverCalls; k++) {
    progress(`[${setup}] behaviour: POST /lattice/discover, call ${k + 1} of ${discoverCalls}`);
    let t0 = performance.now();
    answer = await client.post<DiscoverAnswer>('/lattice/discover', {});
    wall.push(performance.now() - t0);
    served.push(answer.durationMs);
    t0 = performance.now();
    const { rows } = await db.query(
      `SELECT rfm_segment, count(*)::int AS size, array_agg(subject_external_id ORDER BY subject_external_id) AS members
         FROM discovery_features WHERE project_id = $1 GROUP BY rfm_segment`,
      [projectId],
    );
    grouped.push(performance.now() - t0);
    segments = rows.length;
  }
  const figure: Measured = { what: 'POST /lattice/discover {} end to end, median call', value: median(wall), unit: 'ms', text: `median ${ms(median(wall))} (calls ${wall.map(ms).join(', ')})` };
  const reference: Measured = {
    what: "raw SQL grouping of the same subjects by their stored RFM segment, median call",
    value: median(grouped),
    unit: 'ms',
    text: `median ${ms(median(grouped))} (${segments} segments)`,
  };
  addRow(run, `discovery, POST /lattice/discover, ${thousands(subjects)} subjects`, figure, reference, {
    text: `#11: ≤ ${seconds(GOAL_DISCOVER_MS)} end to end at ${thousands(GOAL_AT)} subjects`,
    ok: (v) => v <= GOAL_DISCOVER_MS,
    offScale: offScale(subjects),
  }, [
    answer ? `${thousands(answer.subjectsAnalyzed)} analysed, sampled ${answer.sampled}, ${answer.behaviors.length} behaviors (sizes ${answer.behaviors.map((b) => b.size).join(', ')}); the service's durationMs ${served.map(ms).join(', ')}` : undefined,
  ]);
}
