import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { newId } from '../../src/platform/ids.js';
import { countEmbedded, insertMemories, readEmbedding } from '../../src/memory/store.js';
import { backend, createHarness, queueKind, type Harness } from '../helpers/harness.js';

const FACTS = [
  'The customer prefers oat milk in coffee',
  'She renews her gym membership every January',
  'Ships to the Berlin office on Fridays',
  'Allergic to peanuts',
  'Asked twice about the premium plan price',
];

function memories(projectId: string, n: number) {
  return Array.from({ length: n }, (_, i) => ({ id: newId('mem'), projectId, content: `${FACTS[i % FACTS.length]} (${i})` }));
}

describe(`embedding backfill on ${backend} with the ${queueKind} queue`, () => {
  let h: Harness;
  let a: { projectId: string; apiKey: string };
  let b: { projectId: string; apiKey: string };

  beforeAll(async () => {
    h = await createHarness();
    a = await h.project();
    b = await h.project();
    await insertMemories(h.db, memories(a.projectId, 40));
    await insertMemories(h.db, memories(b.projectId, 7));
  });
  afterAll(() => h?.close());

  it('embeds in batches until it answers 0, reporting what remains and when it will be done, touching only the caller\'s project', async () => {
    const counts: number[] = [];
    const remaining: number[] = [];
    for (let i = 0; i < 5; i++) {
      const res = await h.call('POST', a.projectId, '/admin/memory/embeddings/backfill', { body: { batch: 16 } });
      expect(res.statusCode).toBe(200);
      const body = res.json();
      counts.push(body.embedded);
      remaining.push(body.remaining);
      if (body.embedded > 0) {
        // The ETA is what remains at this call's own rate.
        expect(body.embeddedPerSecond).toBeGreaterThan(0);
        // (The answer's rate is rounded to 0.1/s, the ETA is computed before rounding: hence the 2%.)
        if (body.remaining === 0) expect(body.etaSeconds).toBe(0);
        else {
          expect(Number.isInteger(body.etaSeconds) && body.etaSeconds >= 1).toBe(true);
          expect(Math.abs(body.etaSeconds - body.remaining / body.embeddedPerSecond)).toBeLessThanOrEqual(1 + 0.02 * body.etaSeconds);
        }
      } else {
        expect(body).toMatchObject({ remaining: 0, embeddedPerSecond: 0, etaSeconds: 0 });
      }
      if (body.embedded === 0) break;
    }
    expect(counts).toEqual([16, 16, 8, 0]);
    expect(remaining).toEqual([24, 8, 0, 0]);
    expect(await countEmbedded(h.db, a.projectId)).toMatchObject({ total: 40, embedded: 40 });
    expect(await countEmbedded(h.db, b.projectId)).toMatchObject({ total: 7, embedded: 0 });
  });

  it('stores unit-length vectors of the configured dimension', async () => {
    const [{ id }] = (await h.db.query<{ id: string }>('SELECT id FROM memories WHERE project_id = $1 LIMIT 1', [a.projectId])).rows as [{ id: string }];
    const vector = await readEmbedding(h.db, a.projectId, id);
    expect(vector).toHaveLength(512);
    expect(Math.hypot(...vector!)).toBeCloseTo(1, 4);
  });

  it('defaults the batch when the body is absent, and is also served under /v1', async () => {
    const res = await h.app.inject({
      method: 'POST',
      url: `/v1/projects/${b.projectId}/admin/memory/embeddings/backfill`,
      headers: { authorization: `Bearer ${b.apiKey}` },
    });
    expect(res.statusCode).toBe(200);
    expect(res.json()).toMatchObject({ embedded: 7, remaining: 0, etaSeconds: 0 });
  });

  it.each([
    [{ batch: 0 }, 'body.batch'],
    [{ batch: 10_001 }, 'body.batch'],
    [{ batch: 'many' }, 'body.batch'],
    [{ bacth: 10 }, 'body.bacth'],
  ])('refuses %j with VALIDATION_ERROR naming %s', async (body, path) => {
    const res = await h.call('POST', a.projectId, '/admin/memory/embeddings/backfill', { body });
    expect(res.statusCode).toBe(400);
    expect(res.json().code).toBe('VALIDATION_ERROR');
    expect(res.json().params.errors.map((e: { path: string }) => e.path)).toContain(path);
  });

  it('refuses a READ_MEMORY key with AUTHORIZATION_ERROR', async () => {
    const readKey = await h.key(a.projectId, ['READ_MEMORY']);
    const res = await h.call('POST', a.projectId, '/admin/memory/embeddings/backfill', { apiKey: readKey, body: {} });
    expect(res.statusCode).toBe(403);
    expect(res.json().code).toBe('AUTHORIZATION_ERROR');
  });

  it('answers 404 to project A\'s key on project B\'s path, and embeds nothing there', async () => {
    const c = await h.project();
    await insertMemories(h.db, memories(c.projectId, 3));
    const res = await h.call('POST', c.projectId, '/admin/memory/embeddings/backfill', { apiKey: a.apiKey, body: {} });
    expect(res.statusCode).toBe(404);
    expect(res.json().code).toBe('NOT_FOUND');
    expect(await countEmbedded(h.db, c.projectId)).toMatchObject({ total: 3, embedded: 0 });
  });
});

describe('embedding backfill that outlives its wait', () => {
  let h: Harness;
  afterAll(() => h?.close());

  it('answers 503 JOB_TIMEOUT with Retry-After when the job takes longer than JOB_TIMEOUT_MS, and the job still completes', async () => {
    h = await createHarness({ env: { JOB_TIMEOUT_MS: '100' } });
    const p = await h.project();
    await insertMemories(h.db, memories(p.projectId, 64));
    const res = await h.call('POST', p.projectId, '/admin/memory/embeddings/backfill', { body: { batch: 64 } });
    expect(res.statusCode).toBe(503);
    expect(res.json().code).toBe('JOB_TIMEOUT');
    expect(Number(res.headers['retry-after'])).toBeGreaterThan(0);
    await expect.poll(async () => (await countEmbedded(h.db, p.projectId)).embedded, { timeout: 30_000, interval: 200 }).toBe(64);
  });
});

describe('embedding backfill of a large batch on a small pool', () => {
  let h: Harness;
  afterAll(() => h?.close());

  it('feeds the pool within its bounds instead of overloading it', async () => {
    h = await createHarness({ env: { POOL_MAX_THREADS: '1', POOL_MAX_QUEUE: '1' } });
    const p = await h.project();
    await insertMemories(h.db, memories(p.projectId, 300));
    const res = await h.call('POST', p.projectId, '/admin/memory/embeddings/backfill', { body: { batch: 10_000 } });
    expect(res.statusCode).toBe(200);
    expect(res.json()).toMatchObject({ embedded: 300, remaining: 0, etaSeconds: 0 });
  });
});
