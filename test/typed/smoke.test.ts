// End-to-end smoke of typed ingest, events and an alert webhook: the main path in one file.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { appendAllTypedEvents, createHarness, type Harness } from '../helpers/harness.js';
import { startReceiver, type Receiver } from '../helpers/webhook-receiver.js';

describe('typed ingest, events and alerts, end to end', () => {
  let h: Harness;
  let p: { projectId: string; apiKey: string };
  let sink: Receiver;

  beforeAll(async () => {
    sink = await startReceiver();
    h = await createHarness({ env: { WEBHOOK_ALLOW_PRIVATE_TARGETS: 'true' } });
    p = await h.project();
  });
  afterAll(async () => {
    await h?.close();
    await sink?.close();
  });

  it('ingests, accumulates, emits and fires', async () => {
    const def = await h.call('POST', p.projectId, '/memory-typed/attributes', { body: { attributeKey: 'hr', dataType: 'numeric', unit: 'bpm', minValid: 20, maxValid: 300 } });
    expect(def.statusCode, def.body).toBe(201);
    const rule = await h.call('POST', p.projectId, '/memory-alerts', {
      body: { name: 'hr', trigger: { kind: 'engine-event', eventTypes: ['typed.*'] }, notify: [{ kind: 'webhook', url: sink.url }] },
    });
    expect(rule.statusCode, rule.body).toBe(201);
    const res = await h.call('POST', p.projectId, '/memory-typed/observations', {
      body: {
        observations: [
          { attributeKey: 'hr', subjectKind: 'user', subjectExternalId: 'u1', valueNumeric: 60, observedAt: '2026-01-01T00:00:00Z' },
          { attributeKey: 'hr', subjectKind: 'user', subjectExternalId: 'u1', valueNumeric: 80, observedAt: '2026-01-01T00:01:00Z' },
          { attributeKey: 'hr', subjectKind: 'user', subjectExternalId: 'u1', valueNumeric: 80, observedAt: '2026-01-01T00:01:00Z' },
          { attributeKey: 'hr', subjectKind: 'user', subjectExternalId: 'u1', valueNumeric: 512, observedAt: '2026-01-01T00:02:00Z' },
          { id: 'x1', attributeKey: 'nope', subjectKind: 'user', subjectExternalId: 'u1', valueNumeric: 1, observedAt: '2026-01-01T00:02:00Z' },
        ],
      },
    });
    expect(res.statusCode, res.body).toBe(200);
    expect(res.json()).toEqual({ accepted: 2, quarantined: 2, duplicates: 1, quarantineReasons: { '3': 'value 512 above maxValid 300', x1: expect.stringContaining('unknown attribute') } });
    const acc = await h.call('GET', p.projectId, '/memory-typed/accumulator?subjectKind=user&subjectExternalId=u1&attributeKey=hr');
    expect(acc.json()).toMatchObject({ count: 2, sum: 140, mean: 70, variance: 100, last: 80, ewma: 66 });
    const late = await h.call('POST', p.projectId, '/memory-typed/observations', {
      body: { observations: [{ attributeKey: 'hr', subjectKind: 'user', subjectExternalId: 'u1', valueNumeric: 100, observedAt: '2025-12-31T00:00:00Z' }] },
    });
    expect(late.json().accepted).toBe(1);
    const acc2 = (await h.call('GET', p.projectId, '/memory-typed/accumulator?subjectKind=user&subjectExternalId=u1&attributeKey=hr')).json();
    expect(acc2).toMatchObject({ count: 3, sum: 240, last: 80 });
    // series 100, 60, 80: ewma 100 -> 88 -> 85.6
    expect(acc2.ewma).toBeCloseTo(85.6, 9);
    await appendAllTypedEvents(h);
    const events = (await h.call('GET', p.projectId, '/memory-events?eventTypes=typed.observation')).json();
    expect(events).toHaveLength(3);
    const emit = await h.call('POST', p.projectId, '/lattice/events/emit', { body: { eventType: 'custom.thing', payloadJson: '{"a":1}' } });
    expect(emit.json()).toMatchObject({ emitted: true, alertDispatches: 0 });
    const again = await h.call('POST', p.projectId, '/lattice/events/emit', { body: { eventType: 'custom.thing', payloadJson: '{"a":1}' } });
    expect(again.json()).toMatchObject({ emitted: false, event: { id: emit.json().event.id } });
    await expect.poll(() => sink.received.length, { timeout: 60_000 }).toBe(3);
    const fires = (await h.call('GET', p.projectId, `/memory-alerts/${rule.json().id}/fires`)).json();
    expect(fires).toHaveLength(3);
    await expect.poll(async () => (await h.call('GET', p.projectId, `/memory-alerts/${rule.json().id}/fires`)).json().every((f: { deliveryResults: { ok: boolean }[] }) => f.deliveryResults[0]!.ok), { timeout: 60_000 }).toBe(true);
    const enq = await h.call('POST', p.projectId, '/memory-typed/observations/enqueue', {
      body: { observations: [{ attributeKey: 'hr', subjectKind: 'user', subjectExternalId: 'u2', valueNumeric: 70, observedAt: '2026-01-01T00:00:00Z' }] },
    });
    expect(enq.statusCode).toBe(202);
    await expect.poll(async () => (await h.call('GET', p.projectId, '/memory-typed/accumulator?subjectKind=user&subjectExternalId=u2&attributeKey=hr')).json().count, { timeout: 60_000 }).toBe(1);
  });
});
