import { createHmac } from 'node:crypto';
import { createServer, type IncomingHttpHeaders, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import fc from 'fast-check';
import ipaddr from 'ipaddr.js';
import { Webhook } from 'standardwebhooks';
import { afterEach, describe, expect, it } from 'vitest';
import {
  checkWebhookTarget,
  generateWebhookSecret,
  parseRetryAfter,
  sendWebhook,
  webhookHeaders,
  type WebhookPolicy,
} from '../../src/alerts/webhook.js';
import { ValidationError } from '../../src/platform/errors.js';

const LOOPBACK_OK: WebhookPolicy = { allowPrivateTargets: true, timeoutMs: 5_000 };
const PUBLIC_ONLY: WebhookPolicy = { allowPrivateTargets: false, timeoutMs: 5_000 };

interface Received {
  method: string;
  url: string;
  headers: IncomingHttpHeaders;
  body: string;
}

interface Receiver {
  url: string;
  port: number;
  received: Received[];
}

const servers: ReturnType<typeof createServer>[] = [];

/** A real HTTP server on 127.0.0.1 that records each request, then lets `respond` answer it. */
async function receiver(respond: (req: IncomingMessage, res: ServerResponse) => void = (_req, res) => res.end()): Promise<Receiver> {
  const received: Received[] = [];
  const server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (chunk: Buffer) => chunks.push(chunk));
    req.on('end', () => {
      received.push({ method: req.method ?? '', url: req.url ?? '', headers: req.headers, body: Buffer.concat(chunks).toString('utf8') });
      respond(req, res);
    });
  });
  servers.push(server);
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return { url: `http://127.0.0.1:${port}/hooks/alerts?tenant=a`, port, received };
}

afterEach(async () => {
  for (const server of servers.splice(0)) {
    server.closeAllConnections();
    await new Promise<void>((resolve) => server.close(() => resolve()));
  }
});

/** The Standard Webhooks headers as a receiver gets them. */
function signatureHeaders(headers: IncomingHttpHeaders): Record<string, string> {
  return {
    'webhook-id': String(headers['webhook-id']),
    'webhook-timestamp': String(headers['webhook-timestamp']),
    'webhook-signature': String(headers['webhook-signature']),
  };
}

const message = { id: 'msg_01JABCDEF', body: JSON.stringify({ type: 'alert.fired', data: { rule: 'alr_1', value: 3 } }) };

describe('webhook secrets', () => {
  it('generates whsec_ secrets holding 24 random bytes', () => {
    const secret = generateWebhookSecret();
    expect(secret).toMatch(/^whsec_[A-Za-z0-9+/]{32}$/);
    expect(Buffer.from(secret.slice('whsec_'.length), 'base64')).toHaveLength(24);
    expect(generateWebhookSecret()).not.toBe(secret);
  });

  it('refuses an empty secret and a whsec_ secret that is not base64', () => {
    expect(() => webhookHeaders('', message, new Date())).toThrow(ValidationError);
    expect(() => webhookHeaders('whsec_', message, new Date())).toThrow(ValidationError);
    expect(() => webhookHeaders('whsec_not base64!', message, new Date())).toThrow(ValidationError);
  });
});

describe('sendWebhook signing', () => {
  it('signs so that a receiver verifies with standardwebhooks for a whsec_ secret', async () => {
    const secret = generateWebhookSecret();
    const hook = await receiver();
    const attempt = await sendWebhook({ url: hook.url, secret }, message, LOOPBACK_OK);

    expect(attempt).toMatchObject({ ok: true, statusCode: 200, gone: false });
    expect(attempt.error).toBeUndefined();
    const [req] = hook.received;
    expect(req).toBeDefined();
    expect(req!.method).toBe('POST');
    expect(req!.url).toBe('/hooks/alerts?tenant=a');
    expect(req!.body).toBe(message.body);
    expect(new Webhook(secret).verify(req!.body, signatureHeaders(req!.headers))).toEqual(JSON.parse(message.body));
    expect(() => new Webhook(generateWebhookSecret()).verify(req!.body, signatureHeaders(req!.headers))).toThrow(/signature/i);
  });

  it('uses any other secret string as raw key bytes (format raw)', async () => {
    const secret = 'my-secret';
    const hook = await receiver();
    const attempt = await sendWebhook({ url: hook.url, secret }, message, LOOPBACK_OK);

    expect(attempt.ok).toBe(true);
    const headers = signatureHeaders(hook.received[0]!.headers);
    expect(new Webhook(Buffer.from(secret, 'utf8'), { format: 'raw' }).verify(hook.received[0]!.body, headers)).toEqual(
      JSON.parse(message.body),
    );
    // For an ASCII secret the package's raw string form is the same key.
    expect(() => new Webhook(secret, { format: 'raw' }).verify(hook.received[0]!.body, headers)).not.toThrow();
  });

  it('keys a non-ASCII raw secret with its UTF-8 bytes', async () => {
    const secret = 'pässwörd-✓';
    const hook = await receiver();
    await sendWebhook({ url: hook.url, secret }, message, LOOPBACK_OK);

    const req = hook.received[0]!;
    expect(() => new Webhook(new TextEncoder().encode(secret), { format: 'raw' }).verify(req.body, signatureHeaders(req.headers))).not.toThrow();
    expect(req.headers['x-thinkfleet-signature']).toBe(createHmac('sha256', secret).update(req.body).digest('hex'));
  });

  it('adds x-thinkfleet-signature, the hex HMAC-SHA256 of the body keyed with the secret as given', async () => {
    for (const secret of [generateWebhookSecret(), 'my-secret']) {
      const hook = await receiver();
      await sendWebhook({ url: hook.url, secret }, message, LOOPBACK_OK);
      const req = hook.received[0]!;
      expect(req.headers['x-thinkfleet-signature']).toBe(createHmac('sha256', secret).update(req.body, 'utf8').digest('hex'));
    }
  });

  it('sends the message id as webhook-id and the given time as webhook-timestamp', async () => {
    const now = new Date('2026-03-04T05:06:07.890Z');
    const hook = await receiver();
    await sendWebhook({ url: hook.url, secret: 'my-secret' }, message, LOOPBACK_OK, now);

    const { headers } = hook.received[0]!;
    expect(headers['webhook-id']).toBe(message.id);
    expect(headers['webhook-timestamp']).toBe(String(Math.floor(now.getTime() / 1000)));
    expect(headers['content-type']).toBe('application/json');
    expect(headers['user-agent']).toBe('Lattice-Webhooks/1');
    expect(headers['webhook-signature']).toBe(new Webhook('my-secret', { format: 'raw' }).sign(message.id, now, message.body));
  });

  it('builds the same headers it sends', () => {
    const now = new Date('2026-03-04T05:06:07Z');
    const headers = webhookHeaders('whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw', message, now);
    expect(headers).toEqual({
      'webhook-id': message.id,
      'webhook-timestamp': '1772600767',
      'webhook-signature': new Webhook('whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw').sign(message.id, now, message.body),
      'x-thinkfleet-signature': createHmac('sha256', 'whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw').update(message.body).digest('hex'),
      'content-type': 'application/json',
      'user-agent': 'Lattice-Webhooks/1',
    });
  });

  it('keeps the URL host in the Host header when it connects to the checked address', async () => {
    const hook = await receiver();
    const attempt = await sendWebhook({ url: `http://localhost:${hook.port}/x`, secret: 'my-secret' }, message, LOOPBACK_OK);
    expect(attempt.ok).toBe(true);
    expect(hook.received[0]!.headers.host).toBe(`localhost:${hook.port}`);
  });
});

describe('sendWebhook answers', () => {
  it('reports a 500 as a failure naming the status', async () => {
    const hook = await receiver((_req, res) => {
      res.statusCode = 500;
      res.end('boom');
    });
    const attempt = await sendWebhook({ url: hook.url, secret: 'my-secret' }, message, LOOPBACK_OK);
    expect(attempt).toMatchObject({ ok: false, statusCode: 500, gone: false });
    expect(attempt.error).toContain('500');
    expect(attempt.retryAfterMs).toBeUndefined();
    expect(attempt.durationMs).toBeGreaterThanOrEqual(0);
  });

  it('reads Retry-After in seconds from a 429', async () => {
    const hook = await receiver((_req, res) => {
      res.writeHead(429, { 'retry-after': '7' }).end();
    });
    const attempt = await sendWebhook({ url: hook.url, secret: 'my-secret' }, message, LOOPBACK_OK);
    expect(attempt).toMatchObject({ ok: false, statusCode: 429, retryAfterMs: 7_000, gone: false });
  });

  it('reads Retry-After as an HTTP date, relative to the attempt time', async () => {
    const now = new Date('2026-03-04T05:06:07Z');
    const hook = await receiver((_req, res) => {
      res.writeHead(503, { 'retry-after': new Date(now.getTime() + 120_000).toUTCString() }).end();
    });
    const attempt = await sendWebhook({ url: hook.url, secret: 'my-secret' }, message, LOOPBACK_OK, now);
    expect(attempt).toMatchObject({ ok: false, statusCode: 503, retryAfterMs: 120_000 });
  });

  it('parses Retry-After values', () => {
    const now = new Date('2026-03-04T05:06:07Z');
    expect(parseRetryAfter('0', now)).toBe(0);
    expect(parseRetryAfter(' 30 ', now)).toBe(30_000);
    expect(parseRetryAfter('Wed, 04 Mar 2026 05:07:07 GMT', now)).toBe(60_000);
    expect(parseRetryAfter('Wed, 04 Mar 2026 05:00:00 GMT', now)).toBe(0);
    expect(parseRetryAfter('soon', now)).toBeUndefined();
    expect(parseRetryAfter('-5', now)).toBeUndefined();
    expect(parseRetryAfter(undefined, now)).toBeUndefined();
  });

  it('marks a 410 as gone', async () => {
    const hook = await receiver((_req, res) => {
      res.statusCode = 410;
      res.end();
    });
    const attempt = await sendWebhook({ url: hook.url, secret: 'my-secret' }, message, LOOPBACK_OK);
    expect(attempt).toMatchObject({ ok: false, statusCode: 410, gone: true });
  });

  it('gives up on a receiver that never answers and says it timed out', async () => {
    const hook = await receiver(() => {
      // Hold the request open.
    });
    const attempt = await sendWebhook({ url: hook.url, secret: 'my-secret' }, message, { allowPrivateTargets: true, timeoutMs: 200 });
    expect(attempt.ok).toBe(false);
    expect(attempt.statusCode).toBeUndefined();
    expect(attempt.error).toMatch(/timed out after 200 ms/);
    expect(hook.received).toHaveLength(1);
  });

  it('times out on a receiver that answers headers but never finishes the body', async () => {
    const hook = await receiver((_req, res) => {
      res.writeHead(200, { 'content-type': 'text/plain' });
      res.write('partial');
    });
    const attempt = await sendWebhook({ url: hook.url, secret: 'my-secret' }, message, { allowPrivateTargets: true, timeoutMs: 200 });
    expect(attempt.ok).toBe(false);
    expect(attempt.error).toMatch(/timed out/);
  });

  it('stops reading a response body past 64 KiB', async () => {
    const hook = await receiver((_req, res) => {
      res.writeHead(200, { 'content-type': 'text/plain' });
      // An endless body: only the cap lets the attempt finish before its timeout.
      const chunk = Buffer.alloc(16 * 1024, 'x');
      const pump = () => {
        while (!res.destroyed && res.write(chunk));
        if (!res.destroyed) res.once('drain', pump);
      };
      pump();
    });
    const attempt = await sendWebhook({ url: hook.url, secret: 'my-secret' }, message, { allowPrivateTargets: true, timeoutMs: 10_000 });
    expect(attempt).toMatchObject({ ok: true, statusCode: 200 });
    expect(attempt.error).toBeUndefined();
  });

  it('does not follow a redirect', async () => {
    const elsewhere = await receiver();
    const hook = await receiver((_req, res) => {
      res.writeHead(302, { location: elsewhere.url }).end();
    });
    const attempt = await sendWebhook({ url: hook.url, secret: 'my-secret' }, message, LOOPBACK_OK);
    expect(attempt).toMatchObject({ ok: false, statusCode: 302, error: 'redirect (HTTP 302) not followed', gone: false });
    expect(hook.received).toHaveLength(1);
    expect(elsewhere.received).toHaveLength(0);
  });

  it('reports a refused connection without throwing', async () => {
    const hook = await receiver();
    const { port } = hook;
    for (const server of servers.splice(0)) await new Promise<void>((resolve) => server.close(() => resolve()));
    const attempt = await sendWebhook({ url: `http://127.0.0.1:${port}/`, secret: 'my-secret' }, message, LOOPBACK_OK);
    expect(attempt.ok).toBe(false);
    expect(attempt.error).toMatch(/ECONNREFUSED/);
  });
});

describe('webhook targets', () => {
  it.each([
    'http://10.0.0.1/',
    'http://169.254.169.254/latest',
    'http://[::1]/',
    'http://[::ffff:127.0.0.1]/',
    'http://[::ffff:a9fe:a9fe]/',
    'http://192.168.1.1/',
    'http://172.16.0.1/',
    'http://100.64.0.1/',
    'http://0.0.0.0/',
    'http://[::]/',
    'http://224.0.0.1/',
    'http://[fd00::1]/',
    'http://[fe80::1]/',
    'http://[::7f00:1]/',
    'http://[64:ff9b::a00:1]/',
    'http://0x7f.1/',
    'http://2130706433/',
  ])('refuses the private or special target %s', async (url) => {
    const error = await checkWebhookTarget(url, PUBLIC_ONLY).catch((err: unknown) => err);
    expect(error).toBeInstanceOf(ValidationError);
    expect((error as ValidationError).statusCode).toBe(400);
    expect((error as ValidationError).message).toMatch(/refused: .* is (a|an|the|not) /);
  });

  it('refuses loopback receivers, by IP and by name', async () => {
    const hook = await receiver();
    for (const url of [`http://127.0.0.1:${hook.port}/`, `http://localhost:${hook.port}/`]) {
      const error = await checkWebhookTarget(url, PUBLIC_ONLY).catch((err: unknown) => err);
      expect(error).toBeInstanceOf(ValidationError);
      expect((error as Error).message).toContain(url);
      expect((error as Error).message).toMatch(/loopback/);
    }
  });

  it.each([
    ['ftp://example.com/', /scheme ftp:/],
    ['not a url', /not an absolute URL/],
    ['/relative/path', /not an absolute URL/],
    ['http://user:pass@1.1.1.1/', /credentials/],
    ['http://user@1.1.1.1/', /credentials/],
  ])('refuses %s', async (url, reason) => {
    const error = await checkWebhookTarget(url, { ...PUBLIC_ONLY, allowPrivateTargets: true }).catch((err: unknown) => err);
    expect(error).toBeInstanceOf(ValidationError);
    expect((error as Error).message).toMatch(reason);
  });

  it('never repeats a password in its message', async () => {
    const error = await checkWebhookTarget('http://user:hunter2@1.1.1.1/', PUBLIC_ONLY).catch((err: unknown) => err);
    expect((error as Error).message).not.toContain('hunter2');
  });

  it('accepts public IP literals without DNS and returns the checked addresses', async () => {
    await expect(checkWebhookTarget('http://93.184.216.34/', PUBLIC_ONLY)).resolves.toMatchObject({
      addresses: [{ address: '93.184.216.34', family: 4 }],
    });
    await expect(checkWebhookTarget('https://[2606:4700:4700::1111]:8443/x', PUBLIC_ONLY)).resolves.toMatchObject({
      addresses: [{ address: '2606:4700:4700::1111', family: 6 }],
    });
    // A mapped public address is judged, and returned, as its IPv4.
    await expect(checkWebhookTarget('http://[::ffff:93.184.216.34]/', PUBLIC_ONLY)).resolves.toMatchObject({
      addresses: [{ address: '93.184.216.34', family: 4 }],
    });
  });

  it('allows loopback when the deployment allows private targets', async () => {
    const hook = await receiver();
    await expect(checkWebhookTarget(`http://127.0.0.1:${hook.port}/`, LOOPBACK_OK)).resolves.toMatchObject({
      addresses: [{ address: '127.0.0.1', family: 4 }],
    });
    const { addresses } = await checkWebhookTarget(`http://localhost:${hook.port}/`, LOOPBACK_OK);
    expect(addresses.length).toBeGreaterThan(0);
  });

  it('does not connect to a refused target', async () => {
    const hook = await receiver();
    for (const url of [hook.url, `http://localhost:${hook.port}/`]) {
      const attempt = await sendWebhook({ url, secret: 'my-secret' }, message, PUBLIC_ONLY);
      expect(attempt.ok).toBe(false);
      expect(attempt.statusCode).toBeUndefined();
      expect(attempt.error).toMatch(/^refused: .*loopback/);
    }
    expect(hook.received).toHaveLength(0);
  });

  const octet = fc.integer({ min: 0, max: 255 });
  const privateV4 = fc.oneof(
    fc.tuple(fc.constant(10), octet, octet, octet),
    fc.tuple(fc.constant(172), fc.integer({ min: 16, max: 31 }), octet, octet),
    fc.tuple(fc.constant(192), fc.constant(168), octet, octet),
    fc.tuple(fc.constant(127), octet, octet, octet),
    fc.tuple(fc.constant(169), fc.constant(254), octet, octet),
  );

  it('refuses every IPv4 address in 10/8, 172.16/12, 192.168/16, 127/8 and 169.254/16, plain or IPv4-mapped', async () => {
    await fc.assert(
      fc.asyncProperty(privateV4, fc.boolean(), async (octets, mapped) => {
        const v4 = octets.join('.');
        const url = mapped ? `http://[::ffff:${v4}]/` : `http://${v4}/`;
        await expect(checkWebhookTarget(url, PUBLIC_ONLY)).rejects.toThrow(ValidationError);
      }),
    );
  });

  it('accepts every IPv4 address that is not in a special range', async () => {
    const publicV4 = fc
      .tuple(octet, octet, octet, octet)
      .map((octets) => octets.join('.'))
      .filter((v4) => ipaddr.parse(v4).range() === 'unicast');
    await fc.assert(
      fc.asyncProperty(publicV4, async (v4) => {
        const { addresses } = await checkWebhookTarget(`http://${v4}/`, PUBLIC_ONLY);
        expect(addresses).toEqual([{ address: v4, family: 4 }]);
      }),
    );
  });
});
