// The local embedder runs the built worker entry (dist/workers) and the offline check imports
// dist/src: `npm test` builds first; run `npm run build` before running this file with vitest.
import { spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { createServer, type IncomingHttpHeaders, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { embedWithin, GatewayEmbedder, LocalEmbedder, QueryEmbedder, type Embedder } from '../../src/embeddings/embedder.js';
import { ModelGateway } from '../../src/platform/gateway.js';
import { DependencyUnavailableError } from '../../src/platform/errors.js';
import { WorkerPool } from '../../src/platform/pool.js';
import { projectRoot } from '../../src/platform/project-root.js';

const OAT = 'The customer prefers oat milk in coffee';
const PARAPHRASE = 'what milk does the customer like';
const UNRELATED = [
  'The quarterly tax filing deadline is the fifteenth of April',
  'The football match ended two to one after extra time',
  'ERROR 502 upstream timed out while reading response header from server logs',
];

const dot = (a: Float32Array, b: Float32Array) => a.reduce((sum, v, i) => sum + v * b[i]!, 0);
const norm = (v: Float32Array) => Math.sqrt(dot(v, v));
const newPool = () => new WorkerPool({ maxThreads: 2, maxQueue: 64, taskTimeoutMs: 60_000 });

describe('the local embedder', () => {
  const pools: WorkerPool[] = [];
  let local: LocalEmbedder;
  beforeAll(() => {
    pools.push(newPool());
    local = new LocalEmbedder(pools[0]!);
  });
  afterAll(() => Promise.all(pools.map((pool) => pool.destroy())));

  it('makes one 512-dimension unit vector per text', async () => {
    const vectors = await local.embed([OAT, ...UNRELATED, '']);
    expect(local.dimensions).toBe(512);
    expect(vectors).toHaveLength(5);
    expect(vectors[4]).toHaveLength(512);
    for (const v of vectors.slice(0, 4)) {
      expect(v).toHaveLength(512);
      expect(Math.abs(norm(v) - 1)).toBeLessThan(1e-4);
    }
  });

  it('answers an empty batch with no vectors', async () => {
    await expect(local.embed([])).resolves.toEqual([]);
  });

  it('is deterministic: the same text gives identical vectors, on one pool and across two', async () => {
    const [first] = await local.embed([OAT]);
    const [again] = await local.embed([OAT]);
    expect(Array.from(again!)).toEqual(Array.from(first!));
    const other = newPool();
    pools.push(other);
    const [elsewhere] = await new LocalEmbedder(other).embed([OAT]);
    expect(Array.from(elsewhere!)).toEqual(Array.from(first!));
  });

  it('keeps batch order: embedding [a, b, c] equals embedding each alone', async () => {
    const texts = [OAT, UNRELATED[0]!, UNRELATED[1]!];
    const batch = await local.embed(texts);
    for (const [i, text] of texts.entries()) {
      const [alone] = await local.embed([text]);
      for (let d = 0; d < 512; d++) expect(Math.abs(batch[i]![d]! - alone![d]!)).toBeLessThan(1e-5);
    }
  });

  it('keeps order across more texts than one pool task takes', async () => {
    const texts = Array.from({ length: 70 }, (_, i) => `note number ${i}: ${UNRELATED[i % 3]}`);
    const batch = await local.embed(texts);
    expect(batch).toHaveLength(70);
    const [last] = await local.embed([texts[69]!]);
    expect(dot(batch[69]!, last!)).toBeGreaterThan(0.9999);
  });

  it('embeds texts of mixed lengths (chunked by length) to the vectors each has alone, in the caller\'s order', async () => {
    // Long and short interleaved, over three pool tasks: the embedder groups them by length and
    // puts every vector back in its text's place.
    const texts = Array.from({ length: 70 }, (_, i) => (i % 2 === 0 ? `${UNRELATED[i % 3]} `.repeat(1 + (i % 7)) : `short ${i}`).trim());
    const batch = await local.embed(texts);
    for (const i of [0, 1, 2, 33, 34, 68, 69]) {
      const [alone] = await local.embed([texts[i]!]);
      expect(dot(batch[i]!, alone!), `text ${i}`).toBeGreaterThan(1 - 1e-4);
    }
    // Distinct texts, distinct vectors: nothing landed in another text's place.
    expect(dot(batch[0]!, batch[1]!)).toBeLessThan(0.99);
  });

  it('puts a paraphrase closer to its fact than to unrelated texts', async () => {
    const [query, fact, ...others] = await local.embed([PARAPHRASE, OAT, ...UNRELATED]);
    const toFact = dot(query!, fact!);
    for (const other of others) expect(toFact).toBeGreaterThan(dot(query!, other) + 0.05);
  });
});

describe('LocalEmbedder with a background pool', () => {
  const interactive = newPool();
  const background = new WorkerPool({ maxThreads: 1, maxQueue: 64, taskTimeoutMs: 60_000, niceness: 10 });
  afterAll(() => Promise.all([interactive.destroy(), background.destroy()]));

  it('embeds background work in the background pool, the same vectors as in the other', async () => {
    const local = new LocalEmbedder(interactive, background);
    const [behind] = await local.embed([OAT], { background: true });
    expect(background.size.threads).toBe(1);
    expect(interactive.size.threads).toBe(0);
    const [now] = await local.embed([OAT]);
    expect(interactive.size.threads).toBeGreaterThanOrEqual(1);
    expect(Array.from(behind!)).toEqual(Array.from(now!));
  });

  it('stays ready for a write while the background pool is busy', async () => {
    const local = new LocalEmbedder(interactive, background);
    const busy = local.embed(Array.from({ length: 64 }, (_, i) => `a long backlog of writes to embed ${i}`), { background: true });
    expect(background.hasFreeThread).toBe(false);
    expect(local.ready).toBe(true);
    expect(await embedWithin(local, [OAT], 5_000)).toHaveLength(1);
    await busy;
  });
});

describe('QueryEmbedder', () => {
  const pool = newPool();
  afterAll(() => pool.destroy());

  it('caches: asking for the same text again returns the same vector without embedding again', async () => {
    const inner = new LocalEmbedder(pool);
    let calls = 0;
    const counting: Embedder = { model: inner.model, dimensions: inner.dimensions, ready: true, warm: async () => {}, embed: (texts) => (calls++, inner.embed(texts)) };
    const queries = new QueryEmbedder(counting);
    const first = await queries.embedQuery(PARAPHRASE);
    const second = await queries.embedQuery(PARAPHRASE);
    expect(second).toBe(first);
    expect(calls).toBe(1);
    const other = await queries.embedQuery(OAT);
    expect(other).not.toBe(first);
    expect(calls).toBe(2);
  });
});

const CAN_UNSHARE = spawnSync('unshare', ['--net', 'true']).status === 0;
const OFFLINE_TITLE = CAN_UNSHARE
  ? 'works with the network disabled'
  : 'works with the network disabled (skipped: `unshare --net true` fails on this machine; it needs root or user namespaces)';

describe('embedWithin: an embedding for a write that waits for it', () => {
  const pool = new WorkerPool({ maxThreads: 1, maxQueue: 64, taskTimeoutMs: 60_000 });
  afterAll(() => pool.destroy());
  // An embedder that answers at once, fails at once, or never answers: which side of the budget it
  // lands on does not depend on how fast the machine runs.
  const fake = (ready: boolean, answer: 'at once' | 'fails' | 'never'): Embedder => ({
    model: 'fake',
    dimensions: 1,
    ready,
    warm: async () => {},
    embed: (texts) =>
      answer === 'never' ? new Promise(() => {}) : answer === 'fails' ? Promise.reject(new Error('down')) : Promise.resolve(texts.map(() => Float32Array.of(1))),
  });

  it('answers the vectors when the embedder is free and quick', async () => {
    const local = new LocalEmbedder(pool);
    await local.embed(['warm the thread up']);
    // A budget no warm thread embedding one text can miss, however loaded the machine.
    const vectors = await embedWithin(local, [OAT], 60_000);
    expect(vectors).toHaveLength(1);
    expect(Array.from(vectors![0]!)).toEqual(Array.from((await local.embed([OAT]))[0]!));
  });

  it('does not even ask when no pool thread is free', async () => {
    const local = new LocalEmbedder(pool);
    const busy = pool.run('embed', { texts: Array.from({ length: 200 }, (_, i) => `keeps the only thread busy ${i}`) });
    expect(local.ready).toBe(false);
    await busy;
    expect(local.ready).toBe(true);
    let asked = 0;
    const notReady: Embedder = { ...fake(false, 'at once'), embed: async (texts) => (asked++, texts.map(() => Float32Array.of(1))) };
    expect(await embedWithin(notReady, ['x'], 5_000)).toBeUndefined();
    expect(asked).toBe(0);
  });

  it('answers undefined past the budget, and when the embedder fails', async () => {
    expect(await embedWithin(fake(true, 'never'), ['x'], 20)).toBeUndefined();
    expect(await embedWithin(fake(true, 'fails'), ['x'], 60_000)).toBeUndefined();
    expect(await embedWithin(fake(true, 'at once'), ['x'], 60_000)).toEqual([Float32Array.of(1)]);
    expect(await embedWithin(fake(true, 'at once'), [], 60_000)).toBeUndefined();
  });
});

describe('the local embedder offline', () => {
  it.skipIf(!CAN_UNSHARE)(OFFLINE_TITLE, async () => {
    const dist = join(projectRoot(), 'dist', 'src');
    const dir = mkdtempSync(join(tmpdir(), 'lattice-offline-'));
    const script = join(dir, 'embed-offline.mjs');
    writeFileSync(
      script,
      `import { networkInterfaces } from 'node:os';
import { WorkerPool } from ${JSON.stringify(pathToFileURL(join(dist, 'platform', 'pool.js')).href)};
import { LocalEmbedder } from ${JSON.stringify(pathToFileURL(join(dist, 'embeddings', 'embedder.js')).href)};
const pool = new WorkerPool({ maxThreads: 1, maxQueue: 4, taskTimeoutMs: 60000 });
try {
  const [v] = await new LocalEmbedder(pool).embed([${JSON.stringify(OAT)}]);
  const up = Object.entries(networkInterfaces()).filter(([, addrs]) => (addrs ?? []).some((a) => !a.internal)).map(([name]) => name);
  console.log(JSON.stringify({ length: v.length, norm: Math.hypot(...v), head: Array.from(v.subarray(0, 8)), up }));
} finally {
  await pool.destroy();
}
`,
    );
    try {
      const child = spawnSync('unshare', ['--net', process.execPath, script], { encoding: 'utf8', timeout: 120_000 });
      expect(child.stderr).toBe('');
      expect(child.status).toBe(0);
      const out = JSON.parse(child.stdout.trim().split('\n').pop()!);
      expect(out.up).toEqual([]);
      expect(out.length).toBe(512);
      expect(out.norm).toBeCloseTo(1, 4);
      const pool = newPool();
      try {
        const [here] = await new LocalEmbedder(pool).embed([OAT]);
        expect(out.head).toEqual(Array.from(here!.subarray(0, 8)));
      } finally {
        await pool.destroy();
      }
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});

describe('GatewayEmbedder against an OpenAI-compatible server', () => {
  const DIMS = 6;
  let server: Server;
  let base: string;
  let mode: 'in-order' | 'reversed' | 'wrong-dimension' | 'error' = 'in-order';
  const seen: { url?: string; headers?: IncomingHttpHeaders; body?: { model: string; input: string[] } } = {};

  /** Deterministic and deliberately not unit length, so normalising shows. */
  const raw = (text: string) => Array.from({ length: DIMS }, (_, d) => ((text.length * (d + 3)) % 11) + 1);
  const unit = (text: string) => {
    const v = raw(text);
    const n = Math.hypot(...v);
    return v.map((x) => x / n);
  };

  beforeAll(async () => {
    server = createServer((req, res) => {
      let text = '';
      req.on('data', (chunk) => (text += chunk));
      req.on('end', () => {
        Object.assign(seen, { url: req.url, headers: req.headers, body: JSON.parse(text) });
        if (req.method !== 'POST' || req.url !== '/v1/embeddings' || mode === 'error') {
          res.writeHead(req.url === '/v1/embeddings' ? 500 : 404).end('{"error":"boom"}');
          return;
        }
        const input: string[] = seen.body!.input;
        let data = input.map((t, index) => ({ object: 'embedding', index, embedding: mode === 'wrong-dimension' ? [...raw(t), 1] : raw(t) }));
        if (mode === 'reversed') data = data.reverse();
        res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify({ object: 'list', data, model: seen.body!.model }));
      });
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    base = `http://127.0.0.1:${(server.address() as AddressInfo).port}/v1`;
  });
  afterAll(() => new Promise<void>((resolve) => server.close(() => resolve())));

  /** One try, so that a failure is reported at once (the gateway's retries are its own test's). */
  const client = (url: string, apiKey: string | undefined, timeoutMs: number) =>
    new ModelGateway({ url, apiKey, timeoutMs, models: { chat: 'c', vision: 'v', transcription: 't' }, maxAttempts: 1, retryBaseMs: 0 });
  const gateway = (apiKey?: string) => new GatewayEmbedder(client(`${base}/`, apiKey, 5000), 'text-embedding-test', DIMS);
  const texts = ['a', 'bb', 'the longest of the three'];

  it('posts the model and the texts with the bearer key, and returns unit vectors in input order', async () => {
    mode = 'in-order';
    const vectors = await gateway('sk-test-123').embed(texts);
    expect(seen.url).toBe('/v1/embeddings');
    expect(seen.headers?.authorization).toBe('Bearer sk-test-123');
    expect(seen.body).toEqual({ model: 'text-embedding-test', input: texts });
    expect(vectors.map((v) => Array.from(v))).toEqual(texts.map((t) => unit(t).map((x) => expect.closeTo(x, 6))));
  });

  it('sends no Authorization header without a key', async () => {
    mode = 'in-order';
    await gateway().embed(['x']);
    expect(seen.headers?.authorization).toBeUndefined();
  });

  it('puts vectors back in input order when the server answers out of order', async () => {
    mode = 'reversed';
    const vectors = await gateway().embed(texts);
    for (const [i, t] of texts.entries()) expect(Array.from(vectors[i]!)).toEqual(unit(t).map((x) => expect.closeTo(x, 6)));
  });

  it.each([
    ['an embedding of the wrong dimension', 'wrong-dimension', /not 6 numbers/],
    ['a 500 answer', 'error', /answered 500/],
  ] as const)('throws DependencyUnavailableError on %s', async (_label, m, message) => {
    mode = m;
    const error: unknown = await gateway().embed(texts).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(DependencyUnavailableError);
    expect(error).toMatchObject({ code: 'SERVICE_UNAVAILABLE', statusCode: 503, message: expect.stringMatching(message) });
  });

  it('throws DependencyUnavailableError when nothing listens', async () => {
    const closed = new GatewayEmbedder(client('http://127.0.0.1:1/v1', undefined, 2000), 'm', DIMS);
    await expect(closed.embed(['x'])).rejects.toBeInstanceOf(DependencyUnavailableError);
  });
});
