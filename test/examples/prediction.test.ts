// The public example application typescript/predict-anything/index.ts of
// ThinkfleetAI/memmesh-examples, end to end (issue 35, deliverable 9): "declare any target — churn,
// next order total, next visit, anomaly — and get a calibrated prediction that abstains when the
// signal is thin" (the examples' README). The TypeScript client is not on the npm registry, so this
// makes the calls the example makes through it, in the same order and shapes, over real HTTP to a
// listening Lattice with the client's headers (test/examples/client.ts): for each of its four
// declared targets, tf.lattice.predictTarget(subject, target, { horizonDays }), that is
// POST /lattice/predict { subject, target, horizonDays }, reading `targetPrediction` (the client
// makes up an abstention when it is missing). The example reads an existing subject's history
// (DEMO_SUBJECT, default customer:acct-42) and writes none; the history here is written first with
// the client's own calls (tf.memory.observe, tf.typed.registerAttribute, tf.typed.ingest), as an
// application feeding that subject would.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createHarness, type Harness } from '../helpers/harness.js';
import { exampleClient, listen, type ExampleClient } from './client.js';

const DAY = 86_400_000;

/** The example's registry: what to predict, not how. */
const TARGETS = [
  { label: 'Reorder within 90 days?', horizonDays: 90, target: { kind: 'event_occurrence', eventType: 'order_placed' } },
  { label: 'Next order total', horizonDays: 30, target: { kind: 'numeric', attributeKey: 'order_total' } },
  { label: 'When is the next visit?', horizonDays: 60, target: { kind: 'event_time', eventType: 'visit' } },
  { label: 'Is the latest resting HR an outlier?', horizonDays: 30, target: { kind: 'anomaly', attributeKey: 'resting_hr' } },
] as const;

interface TargetPrediction {
  targetKind: string;
  eventType: string | null;
  probability: number;
  probabilityLower: number;
  probabilityUpper: number;
  value: number;
  valueLower: number;
  valueUpper: number;
  expectedAt: string;
  expectedAtLower: string;
  expectedAtUpper: string;
  daysUntil: number;
  anomalyScore: number;
  isAnomaly: boolean;
  abstained: boolean;
  abstentionReason: string;
  explanation: string;
  evidenceMemoryIds: string[];
}

const pct = (p: number) => (p * 100).toFixed(0);

/** What the example prints for one answer (its render): abstention first, then the target's own line. */
function printed(p: TargetPrediction): string {
  if (p.abstained) return `ABSTAINED — ${p.abstentionReason || 'insufficient signal'}`;
  switch (p.targetKind) {
    case 'event_occurrence':
      return `${pct(p.probability)}% [${pct(p.probabilityLower)}–${pct(p.probabilityUpper)}%]`;
    case 'numeric':
      return `${p.value.toFixed(2)} [${p.valueLower.toFixed(2)}–${p.valueUpper.toFixed(2)}]`;
    case 'event_time':
      return `~${p.daysUntil.toFixed(0)} days (${p.expectedAt}) window: ${p.expectedAtLower} → ${p.expectedAtUpper}`;
    case 'anomaly':
      return `${p.isAnomaly ? 'ANOMALY' : 'normal'} — z=${p.anomalyScore.toFixed(2)}, latest ${p.value.toFixed(2)} vs [${p.valueLower.toFixed(2)}–${p.valueUpper.toFixed(2)}]`;
    default:
      return JSON.stringify(p);
  }
}

describe('example: typescript/predict-anything', () => {
  let h: Harness;
  let tf: ExampleClient;
  const subject = { kind: 'customer', externalId: 'acct-42' };
  const orderTotals = [42, 38, 45, 40, 44, 39, 41, 43];
  const restingHr = [61, 60, 62, 59, 61, 60, 62, 61, 88];

  /** tf.lattice.predictTarget for each declared target, in the example's order. */
  async function predictAll(who: { kind: string; externalId: string }) {
    const answers: TargetPrediction[] = [];
    for (const { horizonDays, target } of TARGETS) {
      const result = await tf.post<{ targetPrediction?: TargetPrediction | null; abstained?: boolean; abstentionReason?: string }>('/lattice/predict', { subject: who, target, horizonDays });
      // The client answers an abstention of its own when the engine gives no targetPrediction:
      // this engine must always give one.
      expect(result.targetPrediction, `${target.kind}: no targetPrediction`).toBeTruthy();
      answers.push(result.targetPrediction!);
    }
    return answers;
  }

  beforeAll(async () => {
    h = await createHarness();
    tf = exampleClient(await listen(h), await h.project(), 'typescript');
  });
  afterAll(async () => h?.close());

  it('abstains on every target for a subject it knows nothing about, saying why', async () => {
    const answers = await predictAll({ kind: 'customer', externalId: 'acct-new' });
    expect(answers.map((p) => p.targetKind)).toEqual(TARGETS.map((t) => t.target.kind));
    for (const p of answers) {
      expect(p.abstained).toBe(true);
      expect(p.abstentionReason).toMatch(/^insufficient_signal: /);
      expect(printed(p)).toBe(`ABSTAINED — ${p.abstentionReason}`);
    }
  });

  it('answers all four declared targets once the subject has a history, with intervals and evidence', async () => {
    const now = Date.now();
    // tf.memory.observe({ subject, content, activityType, occurredAt, metadata }): orders every 20
    // days, visits every 9 days (the same words each time: each is its own visit).
    const observe = (content: string, activityType: string, occurredAt: string, metadata: Record<string, unknown> = {}) =>
      tf.post<{ id: string }>('/admin/memory', { content, type: 'event', scope: 'project', importance: 5, source: 'admin_created', validFrom: occurredAt, metadata: { subject, eventType: activityType, occurredAt, ...metadata } });
    const orderIds: string[] = [];
    for (const [i, amount] of orderTotals.entries()) {
      orderIds.push((await observe(`Order #${i + 1}`, 'order_placed', new Date(now - (orderTotals.length - i) * 20 * DAY).toISOString(), { amount })).id);
    }
    const visitIds = new Set<string>();
    for (let i = 0; i < 8; i++) visitIds.add((await observe('Visited the store', 'visit', new Date(now - (4 + (7 - i) * 9) * DAY).toISOString())).id);
    expect(visitIds.size).toBe(8);
    // tf.typed.registerAttribute, then tf.typed.ingest: order totals and resting heart rate readings.
    await tf.post('/memory-typed/attributes', { attributeKey: 'order_total', dataType: 'numeric', unit: 'USD' });
    await tf.post('/memory-typed/attributes', { attributeKey: 'resting_hr', dataType: 'numeric', unit: 'bpm' });
    const reading = (attributeKey: string, value: number, at: number) => ({ attributeKey, subjectKind: subject.kind, subjectExternalId: subject.externalId, valueNumeric: value, observedAt: new Date(at).toISOString() });
    expect(await tf.post('/memory-typed/observations', { observations: orderTotals.map((v, i) => reading('order_total', v, now - (orderTotals.length - i) * 20 * DAY)) })).toMatchObject({ accepted: 8, quarantined: 0 });
    expect(await tf.post('/memory-typed/observations', { observations: restingHr.map((v, i) => reading('resting_hr', v, now - (restingHr.length - i) * DAY)) })).toMatchObject({ accepted: 9, quarantined: 0 });

    const [reorder, total, visit, heartRate] = await predictAll(subject);
    for (const p of [reorder, total, visit, heartRate]) {
      expect(p!.abstained, `${p!.targetKind}: ${p!.abstentionReason}`).toBe(false);
      expect(p!.explanation.length).toBeGreaterThan(0);
      expect(p!.evidenceMemoryIds.length).toBeGreaterThan(0);
    }

    // Reorder within 90 days: a regular buyer every 20 days, last 20 days ago: very likely.
    expect(reorder).toMatchObject({ targetKind: 'event_occurrence', eventType: 'order_placed' });
    expect(reorder!.probabilityLower).toBeLessThanOrEqual(reorder!.probability);
    expect(reorder!.probability).toBeLessThanOrEqual(reorder!.probabilityUpper);
    expect(reorder!.probability).toBeGreaterThan(0.8);
    expect(new Set(reorder!.evidenceMemoryIds)).toEqual(new Set(orderIds));
    expect(printed(reorder!)).toMatch(/^\d+% \[\d+–\d+%\]$/);

    // Next order total: about the recent totals, within an interval around them.
    expect(total).toMatchObject({ targetKind: 'numeric' });
    expect(total!.value).toBeGreaterThan(38);
    expect(total!.value).toBeLessThan(45);
    expect(total!.valueLower).toBeLessThan(total!.value);
    expect(total!.valueUpper).toBeGreaterThan(total!.value);
    expect(total!.evidenceMemoryIds).toHaveLength(8);

    // Next visit: every 9 days, the last 4 days ago: in about 5 days, inside its window.
    expect(visit).toMatchObject({ targetKind: 'event_time', eventType: 'visit' });
    expect(visit!.daysUntil).toBeCloseTo(5, 0);
    expect(Date.parse(visit!.expectedAtLower)).toBeLessThanOrEqual(Date.parse(visit!.expectedAt));
    expect(Date.parse(visit!.expectedAt)).toBeLessThanOrEqual(Date.parse(visit!.expectedAtUpper));
    expect(new Set(visit!.evidenceMemoryIds)).toEqual(visitIds);
    expect(printed(visit!)).toMatch(/^~5 days \(/);

    // The latest resting heart rate (88 after readings about 60) is an outlier.
    expect(heartRate).toMatchObject({ targetKind: 'anomaly', isAnomaly: true, value: 88 });
    expect(heartRate!.anomalyScore).toBeGreaterThan(3);
    expect(heartRate!.valueUpper).toBeLessThan(88);
    expect(printed(heartRate!)).toMatch(/^ANOMALY — z=\d+\.\d\d, latest 88\.00 vs \[/);
  });

  it('abstains on the targets a thin history cannot answer, and answers the rest', async () => {
    // Two visits and three heart rate readings: too few for a next visit or an outlier test.
    const thin = { kind: 'customer', externalId: 'acct-thin' };
    const now = Date.now();
    for (const days of [12, 3]) {
      const at = new Date(now - days * DAY).toISOString();
      await tf.post('/admin/memory', { content: 'Visited the store', type: 'event', scope: 'project', importance: 5, source: 'admin_created', validFrom: at, metadata: { subject: thin, eventType: 'visit', occurredAt: at } });
    }
    await tf.post('/memory-typed/observations', {
      observations: [40, 44, 41].map((v, i) => ({ attributeKey: 'order_total', subjectKind: thin.kind, subjectExternalId: thin.externalId, valueNumeric: v, observedAt: new Date(now - (3 - i) * DAY).toISOString() })),
    });
    const answers = await predictAll(thin);
    const byKind = Object.fromEntries(answers.map((p) => [p.targetKind, p]));
    expect(byKind.numeric).toMatchObject({ abstained: false });
    expect(byKind.event_time).toMatchObject({ abstained: true, abstentionReason: expect.stringMatching(/^insufficient_signal: 2 event\(s\), at least 3 needed/) });
    expect(byKind.anomaly).toMatchObject({ abstained: true, abstentionReason: expect.stringMatching(/^insufficient_signal: /) });
  });
});
