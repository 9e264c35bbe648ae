// A Redis outage, for real: a redis-server of this test's own on a loopback port, stopped and
// started again under the API. Requests fail fast (503 with Retry-After within about the command
// timeout) or succeed when their write does not need the queue; nothing hangs; the producer
// reconnects by itself.
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createHarness, type Harness } from '../helpers/harness.js';
import { reservedPort } from '../helpers/processes.js';
import { startReceiver, type Receiver } from '../helpers/webhook-receiver.js';

const hasRedis = spawnSync('redis-server', ['--version']).status === 0;
const JOB_TIMEOUT_MS = 5000;

function startRedis(port: number): Promise<ChildProcess> {
  const child = spawn('redis-server', ['--port', String(port), '--bind', '127.0.0.1', '--save', '', '--appendonly', 'no'], { stdio: 'pipe' });
  return new Promise((resolve, reject) => {
    let out = '';
    child.stdout!.on('data', (d) => {
      out += d.toString();
      if (/Ready to accept connections/.test(out)) resolve(child);
    });
    child.on('exit', (code) => reject(new Error(`redis-server exited ${code}: ${out}`)));
  });
}

const stopRedis = (child: ChildProcess) =>
  new Promise<void>((resolve) => {
    child.once('exit', () => resolve());
    child.kill('SIGKILL');
  });

describe.skipIf(!hasRedis)('a Redis outage under the API', () => {
  let h: Harness;
  let port: number;
  let redis: ChildProcess;
  let project: { projectId: string; apiKey: string };
  // A webhook receiver that refuses every first delivery of a fire (500), so that its retry is
  // what must survive the outage.
  let sink: Receiver;

  beforeAll(async () => {
    port = await reservedPort();
    redis = await startRedis(port);
    sink = await startReceiver((res, _n, req) => res.writeHead(req.headers['webhook-id'] && sink.received.filter((r) => r.headers['webhook-id'] === req.headers['webhook-id']).length === 1 ? 500 : 204).end());
    h = await createHarness({
      env: {
        REDIS_URL: `redis://127.0.0.1:${port}`,
        QUEUE_COMMAND_TIMEOUT_MS: '500',
        JOB_TIMEOUT_MS: String(JOB_TIMEOUT_MS),
        AP_MEMORY_OBSERVE_ASYNC_ENABLED: 'true',
        WEBHOOK_ALLOWED_TARGETS: '127.0.0.1',
        WEBHOOK_RETRY_BASE_MS: '200',
      },
    });
    project = await h.project();
  }, 60_000);
  afterAll(async () => {
    await h?.close();
    await sink?.close();
    if (redis.exitCode === null) await stopRedis(redis);
  });

  const timed = async <T>(fn: () => Promise<T>) => {
    const start = Date.now();
    const result = await fn();
    return { result, ms: Date.now() - start };
  };

  it('answers fast while Redis is down, keeps committed writes, and recovers when it returns', async () => {
    expect((await h.app.inject({ method: 'GET', url: '/readyz' })).statusCode).toBe(200);
    // The encoder loads its model at its first embedding, seconds on a busy machine: done now, so
    // that the backfill after the outage measures the queue's recovery, not that load.
    expect(await h.apis.embeddings.embedQuery('warm the encoder')).toHaveLength(h.config.embeddingDimensions);
    await stopRedis(redis);

    // Readiness: 503 naming the queue, with Retry-After, well within a probe's timeout.
    const ready = await timed(() => h.app.inject({ method: 'GET', url: '/readyz' }));
    expect(ready.result.statusCode).toBe(503);
    expect(ready.result.json().message).toMatch(/queue \(Redis\)/);
    expect(ready.result.headers['retry-after']).toBeDefined();
    expect(ready.ms).toBeLessThan(3000);

    // A write that only needs a follow-up job: stored, answered, embedded later by the sweep.
    const saved = await timed(() => h.call('POST', project.projectId, '/admin/memory', { body: { content: 'Saved while Redis was down' } }));
    expect(saved.result.statusCode).toBe(201);
    expect(saved.ms).toBeLessThan(3000);
    const stored = await h.db.query('SELECT 1 FROM memories WHERE id = $1', [saved.result.json().id]);
    expect(stored.rows).toHaveLength(1);

    // Work that needs the queue: 503 with Retry-After, in bounded time.
    const backfill = await timed(() => h.call('POST', project.projectId, '/admin/memory/embeddings/backfill', { body: {} }));
    expect(backfill.result.statusCode).toBe(503);
    expect(backfill.result.headers['retry-after']).toBeDefined();
    expect(backfill.ms).toBeLessThan(3000);

    // A write whose acceptance is the queue (observe with the async buffer): 503, and nothing stored.
    const observed = await timed(() => h.call('POST', project.projectId, '/memory/observe', { body: { text: 'I moved to Lisbon during the Redis outage.' } }));
    expect(observed.result.statusCode).toBe(503);
    expect(observed.result.headers['retry-after']).toBeDefined();
    expect(observed.ms).toBeLessThan(3000);
    const lisbon = await h.db.query(`SELECT 1 FROM memories WHERE project_id = $1 AND content ILIKE '%Lisbon%'`, [project.projectId]);
    expect(lisbon.rows).toHaveLength(0);

    // Redis returns on the same port: the producer reconnects by itself.
    redis = await startRedis(port);
    const start = Date.now();
    let status = 0;
    while (Date.now() - start < 60_000) {
      status = (await h.app.inject({ method: 'GET', url: '/readyz' })).statusCode;
      if (status === 200) break;
      await new Promise((r) => setTimeout(r, 200));
    }
    expect(status).toBe(200);
    const after = await h.call('POST', project.projectId, '/admin/memory/embeddings/backfill', { body: {} });
    expect(after.statusCode, after.body).toBe(200);
    const queued = await h.call('POST', project.projectId, '/memory/observe', { body: { text: 'I moved to Porto once Redis was back.' } });
    expect(queued.statusCode).toBe(200);
    expect(queued.json().queued.jobId).toBeTruthy();
  }, 120_000);

  it('after Redis returns, the work acknowledged during the outage settles within 15 s: embeddings, and a webhook retry', async () => {
    const p = await h.project();
    const rule = await h.call('POST', p.projectId, '/memory-alerts', { body: { name: 'outage', trigger: { kind: 'engine-event', eventTypes: ['outage.settle'] }, notify: [{ kind: 'webhook', url: sink.url }] } });
    expect(rule.statusCode, rule.body).toBe(201);
    expect(await h.apis.embeddings.embedQuery('warm the encoder')).toHaveLength(h.config.embeddingDimensions);
    await stopRedis(redis);

    // Acknowledged while Redis is down: five memories (their embedding job could not be enqueued)
    // and an event whose webhook answered 500 (its retry could not be enqueued).
    const ids: string[] = [];
    for (const content of ['Walks the dog at six', 'Prefers aisle seats', 'Allergic to cats', 'Learning Portuguese', 'Runs on Sundays']) {
      const saved = await h.call('POST', p.projectId, '/admin/memory', { body: { content } });
      expect(saved.statusCode, saved.body).toBe(201);
      ids.push(saved.json().id);
    }
    const emitted = await h.call('POST', p.projectId, '/lattice/events/emit', { body: { eventType: 'outage.settle', dedupeKey: 'settle-1' } });
    expect(emitted.statusCode, emitted.body).toBe(200);
    expect(emitted.json().alertDispatches).toBe(1);
    const fires = () => h.call('GET', p.projectId, `/memory-alerts/${rule.json().id}/fires`).then((r) => r.json() as { id: string; deliveryResults: { ok: boolean; attempts: number }[] }[]);
    // The queue could not take the delivery job: the process made the first attempt itself.
    await expect.poll(async () => (await fires())[0]!.deliveryResults[0]!.attempts, { timeout: 60_000, interval: 20 }).toBe(1);
    expect((await fires())[0]!.deliveryResults[0]).toMatchObject({ ok: false, attempts: 1 });
    // Past the retry's backoff (200 ms) and its grace (1 s): only a sweep can settle it now.
    await new Promise((r) => setTimeout(r, 2000));

    redis = await startRedis(port);
    const back = Date.now();
    const settled = async () => {
      const { rows } = await h.db.query<{ n: number }>('SELECT count(*)::int AS n FROM memories WHERE id = ANY($1::text[]) AND embedding IS NOT NULL', [ids]);
      return { embedded: rows[0]!.n, delivered: (await fires())[0]!.deliveryResults[0]!.ok };
    };
    await expect.poll(settled, { timeout: 60_000, interval: 200 }).toEqual({ embedded: 5, delivered: true });
    const took = Date.now() - back;
    // The sweeps' own schedule is a minute (embeddings) and 10 s (deliveries): within 15 s means
    // the return of the queue set them off.
    expect(took, `settled ${took} ms after Redis returned`).toBeLessThan(15_000);
    // Posted twice in all: the refused first attempt, and the retry the sweep enqueued once.
    const [fire] = await fires();
    expect(sink.received.filter((r) => r.headers['webhook-id'] === `${fire!.id}.0`)).toHaveLength(2);
  }, 120_000);

  it('under write load, Redis down for 10 s: every answer is a success or a prompt 503, and no acknowledged write is lost', async () => {
    let running = true;
    const outcomes: { path: string; status: number; ms: number; retryAfter?: string; id?: string }[] = [];
    const writes: [string, (n: number) => unknown][] = [
      ['/admin/memory', (n) => ({ content: `Remembered during the Redis outage, item ${n}` })],
      ['/lattice/events/emit', (n) => ({ eventType: 'outage.load', dedupeKey: `redis-${n}` })],
      ['/memory-typed/observations', (n) => ({ observations: [{ id: `obs-redis-${n}`, subjectKind: 'user', subjectExternalId: 'u1', valueNumeric: n }] })],
      ['/admin/memory/embeddings/backfill', () => ({})],
    ];
    const writer = async (w: number) => {
      for (let n = w * 100_000; running; n++) {
        const [path, body] = writes[n % writes.length]!;
        const { result, ms } = await timed(() => h.call('POST', project.projectId, path, { body: body(n) }));
        const json = result.statusCode < 300 ? result.json() : undefined;
        outcomes.push({ path, status: result.statusCode, ms, retryAfter: result.headers['retry-after'] as string | undefined, id: path === '/admin/memory' ? json?.id : undefined });
        await new Promise((r) => setTimeout(r, 20));
      }
    };
    const writers = [0, 1, 2].map(writer);
    await new Promise((r) => setTimeout(r, 1000));
    await stopRedis(redis);
    // Down for 10 s at least, and until a backfill (the write that needs the queue) has met the outage.
    const down = Date.now();
    const refusedBackfills = () => outcomes.filter((o) => o.path === '/admin/memory/embeddings/backfill' && o.status === 503).length;
    while (Date.now() - down < 10_000 || refusedBackfills() === 0) {
      if (Date.now() - down > 60_000) throw new Error('no backfill met the outage within 60 s');
      await new Promise((r) => setTimeout(r, 100));
    }
    redis = await startRedis(port);
    const back = Date.now();
    while (Date.now() - back < 60_000 && (await h.app.inject({ method: 'GET', url: '/readyz' })).statusCode !== 200) await new Promise((r) => setTimeout(r, 200));
    await new Promise((r) => setTimeout(r, 1000));
    running = false;
    await Promise.all(writers);

    for (const o of outcomes) {
      expect([200, 201, 202, 503], `${o.path} answered ${o.status}`).toContain(o.status);
      // Nothing waits for Redis: a write that needs no job answers as it would. A backfill is
      // refused within the command timeout while Redis is down; while it is up it waits for its job
      // to embed what the writers left, real work bounded by the job timeout (past it, 503
      // JOB_TIMEOUT), not by Redis.
      const bound = o.path === '/admin/memory/embeddings/backfill' ? JOB_TIMEOUT_MS + 3000 : 3000;
      expect(o.ms, `${o.path} took ${o.ms} ms and answered ${o.status}`).toBeLessThan(bound);
      if (o.status === 503) expect(Number(o.retryAfter)).toBeGreaterThan(0);
    }
    // Writes that only need a follow-up job never failed; the queue-backed one did, while Redis was down.
    expect(outcomes.filter((o) => o.path !== '/admin/memory/embeddings/backfill' && o.status === 503)).toEqual([]);
    expect(outcomes.filter((o) => o.path === '/admin/memory/embeddings/backfill' && o.status === 503).length).toBeGreaterThan(0);
    const ids = outcomes.filter((o) => o.id).map((o) => o.id!);
    const stored = await h.db.query<{ n: number }>('SELECT count(*)::int AS n FROM memories WHERE id = ANY($1::text[])', [ids]);
    expect(stored.rows[0]!.n).toBe(ids.length);
  }, 240_000);
});

describe.skipIf(!hasRedis)('a Redis slow to answer at start-up', () => {
  it('starts once Redis answers again, though its first schedule upserts time out', async () => {
    const port = await reservedPort();
    const redis = await startRedis(port);
    let h: Harness | undefined;
    try {
      // Redis holds every write command for 3 s (CLIENT PAUSE ... WRITE): start-up's schedule
      // upserts each time out after 200 ms until the pause ends. Reads, such as the readiness
      // checks, still answer. Before start-up sent them again, the start failed with "Command timed out".
      const paused = spawnSync('redis-cli', ['-p', String(port), 'CLIENT', 'PAUSE', '3000', 'WRITE'], { encoding: 'utf8' });
      expect(paused.stdout.trim(), paused.stderr).toBe('OK');
      h = await createHarness({ env: { REDIS_URL: `redis://127.0.0.1:${port}`, QUEUE_COMMAND_TIMEOUT_MS: '200' } });
      const project = await h.project();
      const saved = await h.call('POST', project.projectId, '/admin/memory', { body: { content: 'saved once the queue answered', subject: { kind: 'user', externalId: 'u1' } } });
      expect(saved.statusCode, saved.body).toBe(201);
      const schedulers = spawnSync('redis-cli', ['-p', String(port), '--scan', '--pattern', `${h.config.queuePrefix}:*:repeat`], { encoding: 'utf8' });
      expect(schedulers.stdout.trim().split('\n').filter(Boolean).length).toBeGreaterThan(0);
    } finally {
      await h?.close();
      if (redis.exitCode === null) await stopRedis(redis);
    }
  }, 60_000);
});
