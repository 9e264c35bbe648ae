// Alert rules over HTTP against real local webhook receivers: CRUD and validation, SSRF refusal,
// triggers, filters, throttles, signed deliveries, retries (5xx, 429 Retry-After, 410, timeout),
// the memory channel, typed-observation rules on the queued path, the active-triggers ceiling,
// permissions and isolation, and the fire history.
import { Webhook } from 'standardwebhooks';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { appendAllTypedEvents, createHarness, type Harness } from '../helpers/harness.js';
import { startReceiver, type Received, type Receiver } from '../helpers/webhook-receiver.js';

const ENV = { WEBHOOK_ALLOW_PRIVATE_TARGETS: 'true', WEBHOOK_RETRY_BASE_MS: '50', WEBHOOK_TIMEOUT_MS: '500' };
const EMIT = '/lattice/events/emit';

const receivers: Receiver[] = [];
async function receiver(...args: Parameters<typeof startReceiver>): Promise<Receiver> {
  const started = await startReceiver(...args);
  receivers.push(started);
  return started;
}

interface DeliveryResult {
  channel: string;
  ok: boolean;
  error?: string;
  pending: boolean;
  attempts: number;
  statusCode?: number;
  memoryId?: string;
  lastAttemptAt?: string;
  nextAttemptAt?: string;
}

interface Fire {
  id: string;
  alertRuleId: string;
  eventId: string | null;
  dedupeKey: string;
  deliveryResults: DeliveryResult[];
  firedAt: string;
}

describe('alert rules', () => {
  let h: Harness;
  let p: { projectId: string; apiKey: string };
  let sink: Receiver;
  let counter = 0;
  const unique = (prefix: string) => `${prefix}-${++counter}`;

  beforeAll(async () => {
    sink = await receiver();
    h = await createHarness({ env: ENV });
    p = await h.project();
  });
  afterAll(async () => {
    await h?.close();
    for (const r of receivers) await r.close();
  });

  const webhook = (url = sink.url) => ({ kind: 'webhook', url });
  const createRule = async (body: Record<string, unknown>, projectId = p.projectId, apiKey?: string) => {
    const res = await h.call('POST', projectId, '/memory-alerts', { body: { name: unique('rule'), notify: [webhook()], ...body }, ...(apiKey ? { apiKey } : {}) });
    expect(res.statusCode, res.body).toBe(201);
    return res.json() as { id: string; name: string; enabled: boolean; notify: { kind: string; url?: string; secret?: string }[] } & Record<string, unknown>;
  };
  const emit = async (body: Record<string, unknown>, projectId = p.projectId) => {
    const res = await h.call('POST', projectId, EMIT, { body });
    expect(res.statusCode, res.body).toBe(200);
    return res.json() as { emitted: boolean; event: { id: string }; alertDispatches: number };
  };
  const fires = async (ruleId: string, projectId = p.projectId): Promise<Fire[]> => {
    const res = await h.call('GET', projectId, `/memory-alerts/${ruleId}/fires`);
    expect(res.statusCode, res.body).toBe(200);
    return res.json();
  };
  const user = (externalId: string) => ({ kind: 'user', externalId });
  /** The rule's fires once every channel's first attempt is made: emit hands the fires to the queue and answers. */
  const attempted = async (ruleId: string, projectId = p.projectId): Promise<Fire[]> => {
    await expect
      .poll(async () => (await fires(ruleId, projectId)).every((f) => f.deliveryResults.every((r) => r.attempts > 0)), { timeout: 60_000, interval: 20 })
      .toBe(true);
    return fires(ruleId, projectId);
  };
  /**
   * Waits until no delivery job of the fire is queued, running or waiting out a backoff: from then
   * on no further attempt can come (a retry is always a job, enqueued before the attempt's job ends).
   */
  const noDeliveryPending = async (fireId: string, projectId = p.projectId) =>
    expect
      .poll(async () => (await h.lattice.runtime.queue.inFlight(projectId)).jobs.filter((j) => j.name.startsWith('alerts.deliver') && j.id.includes(fireId)), { timeout: 60_000, interval: 50 })
      .toEqual([]);
  /** A rule as GET answers it: webhook secrets are shown only by create and patch. */
  const readBack = (rule: { notify: { kind: string; url?: string; secret?: string }[] }) => ({
    ...rule,
    notify: rule.notify.map((c) => (c.kind === 'webhook' ? { kind: c.kind, url: c.url } : c)),
  });

  describe('CRUD', () => {
    it('creates a rule (201) with defaults and a generated whsec_ secret, and reads it back', async () => {
      const res = await h.call('POST', p.projectId, '/memory-alerts', {
        body: { name: 'crud one', trigger: { kind: 'engine-event', eventTypes: ['crud.x'] }, notify: [webhook()] },
      });
      expect(res.statusCode, res.body).toBe(201);
      const rule = res.json();
      expect(rule).toEqual({
        id: expect.stringMatching(/^alr_/),
        projectId: p.projectId,
        name: 'crud one',
        description: null,
        enabled: true,
        trigger: { kind: 'engine-event', eventTypes: ['crud.x'] },
        filter: null,
        notify: [{ kind: 'webhook', url: sink.url, secret: expect.stringMatching(/^whsec_[A-Za-z0-9+/]{32}$/) }],
        throttle: null,
        created: expect.any(String),
        updated: expect.any(String),
      });
      expect(() => new Webhook(rule.notify[0].secret)).not.toThrow();
      // Read back, the secret is withheld: only the answers to create and patch show it.
      const readBack = { ...rule, notify: [{ kind: 'webhook', url: sink.url }] };
      const got = await h.call('GET', p.projectId, `/memory-alerts/${rule.id}`);
      expect(got.statusCode).toBe(200);
      expect(got.json()).toEqual(readBack);
      const list = await h.call('GET', p.projectId, '/memory-alerts');
      expect(list.json()).toContainEqual(readBack);
    });

    it('keeps the secret of a webhook when a PATCH of notify resends its URL without one, and rotates it when one is sent', async () => {
      const rule = await createRule({ enabled: false, trigger: { kind: 'engine-event', eventTypes: ['never.x'] } });
      const secret = rule.notify[0]!.secret!;
      const same = await h.call('PATCH', p.projectId, `/memory-alerts/${rule.id}`, { body: { notify: [webhook(), { kind: 'memory', writeAs: { content: 'x', scope: 'project' } }] } });
      expect(same.statusCode, same.body).toBe(200);
      expect(same.json().notify[0].secret).toBe(secret);
      const rotated = await h.call('PATCH', p.projectId, `/memory-alerts/${rule.id}`, { body: { notify: [{ ...webhook(), secret: 'a-new-raw-secret' }] } });
      expect(rotated.json().notify).toEqual([{ kind: 'webhook', url: sink.url, secret: 'a-new-raw-secret' }]);
    });

    it('keeps a given secret and stores every field as sent', async () => {
      const body = {
        name: 'full',
        description: 'all fields',
        enabled: false,
        trigger: { kind: 'segment-change', from: 'a', to: 'b' },
        filter: { subjectKind: 'user', subjectExternalIdPattern: 'u-*', categories: ['x'], metadataMatch: { 'a.b': 'one' } },
        notify: [
          { kind: 'webhook', url: sink.url, secret: 'whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw' },
          { kind: 'memory', writeAs: { content: '{{rule.name}}', scope: 'user', importance: 7 } },
        ],
        throttle: { maxPerHour: 3, cooldownMinutes: 1.5, dedupOn: 'rule' },
      };
      const rule = await createRule(body);
      expect(rule).toMatchObject(body);
      expect((await h.call('GET', p.projectId, `/memory-alerts/${rule.id}`)).json()).toMatchObject({ ...body, notify: [{ kind: 'webhook', url: sink.url }, body.notify[1]] });
    });

    it('keeps metadataMatch numbers, booleans and nulls as sent, not as strings', async () => {
      // Bodies are validated without type coercion: in an anyOf, coercion would turn 100 into "100".
      const metadataMatch = { 'order.total': 100, paid: true, coupon: null, currency: 'EUR' };
      const rule = await createRule({ enabled: false, trigger: { kind: 'engine-event', eventTypes: ['never.x'] }, filter: { metadataMatch } });
      expect(rule.filter).toEqual({ metadataMatch });
      expect((await h.call('GET', p.projectId, `/memory-alerts/${rule.id}`)).json().filter).toEqual({ metadataMatch });
    });

    it('stores description null as null on create, and PATCH description null clears it', async () => {
      const created = await createRule({ enabled: false, description: null, trigger: { kind: 'engine-event', eventTypes: ['never.x'] } });
      expect(created.description).toBeNull();
      const described = await h.call('PATCH', p.projectId, `/memory-alerts/${created.id}`, { body: { description: 'text' } });
      expect(described.json().description).toBe('text');
      const cleared = await h.call('PATCH', p.projectId, `/memory-alerts/${created.id}`, { body: { description: null } });
      expect(cleared.json().description).toBeNull();
    });

    it('patches any subset: name only, enabled, filter/throttle/description null to clear', async () => {
      const rule = await createRule({
        description: 'desc',
        trigger: { kind: 'engine-event', eventTypes: ['patch.x'] },
        filter: { subjectKind: 'user' },
        throttle: { cooldownMinutes: 5 },
      });
      const renamed = await h.call('PATCH', p.projectId, `/memory-alerts/${rule.id}`, { body: { name: 'renamed' } });
      expect(renamed.statusCode, renamed.body).toBe(200);
      expect(renamed.json()).toEqual({ ...rule, name: 'renamed', updated: expect.any(String) });
      expect(renamed.json().updated >= (rule.updated as string)).toBe(true);

      const disabled = await h.call('PATCH', p.projectId, `/memory-alerts/${rule.id}`, { body: { enabled: false } });
      expect(disabled.json()).toMatchObject({ name: 'renamed', enabled: false, filter: { subjectKind: 'user' }, throttle: { cooldownMinutes: 5 } });

      const cleared = await h.call('PATCH', p.projectId, `/memory-alerts/${rule.id}`, { body: { filter: null } });
      expect(cleared.json()).toMatchObject({ filter: null, throttle: { cooldownMinutes: 5 }, description: 'desc', enabled: false });
      const unthrottled = await h.call('PATCH', p.projectId, `/memory-alerts/${rule.id}`, { body: { throttle: null } });
      expect(unthrottled.json()).toMatchObject({ filter: null, throttle: null, description: 'desc', name: 'renamed' });

      const retargeted = await h.call('PATCH', p.projectId, `/memory-alerts/${rule.id}`, {
        body: { enabled: true, trigger: { kind: 'pattern-emerged', patternKind: 'weekly' }, filter: { categories: ['c'] }, throttle: { maxPerHour: 1 } },
      });
      expect(retargeted.json()).toMatchObject({ enabled: true, trigger: { kind: 'pattern-emerged', patternKind: 'weekly' }, filter: { categories: ['c'] }, throttle: { maxPerHour: 1 } });
      expect((await h.call('GET', p.projectId, `/memory-alerts/${rule.id}`)).json()).toEqual(readBack(retargeted.json()));
    });

    it('deletes a rule (204) together with its fires', async () => {
      const rule = await createRule({ trigger: { kind: 'engine-event', eventTypes: ['delete.x'] } });
      expect((await emit({ eventType: 'delete.x', dedupeKey: unique('d') })).alertDispatches).toBe(1);
      expect(await fires(rule.id)).toHaveLength(1);
      const res = await h.call('DELETE', p.projectId, `/memory-alerts/${rule.id}`);
      expect(res.statusCode).toBe(204);
      expect(res.body).toBe('');
      expect((await h.call('GET', p.projectId, `/memory-alerts/${rule.id}`)).statusCode).toBe(404);
      expect((await h.call('GET', p.projectId, `/memory-alerts/${rule.id}/fires`)).statusCode).toBe(404);
      const { rows } = await h.db.query<{ n: number }>('SELECT count(*)::int AS n FROM alert_fires WHERE alert_rule_id = $1', [rule.id]);
      expect(rows[0]!.n).toBe(0);
      expect((await h.call('GET', p.projectId, '/memory-alerts')).json().map((r: { id: string }) => r.id)).not.toContain(rule.id);
      expect((await h.call('DELETE', p.projectId, `/memory-alerts/${rule.id}`)).statusCode).toBe(404);
      // Later events fire nothing.
      expect((await emit({ eventType: 'delete.x', dedupeKey: unique('d') })).alertDispatches).toBe(0);
    });

    it('answers 404 NOT_FOUND for an unknown id on every route', async () => {
      for (const [method, path, body] of [
        ['GET', '/memory-alerts/alr_nope', undefined],
        ['PATCH', '/memory-alerts/alr_nope', { name: 'x' }],
        ['DELETE', '/memory-alerts/alr_nope', undefined],
        ['GET', '/memory-alerts/alr_nope/fires', undefined],
      ] as const) {
        const res = await h.call(method, p.projectId, path, body === undefined ? {} : { body });
        expect(res.statusCode, `${method} ${path}`).toBe(404);
        expect(res.json().code).toBe('NOT_FOUND');
      }
    });

    it('refuses invalid rules with 400 VALIDATION_ERROR', async () => {
      const base = { name: 'bad', trigger: { kind: 'engine-event', eventTypes: [] }, notify: [webhook()] };
      for (const [why, body] of [
        ['empty notify', { ...base, notify: [] }],
        ['no notify', { name: 'bad', trigger: base.trigger }],
        ['ftp url', { ...base, notify: [{ kind: 'webhook', url: 'ftp://127.0.0.1/x' }] }],
        ['file url', { ...base, notify: [{ kind: 'webhook', url: 'file:///etc/passwd' }] }],
        ['relative url', { ...base, notify: [{ kind: 'webhook', url: '/hook' }] }],
        ['credentials in url', { ...base, notify: [{ kind: 'webhook', url: sink.url.replace('http://', 'http://user:pw@') }] }],
        ['unknown channel kind', { ...base, notify: [{ kind: 'sms', to: '+1' }] }],
        ['short secret', { ...base, notify: [{ kind: 'webhook', url: sink.url, secret: 'short' }] }],
        ['unknown trigger kind', { ...base, trigger: { kind: 'cron', eventTypes: [] } }],
        ['segment-change without to', { ...base, trigger: { kind: 'segment-change', from: 'a' } }],
        ['engine-event without eventTypes', { ...base, trigger: { kind: 'engine-event' } }],
        ['unknown top-level field', { ...base, severity: 'warn' }],
        ['unknown filter field', { ...base, filter: { subjectId: 'x' } }],
        ['unknown throttle field', { ...base, throttle: { perHour: 1 } }],
        ['bad dedupOn', { ...base, throttle: { cooldownMinutes: 1, dedupOn: 'event' } }],
        ['maxPerHour 0', { ...base, throttle: { maxPerHour: 0 } }],
        ['bad memory scope', { ...base, notify: [{ kind: 'memory', writeAs: { content: 'x', scope: 'galaxy' } }] }],
        ['empty name', { ...base, name: '' }],
      ] as const) {
        const res = await h.call('POST', p.projectId, '/memory-alerts', { body });
        expect(res.statusCode, `${why}: ${res.body}`).toBe(400);
        expect(res.json().code, why).toBe('VALIDATION_ERROR');
      }
      const rule = await createRule({ trigger: base.trigger, enabled: false });
      for (const body of [{}, { notify: [] }, { notify: [{ kind: 'webhook', url: 'ftp://127.0.0.1/' }] }, { trigger: { kind: 'nope' } }, { color: 'red' }]) {
        const res = await h.call('PATCH', p.projectId, `/memory-alerts/${rule.id}`, { body });
        expect(res.statusCode, JSON.stringify(body)).toBe(400);
      }
      expect((await h.call('GET', p.projectId, '/memory-alerts')).json().filter((r: { name: string }) => r.name === 'bad')).toEqual([]);
    });

    it('refuses a whsec_ secret whose key is not base64 when the rule is created, not at every delivery', async () => {
      // Accepted, it could never sign a delivery, so every fire would fail.
      const res = await h.call('POST', p.projectId, '/memory-alerts', {
        body: { name: 'bad secret', enabled: false, trigger: { kind: 'engine-event', eventTypes: ['never.x'] }, notify: [{ kind: 'webhook', url: sink.url, secret: 'whsec_not base64!' }] },
      });
      expect(res.statusCode, res.body).toBe(400);
    });
  });

  describe('SSRF', () => {
    let strict: Harness;
    let s: { projectId: string; apiKey: string };
    beforeAll(async () => {
      strict = await createHarness({ env: { WEBHOOK_RETRY_BASE_MS: '50', WEBHOOK_TIMEOUT_MS: '500' } });
      s = await strict.project();
    });
    afterAll(async () => {
      await strict?.close();
    });

    it('refuses loopback, link-local, private and similar targets unless the deployment allows them', async () => {
      for (const url of [
        'http://127.0.0.1:1/',
        sink.url,
        'http://169.254.169.254/latest/meta-data/',
        'http://10.0.0.1/',
        'http://192.168.1.1/',
        'http://172.16.0.1/',
        'http://100.64.0.1/',
        'http://0.0.0.0/',
        'http://[::1]/',
        'http://[::ffff:127.0.0.1]/',
        'http://[fe80::1]/',
        'http://[fd00::1]/',
        'http://localhost/',
      ]) {
        const res = await strict.call('POST', s.projectId, '/memory-alerts', {
          body: { name: 'ssrf', trigger: { kind: 'engine-event', eventTypes: [] }, notify: [{ kind: 'webhook', url }] },
        });
        expect(res.statusCode, `${url}: ${res.body}`).toBe(400);
        expect(res.json().code).toBe('VALIDATION_ERROR');
      }
      // PATCH is checked too.
      const memoryOnly = await strict.call('POST', s.projectId, '/memory-alerts', {
        body: { name: 'ok', trigger: { kind: 'engine-event', eventTypes: [] }, notify: [{ kind: 'memory', writeAs: { content: 'x', scope: 'project' } }] },
      });
      expect(memoryOnly.statusCode, memoryOnly.body).toBe(201);
      const patched = await strict.call('PATCH', s.projectId, `/memory-alerts/${memoryOnly.json().id}`, { body: { notify: [{ kind: 'webhook', url: 'http://169.254.169.254/' }] } });
      expect(patched.statusCode).toBe(400);
      expect((await strict.call('GET', s.projectId, '/memory-alerts')).json()).toHaveLength(1);
    });

    it('takes a public address', async () => {
      const res = await strict.call('POST', s.projectId, '/memory-alerts', {
        body: { name: 'public', enabled: false, trigger: { kind: 'engine-event', eventTypes: ['public.x'] }, notify: [{ kind: 'webhook', url: 'https://93.184.215.14/hook' }] },
      });
      expect(res.statusCode, res.body).toBe(201);
    });
  });

  describe('triggers', () => {
    it('engine-event fires on its types (exact and glob) and not on others; alertDispatches counts fires', async () => {
      const exact = await createRule({ trigger: { kind: 'engine-event', eventTypes: ['trig.exact'] } });
      const glob = await createRule({ trigger: { kind: 'engine-event', eventTypes: ['trig.*'] } });
      expect((await emit({ eventType: 'trig.exact', dedupeKey: unique('t') })).alertDispatches).toBe(2);
      expect((await emit({ eventType: 'trig.other', dedupeKey: unique('t') })).alertDispatches).toBe(1);
      expect((await emit({ eventType: 'trigger.nope', dedupeKey: unique('t') })).alertDispatches).toBe(0);
      expect((await emit({ eventType: 'trig', dedupeKey: unique('t') })).alertDispatches).toBe(0);
      expect(await fires(exact.id)).toHaveLength(1);
      expect(await fires(glob.id)).toHaveLength(2);
    });

    it('engine-event with an empty list fires on every event type', async () => {
      const q = await h.project();
      const any = await createRule({ trigger: { kind: 'engine-event', eventTypes: [] } }, q.projectId);
      for (const eventType of ['a.b', 'segment.changed', 'typed.observation', 'x']) {
        expect((await emit({ eventType, dedupeKey: unique('any') }, q.projectId)).alertDispatches).toBe(1);
      }
      expect(await fires(any.id, q.projectId)).toHaveLength(4);
    });

    it('segment-change fires on segment.changed with the payload {from, to}', async () => {
      const q = await h.project();
      const toB = await createRule({ trigger: { kind: 'segment-change', to: 'b' } }, q.projectId);
      const aToB = await createRule({ trigger: { kind: 'segment-change', from: 'a', to: 'b' } }, q.projectId);
      expect((await emit({ eventType: 'segment.changed', subject: user('s1'), payloadJson: '{"from":"a","to":"b"}' }, q.projectId)).alertDispatches).toBe(2);
      expect((await emit({ eventType: 'segment.changed', subject: user('s2'), payloadJson: '{"from":"c","to":"b"}' }, q.projectId)).alertDispatches).toBe(1);
      expect((await emit({ eventType: 'segment.changed', subject: user('s3'), payloadJson: '{"from":"a","to":"c"}' }, q.projectId)).alertDispatches).toBe(0);
      expect((await emit({ eventType: 'segment.moved', subject: user('s4'), payloadJson: '{"from":"a","to":"b"}' }, q.projectId)).alertDispatches).toBe(0);
      expect(await fires(toB.id, q.projectId)).toHaveLength(2);
      expect(await fires(aToB.id, q.projectId)).toHaveLength(1);
    });

    it('pattern-emerged fires on pattern.emerged with payload.patternKind', async () => {
      const q = await h.project();
      const weekly = await createRule({ trigger: { kind: 'pattern-emerged', patternKind: 'weekly' } }, q.projectId);
      const anyKind = await createRule({ trigger: { kind: 'pattern-emerged' } }, q.projectId);
      expect((await emit({ eventType: 'pattern.emerged', payloadJson: '{"patternKind":"weekly"}' }, q.projectId)).alertDispatches).toBe(2);
      expect((await emit({ eventType: 'pattern.emerged', payloadJson: '{"patternKind":"daily"}' }, q.projectId)).alertDispatches).toBe(1);
      expect((await emit({ eventType: 'pattern.seen', payloadJson: '{"patternKind":"weekly"}' }, q.projectId)).alertDispatches).toBe(0);
      expect(await fires(weekly.id, q.projectId)).toHaveLength(1);
      expect(await fires(anyKind.id, q.projectId)).toHaveLength(2);
    });

    it('never fires a disabled rule, and fires again once re-enabled', async () => {
      const off = await createRule({ enabled: false, trigger: { kind: 'engine-event', eventTypes: ['off.x'] } });
      expect((await emit({ eventType: 'off.x', dedupeKey: unique('off') })).alertDispatches).toBe(0);
      expect(await fires(off.id)).toEqual([]);
      await h.call('PATCH', p.projectId, `/memory-alerts/${off.id}`, { body: { enabled: true } });
      expect((await emit({ eventType: 'off.x', dedupeKey: unique('off') })).alertDispatches).toBe(1);
      await h.call('PATCH', p.projectId, `/memory-alerts/${off.id}`, { body: { enabled: false } });
      expect((await emit({ eventType: 'off.x', dedupeKey: unique('off') })).alertDispatches).toBe(0);
      expect(await fires(off.id)).toHaveLength(1);
    });

    it('fires once for concurrent duplicate emits, and not at all for a repeated dedupeKey', async () => {
      const rule = await createRule({ trigger: { kind: 'engine-event', eventTypes: ['dup.x'] } });
      const answers = await Promise.all(Array.from({ length: 8 }, () => emit({ eventType: 'dup.x', subject: user('dup'), payloadJson: '{"n":1}' })));
      expect(answers.reduce((sum, a) => sum + a.alertDispatches, 0)).toBe(1);
      expect((await emit({ eventType: 'dup.x', subject: user('dup'), payloadJson: '{"n":1}' })).alertDispatches).toBe(0);
      expect(await fires(rule.id)).toHaveLength(1);
    });
  });

  describe('filters', () => {
    it('narrows by subjectKind, subjectExternalIdPattern, categories and metadataMatch', async () => {
      const q = await h.project();
      const trigger = { kind: 'engine-event', eventTypes: ['filt.x'] };
      const byKind = await createRule({ trigger, filter: { subjectKind: 'customer' } }, q.projectId);
      const byPattern = await createRule({ trigger, filter: { subjectExternalIdPattern: 'vip-*' } }, q.projectId);
      const byCategory = await createRule({ trigger, filter: { categories: ['billing', 'fraud'] } }, q.projectId);
      const byMetadata = await createRule({ trigger, filter: { metadataMatch: { 'order.ref': 'A-1', 'order.currency': 'EUR' } } }, q.projectId);
      const all = await createRule({ trigger, filter: { subjectKind: 'customer', subjectExternalIdPattern: 'vip-*', categories: ['fraud'], metadataMatch: { 'order.ref': 'A-1' } } }, q.projectId);

      const cases: [string, Record<string, unknown>, string[]][] = [
        ['customer vip fraud A-1 EUR', { subject: { kind: 'customer', externalId: 'vip-1' }, payload: { category: 'fraud', order: { ref: 'A-1', currency: 'EUR' } } }, ['kind', 'pattern', 'category', 'metadata', 'all']],
        ['customer plain', { subject: { kind: 'customer', externalId: 'c-1' }, payload: {} }, ['kind']],
        ['user vip', { subject: { kind: 'user', externalId: 'vip-2' }, payload: {} }, ['pattern']],
        ['billing, no subject', { payload: { category: 'billing' } }, ['category']],
        ['support category', { subject: { kind: 'user', externalId: 'u' }, payload: { category: 'support' } }, []],
        ['order A-1 USD', { payload: { order: { ref: 'A-1', currency: 'USD' } } }, []],
        ['order A-2 EUR', { payload: { order: { ref: 'A-2', currency: 'EUR' } } }, []],
        ['order A-1 EUR', { payload: { order: { ref: 'A-1', currency: 'EUR' } } }, ['metadata']],
        ['vip without the prefix', { subject: { kind: 'user', externalId: 'xvip-1' }, payload: {} }, []],
      ];
      const ids: Record<string, string> = { kind: byKind.id, pattern: byPattern.id, category: byCategory.id, metadata: byMetadata.id, all: all.id };
      const expected: Record<string, string[]> = { kind: [], pattern: [], category: [], metadata: [], all: [] };
      for (const [name, body, rules] of cases) {
        const res = await emit({ eventType: 'filt.x', dedupeKey: unique('f'), ...body }, q.projectId);
        expect(res.alertDispatches, name).toBe(rules.length);
        for (const rule of rules) expected[rule]!.push(res.event.id);
      }
      for (const [name, id] of Object.entries(ids)) {
        expect((await fires(id, q.projectId)).map((f) => f.eventId).reverse(), name).toEqual(expected[name]);
      }
    });

    it('matches metadataMatch numbers, booleans and nulls against the payload (WIRE: { "order.total": 100 })', async () => {
      const q = await h.project();
      const rule = await createRule({ trigger: { kind: 'engine-event', eventTypes: ['filt.num'] }, filter: { metadataMatch: { 'order.total': 100, 'order.paid': true, 'order.coupon': null } } }, q.projectId);
      const hit = await emit({ eventType: 'filt.num', payloadJson: '{"order":{"total":100,"paid":true,"coupon":null}}' }, q.projectId);
      const stringly = await emit({ eventType: 'filt.num', payloadJson: '{"order":{"total":"100","paid":"true","coupon":""}}' }, q.projectId);
      expect([hit.alertDispatches, stringly.alertDispatches]).toEqual([1, 0]);
      expect((await fires(rule.id, q.projectId)).map((f) => f.eventId)).toEqual([hit.event.id]);
    });
  });

  describe('throttle', () => {
    it('cooldown with dedupOn subject+rule blocks the same subject and lets another through', async () => {
      const rule = await createRule({ trigger: { kind: 'engine-event', eventTypes: ['thr.sr'] }, throttle: { cooldownMinutes: 60, dedupOn: 'subject+rule' } });
      expect((await emit({ eventType: 'thr.sr', subject: user('a'), dedupeKey: unique('thr') })).alertDispatches).toBe(1);
      expect((await emit({ eventType: 'thr.sr', subject: user('a'), dedupeKey: unique('thr') })).alertDispatches).toBe(0);
      expect((await emit({ eventType: 'thr.sr', subject: user('b'), dedupeKey: unique('thr') })).alertDispatches).toBe(1);
      expect((await emit({ eventType: 'thr.sr', subject: { kind: 'customer', externalId: 'a' }, dedupeKey: unique('thr') })).alertDispatches).toBe(1);
      const list = await fires(rule.id);
      expect(list).toHaveLength(3);
      expect(new Set(list.map((f) => f.dedupeKey)).size).toBe(3);
    });

    it('the default dedupOn is subject+rule', async () => {
      const rule = await createRule({ trigger: { kind: 'engine-event', eventTypes: ['thr.default'] }, throttle: { cooldownMinutes: 60 } });
      expect((await emit({ eventType: 'thr.default', subject: user('a'), dedupeKey: unique('thr') })).alertDispatches).toBe(1);
      expect((await emit({ eventType: 'thr.default', subject: user('a'), dedupeKey: unique('thr') })).alertDispatches).toBe(0);
      expect((await emit({ eventType: 'thr.default', subject: user('b'), dedupeKey: unique('thr') })).alertDispatches).toBe(1);
      expect(await fires(rule.id)).toHaveLength(2);
    });

    it('cooldown with dedupOn rule blocks a second fire for any subject', async () => {
      const rule = await createRule({ trigger: { kind: 'engine-event', eventTypes: ['thr.rule'] }, throttle: { cooldownMinutes: 60, dedupOn: 'rule' } });
      expect((await emit({ eventType: 'thr.rule', subject: user('a'), dedupeKey: unique('thr') })).alertDispatches).toBe(1);
      expect((await emit({ eventType: 'thr.rule', subject: user('b'), dedupeKey: unique('thr') })).alertDispatches).toBe(0);
      expect((await emit({ eventType: 'thr.rule', dedupeKey: unique('thr') })).alertDispatches).toBe(0);
      expect(await fires(rule.id)).toHaveLength(1);
    });

    it('dedupOn subject shares one budget across rules', async () => {
      const q = await h.project();
      const trigger = { kind: 'engine-event', eventTypes: ['thr.subject'] };
      const one = await createRule({ trigger, throttle: { cooldownMinutes: 60, dedupOn: 'subject' } }, q.projectId);
      const two = await createRule({ trigger, throttle: { cooldownMinutes: 60, dedupOn: 'subject' } }, q.projectId);
      // Both match; they share the subject's key, so only one fires.
      expect((await emit({ eventType: 'thr.subject', subject: user('a'), dedupeKey: unique('thr') }, q.projectId)).alertDispatches).toBe(1);
      expect((await emit({ eventType: 'thr.subject', subject: user('a'), dedupeKey: unique('thr') }, q.projectId)).alertDispatches).toBe(0);
      expect((await emit({ eventType: 'thr.subject', subject: user('b'), dedupeKey: unique('thr') }, q.projectId)).alertDispatches).toBe(1);
      const [f1, f2] = [await fires(one.id, q.projectId), await fires(two.id, q.projectId)];
      expect(f1.length + f2.length).toBe(2);
      expect(new Set([...f1, ...f2].map((f) => f.dedupeKey)).size).toBe(2);
      // A rule fired earlier for subject a blocks the other rule for a as well.
      const three = await createRule({ trigger: { kind: 'engine-event', eventTypes: ['thr.subject2'] }, throttle: { cooldownMinutes: 60, dedupOn: 'subject' } }, q.projectId);
      expect((await emit({ eventType: 'thr.subject2', subject: user('a'), dedupeKey: unique('thr') }, q.projectId)).alertDispatches).toBe(0);
      expect((await emit({ eventType: 'thr.subject2', subject: user('c'), dedupeKey: unique('thr') }, q.projectId)).alertDispatches).toBe(1);
      expect(await fires(three.id, q.projectId)).toHaveLength(1);
    });

    it('maxPerHour 2 blocks the third fire', async () => {
      const rule = await createRule({ trigger: { kind: 'engine-event', eventTypes: ['thr.max'] }, throttle: { maxPerHour: 2 } });
      const dispatches = [];
      for (let i = 0; i < 4; i++) dispatches.push((await emit({ eventType: 'thr.max', subject: user('a'), dedupeKey: unique('thr') })).alertDispatches);
      expect(dispatches).toEqual([1, 1, 0, 0]);
      expect((await emit({ eventType: 'thr.max', subject: user('b'), dedupeKey: unique('thr') })).alertDispatches).toBe(1);
      expect(await fires(rule.id)).toHaveLength(3);
    });

    it('holds under concurrent emits: maxPerHour 2 admits exactly two', async () => {
      const rule = await createRule({ trigger: { kind: 'engine-event', eventTypes: ['thr.race'] }, throttle: { maxPerHour: 2, dedupOn: 'rule' } });
      const answers = await Promise.all(Array.from({ length: 10 }, (_, i) => emit({ eventType: 'thr.race', subject: user(`r${i}`), dedupeKey: unique('thr') })));
      expect(answers.reduce((sum, a) => sum + a.alertDispatches, 0)).toBe(2);
      expect(await fires(rule.id)).toHaveLength(2);
    });
  });

  describe('webhook delivery', () => {
    it('POSTs a Standard Webhooks signed alert.fired message and records ok with one attempt', async () => {
      const hook = await receiver();
      const rule = await createRule({ name: 'signed', trigger: { kind: 'engine-event', eventTypes: ['hook.signed'] }, notify: [webhook(hook.url)] });
      const secret = rule.notify[0]!.secret!;
      const res = await emit({ eventType: 'hook.signed', subject: user('u-sig'), severity: 'critical', payloadJson: '{"k":"v"}' });
      expect(res.alertDispatches).toBe(1);
      // The first attempt follows emit's answer, made by the job emit enqueued.
      const [fire] = await attempted(rule.id);
      expect(hook.received).toHaveLength(1);
      const [{ headers, body }] = hook.received as [Received];
      const verified = new Webhook(secret).verify(body, headers as Record<string, string>);
      expect(() => new Webhook(secret).verify(body.replace('"v"', '"w"'), headers as Record<string, string>)).toThrow();
      expect(() => new Webhook('whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw').verify(body, headers as Record<string, string>)).toThrow();
      const [logged] = (await h.call('GET', p.projectId, '/memory-events?eventTypes=hook.signed')).json();
      expect(verified).toEqual(JSON.parse(body));
      expect(JSON.parse(body)).toEqual({
        type: 'alert.fired',
        timestamp: expect.any(String),
        data: { fireId: fire!.id, alertRuleId: rule.id, ruleName: 'signed', event: logged },
      });
      expect(headers['content-type']).toBe('application/json');
      expect(headers['webhook-id']).toBe(`${fire!.id}.0`);
      expect(Math.abs(Number(headers['webhook-timestamp']) - Date.now() / 1000)).toBeLessThan(60);
      expect(headers['x-thinkfleet-signature']).toMatch(/^[0-9a-f]{64}$/);
      expect(fire).toMatchObject({ alertRuleId: rule.id, eventId: res.event.id, deliveryResults: [{ channel: 'webhook', ok: true, attempts: 1, pending: false, statusCode: 204 }] });
      expect(fire!.deliveryResults[0]!.error).toBeUndefined();
    });

    it('retries 5xx with backoff through the queue until 2xx: ok after 3 attempts, same message id', async () => {
      const hook = await receiver((res, n) => res.writeHead(n < 2 ? 500 : 204).end());
      const rule = await createRule({ trigger: { kind: 'engine-event', eventTypes: ['hook.retry'] }, notify: [webhook(hook.url)] });
      const secret = rule.notify[0]!.secret!;
      await emit({ eventType: 'hook.retry', dedupeKey: unique('r') });
      await expect.poll(async () => (await fires(rule.id))[0]!.deliveryResults[0]!.ok, { timeout: 60_000, interval: 50 }).toBe(true);
      const [fire] = await fires(rule.id);
      expect(fire!.deliveryResults).toEqual([{ channel: 'webhook', url: hook.url, ok: true, pending: false, attempts: 3, statusCode: 204, lastAttemptAt: expect.any(String) }]);
      expect(hook.received).toHaveLength(3);
      expect(new Set(hook.received.map((r) => r.headers['webhook-id']))).toEqual(new Set([`${fire!.id}.0`]));
      for (const r of hook.received) expect(() => new Webhook(secret).verify(r.body, r.headers as Record<string, string>)).not.toThrow();
      // Nothing more arrives once delivered: no attempt of the fire is left to run.
      await noDeliveryPending(fire!.id);
      expect(hook.received).toHaveLength(3);
    });

    it('records a failed attempt with its status and the next attempt while retrying', async () => {
      let release = false;
      const hook = await receiver((res) => res.writeHead(release ? 204 : 503).end());
      const rule = await createRule({ trigger: { kind: 'engine-event', eventTypes: ['hook.pending'] }, notify: [webhook(hook.url)] });
      await emit({ eventType: 'hook.pending', dedupeKey: unique('r') });
      await expect.poll(async () => (await fires(rule.id))[0]!.deliveryResults[0]!.attempts, { timeout: 60_000, interval: 20 }).toBeGreaterThanOrEqual(2);
      const result = (await fires(rule.id))[0]!.deliveryResults[0]!;
      expect(result).toMatchObject({ channel: 'webhook', ok: false, pending: true, statusCode: 503, error: 'HTTP 503' });
      expect(Date.parse(result.nextAttemptAt!)).toBeGreaterThanOrEqual(Date.parse(result.lastAttemptAt!));
      release = true;
      await expect.poll(async () => (await fires(rule.id))[0]!.deliveryResults[0]!.ok, { timeout: 60_000, interval: 50 }).toBe(true);
    });

    it('honours Retry-After on 429', async () => {
      const hook = await receiver((res, n) => (n === 0 ? res.writeHead(429, { 'retry-after': '1' }).end() : res.writeHead(204).end()));
      const rule = await createRule({ trigger: { kind: 'engine-event', eventTypes: ['hook.429'] }, notify: [webhook(hook.url)] });
      await emit({ eventType: 'hook.429', dedupeKey: unique('r') });
      const first = (await attempted(rule.id))[0]!.deliveryResults[0]!;
      expect(first).toMatchObject({ ok: false, pending: true, attempts: 1, statusCode: 429 });
      expect(Date.parse(first.nextAttemptAt!) - Date.parse(first.lastAttemptAt!)).toBeGreaterThanOrEqual(1000);
      await expect.poll(() => hook.received.length, { timeout: 60_000, interval: 50 }).toBe(2);
      expect(hook.received[1]!.at - hook.received[0]!.at).toBeGreaterThanOrEqual(900);
      await expect.poll(async () => (await fires(rule.id))[0]!.deliveryResults[0]!, { timeout: 60_000 }).toMatchObject({ ok: true, attempts: 2 });
    });

    it('disables the rule on 410 and does not retry', async () => {
      const hook = await receiver((res) => res.writeHead(410).end());
      const rule = await createRule({ trigger: { kind: 'engine-event', eventTypes: ['hook.gone'] }, notify: [webhook(hook.url)] });
      expect((await emit({ eventType: 'hook.gone', dedupeKey: unique('g') })).alertDispatches).toBe(1);
      const [fire] = await attempted(rule.id);
      expect(fire!.deliveryResults[0]).toMatchObject({ channel: 'webhook', ok: false, pending: false, attempts: 1, statusCode: 410, error: expect.stringContaining('410') });
      expect(fire!.deliveryResults[0]!.nextAttemptAt).toBeUndefined();
      expect((await h.call('GET', p.projectId, `/memory-alerts/${rule.id}`)).json().enabled).toBe(false);
      await noDeliveryPending(fire!.id);
      expect(hook.received).toHaveLength(1);
      expect((await emit({ eventType: 'hook.gone', dedupeKey: unique('g') })).alertDispatches).toBe(0);
    });

    it('bounds the first attempt by the timeout: emit answers promptly and the fire shows a timeout with a retry pending', async () => {
      const hook = await receiver(() => {
        /* never answers */
      });
      const rule = await createRule({ trigger: { kind: 'engine-event', eventTypes: ['hook.hang'] }, notify: [webhook(hook.url)] });
      const started = Date.now();
      const res = await emit({ eventType: 'hook.hang', dedupeKey: unique('h') });
      expect(Date.now() - started).toBeLessThan(500 + 2_000);
      expect(res.alertDispatches).toBe(1);
      const result = (await attempted(rule.id))[0]!.deliveryResults[0]!;
      expect(result).toMatchObject({ channel: 'webhook', ok: false, pending: true, attempts: 1, error: expect.stringMatching(/timed out/) });
      expect(result.nextAttemptAt).toEqual(expect.any(String));
      // Stop the retries.
      expect((await h.call('DELETE', p.projectId, `/memory-alerts/${rule.id}`)).statusCode).toBe(204);
    });

    it('records a refused connection as a failure with a retry pending', async () => {
      const closed = await receiver();
      const url = closed.url;
      await closed.close();
      receivers.splice(receivers.indexOf(closed), 1);
      const rule = await createRule({ trigger: { kind: 'engine-event', eventTypes: ['hook.refused'] }, notify: [webhook(url)] });
      await emit({ eventType: 'hook.refused', dedupeKey: unique('c') });
      const result = (await attempted(rule.id))[0]!.deliveryResults[0]!;
      expect(result).toMatchObject({ ok: false, pending: true, attempts: 1, error: expect.stringMatching(/ECONNREFUSED|request failed/) });
      await h.call('DELETE', p.projectId, `/memory-alerts/${rule.id}`);
    });
  });

  describe('memory channel', () => {
    it('writes the rendered memory about the subject and records its id', async () => {
      const rule = await createRule({
        name: 'Note rule',
        trigger: { kind: 'engine-event', eventTypes: ['mem.note'] },
        notify: [{ kind: 'memory', writeAs: { content: '{{rule.name}}: {{event.eventType}} for {{subject.externalId}}', scope: 'project' } }],
      });
      const res = await emit({ eventType: 'mem.note', subject: user('u-mem'), dedupeKey: unique('m') });
      expect(res.alertDispatches).toBe(1);
      const [fire] = await attempted(rule.id);
      expect(fire!.deliveryResults).toEqual([{ channel: 'memory', ok: true, pending: false, attempts: 1, memoryId: expect.any(String), lastAttemptAt: expect.any(String) }]);
      const list = await h.call('GET', p.projectId, '/admin/memory?subjectKind=user&subjectExternalId=u-mem');
      expect(list.statusCode, list.body).toBe(200);
      const memories = list.json() as { id: string; content: string; type: string; scope: string; source: string; subject: unknown; metadata: Record<string, unknown> }[];
      expect(memories).toHaveLength(1);
      expect(memories[0]).toMatchObject({
        id: fire!.deliveryResults[0]!.memoryId,
        content: 'Note rule: mem.note for u-mem',
        type: 'event',
        scope: 'project',
        source: 'alert',
        subject: { kind: 'user', externalId: 'u-mem' },
        metadata: { alertRuleId: rule.id, alertFireId: fire!.id, eventId: res.event.id, eventType: 'mem.note' },
      });
    });

    it('sends to every channel of a rule, each with its own result', async () => {
      const hook = await receiver();
      const rule = await createRule({
        trigger: { kind: 'engine-event', eventTypes: ['mem.both'] },
        notify: [webhook(hook.url), { kind: 'memory', writeAs: { content: 'both {{event.payload.n}}', scope: 'project', importance: 8 } }],
      });
      await emit({ eventType: 'mem.both', subject: user('u-both'), payloadJson: '{"n":7}' });
      const [fire] = await attempted(rule.id);
      expect(fire!.deliveryResults.map((r) => [r.channel, r.ok, r.attempts])).toEqual([
        ['webhook', true, 1],
        ['memory', true, 1],
      ]);
      expect(hook.received).toHaveLength(1);
      const memory = (await h.call('GET', p.projectId, `/admin/memory/${fire!.deliveryResults[1]!.memoryId}`)).json();
      expect(memory).toMatchObject({ content: 'both 7', importance: 8 });
    });

    it('records a memory write that cannot succeed as failed, not pending forever', async () => {
      // A template that renders blank makes the memory save refuse the content: that will not heal.
      const rule = await createRule({
        trigger: { kind: 'engine-event', eventTypes: ['mem.blank'] },
        notify: [{ kind: 'memory', writeAs: { content: '{{event.payload.note}}', scope: 'project' } }],
      });
      expect((await emit({ eventType: 'mem.blank', subject: user('u-blank') })).alertDispatches).toBe(1);
      await expect
        .poll(async () => (await fires(rule.id))[0]!.deliveryResults[0]!, { timeout: 60_000, interval: 100 })
        .toMatchObject({ channel: 'memory', ok: false, pending: false, error: expect.any(String), attempts: expect.any(Number) });
      expect((await fires(rule.id))[0]!.deliveryResults[0]!.attempts).toBeGreaterThanOrEqual(1);
    });
  });

  describe('typed observations', () => {
    it('fires a typed.observation rule with metadataMatch on attributeKey for each accepted row and delivers through the queue', async () => {
      const q = await h.project();
      const hook = await receiver();
      for (const attributeKey of ['hr', 'temp']) {
        const def = await h.call('POST', q.projectId, '/memory-typed/attributes', { body: { attributeKey, dataType: 'numeric', minValid: 0, maxValid: 300 } });
        expect(def.statusCode, def.body).toBe(201);
      }
      const rule = await createRule(
        { trigger: { kind: 'engine-event', eventTypes: ['typed.observation'] }, filter: { metadataMatch: { attributeKey: 'hr' } }, notify: [webhook(hook.url)] },
        q.projectId,
      );
      const secret = rule.notify[0]!.secret!;
      const at = (m: number) => new Date(Date.UTC(2026, 0, 1, 0, m)).toISOString();
      const res = await h.call('POST', q.projectId, '/memory-typed/observations', {
        body: {
          observations: [
            { attributeKey: 'hr', subjectKind: 'user', subjectExternalId: 'u1', valueNumeric: 60, observedAt: at(0) },
            { attributeKey: 'hr', subjectKind: 'user', subjectExternalId: 'u2', valueNumeric: 70, observedAt: at(1) },
            { attributeKey: 'temp', subjectKind: 'user', subjectExternalId: 'u1', valueNumeric: 37, observedAt: at(2) },
            { attributeKey: 'hr', subjectKind: 'user', subjectExternalId: 'u1', valueNumeric: 999, observedAt: at(3) },
            { attributeKey: 'hr', subjectKind: 'user', subjectExternalId: 'u3', valueNumeric: 80, observedAt: at(4) },
          ],
        },
      });
      expect(res.json()).toMatchObject({ accepted: 4, quarantined: 1 });
      // The typed.observation events follow the ingest, in the typed.events job.
      await appendAllTypedEvents(h);
      const list = await fires(rule.id, q.projectId);
      expect(list).toHaveLength(3);
      await expect.poll(() => hook.received.length, { timeout: 60_000 }).toBe(3);
      const bodies = hook.received.map((r) => new Webhook(secret).verify(r.body, r.headers as Record<string, string>) as { data: { event: { payload: { attributeKey: string; value: number } } } });
      expect(bodies.map((b) => b.data.event.payload.value).sort()).toEqual([60, 70, 80]);
      expect(bodies.every((b) => b.data.event.payload.attributeKey === 'hr')).toBe(true);
      await expect
        .poll(async () => (await fires(rule.id, q.projectId)).every((f) => f.deliveryResults[0]!.ok && f.deliveryResults[0]!.attempts === 1), { timeout: 60_000 })
        .toBe(true);
    });
  });

  describe('active-triggers ceiling', () => {
    it('allows 5 enabled rules on the free plan, refuses a 6th with 403 QUOTA_EXCEEDED, and counts only enabled rules', async () => {
      const free = await h.project({ plan: 'free' });
      const trigger = { kind: 'engine-event', eventTypes: ['quota.x'] };
      const enabled = [];
      for (let i = 0; i < 5; i++) enabled.push(await createRule({ trigger }, free.projectId));
      const sixth = await h.call('POST', free.projectId, '/memory-alerts', { body: { name: 'sixth', trigger, notify: [webhook()] } });
      expect(sixth.statusCode).toBe(403);
      expect(sixth.json()).toMatchObject({ code: 'QUOTA_EXCEEDED' });
      const disabled = await createRule({ name: 'sixth-off', trigger, enabled: false }, free.projectId);
      const enable = await h.call('PATCH', free.projectId, `/memory-alerts/${disabled.id}`, { body: { enabled: true } });
      expect(enable.statusCode).toBe(403);
      expect(enable.json().code).toBe('QUOTA_EXCEEDED');
      expect((await h.call('GET', free.projectId, `/memory-alerts/${disabled.id}`)).json().enabled).toBe(false);
      // Patching an enabled rule (even re-sending enabled: true) at the ceiling is fine.
      expect((await h.call('PATCH', free.projectId, `/memory-alerts/${enabled[0]!.id}`, { body: { enabled: true, name: 'still on' } })).statusCode).toBe(200);
      // Disabling another makes room.
      expect((await h.call('PATCH', free.projectId, `/memory-alerts/${enabled[1]!.id}`, { body: { enabled: false } })).statusCode).toBe(200);
      const now = await h.call('PATCH', free.projectId, `/memory-alerts/${disabled.id}`, { body: { enabled: true } });
      expect(now.statusCode, now.body).toBe(200);
      expect(now.json().enabled).toBe(true);
      // Deleting makes room too.
      expect((await h.call('DELETE', free.projectId, `/memory-alerts/${enabled[2]!.id}`)).statusCode).toBe(204);
      await createRule({ trigger }, free.projectId);
      const list = (await h.call('GET', free.projectId, '/memory-alerts')).json() as { enabled: boolean }[];
      expect(list.filter((r) => r.enabled)).toHaveLength(5);
    });

    it('never lets concurrent creates pass the ceiling', async () => {
      const free = await h.project({ plan: 'free' });
      const answers = await Promise.all(
        Array.from({ length: 10 }, (_, i) =>
          h.call('POST', free.projectId, '/memory-alerts', { body: { name: `race-${i}`, trigger: { kind: 'engine-event', eventTypes: [] }, notify: [webhook()] } }),
        ),
      );
      expect(answers.filter((a) => a.statusCode === 201)).toHaveLength(5);
      expect(answers.filter((a) => a.statusCode === 403)).toHaveLength(5);
      expect((await h.call('GET', free.projectId, '/memory-alerts')).json()).toHaveLength(5);
    });
  });

  describe('permissions and isolation', () => {
    it('lets a READ key list, get and read fires, but not create, patch or delete (403)', async () => {
      const rule = await createRule({ trigger: { kind: 'engine-event', eventTypes: ['perm.x'] } });
      const readKey = await h.key(p.projectId, ['READ_MEMORY']);
      expect((await h.call('GET', p.projectId, '/memory-alerts', { apiKey: readKey })).statusCode).toBe(200);
      expect((await h.call('GET', p.projectId, `/memory-alerts/${rule.id}`, { apiKey: readKey })).statusCode).toBe(200);
      expect((await h.call('GET', p.projectId, `/memory-alerts/${rule.id}/fires`, { apiKey: readKey })).statusCode).toBe(200);
      const create = await h.call('POST', p.projectId, '/memory-alerts', { apiKey: readKey, body: { name: 'ro', trigger: { kind: 'engine-event', eventTypes: [] }, notify: [webhook()] } });
      expect(create.statusCode).toBe(403);
      expect((await h.call('PATCH', p.projectId, `/memory-alerts/${rule.id}`, { apiKey: readKey, body: { enabled: false } })).statusCode).toBe(403);
      expect((await h.call('DELETE', p.projectId, `/memory-alerts/${rule.id}`, { apiKey: readKey })).statusCode).toBe(403);
      expect((await h.call('GET', p.projectId, `/memory-alerts/${rule.id}`)).json()).toEqual(readBack(rule));
    });

    it('answers 401 without a key', async () => {
      const rule = await createRule({ trigger: { kind: 'engine-event', eventTypes: ['anon.x'] } });
      for (const [method, path] of [
        ['GET', '/memory-alerts'],
        ['GET', `/memory-alerts/${rule.id}`],
        ['GET', `/memory-alerts/${rule.id}/fires`],
        ['POST', '/memory-alerts'],
        ['PATCH', `/memory-alerts/${rule.id}`],
        ['DELETE', `/memory-alerts/${rule.id}`],
      ] as const) {
        const res = await h.app.inject({ method, url: `/api/v1/projects/${p.projectId}${path}`, ...(method === 'POST' || method === 'PATCH' ? { payload: { name: 'x' } } : {}) });
        expect(res.statusCode, `${method} ${path}`).toBe(401);
      }
      expect((await h.call('GET', p.projectId, `/memory-alerts/${rule.id}`)).statusCode).toBe(200);
    });

    it("keeps projects apart: another project's key gets 404, lists and fires never cross", async () => {
      const a = await h.project();
      const b = await h.project();
      const ruleA = await createRule({ trigger: { kind: 'engine-event', eventTypes: [] } }, a.projectId);
      const ruleB = await createRule({ trigger: { kind: 'engine-event', eventTypes: [] } }, b.projectId);
      for (const [method, path, body] of [
        ['GET', '/memory-alerts', undefined],
        ['GET', `/memory-alerts/${ruleA.id}`, undefined],
        ['GET', `/memory-alerts/${ruleA.id}/fires`, undefined],
        ['POST', '/memory-alerts', { name: 'x', trigger: { kind: 'engine-event', eventTypes: [] }, notify: [webhook()] }],
        ['PATCH', `/memory-alerts/${ruleA.id}`, { enabled: false }],
        ['DELETE', `/memory-alerts/${ruleA.id}`, undefined],
      ] as const) {
        const res = await h.call(method, a.projectId, path, { apiKey: b.apiKey, ...(body === undefined ? {} : { body }) });
        expect(res.statusCode, `${method} ${path}`).toBe(404);
      }
      // B's own routes cannot reach A's rule by id either.
      expect((await h.call('GET', b.projectId, `/memory-alerts/${ruleA.id}`)).statusCode).toBe(404);
      expect((await h.call('GET', b.projectId, `/memory-alerts/${ruleA.id}/fires`)).statusCode).toBe(404);
      expect((await h.call('PATCH', b.projectId, `/memory-alerts/${ruleA.id}`, { body: { enabled: false } })).statusCode).toBe(404);
      expect((await h.call('DELETE', b.projectId, `/memory-alerts/${ruleA.id}`)).statusCode).toBe(404);
      expect((await h.call('GET', b.projectId, '/memory-alerts')).json().map((r: { id: string }) => r.id)).toEqual([ruleB.id]);
      expect((await h.call('GET', a.projectId, `/memory-alerts/${ruleA.id}`)).json()).toEqual(readBack(ruleA));
      // A's events fire only A's rules.
      expect((await emit({ eventType: 'iso.x', subject: user('u'), dedupeKey: 'iso' }, a.projectId)).alertDispatches).toBe(1);
      expect(await fires(ruleA.id, a.projectId)).toHaveLength(1);
      expect(await fires(ruleB.id, b.projectId)).toEqual([]);
    });
  });

  describe('fire history', () => {
    it('lists the last 100 fires, newest first', async () => {
      const q = await h.project();
      const hook = await receiver();
      const rule = await createRule({ trigger: { kind: 'engine-event', eventTypes: ['hist.x'] }, notify: [webhook(hook.url)] }, q.projectId);
      const eventIds: string[] = [];
      for (let i = 0; i < 105; i++) {
        const res = await emit({ eventType: 'hist.x', subject: user(`u${i % 3}`), dedupeKey: `hist-${i}` }, q.projectId);
        expect(res.alertDispatches).toBe(1);
        eventIds.push(res.event.id);
      }
      const list = await attempted(rule.id, q.projectId);
      expect(list).toHaveLength(100);
      expect(list.map((f) => f.eventId)).toEqual(eventIds.slice(5).reverse());
      for (let i = 1; i < list.length; i++) expect(list[i - 1]!.firedAt >= list[i]!.firedAt).toBe(true);
      expect(new Set(list.map((f) => f.id)).size).toBe(100);
      expect(list.every((f) => f.alertRuleId === rule.id && f.deliveryResults[0]!.ok)).toBe(true);
      expect(list[0]!.dedupeKey).toBe(`rule:${rule.id}|subject:user/u2`); // event 104 is about u2 (default dedupOn subject+rule)
      // The 5 fires past the list were delivered too.
      await expect.poll(() => hook.received.length, { timeout: 60_000, interval: 20 }).toBe(105);
    });
  });
});
