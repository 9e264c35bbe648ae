// Typed ingest against a raw INSERT ... SELECT FROM unnest of the same observations, and emit with
// 10 matching alert rules against emit with none.
import { createHash } from 'node:crypto';
import { performance } from 'node:perf_hooks';
import type { CreateRuleBody } from '../../src/alerts/schemas.js';
import type { Lattice } from '../../src/modules.js';
import { newId } from '../../src/platform/ids.js';
import type { Principal } from '../../src/tenancy/index.js';
import type { ObservationInput } from '../../src/typed/schemas.js';
import { ms, msUntil, mulberry32, perSecond, progress, seconds, summarise, thousands, type Receiver } from '../support.js';
import { addRow, latencyMeasure, type Run } from './common.js';

const TYPED_BATCH = 10_000;
const SUBJECTS = 1000;
const ATTRIBUTE = 'heart_rate';
const T0 = Date.parse('2025-01-01T00:00:00Z');
const EMIT_RULES = 10;
const EMIT_WARMUP = 20;

// Issue 4's goal (Postgres, batches of 10,000), and issue 38's: at least half the raw insert's rate.
const GOAL_INGEST_PER_SECOND = 20_000;
const GOAL_RAW_SHARE = 0.5;

async function openProject(ctx: Lattice, projectId: string): Promise<Principal> {
  const key = await ctx.apis.tenancy.createProjectWithKey(projectId, 'enterprise', ['READ_MEMORY', 'WRITE_MEMORY'], 'suite');
  if (!key) throw new Error(`project ${projectId} already exists`);
  return ctx.apis.tenancy.authenticate(key.apiKey, projectId);
}

/** Rows start .. start + count - 1 of a stream of in-range heart-rate readings, observedAt increasing, over SUBJECTS subjects. */
function readings(start: number, count: number): ObservationInput[] {
  return Array.from({ length: count }, (_, i) => {
    const g = start + i;
    const random = mulberry32(g * 2654435761);
    return {
      attributeKey: ATTRIBUTE,
      subjectKind: 'patient',
      subjectExternalId: `p-${String(Math.floor(random() * SUBJECTS)).padStart(5, '0')}`,
      valueNumeric: 40 + Math.round(random() * 1400) / 10,
      observedAt: new Date(T0 + g * 100).toISOString(),
      source: 'bench-monitor',
    };
  });
}

export async function benchTyped(run: Run, total: number): Promise<void> {
  const { ctx, setup } = run;
  const db = ctx.runtime.db;
  const service = await openProject(ctx, 'suite-typed');
  const rawProject = 'suite-typed-raw';
  await ctx.apis.tenancy.createProject(rawProject, { plan: 'enterprise' });
  await ctx.apis.typed.defineAttribute(service.projectId, { attributeKey: ATTRIBUTE, dataType: 'numeric', unit: 'bpm', minValid: 20, maxValid: 250 });
  const batches = Math.max(1, Math.floor(total / TYPED_BATCH));

  // The raw reference: the same rows as accepted observations, ids and dedupe hashes made before the clock starts.
  type RawBatch = { ids: string[]; subjects: string[]; values: number[]; at: string[]; hashes: string[] };
  const rawBatch = (rows: ObservationInput[]): RawBatch => ({
    ids: rows.map(() => newId('obs')),
    subjects: rows.map((r) => r.subjectExternalId!),
    values: rows.map((r) => r.valueNumeric!),
    at: rows.map((r) => r.observedAt!),
    hashes: rows.map((r) => createHash('sha256').update(JSON.stringify([r.subjectKind, r.subjectExternalId, r.attributeKey, r.observedAt, r.valueNumeric, r.source])).digest('base64url').slice(0, 32)),
  });
  const rawInsert = (b: RawBatch) =>
    db.query(
      `INSERT INTO typed_observations (project_id, id, attribute_key, subject_kind, subject_external_id, value_numeric, observed_at, source, status, dedupe_hash)
       SELECT $1, v.id, $2, 'patient', v.subject, v.value, v.at, 'bench-monitor', 'accepted', v.hash
         FROM unnest($3::text[], $4::text[], $5::float8[], $6::timestamptz[], $7::text[]) AS v(id, subject, value, at, hash)`,
      [rawProject, ATTRIBUTE, b.ids, b.subjects, b.values, b.at, b.hashes],
    );

  // Warm-up of both (the service's first batch creates the accumulators: the timed ones see the steady state).
  const warm = readings(0, TYPED_BATCH);
  await ctx.apis.typed.ingest(service, warm);
  await rawInsert(rawBatch(warm));

  // After each ingest its typed.observation events, which the typed.events job appends behind it,
  // are awaited untimed (as emit's webhooks are below): left running they would slow the next
  // ingest, so neither figure would be an ingest's. The sustained rate adds those waits back.
  const waiting = async () => (await db.query<{ n: number }>('SELECT count(*)::int AS n FROM typed_event_outbox WHERE project_id = $1', [service.projectId])).rows[0]!.n;
  progress(`[${setup}] typed ingest: ${batches} batches of ${thousands(TYPED_BATCH)} (ctx.apis.typed.ingest), each batch's events awaited untimed`);
  let serviceMs = 0;
  let drainMs = 0;
  for (let b = 0; b < batches; b++) {
    const rows = readings((b + 1) * TYPED_BATCH, TYPED_BATCH);
    const t0 = performance.now();
    const report = await ctx.apis.typed.ingest(service, rows);
    serviceMs += performance.now() - t0;
    if (report.accepted !== rows.length) throw new Error(`typed ingest accepted ${report.accepted} of ${rows.length} rows`);
    const lag = await msUntil(async () => (await waiting()) === 0);
    if (lag === undefined) throw new Error('typed.observation events were still waiting 60 s after an ingest');
    drainMs += lag;
  }
  progress(`[${setup}] typed ingest reference: the same ${thousands(batches * TYPED_BATCH)} rows by raw INSERT ... SELECT FROM unnest`);
  let rawMs = 0;
  for (let b = 0; b < batches; b++) {
    const prepared = rawBatch(readings((b + 1) * TYPED_BATCH, TYPED_BATCH));
    const t0 = performance.now();
    await rawInsert(prepared);
    rawMs += performance.now() - t0;
  }
  const rows = batches * TYPED_BATCH;
  const { rows: counted } = await db.query<{ service: number; raw: number }>(
    `SELECT (SELECT count(*) FROM typed_observations WHERE project_id = $1)::int AS service, (SELECT count(*) FROM typed_observations WHERE project_id = $2)::int AS raw`,
    [service.projectId, rawProject],
  );
  if (counted[0]!.service !== rows + TYPED_BATCH || counted[0]!.raw !== rows + TYPED_BATCH) throw new Error(`stored ${JSON.stringify(counted[0])}; expected ${rows + TYPED_BATCH} each`);
  const serviceRate = perSecond(rows, serviceMs);
  const sustainedRate = perSecond(rows, serviceMs + drainMs);
  const rawRate = perSecond(rows, rawMs);
  addRow(
    run,
    `typed ingest, ${thousands(TYPED_BATCH)}-row batches, ${thousands(rows)} observations`,
    { what: 'ctx.apis.typed.ingest, rows/s', value: serviceRate, unit: 'rows/s', text: `${thousands(serviceRate)} rows/s (${seconds(serviceMs)})` },
    { what: 'raw INSERT ... SELECT FROM unnest of the same rows into typed_observations, rows/s', value: rawRate, unit: 'rows/s', text: `${thousands(rawRate)} rows/s (${seconds(rawMs)})` },
    { text: `#38: ≥ ${GOAL_RAW_SHARE}× the raw insert`, ok: (v) => v >= GOAL_RAW_SHARE * rawRate },
    [
      `one numeric attribute, ${thousands(SUBJECTS)} subjects, every value in range; the service also validates, deduplicates and records the points for the fold and the rows due an event; the raw insert only writes the rows`,
      `#4's ${thousands(GOAL_INGEST_PER_SECOND)} rows/s: ${serviceRate >= GOAL_INGEST_PER_SECOND ? 'met' : 'not met'} here`,
      `sustained, each batch until the typed.events job had appended its ${thousands(TYPED_BATCH)} typed.observation events (${ms(drainMs / batches)} a batch after its ingest answered): ${thousands(sustainedRate)} rows/s`,
    ],
  );
}


export async function benchEmit(run: Run, emits: number, receiver: Receiver): Promise<void> {
  const { ctx, setup } = run;
  const bare = await openProject(ctx, 'suite-emit-0');
  const ruled = await openProject(ctx, `suite-emit-${EMIT_RULES}`);
  for (let r = 0; r < EMIT_RULES; r++) {
    const body: CreateRuleBody = { name: `suite rule ${r}`, trigger: { kind: 'engine-event', eventTypes: ['reading.*'] }, notify: [{ kind: 'webhook', url: receiver.url }] };
    await ctx.apis.alerts.create(ruled.projectId, body, ruled.entitlements['active-triggers']);
  }
  const emit = async (projectId: string, seq: number, rules: number) => {
    const result = await ctx.apis.events.emit(projectId, {
      eventType: 'reading.high',
      subject: { kind: 'patient', externalId: `p-${String(seq % SUBJECTS).padStart(5, '0')}` },
      severity: 'warn',
      payload: { value: 180 + (seq % 50), seq },
      dedupeKey: `suite-${seq}`,
    });
    if (!result.emitted || result.alertDispatches !== rules) throw new Error(`emit ${seq} answered emitted=${result.emitted}, ${result.alertDispatches} dispatches; expected ${rules}`);
  };
  const before = receiver.received();
  for (let i = 0; i < EMIT_WARMUP; i++) {
    await emit(bare.projectId, i, 0);
    await emit(ruled.projectId, i, EMIT_RULES);
  }
  // Alternated call by call, so both see the same machine. After each emit with rules its ten
  // webhooks are awaited, untimed: the deliveries run in this process (its queue's worker), and
  // left running they would slow the next emits of both kinds, so neither figure would be an emit's.
  // How long they took after the emit answered is reported beside.
  progress(`[${setup}] emit: ${emits} emits with ${EMIT_RULES} matching webhook rules and ${emits} with none, alternated`);
  const withRules: number[] = [];
  const without: number[] = [];
  const lags: number[] = [];
  let late = 0;
  const expected = EMIT_RULES * (EMIT_WARMUP + emits);
  await msUntil(() => receiver.received() - before >= EMIT_RULES * EMIT_WARMUP);
  for (let i = 0; i < emits; i++) {
    const seq = EMIT_WARMUP + i;
    let t0 = performance.now();
    await emit(bare.projectId, seq, 0);
    without.push(performance.now() - t0);
    t0 = performance.now();
    await emit(ruled.projectId, seq, EMIT_RULES);
    withRules.push(performance.now() - t0);
    const lag = await msUntil(() => receiver.received() - before >= EMIT_RULES * (EMIT_WARMUP + i + 1));
    if (lag === undefined) late++;
    else lags.push(lag);
    if ((i + 1) % 100 === 0) progress(`[${setup}] emit: ${i + 1}/${emits}`);
  }
  const delivered = receiver.received() - before;
  const none = summarise(without);
  const lag = summarise(lags);
  addRow(
    run,
    `emit, ${EMIT_RULES} matching alert rules (webhook channel)`,
    latencyMeasure(`ctx.apis.events.emit with ${EMIT_RULES} rules`, summarise(withRules)),
    latencyMeasure('ctx.apis.events.emit with no rule', none),
    { text: '#38: p95 ≤ 2× emit with no rule', ok: (p95) => p95 <= 2 * none.p95 },
    [
      `emit answers once its fires are recorded and their delivery job enqueued; the job posts each to a node:http receiver on 127.0.0.1 answering 204: ` +
        `it got ${thousands(delivered)} of ${thousands(expected)}; the ten of an emit arrived p50 ${ms(lag.p50)}, p95 ${ms(lag.p95)} after it answered` +
        (late > 0 ? ` (${late} emits' not within 60 s)` : ''),
    ],
  );
}
