// The public example application typescript/next-best-offer/index.ts of
// ThinkfleetAI/memmesh-examples, end to end (issue 35, deliverable 9): "the full closed loop:
// observe → mine → predict → Claude picks the offer + send-time → record the outcome → patterns
// re-calibrate" (the examples' README). The TypeScript client is not on the npm registry, so this
// makes the calls the example makes through it, in the same order and shapes, over real HTTP to a
// listening Lattice with the client's headers (test/examples/client.ts):
//   1. LEARN, per contact: tf.memory.observe({ subject, content, activityType, occurredAt, metadata })
//      for each activity (POST /admin/memory { content, type: 'event', scope: 'project', importance: 5,
//      source: 'admin_created', validFrom: occurredAt, metadata: { subject, eventType, occurredAt,
//      amount? } }), then tf.lattice.mineMemories({ subject }) (POST /lattice/patterns/extract
//      { subject, source: 'memories' });
//   2. UNDERSTAND: tf.lattice.getProfile (POST /lattice/profile { subject }), tf.lattice.predict
//      (POST /lattice/predict { subject, horizonDays: 30 }), tf.learning.getEffectiveness
//      (GET /lattice/effectiveness?groupBy=decision_type&minSupport=1, reading `rows`);
//   3. DECIDE: the model picks the offer and send time from that signal, then
//      tf.learning.recordDecision (POST /lattice/decisions, informedBy = the predictions' patternIds,
//      status 'proposed', idempotencyKey nbo:<contact>:<send date>); first for sarah-lapsing, then for
//      the whole list (sarah again: the same key), ranked by confidence, then send time;
//   4. ACT + LEARN: tf.learning.recordOutcome (POST /lattice/outcomes { decisionId, subject,
//      outcomeType: 'conversion', result, reward, idempotencyKey: outcome:<decisionId> }) for each
//      ranked suggestion, then tf.learning.getEffectiveness again.
// The example asks Claude; the local OpenAI-compatible stand-in (test/helpers/gateway-server.ts)
// plays it here, choosing from the signal in the prompt the example builds.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { chatText, startGateway, type ChatBody, type GatewayServer } from '../helpers/gateway-server.js';
import { createHarness, type Harness } from '../helpers/harness.js';
import { exampleClient, listen, type ExampleClient } from './client.js';

const DAY = 86_400_000;
const daysAgo = (n: number) => new Date(Date.now() - n * DAY).toISOString();
const SUBJECT = (externalId: string) => ({ kind: 'contact', externalId });

const OFFERS = [
  { id: 'winback_20pct', label: '20% win-back', description: '20% off the next order, 7-day expiry.', bestFor: 'Lapsing customers who used to be regular but have gone quiet.' },
  { id: 'loyalty_perk', label: 'Loyalty perk', description: 'Free add-on / priority service, no discount.', bestFor: 'Engaged, high-frequency customers — reward without eroding margin.' },
  { id: 'replenish_reminder', label: 'Replenishment nudge', description: 'A timely "time to reorder?" nudge, no discount.', bestFor: 'Customers on a predictable repurchase cadence.' },
  { id: 'bundle_upsell', label: 'Bundle upsell', description: 'A complementary product bundle at a small saving.', bestFor: 'Customers with a clear category preference and room to expand basket.' },
];

interface Activity {
  activityType: string;
  content: string;
  occurredAt: string;
  metadata?: Record<string, unknown>;
}

/** The example's three contacts: regular-then-quiet, frequent and steady, a monthly cadence. */
const CONTACTS: { externalId: string; activity: Activity[] }[] = [
  {
    externalId: 'sarah-lapsing',
    activity: [
      { activityType: 'order_placed', content: 'Order #1 — pizza', occurredAt: daysAgo(90), metadata: { amount: 42 } },
      { activityType: 'order_placed', content: 'Order #2 — pizza', occurredAt: daysAgo(76), metadata: { amount: 38 } },
      { activityType: 'order_placed', content: 'Order #3 — pizza', occurredAt: daysAgo(62), metadata: { amount: 45 } },
      { activityType: 'order_placed', content: 'Order #4 — pizza', occurredAt: daysAgo(48), metadata: { amount: 40 } },
      { activityType: 'site_visit', content: 'Browsed menu, did not order', occurredAt: daysAgo(20) },
    ],
  },
  {
    externalId: 'mike-loyal',
    activity: [
      { activityType: 'order_placed', content: 'Order', occurredAt: daysAgo(21), metadata: { amount: 30 } },
      { activityType: 'order_placed', content: 'Order', occurredAt: daysAgo(14), metadata: { amount: 34 } },
      { activityType: 'order_placed', content: 'Order', occurredAt: daysAgo(7), metadata: { amount: 28 } },
      { activityType: 'email_open', content: 'Opened weekly newsletter', occurredAt: daysAgo(2) },
    ],
  },
  {
    externalId: 'ana-replenish',
    activity: [
      { activityType: 'order_placed', content: 'Coffee beans 1kg', occurredAt: daysAgo(88), metadata: { amount: 24 } },
      { activityType: 'order_placed', content: 'Coffee beans 1kg', occurredAt: daysAgo(58), metadata: { amount: 24 } },
      { activityType: 'order_placed', content: 'Coffee beans 1kg', occurredAt: daysAgo(29), metadata: { amount: 24 } },
    ],
  },
];

interface Profile {
  rfmSegment: string | null;
  cadenceSummary: string | null;
  contributingPatternIds: string[];
  activityCount: number;
}
interface PredictResult {
  predictions: { patternId: string; description: string; expectedAt: string; confidence: number }[];
  abstained?: boolean;
  abstentionReason?: string | null;
}
interface EffectivenessRow {
  groupKey: string;
  n: number;
  successRate: number;
  avgReward: number;
  confidence: number;
}
interface Signal {
  externalId: string;
  profile: Profile | null;
  predictions: PredictResult['predictions'];
  abstained: boolean;
  abstentionReason: string | null;
  effectiveness: EffectivenessRow[];
}
interface Decision {
  offerId: string;
  sendAtIso: string;
  sendTimeReason: string;
  rationale: string;
  confidence: number;
}
interface Suggestion {
  externalId: string;
  decisionId: string;
  offer: (typeof OFFERS)[number];
  sendAtIso: string;
  confidence: number;
  informedBy: { memoryId: string; refType: string }[];
}

/**
 * The stand-in for Claude: reads the prompt the example builds and follows its rules. A cadence in
 * the profile picks the cadence's offer (weekly: reward, monthly: replenish), no cadence a
 * win-back; an offer that has only failed so far gives way to the best one that converted. The send
 * time is a day before the predicted engagement, or tomorrow at 09:00 UTC when the engine abstained.
 */
function standInModel(body: ChatBody): Decision {
  const prompt = chatText(body);
  const profile = JSON.parse(/PROFILE: (\{[\s\S]*?\n\})/.exec(prompt)?.[1] ?? 'null') as Profile | null;
  const abstained = prompt.includes('PREDICTIONS: engine ABSTAINED');
  const worked = [...prompt.matchAll(/^- (\w+): (\d+)% success over n=(\d+)/gm)].map((m) => ({ offer: m[1]!, rate: Number(m[2]), n: Number(m[3]) }));
  const today = new Date(/Today is (\S+)\. /.exec(prompt)![1]!);
  let offerId = profile?.cadenceSummary?.startsWith('weekly') ? 'loyalty_perk' : profile?.cadenceSummary?.startsWith('monthly') ? 'replenish_reminder' : 'winback_20pct';
  const record = worked.find((w) => w.offer === offerId);
  const best = [...worked].sort((a, b) => b.rate - a.rate)[0];
  if (record && record.rate === 0 && best && best.rate > 0) offerId = best.offer;
  const predicted = /PREDICTED NEXT ENGAGEMENTS[^\n]*\n- (\S+) —/.exec(prompt)?.[1];
  const sendAt = predicted ? new Date(Date.parse(predicted) - DAY) : new Date(Date.UTC(today.getUTCFullYear(), today.getUTCMonth(), today.getUTCDate() + 1, 9));
  const confidence = 0.4 + (profile?.cadenceSummary ? 0.2 : 0) + (profile?.cadenceSummary?.startsWith('weekly') ? 0.1 : 0);
  return {
    offerId,
    sendAtIso: sendAt.toISOString(),
    sendTimeReason: predicted ? 'Just before the predicted next order.' : 'No predicted engagement: the next morning.',
    rationale: `${abstained ? 'The engine abstained (not enough signal). ' : ''}Cadence: ${profile?.cadenceSummary ?? 'none'}.`,
    confidence,
  };
}

describe('example: typescript/next-best-offer', () => {
  let h: Harness;
  let model: GatewayServer;
  let tf: ExampleClient;
  const learned = new Map<string, { ids: string[]; mined: { patternsCreated: number; patternsRefreshed: number } }>();
  const prompts = new Map<string, string[]>();
  let first: Suggestion;
  let ranked: Suggestion[];

  // ── 1. LEARN ──
  async function learnAboutContact(c: (typeof CONTACTS)[number]) {
    const ids: string[] = [];
    for (const a of c.activity) {
      const item = await tf.post<{ id: string }>('/admin/memory', {
        content: a.content,
        type: 'event',
        scope: 'project',
        importance: 5,
        source: 'admin_created',
        validFrom: a.occurredAt,
        metadata: { subject: SUBJECT(c.externalId), eventType: a.activityType, occurredAt: a.occurredAt, ...a.metadata },
      });
      ids.push(item.id);
    }
    const mined = await tf.post<{ patternsCreated: number; patternsRefreshed: number }>('/lattice/patterns/extract', { subject: SUBJECT(c.externalId), source: 'memories' });
    learned.set(c.externalId, { ids, mined });
  }

  // ── 2. UNDERSTAND ──
  async function gatherSignal(externalId: string): Promise<Signal> {
    const subject = SUBJECT(externalId);
    const profile = await tf.post<Profile>('/lattice/profile', { subject }).catch(() => null);
    const predicted = await tf.post<PredictResult>('/lattice/predict', { subject, horizonDays: 30 });
    const effectiveness = await tf
      .get<{ rows: EffectivenessRow[] }>('/lattice/effectiveness', { groupBy: 'decision_type', minSupport: 1 })
      .then((r) => r.rows)
      .catch(() => []);
    return {
      externalId,
      profile,
      predictions: (predicted.predictions ?? []).map(({ patternId, description, expectedAt, confidence }) => ({ patternId, description, expectedAt, confidence })),
      abstained: predicted.abstained ?? false,
      abstentionReason: predicted.abstentionReason ?? null,
      effectiveness,
    };
  }

  // ── 3. DECIDE: the prompt the example writes, to the model, as structured output ──
  async function decideOffer(signal: Signal): Promise<Decision> {
    const user = [
      `Contact: ${signal.externalId}`,
      '',
      'OFFER CATALOG:',
      ...OFFERS.map((o) => `- ${o.id} (${o.label}): ${o.description} Best for: ${o.bestFor}`),
      '',
      `PROFILE: ${JSON.stringify(signal.profile ?? 'none', null, 2)}`,
      '',
      signal.abstained
        ? 'PREDICTIONS: engine ABSTAINED — not enough signal to predict next engagement.'
        : `PREDICTED NEXT ENGAGEMENTS (soonest first):\n${signal.predictions.map((p) => `- ${p.expectedAt} — ${p.description} (confidence ${p.confidence.toFixed(2)})`).join('\n')}`,
      '',
      signal.effectiveness.length
        ? `WHAT HAS WORKED (per offer, from realized outcomes):\n${signal.effectiveness
            .map((e) => `- ${e.groupKey}: ${(e.successRate * 100).toFixed(0)}% success over n=${e.n} (avg reward ${e.avgReward.toFixed(2)}, calibrated ${(e.confidence * 100).toFixed(0)}%)`)
            .join('\n')}`
        : 'WHAT HAS WORKED: no outcome history yet — this is a cold start.',
      '',
      `Today is ${new Date().toISOString()}. Choose the offer and send time.`,
    ].join('\n');
    prompts.set(signal.externalId, [...(prompts.get(signal.externalId) ?? []), user]);
    const res = await fetch(`${model.url}/chat/completions`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', authorization: 'Bearer sk-local' },
      body: JSON.stringify({
        model: 'claude-stand-in',
        messages: [
          { role: 'system', content: 'You are a lifecycle-marketing strategist. Choose the SINGLE best offer to send and the best time to send it.' },
          { role: 'user', content: user },
        ],
        response_format: { type: 'json_schema', json_schema: { name: 'offer_decision', schema: { type: 'object' } } },
      }),
    });
    return JSON.parse(((await res.json()) as { choices: { message: { content: string } }[] }).choices[0]!.message.content) as Decision;
  }

  async function suggestForContact(externalId: string): Promise<Suggestion> {
    const signal = await gatherSignal(externalId);
    const decision = await decideOffer(signal);
    const offer = OFFERS.find((o) => o.id === decision.offerId) ?? OFFERS[0]!;
    const informedBy = signal.predictions.map((p) => ({ memoryId: p.patternId, refType: 'pattern' }));
    const { decision: recorded } = await tf.post<{ decision: { decisionId: string } | null }>('/lattice/decisions', {
      subject: SUBJECT(externalId),
      actor: 'agent:next-best-offer',
      decisionType: offer.id,
      actionType: 'send_offer',
      policy: 'next-best-offer-v1',
      informedBy,
      params: { offerId: offer.id, sendAt: decision.sendAtIso },
      status: 'proposed',
      idempotencyKey: `nbo:${externalId}:${decision.sendAtIso.slice(0, 10)}`,
    });
    return { externalId, decisionId: recorded!.decisionId, offer, sendAtIso: decision.sendAtIso, confidence: decision.confidence, informedBy };
  }

  beforeAll(async () => {
    model = await startGateway();
    model.chat = standInModel;
    h = await createHarness();
    tf = exampleClient(await listen(h), await h.project(), 'typescript');
  });
  afterAll(async () => {
    await h?.close();
    await model?.close();
  });

  it('LEARN: keeps every order, and mines a tentative cadence from three orders', async () => {
    for (const c of CONTACTS) await learnAboutContact(c);
    // Each activity is its own memory, the repeated "Order" and "Coffee beans 1kg" included.
    for (const c of CONTACTS) expect(new Set(learned.get(c.externalId)!.ids).size).toBe(c.activity.length);
    // Three weekly orders and three monthly ones are a cadence seen 3 times: a tentative pattern
    // each. Sarah's fortnightly orders stopped 48 days ago (three of six periods missed): no habit
    // holds any more, so none is kept for her.
    const created = (id: string) => learned.get(id)!.mined.patternsCreated + learned.get(id)!.mined.patternsRefreshed;
    expect(created('mike-loyal')).toBe(1);
    expect(created('ana-replenish')).toBe(1);
    expect(created('sarah-lapsing')).toBe(0);
    // (tf.lattice.getPattern, not called by the example: what was mined.)
    for (const [externalId, cadence] of [['mike-loyal', 'weekly'], ['ana-replenish', 'monthly']] as const) {
      const { data } = await tf.get<{ data: { id: string; summary: string; confidence: number; metadata: { unseen?: number; observationCount: number } }[] }>(`/lattice/contacts/${externalId}/patterns`);
      expect(data).toHaveLength(1);
      expect(data[0]!.summary).toContain(cadence);
      expect(data[0]!.summary).toContain('tentative: seen 3 times');
      // Low and honest: 2 gaps on cadence, 3 more it lacks counted as 4 misses each: 3/16.
      expect(data[0]!.confidence).toBeCloseTo(3 / 16, 6);
      expect(data[0]!.metadata).toMatchObject({ observationCount: 3, unseen: 12 });
    }
  });

  it('UNDERSTAND + DECIDE: the profile carries the cadence, projection abstains on a tentative one, and the model is told so', async () => {
    first = await suggestForContact('sarah-lapsing');
    expect(first.offer.id).toBe('winback_20pct');
    expect(first.decisionId).toMatch(/^dec_/);
    const sarahPrompt = prompts.get('sarah-lapsing')![0]!;
    expect(sarahPrompt).toContain('PREDICTIONS: engine ABSTAINED');
    expect(sarahPrompt).toContain('WHAT HAS WORKED: no outcome history yet — this is a cold start.');
    expect(sarahPrompt).toContain('"activityCount": 5');

    ranked = [];
    for (const c of CONTACTS) ranked.push(await suggestForContact(c.externalId));
    ranked.sort((a, b) => b.confidence - a.confidence || a.sendAtIso.localeCompare(b.sendAtIso));
    expect(ranked.map((s) => [s.externalId, s.offer.id])).toEqual([
      ['mike-loyal', 'loyalty_perk'],
      ['ana-replenish', 'replenish_reminder'],
      ['sarah-lapsing', 'winback_20pct'],
    ]);
    // One proposed offer per contact per day: sarah's second suggestion is the same decision.
    expect(ranked.find((s) => s.externalId === 'sarah-lapsing')!.decisionId).toBe(first.decisionId);

    for (const [externalId, cadence] of [['mike-loyal', 'weekly'], ['ana-replenish', 'monthly']] as const) {
      const signal = await gatherSignal(externalId);
      // Who they are: the cadence the tentative pattern found, and the pattern behind it.
      expect(signal.profile!.cadenceSummary).toBe(cadence);
      expect(signal.profile!.contributingPatternIds).toHaveLength(1);
      // What they will do next: at 3/16, below the default confidence floor 0.5, projection abstains
      // ("unknown", never "no"), so the model is told the engine abstained ...
      expect(signal).toMatchObject({ predictions: [], abstained: true, abstentionReason: expect.stringMatching(/^insufficient_confidence: /) });
      expect(prompts.get(externalId)![0]).toContain('PREDICTIONS: engine ABSTAINED');
      expect(prompts.get(externalId)![0]).toContain(`"cadenceSummary": "${cadence}"`);
      // ... and the example's decision, citing the predictions' patterns, cites none.
      expect(ranked.find((s) => s.externalId === externalId)!.informedBy).toEqual([]);
    }
  });

  it('ACT + LEARN: the outcomes are recorded once each, and effectiveness has the evidence to steer the next run', async () => {
    const outcomes: Record<string, ['success' | 'failure' | 'partial', number]> = {
      'sarah-lapsing': ['success', 42],
      'mike-loyal': ['success', 30],
      'ana-replenish': ['failure', 0],
    };
    for (const s of ranked) {
      const [result, reward] = outcomes[s.externalId]!;
      const body = { decisionId: s.decisionId, subject: SUBJECT(s.externalId), outcomeType: 'conversion', result, reward, idempotencyKey: `outcome:${s.decisionId}` };
      const recorded = await tf.post<{ outcomeId: string; updates: unknown[] }>('/lattice/outcomes', body);
      expect(recorded.outcomeId).toMatch(/^out_/);
      // The decision cited no pattern (above), so there is nothing to re-weight: the example prints no "recalibrated" part.
      expect(recorded.updates).toEqual([]);
      // A replay (the client retries a POST after a 5xx) is the same outcome, counted once.
      expect((await tf.post<{ outcomeId: string }>('/lattice/outcomes', body)).outcomeId).toBe(recorded.outcomeId);
    }
    const { rows } = await tf.get<{ rows: EffectivenessRow[] }>('/lattice/effectiveness', { groupBy: 'decision_type', minSupport: 1 });
    const printed = rows
      .map((e) => `${e.groupKey} success ${(e.successRate * 100).toFixed(0)}% avg reward ${e.avgReward.toFixed(2)} n=${e.n} calibrated ${(e.confidence * 100).toFixed(0)}%`)
      .sort();
    expect(printed).toEqual([
      'loyalty_perk success 100% avg reward 30.00 n=1 calibrated 67%',
      'replenish_reminder success 0% avg reward 0.00 n=1 calibrated 33%',
      'winback_20pct success 100% avg reward 42.00 n=1 calibrated 67%',
    ]);
  });

  it('run again: the writes are replays, and the DECIDE step sees what converted and moves off what did not', async () => {
    // The same activity sent again (the same times): no new memory, no new pattern.
    for (const c of CONTACTS) {
      const before = learned.get(c.externalId)!.ids;
      await learnAboutContact(c);
      expect(learned.get(c.externalId)!.ids).toEqual(before);
      expect(learned.get(c.externalId)!.mined.patternsCreated).toBe(0);
    }
    const again = await suggestForContact('ana-replenish');
    const prompt = prompts.get('ana-replenish')!.at(-1)!;
    expect(prompt).toContain('WHAT HAS WORKED (per offer, from realized outcomes):');
    expect(prompt).toContain('- replenish_reminder: 0% success over n=1 (avg reward 0.00, calibrated 33%)');
    expect(prompt).toContain('- loyalty_perk: 100% success over n=1 (avg reward 30.00, calibrated 67%)');
    expect(again.offer.id).not.toBe('replenish_reminder');
  });

  it('(not the example) a decision that cites the tentative pattern moves its confidence with the outcome', async () => {
    // The example cites only projected predictions; a caller that cites the pattern the profile
    // names (tf.learning.recordDecision with it in informedBy) moves it from its honest 3/16.
    const profile = await tf.post<Profile>('/lattice/profile', { subject: SUBJECT('mike-loyal') });
    const patternId = profile.contributingPatternIds[0]!;
    const { decision } = await tf.post<{ decision: { decisionId: string } }>('/lattice/decisions', {
      subject: SUBJECT('mike-loyal'),
      actor: 'agent:next-best-offer',
      decisionType: 'loyalty_perk',
      actionType: 'send_offer',
      informedBy: [{ memoryId: patternId, refType: 'pattern' }],
      status: 'executed',
    });
    const { updates } = await tf.post<{ updates: { refId: string; priorConfidence: number; posteriorConfidence: number }[] }>('/lattice/outcomes', {
      decisionId: decision.decisionId,
      outcomeType: 'conversion',
      result: 'success',
      reward: 30,
    });
    expect(updates).toHaveLength(1);
    expect(updates[0]!.refId).toBe(patternId);
    expect(updates[0]!.priorConfidence).toBeCloseTo(3 / 16, 6);
    expect(updates[0]!.posteriorConfidence).toBeGreaterThan(updates[0]!.priorConfidence);
  });
});
