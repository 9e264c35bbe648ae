// A fire whose delivery job was lost (the process died between commit and the first attempt) is
// picked up by the sweep and delivered once.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { toNewEvent } from '../../src/events/service.js';
import { createHarness, type Harness } from '../helpers/harness.js';
import { startReceiver, type Receiver } from '../helpers/webhook-receiver.js';

describe('alert delivery sweep', () => {
  let h: Harness;
  let p: { projectId: string; apiKey: string };
  let sink: Receiver;
  const hits = () => sink.received.map((r) => String(r.headers['webhook-id']));

  beforeAll(async () => {
    sink = await startReceiver((res, _n, req) => res.writeHead(req.url === '/fail' ? 500 : 204).end());
    h = await createHarness({ env: { WEBHOOK_ALLOW_PRIVATE_TARGETS: 'true' } });
    p = await h.project();
  });
  afterAll(async () => {
    await h?.close();
    await sink?.close();
  });

  it('re-enqueues a delivery that never got its first attempt, and delivers it once', async () => {
    const url = sink.url;
    const rule = (await h.call('POST', p.projectId, '/memory-alerts', { body: { name: 'any', trigger: { kind: 'engine-event', eventTypes: ['order.*'] }, notify: [{ kind: 'webhook', url }] } })).json();
    // Commit the event and its fire, then "crash": no dispatch.
    const receipt = await h.db.transaction((tx) => h.apis.events.appendInTransaction(tx, p.projectId, [toNewEvent({ eventType: 'order.placed' })]));
    expect(receipt.dispatches).toBe(1);
    const before = (await h.call('GET', p.projectId, `/memory-alerts/${rule.id}/fires`)).json();
    expect(before).toHaveLength(1);
    const fireId = before[0].id;
    expect(before[0].deliveryResults[0]).toMatchObject({ ok: false, pending: true, attempts: 0 });

    // Not overdue yet within the grace period.
    expect(await h.apis.alerts.sweepDeliveries(60_000)).toBe(0);
    // With no grace it is overdue at once (fired at or before the sweep's now()).
    expect(await h.apis.alerts.sweepDeliveries(0)).toBe(1);
    await expect.poll(async () => (await h.call('GET', p.projectId, `/memory-alerts/${rule.id}/fires`)).json()[0].deliveryResults[0].ok, { timeout: 60_000 }).toBe(true);
    expect(hits()).toEqual([`${fireId}.0`]);
    // Delivered: nothing is pending any more.
    expect(await h.apis.alerts.sweepDeliveries(0)).toBe(0);
  });

  it('drops a pending retry whose channel the rule no longer has, instead of posting to the removed target', async () => {
    const base = sink.base;
    const rule = (
      await h.call('POST', p.projectId, '/memory-alerts', { body: { name: 'edited', trigger: { kind: 'engine-event', eventTypes: ['edit.*'] }, notify: [{ kind: 'webhook', url: `${base}/fail` }] } })
    ).json();
    const emitted = await h.call('POST', p.projectId, '/lattice/events/emit', { body: { eventType: 'edit.one', dedupeKey: 'edit-1' } });
    expect(emitted.json().alertDispatches).toBe(1);
    // The first attempt follows the emit, made by the job it enqueued.
    const read = async () => (await h.call('GET', p.projectId, `/memory-alerts/${rule.id}/fires`)).json()[0];
    await expect.poll(async () => (await read()).deliveryResults[0].attempts, { timeout: 60_000, interval: 20 }).toBe(1);
    const fire = await read();
    expect(fire.deliveryResults[0]).toMatchObject({ channel: 'webhook', url: `${base}/fail`, ok: false, pending: true, attempts: 1, statusCode: 500 });
    const before = sink.received.length;

    const patched = await h.call('PATCH', p.projectId, `/memory-alerts/${rule.id}`, { body: { notify: [{ kind: 'webhook', url: `${base}/new` }] } });
    expect(patched.statusCode, patched.body).toBe(200);
    // The retry comes due (run here rather than waiting out the backoff).
    expect(await h.apis.alerts.deliver({ projectId: p.projectId, fireId: fire.id, channel: 0, attempt: 2 })).toEqual({ delivered: false });
    expect(sink.received.length).toBe(before);
    const [after] = (await h.call('GET', p.projectId, `/memory-alerts/${rule.id}/fires`)).json();
    expect(after.deliveryResults[0]).toMatchObject({ url: `${base}/fail`, ok: false, pending: false, error: expect.stringContaining('no longer has this channel') });
  });
});
