// A rule edited between its fire being recorded and the fire's delivery: the rule as it is when the
// delivery is made decides where it goes. Channels it no longer has are dropped (never sent),
// channels it still has go out with their current settings, channels added before the fire's first
// attempt join it; a disabled rule delivers nothing, and a deleted one takes its fires with it.
// Against a real local receiver, through the real queue.
import { Webhook } from 'standardwebhooks';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import type { AppendReceipt } from '../../src/events/service.js';
import { toNewEvent } from '../../src/events/service.js';
import { createHarness, type Harness } from '../helpers/harness.js';
import { startReceiver, type Receiver } from '../helpers/webhook-receiver.js';

interface DeliveryResult {
  channel: string;
  url?: string;
  ok: boolean;
  pending: boolean;
  attempts: number;
  error?: string;
  statusCode?: number;
  memoryId?: string;
}

const WAIT = { timeout: 60_000, interval: 20 };

describe('a rule edited before its fire is delivered', () => {
  let h: Harness;
  let p: { projectId: string; apiKey: string };
  let sink: Receiver;
  let counter = 0;

  beforeAll(async () => {
    // `/fail` answers 500 to every request, any other path 204.
    sink = await startReceiver((res, _n, req) => res.writeHead(req.url?.endsWith('/fail') ? 500 : 204).end());
    h = await createHarness({ env: { WEBHOOK_ALLOW_PRIVATE_TARGETS: 'true' } });
    p = await h.project();
  });
  afterAll(async () => {
    await h?.close();
    await sink?.close();
  });

  /** A URL of the receiver no other test posts to. */
  const hook = (name: string) => `${sink.base}/${name}-${++counter}`;
  /** A rule with these channels, on an event type of its own. */
  const createRule = async (notify: Record<string, unknown>[]) => {
    const eventType = `edit.x${++counter}`;
    const res = await h.call('POST', p.projectId, '/memory-alerts', { body: { name: eventType, trigger: { kind: 'engine-event', eventTypes: [eventType] }, notify } });
    expect(res.statusCode, res.body).toBe(201);
    return { ...(res.json() as { id: string; notify: { kind: string; url?: string; secret?: string }[] }), eventType };
  };
  /** Commits an event and its fire; the delivery job is enqueued only by `dispatch` (as emit does after its commit). */
  const fireWithoutDispatch = async (eventType: string) => {
    const receipt: AppendReceipt = await h.db.transaction((tx) => h.apis.events.appendInTransaction(tx, p.projectId, [toNewEvent({ eventType })]));
    expect(receipt.dispatches).toBe(1);
    return { dispatch: () => h.apis.events.afterCommit(receipt) };
  };
  const fires = async (ruleId: string) => (await h.call('GET', p.projectId, `/memory-alerts/${ruleId}/fires`)).json() as { id: string; deliveryResults: DeliveryResult[] }[];
  const patch = async (ruleId: string, body: Record<string, unknown>) => {
    const res = await h.call('PATCH', p.projectId, `/memory-alerts/${ruleId}`, { body });
    expect(res.statusCode, res.body).toBe(200);
    return res.json() as { notify: { kind: string; url?: string; secret?: string }[] };
  };
  /** The fire once none of its deliveries is pending: from then on nothing more is posted for it. */
  const settled = async (ruleId: string) =>
    vi.waitFor(async () => {
      const [fire] = await fires(ruleId);
      expect(fire!.deliveryResults.some((r) => r.pending)).toBe(false);
      return fire!;
    }, WAIT);
  /** Waits until no delivery job of the project is queued or running. */
  const noDeliveryJob = () =>
    vi.waitFor(async () => {
      expect((await h.lattice.runtime.queue.inFlight(p.projectId)).jobs.filter((j) => j.name.startsWith('alerts.deliver'))).toEqual([]);
    }, WAIT);
  const postsFor = (fireId: string) => sink.received.filter((r) => String(r.headers['webhook-id']).startsWith(`${fireId}.`));

  it('delivers to the channels the rule has when the job runs: a removed webhook is dropped, a kept one goes with its new secret, an added one joins the fire', async () => {
    const [a, b, c] = [hook('a'), hook('b'), hook('c')];
    const rule = await createRule([
      { kind: 'webhook', url: a },
      { kind: 'webhook', url: b },
    ]);
    const fire = await fireWithoutDispatch(rule.eventType);
    // Between the commit and the job: A removed, B kept (moved first, secret rotated), C added.
    const patched = await patch(rule.id, { notify: [{ kind: 'webhook', url: b, secret: 'rotated-secret-for-b' }, { kind: 'webhook', url: c }] });
    await fire.dispatch();

    const delivered = await settled(rule.id);
    expect(delivered.deliveryResults).toEqual([
      { channel: 'webhook', url: a, ok: false, pending: false, attempts: 0, error: 'the rule no longer has this channel; delivery dropped' },
      { channel: 'webhook', url: b, ok: true, pending: false, attempts: 1, statusCode: 204, lastAttemptAt: expect.any(String) },
      { channel: 'webhook', url: c, ok: true, pending: false, attempts: 1, statusCode: 204, lastAttemptAt: expect.any(String) },
    ]);
    const posts = postsFor(delivered.id);
    expect(posts.map((r) => [r.path, r.headers['webhook-id']]).sort()).toEqual([
      [new URL(b).pathname, `${delivered.id}.1`],
      [new URL(c).pathname, `${delivered.id}.2`],
    ]);
    // Signed with the secret the rule has now.
    const toB = posts.find((r) => r.path === new URL(b).pathname)!;
    expect(() => new Webhook(Buffer.from('rotated-secret-for-b', 'utf8'), { format: 'raw' }).verify(toB.body, toB.headers as Record<string, string>)).not.toThrow();
    const toC = posts.find((r) => r.path === new URL(c).pathname)!;
    expect(() => new Webhook(patched.notify[1]!.secret!).verify(toC.body, toC.headers as Record<string, string>)).not.toThrow();
    // Nothing is left to retry, and nothing more arrives.
    await noDeliveryJob();
    expect(postsFor(delivered.id)).toHaveLength(2);
    expect(await h.apis.alerts.sweepDeliveries(0, 0)).toBe(0);
  });

  it('writes the memory of a channel the rule still has with its current template', async () => {
    const rule = await createRule([{ kind: 'memory', writeAs: { content: 'old template', scope: 'project' } }]);
    const fire = await fireWithoutDispatch(rule.eventType);
    await patch(rule.id, { notify: [{ kind: 'memory', writeAs: { content: 'new template for {{event.eventType}}', scope: 'project' } }] });
    await fire.dispatch();
    const delivered = await settled(rule.id);
    expect(delivered.deliveryResults).toEqual([{ channel: 'memory', ok: true, pending: false, attempts: 1, memoryId: expect.any(String), lastAttemptAt: expect.any(String) }]);
    const memory = (await h.call('GET', p.projectId, `/admin/memory/${delivered.deliveryResults[0]!.memoryId!}`)).json();
    expect(memory.content).toBe(`new template for ${rule.eventType}`);
  });

  it('drops every delivery of a fire whose rule was disabled before the job ran, and posts nothing', async () => {
    const url = hook('disabled');
    const rule = await createRule([{ kind: 'webhook', url }]);
    const fire = await fireWithoutDispatch(rule.eventType);
    await patch(rule.id, { enabled: false });
    await fire.dispatch();
    const dropped = await settled(rule.id);
    expect(dropped.deliveryResults).toEqual([{ channel: 'webhook', url, ok: false, pending: false, attempts: 0, error: 'the rule is disabled; delivery dropped' }]);
    await noDeliveryJob();
    expect(postsFor(dropped.id)).toEqual([]);
  });

  it('delivers nothing for a fire whose rule was deleted before the job ran: the fire went with the rule', async () => {
    const rule = await createRule([{ kind: 'webhook', url: hook('deleted') }]);
    const fire = await fireWithoutDispatch(rule.eventType);
    const fireId = (await fires(rule.id))[0]!.id;
    expect((await h.call('DELETE', p.projectId, `/memory-alerts/${rule.id}`)).statusCode).toBe(204);
    await fire.dispatch();
    await noDeliveryJob();
    expect(postsFor(fireId)).toEqual([]);
    const { rows } = await h.db.query<{ n: number }>('SELECT count(*)::int AS n FROM alert_fires WHERE project_id = $1 AND id = $2', [p.projectId, fireId]);
    expect(rows[0]!.n).toBe(0);
  });

  it('sends a pending retry to its channel after the rule\'s channels were reordered, and not to a channel added after the first attempt', async () => {
    const failing = `${hook('retry')}/fail`;
    const rule = await createRule([{ kind: 'webhook', url: failing }]);
    const fire = await fireWithoutDispatch(rule.eventType);
    await fire.dispatch();
    const [first] = await vi.waitFor(async () => {
      const list = await fires(rule.id);
      expect(list[0]!.deliveryResults[0]!.attempts).toBe(1);
      return list;
    }, WAIT);
    expect(first!.deliveryResults[0]).toMatchObject({ url: failing, ok: false, pending: true, attempts: 1, statusCode: 500 });
    const added = hook('added');
    await patch(rule.id, { notify: [{ kind: 'webhook', url: added }, { kind: 'webhook', url: failing }] });
    // The retry comes due (run here rather than waiting out the backoff): it still goes to `failing`.
    expect(await h.apis.alerts.deliver({ projectId: p.projectId, fireId: first!.id, channel: 0, attempt: 2 })).toEqual({ delivered: false });
    const [after] = await fires(rule.id);
    expect(after!.deliveryResults).toEqual([expect.objectContaining({ url: failing, pending: true, attempts: 2, statusCode: 500 })]);
    expect(postsFor(first!.id).map((r) => r.path)).toEqual([new URL(failing).pathname, new URL(failing).pathname]);
    // Stop the retries.
    expect((await h.call('DELETE', p.projectId, `/memory-alerts/${rule.id}`)).statusCode).toBe(204);
  });
});
