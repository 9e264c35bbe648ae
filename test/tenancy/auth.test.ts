import Fastify, { type FastifyInstance } from 'fastify';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import errorHandler from '../../src/platform/error-handler.js';
import type { AuditRecord, AuditResult } from '../../src/tenancy/index.js';
import { hashKey } from '../../src/tenancy/keys.js';
import { TenancyService } from '../../src/tenancy/service.js';
import { createHarness, type Harness } from '../helpers/harness.js';

/** The start of an audited call's record, completed by its outcome (as the audit log keeps it). */
type Recorded = AuditRecord & Partial<AuditResult>;

const BACKFILL = '/admin/memory/embeddings/backfill';

describe('API keys', () => {
  let h: Harness;
  beforeAll(async () => {
    h = await createHarness();
  });
  afterAll(() => h?.close());

  it('stores only a SHA-256 digest and a visible prefix, never the key', async () => {
    const { projectId, apiKey } = await h.project();
    const rows = (
      await h.db.query<{ prefix: string; key_hash: string }>('SELECT prefix, key_hash FROM api_keys WHERE project_id = $1', [projectId])
    ).rows;
    expect(rows).toHaveLength(1);
    expect(rows[0]!.key_hash).toBe(hashKey(apiKey));
    expect(rows[0]!.key_hash).not.toContain(apiKey);
    expect(apiKey.startsWith(rows[0]!.prefix)).toBe(true);
    expect(rows[0]!.prefix).toHaveLength(12);
    const dump = JSON.stringify((await h.db.query('SELECT * FROM api_keys')).rows);
    expect(dump).not.toContain(apiKey);
  });

  it('makes a different random key every time', async () => {
    const { projectId } = await h.project();
    const keys = await Promise.all(Array.from({ length: 20 }, () => h.key(projectId, ['READ_MEMORY'])));
    expect(new Set(keys).size).toBe(20);
    for (const key of keys) expect(key).toMatch(/^lat_[0-9a-f]{8}_[A-Za-z0-9_-]{43}$/);
  });

  it('answers 401 without a key, with a malformed header, or with an unknown key', async () => {
    const { projectId, apiKey } = await h.project();
    for (const headers of [{}, { authorization: apiKey }, { authorization: 'Basic abc' }, { authorization: `Bearer ${apiKey}x` }]) {
      const res = await h.app.inject({ method: 'POST', url: `/api/v1/projects/${projectId}${BACKFILL}`, headers });
      expect(res.statusCode).toBe(401);
      expect(res.json().code).toBe('AUTHENTICATION_ERROR');
    }
  });

  it('refuses a revoked key with 401, by prefix or id, and keeps other keys working', async () => {
    const { projectId, apiKey } = await h.project();
    const other = await h.key(projectId, ['READ_MEMORY', 'WRITE_MEMORY']);
    expect((await h.call('POST', projectId, BACKFILL, { apiKey })).statusCode).toBe(200);
    const revoked = await h.apis.tenancy.revokeKey(apiKey.slice(0, 12));
    expect(revoked.projectId).toBe(projectId);
    const res = await h.call('POST', projectId, BACKFILL, { apiKey });
    expect(res.statusCode).toBe(401);
    expect(res.json().message).toMatch(/revoked/);
    expect((await h.call('POST', projectId, BACKFILL, { apiKey: other })).statusCode).toBe(200);
  });

  it('a READ_MEMORY key cannot call a WRITE_MEMORY route', async () => {
    const { projectId } = await h.project();
    const readKey = await h.key(projectId, ['READ_MEMORY']);
    const res = await h.call('POST', projectId, BACKFILL, { apiKey: readKey });
    expect(res.statusCode).toBe(403);
    expect(res.json()).toMatchObject({ code: 'AUTHORIZATION_ERROR', params: { required: 'WRITE_MEMORY' } });
  });

  it('answers project A\'s key on project B\'s path exactly as on a project that does not exist', async () => {
    const a = await h.project();
    const b = await h.project();
    const onB = await h.call('POST', b.projectId, BACKFILL, { apiKey: a.apiKey });
    const onNothing = await h.call('POST', 'no-such-project', BACKFILL, { apiKey: a.apiKey });
    expect(onB.statusCode).toBe(404);
    expect(onNothing.statusCode).toBe(404);
    expect(onB.json().code).toBe(onNothing.json().code);
    expect(onB.json().message.replace(b.projectId, 'X')).toBe(onNothing.json().message.replace('no-such-project', 'X'));
  });

  it('checks the key before the body, so an anonymous caller learns nothing of the schema', async () => {
    const { projectId } = await h.project();
    const res = await h.app.inject({ method: 'POST', url: `/api/v1/projects/${projectId}${BACKFILL}`, payload: { batch: -1 } });
    expect(res.statusCode).toBe(401);
  });
});

describe('entitlements and meters', () => {
  let h: Harness;
  let gated: FastifyInstance;
  beforeAll(async () => {
    h = await createHarness();
    // A route gated on the predictions entitlement, behind the same auth plugin as every project route.
    gated = Fastify();
    await gated.register(errorHandler);
    await gated.register(
      async (scope) => {
        await scope.register(h.apis.tenancy.access);
        scope.post('/gated', { config: { permission: 'READ_MEMORY', feature: 'predictions' } }, async () => ({ ok: true }));
      },
      { prefix: '/api/v1/projects/:projectId' },
    );
    await gated.ready();
  });
  afterAll(async () => {
    await gated?.close();
    await h?.close();
  });

  const callGated = (projectId: string, apiKey: string) =>
    gated.inject({ method: 'POST', url: `/api/v1/projects/${projectId}/gated`, headers: { authorization: `Bearer ${apiKey}` } });

  it('refuses a feature outside the plan with FEATURE_DISABLED and an upgrade prompt in the message', async () => {
    const { projectId, apiKey } = await h.project({ plan: 'free' });
    const res = await callGated(projectId, apiKey);
    expect(res.statusCode).toBe(403);
    expect(res.json().code).toBe('FEATURE_DISABLED');
    expect(res.json().message).toMatch(/predictions.*free.*Upgrade to growth/);
    expect(res.json().params).toMatchObject({ feature: 'predictions', plan: 'free', upgradeTo: 'growth' });
  });

  it('admits the same feature on a plan that includes it, and after an upgrade', async () => {
    const growth = await h.project({ plan: 'growth' });
    expect((await callGated(growth.projectId, growth.apiKey)).statusCode).toBe(200);
    const free = await h.project({ plan: 'free' });
    expect((await callGated(free.projectId, free.apiKey)).statusCode).toBe(403);
    await h.apis.tenancy.setPlan(free.projectId, 'growth');
    expect((await callGated(free.projectId, free.apiKey)).statusCode).toBe(200);
  });

  it('honours a per-project override on top of the plan', async () => {
    const { projectId, apiKey } = await h.project({ plan: 'free' });
    await h.apis.tenancy.setPlan(projectId, 'free', { predictions: true });
    expect((await callGated(projectId, apiKey)).statusCode).toBe(200);
  });

  it('never lets concurrent writers pass a quota together, and refuses a whole request that would', async () => {
    const { projectId, apiKey } = await h.project({ plan: 'free' });
    await h.apis.tenancy.setPlan(projectId, 'free', { 'events-ingested': 100 });
    const principal = await h.apis.tenancy.authenticate(apiKey, projectId);
    const results = await Promise.allSettled(Array.from({ length: 25 }, () => h.apis.tenancy.consume(principal, 'events-ingested', 7)));
    const admitted = results.filter((r) => r.status === 'fulfilled').length;
    expect(admitted).toBe(14); // 14 x 7 = 98 <= 100 < 105
    expect(await h.apis.tenancy.usage(projectId, 'events-ingested')).toBe(98);
    const refused = results.find((r) => r.status === 'rejected') as PromiseRejectedResult;
    expect(refused.reason).toMatchObject({ code: 'QUOTA_EXCEEDED', statusCode: 429 });
    expect(refused.reason.retryAfterSeconds).toBeGreaterThan(0);
    await expect(h.apis.tenancy.consume(principal, 'events-ingested', 3)).rejects.toMatchObject({ code: 'QUOTA_EXCEEDED' });
    await h.apis.tenancy.consume(principal, 'events-ingested', 2);
    expect(await h.apis.tenancy.usage(projectId, 'events-ingested')).toBe(100);
  });

  it('meters per calendar month', async () => {
    const { projectId, apiKey } = await h.project({ plan: 'free' });
    await h.apis.tenancy.setPlan(projectId, 'free', { 'events-ingested': 10 });
    const principal = await h.apis.tenancy.authenticate(apiKey, projectId);
    await h.apis.tenancy.consume(principal, 'events-ingested', 10, new Date('2026-10-31T23:59:59Z'));
    await expect(h.apis.tenancy.consume(principal, 'events-ingested', 1, new Date('2026-10-31T23:59:59Z'))).rejects.toMatchObject({ code: 'QUOTA_EXCEEDED' });
    await h.apis.tenancy.consume(principal, 'events-ingested', 10, new Date('2026-11-01T00:00:00Z'));
  });
});

describe('the audit marker', () => {
  let h: Harness;
  const records: Recorded[] = [];
  beforeAll(async () => {
    h = await createHarness();
    h.apis.tenancy.onAudit((record) => {
      // The start of the call's record, completed by its outcome (as the audit log keeps it).
      const entry: Recorded = { ...record };
      records.push(entry);
      return { durable: Promise.resolve(), end: (result) => Object.assign(entry, result) };
    });
  });
  afterAll(() => h?.close());

  const audited = (projectId: string) => records.filter((r) => r.projectId === projectId);

  it('publishes one record per call to an audited route, naming the key, the event type and the outcome', async () => {
    const { projectId } = await h.project();
    const key = (await h.apis.tenancy.listKeys(projectId))[0]!;
    const res = await h.call('POST', projectId, '/memory/search', { body: { query: 'anything' } });
    expect(res.statusCode).toBe(200);
    await expect.poll(() => audited(projectId).length, { timeout: 60_000 }).toBe(1);
    expect(audited(projectId)[0]).toMatchObject({
      keyId: key.id,
      eventType: 'read.search',
      method: 'POST',
      route: '/api/v1/projects/:projectId/memory/search',
      statusCode: 200,
      requestId: expect.any(String),
    });
    // A refused call is recorded with its status too (the key did ask).
    await h.call('GET', projectId, '/admin/memory/mem_missing');
    await expect.poll(() => audited(projectId).map((r) => `${r.eventType} ${r.statusCode}`), { timeout: 60_000 }).toEqual(['read.search 200', 'read.memory 404']);
  });

  it('publishes nothing for a route without the marker, or for a call whose key was refused', async () => {
    const { projectId } = await h.project();
    expect((await h.call('GET', projectId, '/admin/memory/stats')).statusCode).toBe(200);
    expect((await h.call('POST', projectId, '/memory/search', { apiKey: 'lat_nope_nope', body: { query: 'x' } })).statusCode).toBe(401);
    // An audited call made after them is published: had either of them been, its record would
    // stand before this one.
    expect((await h.call('POST', projectId, '/memory/search', { body: { query: 'marker' } })).statusCode).toBe(200);
    await expect.poll(() => audited(projectId).some((r) => r.query === 'marker' && r.statusCode !== undefined), { timeout: 60_000 }).toBe(true);
    expect(audited(projectId)).toEqual([expect.objectContaining({ eventType: 'read.search', statusCode: 200, query: 'marker' })]);
  });

  it('documents the marker in the route description', async () => {
    const doc = (await h.app.inject({ method: 'GET', url: '/openapi.json' })).json();
    expect(doc.paths['/api/v1/projects/{projectId}/admin/memory/search'].post.description).toMatch(/Audited as read\.search\./);
    expect(doc.paths['/api/v1/projects/{projectId}/admin/memory/stats'].get.description ?? '').not.toMatch(/Audited/);
  });

  it('refuses a route whose marker is not read.*, write.* or subject.*', async () => {
    const app = Fastify();
    await app.register(errorHandler);
    const starting = (async () => {
      await app.register(
        async (scope) => {
          await scope.register(h.apis.tenancy.access);
          scope.get('/bad', { config: { permission: 'READ_MEMORY', audit: 'peek.memory' as 'read.memory' } }, async () => ({}));
        },
        { prefix: '/api/v1/projects/:projectId' },
      );
      await app.ready();
    })();
    await expect(starting).rejects.toThrow(/audit "peek\.memory"/);
    await app.close().catch(() => {});
  });
});

describe('the API key cache', () => {
  let h: Harness;
  beforeAll(async () => {
    h = await createHarness({ consumers: false });
  });
  afterAll(() => h?.close());

  it('reuses a resolved key without a query for API_KEY_CACHE_MS, so a revocation by another process applies within it; 0 applies it at once', async () => {
    const { projectId, apiKey } = await h.project();
    const cached = new TenancyService(h.db, 60_000);
    const uncached = new TenancyService(h.db, 0);
    await expect(cached.authenticate(apiKey, projectId)).resolves.toMatchObject({ projectId });
    await expect(uncached.authenticate(apiKey, projectId)).resolves.toMatchObject({ projectId });
    // Another process revokes it: straight in the database, behind both services' backs.
    await h.db.query('UPDATE api_keys SET revoked_at = now() WHERE project_id = $1', [projectId]);
    await expect(cached.authenticate(apiKey, projectId)).resolves.toMatchObject({ projectId });
    await expect(uncached.authenticate(apiKey, projectId)).rejects.toMatchObject({ code: 'AUTHENTICATION_ERROR' });
    // A revocation through the service itself clears its cache at once.
    const { apiKey: second } = await h.project({ id: `${projectId}-b` });
    await cached.authenticate(second, `${projectId}-b`);
    await cached.revokeKey(second.slice(0, 12));
    await expect(cached.authenticate(second, `${projectId}-b`)).rejects.toMatchObject({ code: 'AUTHENTICATION_ERROR' });
  });
});
