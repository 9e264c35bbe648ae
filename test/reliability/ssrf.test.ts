// The SSRF matrix for webhook targets under the deployment's default policy (config
// WEBHOOK_ALLOW_PRIVATE_TARGETS unset, so webhookAllowPrivateTargets is false): every special-purpose
// address range, the IPv4 spellings the URL parser folds into one address, names that resolve
// there, IPv4 wrapped in IPv6 (mapped, compatible, NAT64, 6to4, Teredo), non-http schemes,
// credentials and zone ids. Each is refused by checkWebhookTarget, by sendWebhook without a socket
// being opened, and by the alert rule routes (POST and PATCH) with 400 in the one error shape.
// Redirects to private targets are never followed. Extends test/alerts/webhook.test.ts, which
// sweeps 10/8, 172.16/12, 192.168/16, 127/8 and 169.254/16 dotted and IPv4-mapped.
//
// Decision pinned here: NAT64 (64:ff9b::/96 and the local-use 64:ff9b:1::/48), 6to4 (2002::/16) and
// Teredo (2001::/32) are refused whatever IPv4 they embed, public or private. The translator or
// relay behind them is infrastructure whose reach we cannot judge from the address, 6to4 is
// deprecated (RFC 7526), and a receiver can always be given by its IPv4 or a name. The cost: on an
// IPv6-only host behind DNS64, names of IPv4-only receivers resolve into 64:ff9b::/96 and are refused.
import type { LookupAddress } from 'node:dns';
import { lookup } from 'node:dns/promises';
import net from 'node:net';
import type { LightMyRequestResponse } from 'fastify';
import fc from 'fast-check';
import { afterAll, afterEach, beforeAll, describe, expect, it, vi } from 'vitest';
import { checkWebhookTarget, sendWebhook, type WebhookPolicy } from '../../src/alerts/webhook.js';
import { loadConfig } from '../../src/config.js';
import { ValidationError } from '../../src/platform/errors.js';
import { parseTargetAllowance } from '../../src/platform/targets.js';
import { createHarness, REDIS_URL, SERVER_DATABASE_URL, type Harness } from '../helpers/harness.js';
import {
  anyWrapped, escape, FAKE_NAMES, isLoopback, LOOPBACK, LOOPBACK_NAMES, privateWrapped, PUBLIC, PUBLIC_NAME, publicV4Spelled, publicV6,
  SCHEME_CREDENTIALS_ZONES, specialV4Spelled, specialV6, V4_MAPPED, V4_SPECIAL, V4_SPELLINGS, V6_SPECIAL, type Case,
} from '../helpers/ssrf-matrix.js';
import { startReceiver, type Receiver } from '../helpers/webhook-receiver.js';

// ---- a resolver for names under .test (RFC 6761: never in real DNS); every other name passes through

const fakeDns = vi.hoisted(() => ({
  answers: new Map<string, (asked: number) => { address: string; family: number }[]>(),
  asked: new Map<string, number>(),
}));

vi.mock('node:dns/promises', async (importOriginal) => {
  const actual = await importOriginal<typeof import('node:dns/promises')>();
  const fakeLookup = (hostname: string, options?: unknown): Promise<unknown> => {
    const answer = fakeDns.answers.get(hostname);
    if (answer === undefined) return (actual.lookup as (hostname: string, options?: unknown) => Promise<unknown>)(hostname, options);
    const asked = fakeDns.asked.get(hostname) ?? 0;
    fakeDns.asked.set(hostname, asked + 1);
    return Promise.resolve(answer(asked));
  };
  return { ...actual, lookup: fakeLookup, default: { ...actual, lookup: fakeLookup } };
});

const fake = (name: string, ...answers: [string, 4 | 6][]) =>
  fakeDns.answers.set(name, () => answers.map(([address, family]) => ({ address, family })));
for (const { url, answers } of FAKE_NAMES) fake(new URL(url).hostname, ...answers);
fake(PUBLIC_NAME.name, [PUBLIC_NAME.address, 4]);

// ---- every socket this process opens, so that "never a connection attempt" can fail

const connectSpy = vi.spyOn(net.Socket.prototype, 'connect');
const INFRA_PORTS = new Set(
  [SERVER_DATABASE_URL, REDIS_URL].flatMap((url) => (url === undefined ? [] : [Number(new URL(url).port || (url.startsWith('redis') ? 6379 : 5432))])),
);

/** Sockets opened since the mark, other than to the test's Postgres and Redis. */
function connectsSince(mark: number): { host: string; port: number }[] {
  return connectSpy.mock.calls.slice(mark).flatMap((call) => {
    const args = call as unknown[];
    const first = Array.isArray(args[0]) ? (args[0] as unknown[])[0] : args[0];
    if (typeof first === 'number' || typeof first === 'string') return [{ port: Number(first), host: String(args[1] ?? 'localhost') }];
    const options = first as { port?: number | string; host?: string } | undefined;
    return options?.port === undefined ? [] : [{ port: Number(options.port), host: String(options.host ?? 'localhost') }];
  }).filter((target) => !INFRA_PORTS.has(target.port));
}

// ---- expectations

// Long enough that a slow resolver answers before the attempt times out: refusals never wait on a socket.
const PUBLIC_ONLY: WebhookPolicy = { allowPrivateTargets: false, timeoutMs: 30_000 };
const LOOPBACK_OK: WebhookPolicy = { allowPrivateTargets: true, timeoutMs: 2_000 };
const message = { id: 'msg_ssrf', body: '{"type":"alert.fired"}' };
const RUNS = { seed: 0x55f2_2026, numRuns: 300 };

async function expectRefused({ url, why }: Case): Promise<void> {
  const mark = connectSpy.mock.calls.length;
  const error = await checkWebhookTarget(url, PUBLIC_ONLY).then(() => undefined, (err: unknown) => err);
  expect(error, url).toBeInstanceOf(ValidationError);
  expect((error as ValidationError).statusCode).toBe(400);
  expect((error as Error).message).toMatch(why);
  const attempt = await sendWebhook({ url, secret: 'my-secret' }, message, PUBLIC_ONLY);
  expect(attempt).toMatchObject({ ok: false, gone: false });
  expect(attempt.statusCode).toBeUndefined();
  expect(attempt.error).toMatch(why);
  expect(connectsSince(mark), url).toEqual([]);
}

/**
 * What refusing this name must say, given what this machine's resolver answers: loopback, or
 * cannot be resolved. Undefined (skip) when the resolver maps it to something else.
 */
async function nameCase(name: string): Promise<Case | undefined> {
  const url = `http://${name}:8080/hook`;
  const host = new URL(url).hostname;
  const answers = await lookup(host, { all: true }).catch(() => undefined);
  if (host === 'localhost') expect(answers, 'localhost resolves on any Linux').toBeDefined();
  if (answers === undefined) return { url, why: new RegExp(`the host ${escape(host)} cannot be resolved`) };
  if (!answers.every((answer: LookupAddress) => isLoopback(answer.address))) return undefined;
  return { url, why: new RegExp(`refused: \\S+ is ${LOOPBACK}`) };
}

const ALL_STATIC = [...V4_SPECIAL, ...V6_SPECIAL, ...V4_MAPPED, ...V4_SPELLINGS, ...SCHEME_CREDENTIALS_ZONES, ...FAKE_NAMES];

// ---- tests

afterAll(() => {
  connectSpy.mockRestore();
});

describe('checkWebhookTarget and sendWebhook under the default policy', () => {
  it('see every socket opened: a delivery allowed to loopback is one connect to the receiver', async () => {
    const hook = await startReceiver();
    try {
      const mark = connectSpy.mock.calls.length;
      const attempt = await sendWebhook({ url: hook.url, secret: 'my-secret' }, message, LOOPBACK_OK);
      expect(attempt.ok).toBe(true);
      expect(connectsSince(mark)).toEqual([{ host: '127.0.0.1', port: Number(new URL(hook.url).port) }]);
    } finally {
      await hook.close();
    }
  });

  it.each(V4_SPECIAL)('refuses the special IPv4 target $url', expectRefused);
  it.each(V6_SPECIAL)('refuses the special IPv6 target $url', expectRefused);
  it.each(V4_MAPPED)('refuses the IPv4-mapped target $url as its IPv4', expectRefused);
  it.each(V4_SPELLINGS)('refuses $url, judged as the address the URL parser reads', expectRefused);
  it.each(SCHEME_CREDENTIALS_ZONES)('refuses $url', expectRefused);
  it.each(FAKE_NAMES)('refuses $url by what the name resolves to', expectRefused);

  it.for(LOOPBACK_NAMES)('refuses the name %s: as loopback where this resolver maps it there, as unresolvable where it does not', async (name, context) => {
    const refusal = await nameCase(name);
    if (refusal === undefined) context.skip(`this machine's resolver maps ${name} to an address that is not loopback`);
    await expectRefused(refusal!);
  });

  it.each(PUBLIC)('accepts the public target %s as %s without connecting', async (url, address) => {
    const mark = connectSpy.mock.calls.length;
    const { addresses } = await checkWebhookTarget(url, PUBLIC_ONLY);
    expect(addresses).toEqual([{ address, family: address.includes(':') ? 6 : 4 }]);
    expect(connectsSince(mark)).toEqual([]);
  });

  it('resolves a name once and connects only to what it checked (no second lookup to rebind)', async () => {
    const hook = await startReceiver();
    try {
      const port = Number(new URL(hook.url).port);
      fakeDns.answers.set('rebind.ssrf.test', (asked) => [{ address: asked === 0 ? '127.0.0.1' : '10.255.255.1', family: 4 }]);
      const mark = connectSpy.mock.calls.length;
      const attempt = await sendWebhook({ url: `http://rebind.ssrf.test:${port}/hook`, secret: 'my-secret' }, message, LOOPBACK_OK);
      expect(attempt).toMatchObject({ ok: true, statusCode: 204 });
      expect(fakeDns.asked.get('rebind.ssrf.test')).toBe(1);
      expect(hook.received).toHaveLength(1);
      expect(connectsSince(mark).map((target) => target.port)).toEqual([port]);
    } finally {
      await hook.close();
    }
  });

  describe('range sweeps (fast-check, fixed seed)', () => {
    const refused = async ({ url, why }: Case) => {
      const error = await checkWebhookTarget(url, PUBLIC_ONLY).then(() => undefined, (err: unknown) => err);
      expect(error, url).toBeInstanceOf(ValidationError);
      expect((error as Error).message, url).toMatch(why);
    };

    it('refuses every address of every special IPv4 range, in every spelling, scheme and port', async () => {
      const mark = connectSpy.mock.calls.length;
      await fc.assert(fc.asyncProperty(specialV4Spelled, refused), RUNS);
      expect(connectsSince(mark)).toEqual([]);
    });

    it('accepts the same spellings of a public IPv4 as that address (the spellings are parsed, not refused blindly)', async () => {
      await fc.assert(
        fc.asyncProperty(publicV4Spelled, async ({ url, address }) => {
          const { addresses } = await checkWebhookTarget(url, PUBLIC_ONLY);
          expect(addresses, url).toEqual([{ address, family: 4 }]);
        }),
        RUNS,
      );
    });

    it('refuses every special IPv4 inside IPv6: mapped, compatible, translated, NAT64, 6to4, Teredo', async () => {
      await fc.assert(fc.asyncProperty(privateWrapped, refused), RUNS);
    });

    it('refuses NAT64, 6to4, Teredo and the ::/96 forms whatever IPv4 they embed, public ones too', async () => {
      await fc.assert(fc.asyncProperty(anyWrapped, refused), RUNS);
    });

    it('refuses every address of link-local, unique-local, multicast, documentation and other special IPv6 ranges, and outside 2000::/3', async () => {
      await fc.assert(fc.asyncProperty(specialV6, refused), RUNS);
    });

    it('accepts global unicast IPv6 from the RIR blocks', async () => {
      await fc.assert(
        fc.asyncProperty(publicV6, async (address) => {
          const { addresses } = await checkWebhookTarget(`https://[${address}]/hook`, PUBLIC_ONLY);
          expect(addresses).toEqual([{ address, family: 6 }]);
        }),
        RUNS,
      );
    });
  });
});

/** Time for a follow-up request that was sent but not awaited to arrive. */
const settle = () => new Promise((resolve) => setTimeout(resolve, 50));

type FireRead = { deliveryResults: { ok: boolean; attempts: number; error?: string; statusCode?: number; pending?: boolean }[] };
/** The rule's first fire once its first attempt is made (emit hands its fires to the queue and answers). */
async function firstAttempt(h: Harness, projectId: string, ruleId: string): Promise<FireRead> {
  const read = async () => ((await h.call('GET', projectId, `/memory-alerts/${ruleId}/fires`)).json() as FireRead[])[0];
  await expect.poll(async () => (await read())?.deliveryResults[0]?.attempts ?? 0, { timeout: 60_000, interval: 20 }).toBeGreaterThan(0);
  return (await read())!;
}

describe('redirects to a private target are never followed', () => {
  const STATUSES = [301, 302, 303, 307, 308];
  const LOCATIONS: [string, (target: Receiver) => string][] = [
    ['the private receiver by IP', (target) => target.url],
    ['the private receiver by name', (target) => target.url.replace('127.0.0.1', 'localhost')],
    ['the private receiver in decimal', (target) => target.url.replace('127.0.0.1', '2130706433')],
    ['the cloud metadata address', () => 'http://169.254.169.254/latest/meta-data/'],
    ['a path on the same host', () => '/hook-after-redirect'],
  ];

  it.for(STATUSES.flatMap((status) => LOCATIONS.map(([where, location]) => [status, where, location] as const)))(
    'does not follow a %i to %s',
    async ([status, , location]) => {
      const target = await startReceiver();
      const hop = await startReceiver((res) => res.writeHead(status, { location: location(target) }).end());
      try {
        const mark = connectSpy.mock.calls.length;
        const attempt = await sendWebhook({ url: hop.url, secret: 'my-secret' }, message, LOOPBACK_OK);
        expect(attempt).toMatchObject({ ok: false, statusCode: status, error: `redirect (HTTP ${status}) not followed`, gone: false });
        await settle();
        expect(hop.received).toHaveLength(1);
        expect(target.received).toHaveLength(0);
        expect(connectsSince(mark)).toEqual([{ host: '127.0.0.1', port: Number(new URL(hop.url).port) }]);
      } finally {
        await hop.close();
        await target.close();
      }
    },
  );
});

describe('the alert rule routes under the deployment default', () => {
  let strict: Harness;
  let p: { projectId: string; apiKey: string };
  let memoryRule: Record<string, unknown>;
  const ruleBody = (url: string, eventType = 'ssrf.never') => ({
    name: 'ssrf',
    enabled: false,
    trigger: { kind: 'engine-event', eventTypes: [eventType] },
    notify: [{ kind: 'webhook', url }],
  });

  beforeAll(async () => {
    strict = await createHarness();
    p = await strict.project();
    const created = await strict.call('POST', p.projectId, '/memory-alerts', {
      body: { name: 'keeps its channel', enabled: false, trigger: { kind: 'engine-event', eventTypes: ['ssrf.never'] }, notify: [{ kind: 'memory', writeAs: { content: 'x', scope: 'project' } }] },
    });
    expect(created.statusCode, created.body).toBe(201);
    memoryRule = created.json();
  });
  afterAll(async () => {
    await strict?.close();
  });

  function expectRefusal(res: LightMyRequestResponse, why: RegExp, url: string): void {
    expect(res.statusCode, `${url}: ${res.body}`).toBe(400);
    const body = res.json() as Record<string, unknown>;
    expect(Object.keys(body).filter((key) => !['statusCode', 'code', 'message', 'params'].includes(key)), url).toEqual([]);
    expect(body, url).toMatchObject({ statusCode: 400, code: 'VALIDATION_ERROR', message: expect.stringMatching(/^The webhook URL .* is not allowed: /) });
    expect(body.message, url).toMatch(why);
  }

  // A case that was wrongly accepted must fail alone, not every case after it: put the rules back.
  afterEach(async () => {
    const rules = (await strict.call('GET', p.projectId, '/memory-alerts')).json() as { id: string }[];
    for (const rule of rules) {
      if (rule.id !== memoryRule.id) await strict.call('DELETE', p.projectId, `/memory-alerts/${rule.id}`);
    }
    const kept = rules.find((rule) => rule.id === memoryRule.id);
    if (JSON.stringify(kept) !== JSON.stringify(memoryRule)) {
      await strict.call('PATCH', p.projectId, `/memory-alerts/${String(memoryRule.id)}`, { body: { notify: memoryRule.notify } });
      memoryRule = (await strict.call('GET', p.projectId, `/memory-alerts/${String(memoryRule.id)}`)).json();
    }
  });

  /** POST and PATCH refuse it, open no socket, and store nothing. */
  async function expectRouteRefuses({ url, why }: Case): Promise<void> {
    const mark = connectSpy.mock.calls.length;
    expectRefusal(await strict.call('POST', p.projectId, '/memory-alerts', { body: ruleBody(url) }), why, url);
    expectRefusal(await strict.call('PATCH', p.projectId, `/memory-alerts/${String(memoryRule.id)}`, { body: { notify: [{ kind: 'webhook', url }] } }), why, url);
    expect(connectsSince(mark), url).toEqual([]);
    expect((await strict.call('GET', p.projectId, '/memory-alerts')).json()).toEqual([memoryRule]);
  }

  it('runs with private targets refused, the default of config', () => {
    expect(strict.config.webhookAllowPrivateTargets).toBe(false);
  });

  it.each(ALL_STATIC)('answers 400 for $url', expectRouteRefuses);

  it.for(LOOPBACK_NAMES)('answers 400 for the name %s', async (name, context) => {
    const refusal = await nameCase(name);
    if (refusal === undefined) context.skip(`this machine's resolver maps ${name} to an address that is not loopback`);
    await expectRouteRefuses(refusal!);
  });

  it('never repeats a password from the URL in its answer', async () => {
    const res = await strict.call('POST', p.projectId, '/memory-alerts', { body: ruleBody('http://admin:hunter2@169.254.169.254/') });
    expect(res.statusCode).toBe(400);
    expect(res.body).not.toContain('hunter2');
  });

  it('answers 400 for generated special targets of every kind (fast-check, fixed seed)', async () => {
    await fc.assert(fc.asyncProperty(fc.oneof(specialV4Spelled, privateWrapped, anyWrapped, specialV6), expectRouteRefuses), { ...RUNS, numRuns: 60 });
  });

  it('takes public targets, by address in any spelling and by name, without connecting', async () => {
    const q = await strict.project();
    const mark = connectSpy.mock.calls.length;
    for (const [url] of PUBLIC) {
      const res = await strict.call('POST', q.projectId, '/memory-alerts', { body: ruleBody(url) });
      expect(res.statusCode, `${url}: ${res.body}`).toBe(201);
    }
    expect(connectsSince(mark)).toEqual([]);
  });

  it('checks again at delivery: a name that turned private since the rule was made is refused, with no connection', async () => {
    fakeDns.answers.set('turns-private.ssrf.test', (asked) => [{ address: asked === 0 ? '93.184.216.34' : '127.0.0.1', family: 4 }]);
    const q = await strict.project();
    const created = await strict.call('POST', q.projectId, '/memory-alerts', { body: { ...ruleBody('http://turns-private.ssrf.test/hook', 'ssrf.turned'), enabled: true } });
    expect(created.statusCode, created.body).toBe(201);
    const rule = created.json() as { id: string };
    const mark = connectSpy.mock.calls.length;
    const emitted = await strict.call('POST', q.projectId, '/lattice/events/emit', { body: { eventType: 'ssrf.turned', dedupeKey: 'turned-1' } });
    expect(emitted.statusCode, emitted.body).toBe(200);
    expect(emitted.json().alertDispatches).toBe(1);
    const fire = await firstAttempt(strict, q.projectId, rule.id);
    expect(fire!.deliveryResults[0]).toMatchObject({ ok: false, error: expect.stringMatching(/^refused: 127\.0\.0\.1 is a loopback address \(a deployment allows its own hosts or networks in WEBHOOK_ALLOWED_TARGETS\)$/) });
    expect(fire!.deliveryResults[0]!.statusCode).toBeUndefined();
    expect(connectsSince(mark)).toEqual([]);
    expect((await strict.call('DELETE', q.projectId, `/memory-alerts/${rule.id}`)).statusCode).toBe(204);
  });
});

describe('a delivery through the routes does not follow a redirect to a private target', () => {
  let h: Harness;
  let p: { projectId: string; apiKey: string };
  beforeAll(async () => {
    // The test policy that allows loopback, so the first hop can be a local receiver.
    h = await createHarness({ env: { WEBHOOK_ALLOW_PRIVATE_TARGETS: 'true', WEBHOOK_MAX_ATTEMPTS: '1', WEBHOOK_TIMEOUT_MS: '2000' } });
    p = await h.project();
  });
  afterAll(async () => {
    await h?.close();
  });

  it.each([301, 302, 307, 308])('records a %i as not followed; the redirect target gets nothing', async (status) => {
    const target = await startReceiver();
    const hop = await startReceiver((res) => res.writeHead(status, { location: target.url }).end());
    try {
      const eventType = `ssrf.redirect.${status}`;
      const created = await h.call('POST', p.projectId, '/memory-alerts', {
        body: { name: `redirect ${status}`, trigger: { kind: 'engine-event', eventTypes: [eventType] }, notify: [{ kind: 'webhook', url: hop.url }] },
      });
      expect(created.statusCode, created.body).toBe(201);
      const rule = created.json() as { id: string };
      const mark = connectSpy.mock.calls.length;
      const emitted = await h.call('POST', p.projectId, '/lattice/events/emit', { body: { eventType, dedupeKey: `redirect-${status}` } });
      expect(emitted.statusCode, emitted.body).toBe(200);
      const fire = await firstAttempt(h, p.projectId, rule.id);
      expect(fire!.deliveryResults[0]).toMatchObject({ ok: false, pending: false, attempts: 1, statusCode: status, error: `redirect (HTTP ${status}) not followed` });
      await settle();
      expect(hop.received).toHaveLength(1);
      expect(target.received).toHaveLength(0);
      expect(connectsSince(mark)).toEqual([{ host: '127.0.0.1', port: Number(new URL(hop.url).port) }]);
      expect((await h.call('DELETE', p.projectId, `/memory-alerts/${rule.id}`)).statusCode).toBe(204);
    } finally {
      await hop.close();
      await target.close();
    }
  });
});

describe("a deployment's own targets (WEBHOOK_ALLOWED_TARGETS), and what no setting allows", () => {
  // Under WEBHOOK_ALLOW_PRIVATE_TARGETS the refusal names the range; with the network allowed, what no setting allows.
  const NEVER_TARGETS: [string, RegExp][] = [
    ['http://169.254.169.254/latest/meta-data', /169\.254\.169\.254 is a link-local address.*never allowed/],
    ['http://169.254.170.2/v2/credentials', /169\.254\.170\.2 is a link-local address.*never allowed/],
    ['http://[fd00:ec2::254]/latest/meta-data', /fd00:ec2::254 is (a unique-local address|the AWS instance metadata address), never allowed/],
    ['http://100.100.100.200/latest/meta-data', /100\.100\.100\.200 is (a carrier-grade NAT address|the Alibaba Cloud instance metadata address), never allowed/],
    ['http://192.0.0.192/opc/v1/instance/', /192\.0\.0\.192 is (a reserved address|the Oracle Cloud instance metadata address), never allowed/],
    ['http://[fe80::1]/', /fe80::1 is a link-local address, never allowed/],
    ['http://[::ffff:169.254.169.254]/', /\(169\.254\.169\.254\) is a link-local address.*never allowed/],
    ['http://[64:ff9b::a9fe:a9fe]/', /64:ff9b::a9fe:a9fe is (a special-purpose address \(rfc6052\)|a link-local address .*inside 64:ff9b::a9fe:a9fe), never allowed/],
    ['http://[2002:a9fe:a9fe::1]/', /2002:a9fe:a9fe::1 is (a special-purpose address \(6to4\)|a link-local address .*inside 2002:a9fe:a9fe::1), never allowed/],
    ['http://[::169.254.169.254]/', /::a9fe:a9fe is (a special-purpose address \(\w+\)|not a global unicast address|a link-local address .*inside ::a9fe:a9fe), never allowed/],
    ['http://metadata.ssrf.test/computeMetadata/v1/', /169\.254\.169\.254 is a link-local address.*never allowed/],
    ['http://0.0.0.0:8080/', /0\.0\.0\.0 is the unspecified address, never allowed/],
  ];
  const everything = parseTargetAllowance(['0.0.0.0/0', '::/0', 'metadata.ssrf.test']).allowance;

  it.each(NEVER_TARGETS)('refuses %s with private targets allowed, and with every network and its name allowed', async (url, why) => {
    const mark = connectSpy.mock.calls.length;
    for (const policy of [LOOPBACK_OK, { ...PUBLIC_ONLY, allowance: everything }]) {
      const error = await checkWebhookTarget(url, policy).then(() => undefined, (err: unknown) => err);
      expect(error, url).toBeInstanceOf(ValidationError);
      expect((error as Error).message).toMatch(why);
      const attempt = await sendWebhook({ url, secret: 'my-secret' }, message, policy);
      expect(attempt).toMatchObject({ ok: false, error: expect.stringMatching(why) });
    }
    expect(connectsSince(mark)).toEqual([]);
  });

  it('allows the networks, addresses and host names it names, and nothing private beside them', async () => {
    const { allowance, problems } = parseTargetAllowance(['10.1.0.0/16', ' 192.168.7.7', 'Hooks.Internal', '*.svc.cluster.local', 'fd12:3456::/32']);
    expect(problems).toEqual([]);
    const policy: WebhookPolicy = { ...PUBLIC_ONLY, allowance };
    fake('hooks.internal', ['10.9.9.9', 4]);
    fake('other.internal', ['10.9.9.9', 4]);
    fake('relay.team.svc.cluster.local', ['10.3.3.3', 4]);
    fake('svc.cluster.local', ['10.3.3.3', 4]);
    const allowed = ['http://10.1.2.3/hook', 'http://192.168.7.7/', 'http://hooks.internal/hook', 'http://HOOKS.internal/hook', 'http://relay.team.svc.cluster.local/', 'http://[fd12:3456::9]/', 'http://93.184.216.34/'];
    for (const url of allowed) await expect(checkWebhookTarget(url, policy), url).resolves.toMatchObject({ addresses: expect.any(Array) });
    const refused: [string, RegExp][] = [
      ['http://10.2.0.1/', /10\.2\.0\.1 is a private address \(a deployment allows its own hosts or networks in WEBHOOK_ALLOWED_TARGETS\)/],
      ['http://192.168.7.8/', /192\.168\.7\.8 is a private address/],
      ['http://other.internal/', /10\.9\.9\.9 is a private address/],
      ['http://svc.cluster.local/', /10\.3\.3\.3 is a private address/],
      ['http://127.0.0.1/', /127\.0\.0\.1 is a loopback address/],
      ['http://[fd12:3457::1]/', /is a unique-local address/],
    ];
    for (const [url, why] of refused) await expect(checkWebhookTarget(url, policy), url).rejects.toThrow(why);
    // A named host that resolves to a metadata address is still refused.
    fake('hooks.internal', ['169.254.169.254', 4]);
    await expect(checkWebhookTarget('http://hooks.internal/hook', policy)).rejects.toThrow(/169\.254\.169\.254 is a link-local address .*never allowed/);
  });

  it('reads the setting at boot and refuses a deployment whose list it cannot read', () => {
    const config = loadConfig({ WEBHOOK_ALLOWED_TARGETS: '10.0.0.0/8, hooks.internal' });
    expect(config.webhookAllowedTargets.hosts).toEqual(['hooks.internal']);
    expect(config.webhookAllowedTargets.networks.map(([ip, bits]) => `${ip.toString()}/${bits}`)).toEqual(['10.0.0.0/8']);
    expect(() => loadConfig({ WEBHOOK_ALLOWED_TARGETS: '10.0.0.0/33, hooks_internal, 10.0.0.1' })).toThrow(/WEBHOOK_ALLOWED_TARGETS: 10\.0\.0\.0\/33: not a CIDR[\s\S]*WEBHOOK_ALLOWED_TARGETS: hooks_internal: neither a CIDR, an address nor a host name$/);
  });

  describe('through the alert routes', () => {
    let h: Harness;
    beforeAll(async () => {
      h = await createHarness({ env: { WEBHOOK_ALLOW_PRIVATE_TARGETS: 'true', WEBHOOK_ALLOWED_TARGETS: '0.0.0.0/0' } });
    });
    afterAll(async () => h?.close());

    it('answers 400 for the metadata address with private targets and every network allowed, and 201 for a private receiver', async () => {
      const p = await h.project();
      const rule = (url: string) => ({ name: 'meta', enabled: false, trigger: { kind: 'engine-event', eventTypes: ['x.y'] }, notify: [{ kind: 'webhook', url }] });
      const refused = await h.call('POST', p.projectId, '/memory-alerts', { body: rule('http://169.254.169.254/latest/meta-data') });
      expect(refused.statusCode, refused.body).toBe(400);
      expect(refused.json()).toMatchObject({ code: 'VALIDATION_ERROR', message: expect.stringMatching(/169\.254\.169\.254 is a link-local address .*never allowed/) });
      const created = await h.call('POST', p.projectId, '/memory-alerts', { body: rule('http://10.20.30.40/hooks') });
      expect(created.statusCode, created.body).toBe(201);
      const patched = await h.call('PATCH', p.projectId, `/memory-alerts/${(created.json() as { id: string }).id}`, { body: { notify: [{ kind: 'webhook', url: 'http://[fd00:ec2::254]/' }] } });
      expect(patched.statusCode, patched.body).toBe(400);
    });
  });
});
