// One error body for every class of failure, with the right status and no internals.
import { createServer, type AddressInfo, type Socket } from 'node:net';
import Fastify from 'fastify';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createPgDb } from '../../src/platform/db-pg.js';
import errorHandler from '../../src/platform/error-handler.js';
import { healthRoutes } from '../../src/platform/health.js';
import { InProcessQueue } from '../../src/platform/queue-inprocess.js';
import { createLogger } from '../../src/platform/logger.js';
import { createHarness, type Harness } from '../helpers/harness.js';

const BACKFILL = '/admin/memory/embeddings/backfill';

function expectErrorShape(body: Record<string, unknown>, statusCode: number, code: string): void {
  expect(body).toMatchObject({ statusCode, code });
  expect(typeof body.message).toBe('string');
  expect(Object.keys(body).every((k) => ['statusCode', 'code', 'message', 'params'].includes(k))).toBe(true);
}

describe('error responses', () => {
  let h: Harness;
  let p: { projectId: string; apiKey: string };
  beforeAll(async () => {
    h = await createHarness({ env: { BODY_LIMIT_BYTES: '2048', RATE_LIMIT_PER_MINUTE: '1000' } });
    p = await h.project();
  });
  afterAll(() => h?.close());

  it('400 VALIDATION_ERROR lists every failing field in params.errors', async () => {
    const res = await h.call('POST', p.projectId, BACKFILL, { body: { batch: 0, extra: true } });
    expect(res.statusCode).toBe(400);
    expectErrorShape(res.json(), 400, 'VALIDATION_ERROR');
    expect(res.json().params.errors.map((e: { path: string }) => e.path).sort()).toEqual(['body.batch', 'body.extra']);
  });

  it('400 VALIDATION_ERROR for a body that is not JSON', async () => {
    const res = await h.call('POST', p.projectId, BACKFILL, { body: '{"batch": ', headers: { 'content-type': 'application/json' } });
    expect(res.statusCode).toBe(400);
    expectErrorShape(res.json(), 400, 'VALIDATION_ERROR');
  });

  it('an empty body with a JSON content type is no body, on every method (clients send the header on every request)', async () => {
    const json = { 'content-type': 'application/json' };
    const saved = await h.call('POST', p.projectId, '/admin/memory', { body: { content: 'an empty-body probe' } });
    expect(saved.statusCode).toBe(201);
    const deleted = await h.call('DELETE', p.projectId, `/memory/${saved.json().id}`, { body: '', headers: json });
    expect(deleted.statusCode).toBe(204);
    expect((await h.call('GET', p.projectId, `/admin/memory/${saved.json().id}`, { body: '', headers: json })).statusCode).toBe(404);
    // A route whose body is all optional runs with its defaults; one that needs a body names it.
    expect((await h.call('POST', p.projectId, BACKFILL, { body: '  ', headers: json })).statusCode).toBe(200);
    const refused = await h.call('POST', p.projectId, '/admin/memory', { body: '', headers: json });
    expect(refused.statusCode).toBe(400);
    expectErrorShape(refused.json(), 400, 'VALIDATION_ERROR');
    expect(refused.json().message).toMatch(/body/);
  });

  it('400 VALIDATION_ERROR for a malformed project id in the path', async () => {
    const res = await h.call('POST', 'Bad Project!', BACKFILL, { apiKey: p.apiKey });
    expect([400, 404]).toContain(res.statusCode);
    expectErrorShape(res.json(), res.statusCode, res.statusCode === 400 ? 'VALIDATION_ERROR' : 'NOT_FOUND');
  });

  it('401, 403 and 404 share the shape', async () => {
    const anonymous = await h.app.inject({ method: 'POST', url: `/api/v1/projects/${p.projectId}${BACKFILL}` });
    expectErrorShape(anonymous.json(), 401, 'AUTHENTICATION_ERROR');
    const reader = await h.key(p.projectId, ['READ_MEMORY']);
    expectErrorShape((await h.call('POST', p.projectId, BACKFILL, { apiKey: reader })).json(), 403, 'AUTHORIZATION_ERROR');
    const other = await h.project();
    expectErrorShape((await h.call('POST', other.projectId, BACKFILL, { apiKey: p.apiKey })).json(), 404, 'NOT_FOUND');
  });

  it('404 NOT_FOUND for an unknown route', async () => {
    const res = await h.app.inject({ method: 'GET', url: '/api/v1/nothing-here' });
    expect(res.statusCode).toBe(404);
    expectErrorShape(res.json(), 404, 'NOT_FOUND');
  });

  it('413 PAYLOAD_TOO_LARGE past the body limit', async () => {
    const res = await h.call('POST', p.projectId, BACKFILL, { body: { batch: 1, padding: 'x'.repeat(4096) } });
    expect(res.statusCode).toBe(413);
    expectErrorShape(res.json(), 413, 'PAYLOAD_TOO_LARGE');
  });

  it('415 for a body that is not JSON by content type', async () => {
    const res = await h.call('POST', p.projectId, BACKFILL, { body: 'batch=1', headers: { 'content-type': 'text/csv' } });
    expect(res.statusCode).toBe(415);
    expectErrorShape(res.json(), 415, 'UNSUPPORTED_MEDIA_TYPE');
  });

  it('500 INTERNAL_ERROR hides the SQL and the stack', async () => {
    const broken = await createHarness();
    try {
      const q = await broken.project();
      await broken.db.exec('ALTER TABLE memories RENAME TO memories_gone');
      const res = await broken.call('POST', q.projectId, BACKFILL, { body: {} });
      expect(res.statusCode).toBe(500);
      expectErrorShape(res.json(), 500, 'INTERNAL_ERROR');
      expect(res.body).not.toMatch(/memories|relation|SELECT|at .*\.ts/);
    } finally {
      await broken.close();
    }
  });
});

describe('rate limiting', () => {
  let h: Harness;
  afterAll(() => h?.close());

  it('answers 429 RATE_LIMIT with Retry-After in seconds, per key', async () => {
    h = await createHarness({ env: { RATE_LIMIT_PER_MINUTE: '3' } });
    const p = await h.project();
    const second = await h.key(p.projectId, ['READ_MEMORY', 'WRITE_MEMORY']);
    const codes: number[] = [];
    for (let i = 0; i < 4; i++) codes.push((await h.call('POST', p.projectId, BACKFILL, { body: {} })).statusCode);
    expect(codes).toEqual([200, 200, 200, 429]);
    const limited = await h.call('POST', p.projectId, BACKFILL, { body: {} });
    expectErrorShape(limited.json(), 429, 'RATE_LIMIT');
    const retryAfter = Number(limited.headers['retry-after']);
    expect(Number.isInteger(retryAfter) && retryAfter >= 1 && retryAfter <= 60).toBe(true);
    expect((await h.call('POST', p.projectId, BACKFILL, { apiKey: second, body: {} })).statusCode).toBe(200);
  });

  it('counts pattern extraction apart, 5 calls a minute per key by default', async () => {
    const limited = await createHarness({ env: { PATTERN_EXTRACT_PER_MINUTE: '5' } });
    try {
      const p = await limited.project();
      const q = await limited.project();
      const second = await limited.key(p.projectId, ['READ_MEMORY', 'WRITE_MEMORY']);
      const extract = (projectId: string, apiKey?: string) =>
        limited.call('POST', projectId, '/lattice/patterns/extract', { ...(apiKey ? { apiKey } : {}), body: { subject: { kind: 'customer', externalId: 'c-1' } } });
      const codes: number[] = [];
      for (let i = 0; i < 6; i++) codes.push((await extract(p.projectId)).statusCode);
      expect(codes).toEqual([200, 200, 200, 200, 200, 429]);
      const refused = await extract(p.projectId);
      expectErrorShape(refused.json(), 429, 'RATE_LIMIT');
      expect(refused.json().message).toContain('5 requests per minute');
      expect(Number(refused.headers['retry-after'])).toBeGreaterThanOrEqual(1);
      // Other routes of the same key, another key of the project and another project are not held back.
      expect((await limited.call('POST', p.projectId, BACKFILL, { body: {} })).statusCode).toBe(200);
      expect((await extract(p.projectId, second)).statusCode).toBe(200);
      expect((await extract(q.projectId)).statusCode).toBe(200);
    } finally {
      await limited.close();
    }
  });
});

describe('dependency down', () => {
  it('answers 503 SERVICE_UNAVAILABLE with Retry-After from /readyz when the database is unreachable', async () => {
    const db = createPgDb({ connectionString: 'postgres://postgres@127.0.0.1:1/nothing' });
    const queue = new InProcessQueue({ concurrency: 1, defaultTimeoutMs: 1000, log: createLogger('silent') });
    const app = Fastify();
    await app.register(errorHandler);
    await app.register(healthRoutes, { db, queue, dbTimeoutMs: 1000 });
    try {
      const res = await app.inject({ method: 'GET', url: '/readyz' });
      expect(res.statusCode).toBe(503);
      expectErrorShape(res.json(), 503, 'SERVICE_UNAVAILABLE');
      expect(Number(res.headers['retry-after'])).toBeGreaterThan(0);
      expect(res.body).not.toMatch(/ECONNREFUSED|127\.0\.0\.1/);
      expect((await app.inject({ method: 'GET', url: '/healthz' })).statusCode).toBe(200);
    } finally {
      await app.close();
      await queue.close();
      await db.close();
    }
  });

  it('answers 503 in about the connect timeout when Postgres accepts connections but never answers', async () => {
    // A listener that takes the TCP connection and says nothing: a hung server or a half-open path.
    const sockets = new Set<Socket>();
    const silent = createServer((socket) => sockets.add(socket));
    await new Promise<void>((resolve) => silent.listen(0, '127.0.0.1', resolve));
    const { port } = silent.address() as AddressInfo;
    const db = createPgDb({ connectionString: `postgres://postgres@127.0.0.1:${port}/nothing`, connectTimeoutMs: 300 });
    const queue = new InProcessQueue({ concurrency: 1, defaultTimeoutMs: 1000, log: createLogger('silent') });
    const app = Fastify();
    await app.register(errorHandler);
    await app.register(healthRoutes, { db, queue, dbTimeoutMs: 300 });
    app.get('/write', async () => db.transaction((tx) => tx.query('SELECT 1')));
    try {
      for (const url of ['/readyz', '/write']) {
        const start = Date.now();
        const res = await app.inject({ method: 'GET', url });
        expect(Date.now() - start, url).toBeLessThan(1500);
        expectErrorShape(res.json(), 503, 'SERVICE_UNAVAILABLE');
        expect(Number(res.headers['retry-after'])).toBeGreaterThan(0);
      }
      expect(sockets.size).toBeGreaterThan(0);
    } finally {
      await app.close();
      await queue.close();
      await db.close();
      for (const socket of sockets) socket.destroy();
      await new Promise((resolve) => silent.close(resolve));
    }
  });
});
