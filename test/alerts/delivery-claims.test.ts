// Each attempt at a channel is claimed in SQL before it is made, so the deliver-fires job and the
// delivery sweep's job, reaching the same first attempt at once, post it once; and a claim whose
// claimant died before posting lapses, and the sweep hands the attempt to a new job.
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { claimAttempt } from '../../src/alerts/store.js';
import { toNewEvent } from '../../src/events/service.js';
import { createHarness, type Harness } from '../helpers/harness.js';
import { startReceiver, type Receiver } from '../helpers/webhook-receiver.js';

const WAIT = { timeout: 60_000, interval: 20 };

describe('alert delivery claims', () => {
  let h: Harness;
  let p: { projectId: string; apiKey: string };
  let sink: Receiver;
  let counter = 0;

  beforeAll(async () => {
    sink = await startReceiver();
    // Retries an hour away: every attempt past the first is made by the test itself.
    h = await createHarness({ env: { WEBHOOK_ALLOW_PRIVATE_TARGETS: 'true', WEBHOOK_RETRY_BASE_MS: '3600000' } });
    p = await h.project();
  });
  afterAll(async () => {
    await h?.close();
    await sink?.close();
  });

  /** A rule with one webhook, and one fire of it committed without its delivery job (as if the emitter stopped there). */
  const committedFire = async () => {
    const eventType = `claim.x${++counter}`;
    const rule = await h.call('POST', p.projectId, '/memory-alerts', { body: { name: eventType, trigger: { kind: 'engine-event', eventTypes: [eventType] }, notify: [{ kind: 'webhook', url: sink.url }] } });
    expect(rule.statusCode, rule.body).toBe(201);
    const receipt = await h.db.transaction((tx) => h.apis.events.appendInTransaction(tx, p.projectId, [toNewEvent({ eventType })]));
    expect(receipt.dispatches).toBe(1);
    const fires = (await h.call('GET', p.projectId, `/memory-alerts/${rule.json().id}/fires`)).json();
    expect(fires).toHaveLength(1);
    return { ruleId: rule.json().id as string, fireId: fires[0].id as string };
  };
  const posts = (fireId: string) => sink.received.filter((r) => r.headers['webhook-id'] === `${fireId}.0`).length;
  const result = async (ruleId: string) => (await h.call('GET', p.projectId, `/memory-alerts/${ruleId}/fires`)).json()[0].deliveryResults[0];

  it('posts a first attempt once when the deliver-fires job and the sweep\'s job make it at the same time', async () => {
    const { ruleId, fireId } = await committedFire();
    const outcomes = await Promise.all([
      h.apis.alerts.deliverFires({ projectId: p.projectId, fireIds: [fireId] }),
      h.apis.alerts.deliver({ projectId: p.projectId, fireId, channel: 0, attempt: 1 }),
      h.apis.alerts.deliverFires({ projectId: p.projectId, fireIds: [fireId] }),
      h.apis.alerts.deliver({ projectId: p.projectId, fireId, channel: 0, attempt: 1 }),
    ]);
    expect(posts(fireId)).toBe(1);
    // The claimant that made it reports it delivered (so may a job that reads the fire once it was).
    expect(outcomes.reduce((sum, o) => sum + Number(o.delivered), 0)).toBeGreaterThanOrEqual(1);
    expect(await result(ruleId)).toEqual({ channel: 'webhook', url: sink.url, ok: true, pending: false, attempts: 1, statusCode: 204, lastAttemptAt: expect.any(String) });
  });

  it('posts a first attempt once when the sweep enqueues its job while the deliver-fires job makes it', async () => {
    const { ruleId, fireId } = await committedFire();
    // The sweep counts the first attempt overdue at once (grace 0), so both reach it together.
    const [, enqueued] = await Promise.all([h.apis.alerts.deliverFires({ projectId: p.projectId, fireIds: [fireId] }), h.apis.alerts.sweepDeliveries(0, 0)]);
    expect(enqueued).toBeLessThanOrEqual(1);
    await vi.waitFor(async () => {
      expect((await h.lattice.runtime.queue.inFlight(p.projectId)).jobs.filter((j) => j.id.includes(fireId))).toEqual([]);
    }, WAIT);
    expect(posts(fireId)).toBe(1);
    expect(await result(ruleId)).toMatchObject({ ok: true, pending: false, attempts: 1 });
  });

  it('leaves a claimed attempt to its claimant, and once the claim lapses (the claimant stopped before posting) the sweep gives it to one new job', async () => {
    const { ruleId, fireId } = await committedFire();
    // A process claims the first attempt and stops before posting it.
    expect(await claimAttempt(h.db, p.projectId, fireId, 0, 0, 'stopped-claimant')).toMatchObject({ pending: true, attempts: 0 });
    expect(await result(ruleId)).toEqual({ channel: 'webhook', url: sink.url, ok: false, pending: true, attempts: 0 });
    // While the claim is live, neither the deliver-fires job nor the sweep (even with no grace) touches it.
    expect((await h.apis.alerts.deliverFires({ projectId: p.projectId, fireIds: [fireId] })).delivered).toBe(0);
    expect(await h.apis.alerts.deliver({ projectId: p.projectId, fireId, channel: 0, attempt: 1 })).toEqual({ delivered: false });
    expect(await h.apis.alerts.sweepDeliveries(0, 0)).toBe(0);
    expect(posts(fireId)).toBe(0);

    // A lease of 0: the claim counts as lapsed. The sweep enqueues one job to take it over, however often it runs.
    expect(await h.apis.alerts.sweepDeliveries(0, 0, 0)).toBe(1);
    await vi.waitFor(async () => expect(await result(ruleId)).toMatchObject({ ok: true, pending: false, attempts: 1, statusCode: 204 }), WAIT);
    expect(posts(fireId)).toBe(1);
    expect(await h.apis.alerts.sweepDeliveries(0, 0, 0)).toBe(0);
    // The stopped claimant's claim is gone with the attempt's result: it could no longer record one.
    expect(await claimAttempt(h.db, p.projectId, fireId, 0, 0, 'late')).toBeUndefined();
  });

  it('counts attempts made, not claims: a failing receiver\'s retries report 1, 2, 3 and each posts once', async () => {
    const failing = await startReceiver((res) => res.writeHead(503).end());
    try {
      const eventType = `claim.retry${++counter}`;
      const rule = await h.call('POST', p.projectId, '/memory-alerts', { body: { name: eventType, trigger: { kind: 'engine-event', eventTypes: [eventType] }, notify: [{ kind: 'webhook', url: failing.url }] } });
      const receipt = await h.db.transaction((tx) => h.apis.events.appendInTransaction(tx, p.projectId, [toNewEvent({ eventType })]));
      expect(receipt.dispatches).toBe(1);
      const [fire] = (await h.call('GET', p.projectId, `/memory-alerts/${rule.json().id}/fires`)).json();
      // Each attempt run twice at once (as a retry's job and the sweep's may be): posted once, counted once.
      for (const attempt of [1, 2, 3]) {
        const outcomes = await Promise.all([1, 2].map(() => h.apis.alerts.deliver({ projectId: p.projectId, fireId: fire.id, channel: 0, attempt })));
        expect(outcomes).toEqual([{ delivered: false }, { delivered: false }]);
        expect(failing.received).toHaveLength(attempt);
        expect(await result(rule.json().id)).toMatchObject({ ok: false, pending: true, attempts: attempt, statusCode: 503, nextAttemptAt: expect.any(String) });
      }
      expect((await h.call('DELETE', p.projectId, `/memory-alerts/${rule.json().id}`)).statusCode).toBe(204);
    } finally {
      await failing.close();
    }
  });
});
