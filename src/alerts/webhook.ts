// One webhook delivery attempt: check the target (public addresses, and the private ones the
// deployment names; never link-local or cloud metadata: platform/targets.ts), sign the message the Standard Webhooks way, POST it once to the address that was
// checked, and report what happened. Retries, backoff and disabling endpoints belong to the caller.
import { createHmac, randomBytes } from 'node:crypto';
import { lookup as dnsLookup } from 'node:dns/promises';
import { request as httpRequest, type IncomingMessage } from 'node:http';
import { request as httpsRequest } from 'node:https';
import type { LookupAddress } from 'node:dns';
import { isIP } from 'node:net';
import ipaddr from 'ipaddr.js';
import { Webhook } from 'standardwebhooks';
import { ValidationError } from '../platform/errors.js';
import { hostAllowed, networkAllowed, neverReason, NO_ALLOWANCE, withPrivateNetworks, type TargetAllowance } from '../platform/targets.js';

export interface WebhookPolicy {
  /**
   * WEBHOOK_ALLOW_PRIVATE_TARGETS: allow loopback, private, unique-local and CGNAT addresses
   * (platform/targets.ts PRIVATE_NETWORKS; tests allow loopback). Default deployments: false.
   */
  allowPrivateTargets: boolean;
  /** WEBHOOK_ALLOWED_TARGETS: the networks and host names allowed beyond public unicast. */
  allowance?: TargetAllowance;
  /** Total time for one attempt (connect + response), ms. */
  timeoutMs: number;
}

export interface WebhookMessage {
  id: string;
  /** JSON text. */
  body: string;
}

export interface WebhookAttempt {
  /** The receiver answered 2xx. */
  ok: boolean;
  statusCode?: number;
  /** Human readable: "HTTP 500", "timed out after 2000 ms", "refused: 10.0.0.5 is a private address", ... */
  error?: string;
  /** From Retry-After (seconds or HTTP date) on a non-2xx answer. */
  retryAfterMs?: number;
  /** HTTP 410: the receiver asks us to stop. */
  gone: boolean;
  durationMs: number;
}

export interface CheckedAddress {
  address: string;
  family: 4 | 6;
}

const SECRET_PREFIX = 'whsec_';
const MAX_RESPONSE_BYTES = 64 * 1024;
const USER_AGENT = 'Lattice-Webhooks/1';

/** whsec_ + base64 of 24 random bytes (Standard Webhooks secret format). */
export function generateWebhookSecret(): string {
  return SECRET_PREFIX + randomBytes(24).toString('base64');
}

/**
 * whsec_ secrets are base64 keys. Any other string is the key itself, as its UTF-8 bytes: the
 * package's raw format takes a Uint8Array as is, whereas a raw *string* would be cut to one byte
 * per UTF-16 unit and so disagree with every other HMAC of a non-ASCII secret (ours included).
 */
function signer(secret: string): Webhook {
  try {
    return secret.startsWith(SECRET_PREFIX)
      ? new Webhook(secret)
      : new Webhook(Buffer.from(secret, 'utf8'), { format: 'raw' });
  } catch (err) {
    throw new ValidationError(
      secret.startsWith(SECRET_PREFIX)
        ? 'The webhook secret starts with whsec_ but the rest is not a non-empty base64 key.'
        : 'The webhook secret is empty.',
      undefined,
      { cause: err },
    );
  }
}

/** Throws ValidationError when the secret cannot sign (an empty one, or whsec_ without a base64 key). */
export function checkWebhookSecret(secret: string): void {
  webhookHeaders(secret, { id: 'check', body: '' }, new Date(0));
}

/** The headers for one attempt: Standard Webhooks' three, the legacy body signature, and the content type. */
export function webhookHeaders(secret: string, message: WebhookMessage, now: Date): Record<string, string> {
  return {
    'webhook-id': message.id,
    'webhook-timestamp': String(Math.floor(now.getTime() / 1000)),
    'webhook-signature': signer(secret).sign(message.id, now, message.body),
    // Older ThinkFleet clients verify the body alone, keyed with the secret string as configured.
    'x-thinkfleet-signature': createHmac('sha256', secret).update(message.body, 'utf8').digest('hex'),
    'content-type': 'application/json',
    'user-agent': USER_AGENT,
  };
}

/** The URL for messages: never its password. */
function describeUrl(url: string): string {
  try {
    const parsed = new URL(url);
    if (parsed.password !== '') parsed.password = '***';
    return parsed.href;
  } catch {
    return url.length > 200 ? `${url.slice(0, 200)}...` : url;
  }
}

class TargetRefusedError extends ValidationError {
  constructor(url: string, readonly reason: string) {
    super(`The webhook URL ${describeUrl(url)} is not allowed: ${reason}.`, { url: describeUrl(url), reason });
  }
}

const RANGE_WORDS: Record<string, string> = {
  private: 'a private address',
  loopback: 'a loopback address',
  linkLocal: 'a link-local address',
  uniqueLocal: 'a unique-local address',
  carrierGradeNat: 'a carrier-grade NAT address',
  unspecified: 'the unspecified address',
  multicast: 'a multicast address',
  broadcast: 'the broadcast address',
  reserved: 'a reserved address',
};

/** Why an address is not public unicast, or undefined when it is. IPv4-mapped IPv6 is judged as its IPv4. */
function nonPublicReason(ip: ipaddr.IPv4 | ipaddr.IPv6): string | undefined {
  const range = ip.range();
  if (range === 'unicast') {
    // ipaddr.js calls anything outside its special list unicast; for IPv6 only 2000::/3 is
    // assigned global unicast (this also catches IPv4-compatible ::a.b.c.d).
    if (ip.kind() === 'ipv6' && !ip.match(ipaddr.parse('2000::'), 3)) return 'not a global unicast address';
    return undefined;
  }
  return RANGE_WORDS[range] ?? `a special-purpose address (${range})`;
}

function checkedAddress(url: string, host: string, address: string, allowance: TargetAllowance): CheckedAddress {
  let ip: ipaddr.IPv4 | ipaddr.IPv6 = ipaddr.parse(address);
  if (ip.kind() === 'ipv6' && (ip as ipaddr.IPv6).isIPv4MappedAddress()) ip = (ip as ipaddr.IPv6).toIPv4Address();
  const shown = ip.toString() === address ? address : `${address} (${ip.toString()})`;
  const never = neverReason(ip);
  const reason = nonPublicReason(ip);
  if (reason !== undefined && !networkAllowed(allowance, ip) && !(isIP(host) === 0 && hostAllowed(allowance, host))) {
    const remedy = never === undefined ? ' (a deployment allows its own hosts or networks in WEBHOOK_ALLOWED_TARGETS)' : ', never allowed';
    throw new TargetRefusedError(url, `refused: ${shown} is ${reason}${remedy}`);
  }
  // What the deployment allowed still never reaches link-local or metadata addresses.
  if (never !== undefined) throw new TargetRefusedError(url, `refused: ${shown} is ${never}, never allowed`);
  return { address: ip.toString(), family: ip.kind() === 'ipv4' ? 4 : 6 };
}

/**
 * Checks that a webhook URL may be called and resolves its host once. Throws ValidationError when
 * the URL is not absolute http(s), carries credentials, cannot be resolved, or any address it
 * resolves to is link-local or a metadata address, or is not public unicast and not in what the
 * policy allows (its networks, its host names, or the private networks).
 */
export async function checkWebhookTarget(
  url: string,
  policy: WebhookPolicy,
): Promise<{ url: URL; addresses: CheckedAddress[] }> {
  let parsed: URL;
  try {
    parsed = new URL(url);
  } catch {
    throw new TargetRefusedError(url, 'not an absolute URL');
  }
  if (parsed.protocol !== 'http:' && parsed.protocol !== 'https:') {
    throw new TargetRefusedError(url, `the scheme ${parsed.protocol} is not http or https`);
  }
  if (parsed.username !== '' || parsed.password !== '') {
    throw new TargetRefusedError(url, 'credentials in the URL (user:password@) are not allowed');
  }
  const host = parsed.hostname.startsWith('[') ? parsed.hostname.slice(1, -1) : parsed.hostname;
  if (host === '') throw new TargetRefusedError(url, 'the URL has no host');

  let resolved: LookupAddress[];
  if (isIP(host) !== 0) {
    resolved = [{ address: host, family: isIP(host) }];
  } else {
    try {
      resolved = await dnsLookup(host, { all: true });
    } catch (err) {
      const code = (err as NodeJS.ErrnoException).code ?? 'lookup failed';
      throw new TargetRefusedError(url, `the host ${host} cannot be resolved (${code})`);
    }
    if (resolved.length === 0) throw new TargetRefusedError(url, `the host ${host} cannot be resolved (no address)`);
  }
  const allowance = policy.allowPrivateTargets ? withPrivateNetworks(policy.allowance ?? NO_ALLOWANCE) : (policy.allowance ?? NO_ALLOWANCE);
  return { url: parsed, addresses: resolved.map((r) => checkedAddress(url, host, r.address, allowance)) };
}

/** Retry-After as milliseconds from now: delta seconds or an HTTP date (in the past: 0). */
export function parseRetryAfter(value: string | undefined, now: Date): number | undefined {
  if (value === undefined) return undefined;
  const text = value.trim();
  if (/^\d+$/.test(text)) return Number(text) * 1000;
  // All three HTTP-date forms start with a day name; Date.parse alone would take "-5" for a year.
  if (!/^(Mon|Tue|Wed|Thu|Fri|Sat|Sun)/i.test(text)) return undefined;
  const at = Date.parse(text);
  if (Number.isNaN(at)) return undefined;
  return Math.max(0, at - now.getTime());
}

class AttemptTimeout extends Error {}

function outcome(res: IncomingMessage, now: Date): Omit<WebhookAttempt, 'durationMs'> {
  const statusCode = res.statusCode ?? 0;
  if (statusCode >= 200 && statusCode < 300) return { ok: true, statusCode, gone: false };
  const retryAfterMs = parseRetryAfter(res.headers['retry-after'], now);
  const error =
    statusCode >= 300 && statusCode < 400
      ? `redirect (HTTP ${statusCode}) not followed`
      : statusCode === 410
        ? 'HTTP 410 (gone)'
        : `HTTP ${statusCode}`;
  return { ok: false, statusCode, error, gone: statusCode === 410, ...(retryAfterMs === undefined ? {} : { retryAfterMs }) };
}

/**
 * POSTs to the checked addresses only: the custom lookup hands the socket what was checked, so a
 * second DNS answer (rebinding) cannot change where we connect. Host header and TLS server name
 * stay the URL's host. Resolves when the (capped, discarded) response body has been read.
 */
function post(
  url: URL,
  addresses: CheckedAddress[],
  headers: Record<string, string>,
  body: string,
  now: Date,
  signal: AbortSignal,
): Promise<Omit<WebhookAttempt, 'durationMs'>> {
  return new Promise((resolve, reject) => {
    const first = addresses[0]!;
    const request = url.protocol === 'https:' ? httpsRequest : httpRequest;
    const req = request({
      protocol: url.protocol,
      host: url.hostname.startsWith('[') ? url.hostname.slice(1, -1) : url.hostname,
      port: url.port === '' ? undefined : Number(url.port),
      path: `${url.pathname}${url.search}`,
      method: 'POST',
      headers: { ...headers, host: url.host, 'content-length': String(Buffer.byteLength(body, 'utf8')) },
      // A fresh agent per attempt: no pooled socket from an earlier resolution is reused.
      agent: false,
      lookup: (_hostname, options, callback) => {
        // With autoSelectFamily (Node 20's default) net asks for every address.
        if (options.all) {
          (callback as (err: null, addresses: LookupAddress[]) => void)(null, addresses);
        } else {
          callback(null, first.address, first.family);
        }
      },
    });
    const onAbort = () => req.destroy(new AttemptTimeout());
    signal.addEventListener('abort', onAbort, { once: true });
    const finish = (result: Omit<WebhookAttempt, 'durationMs'>) => {
      signal.removeEventListener('abort', onAbort);
      resolve(result);
    };
    req.on('error', (err) => {
      signal.removeEventListener('abort', onAbort);
      reject(err);
    });
    req.on('response', (res) => {
      const result = outcome(res, now);
      let received = 0;
      res.on('data', (chunk: Buffer) => {
        received += chunk.length;
        if (received > MAX_RESPONSE_BYTES) {
          // Enough: the body is discarded anyway, and a receiver must not keep us reading.
          finish(result);
          req.destroy();
        }
      });
      res.on('end', () => finish(result));
      // Once finished, a later error (e.g. our own destroy) changes nothing.
      res.on('error', (err) => {
        signal.removeEventListener('abort', onAbort);
        reject(err);
      });
    });
    req.end(body);
  });
}

/** Signs and POSTs once. Never throws for network or HTTP failures: they are reported in the result. */
export async function sendWebhook(
  target: { url: string; secret: string },
  message: WebhookMessage,
  policy: WebhookPolicy,
  now: Date = new Date(),
): Promise<WebhookAttempt> {
  const started = performance.now();
  const elapsed = () => Math.round(performance.now() - started);
  let headers: Record<string, string>;
  try {
    headers = webhookHeaders(target.secret, message, now);
  } catch (err) {
    return { ok: false, gone: false, error: `cannot sign: ${(err as Error).message}`, durationMs: elapsed() };
  }

  const controller = new AbortController();
  let rejectTimeout: (err: Error) => void = () => {};
  const timedOut = new Promise<never>((_resolve, reject) => {
    rejectTimeout = reject;
  });
  const timer = setTimeout(() => {
    controller.abort();
    rejectTimeout(new AttemptTimeout());
  }, policy.timeoutMs);
  timedOut.catch(() => {});

  try {
    // The deadline covers resolution too; a lookup that never answers is left behind.
    const { url, addresses } = await Promise.race([checkWebhookTarget(target.url, policy), timedOut]);
    const result = await Promise.race([post(url, addresses, headers, message.body, now, controller.signal), timedOut]);
    return { ...result, durationMs: elapsed() };
  } catch (err) {
    if (err instanceof AttemptTimeout) {
      return { ok: false, error: `timed out after ${policy.timeoutMs} ms`, gone: false, durationMs: elapsed() };
    }
    if (err instanceof TargetRefusedError) {
      return { ok: false, error: err.reason, gone: false, durationMs: elapsed() };
    }
    const text = err instanceof Error ? err.message : String(err);
    return { ok: false, error: `request failed: ${text}`, gone: false, durationMs: elapsed() };
  } finally {
    clearTimeout(timer);
  }
}
