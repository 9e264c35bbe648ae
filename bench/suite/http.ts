// A trivial authenticated route through the whole app against bare fastify answering the same
// path and body with no plugins, both through app.inject (no socket), alternated call by call.
import Fastify from 'fastify';
import { performance } from 'node:perf_hooks';
import { progress, summarise } from '../support.js';
import { addRow, latencyMeasure, type Run } from './common.js';

const WARMUP = 200;

export async function benchRoute(run: Run, calls: number): Promise<void> {
  const { ctx, app, setup } = run;
  const projectId = 'suite-http';
  await ctx.apis.tenancy.createProject(projectId);
  const { apiKey } = await ctx.apis.tenancy.createKey(projectId, ['READ_MEMORY']);
  await ctx.apis.typed.defineAttribute(projectId, { attributeKey: 'heart_rate', dataType: 'numeric', unit: 'bpm' });
  const url = `/api/v1/projects/${projectId}/memory-typed/attributes`;
  const headers = { authorization: `Bearer ${apiKey}` };
  const first = await app.inject({ method: 'GET', url, headers });
  if (first.statusCode !== 200) throw new Error(`GET ${url} answered ${first.statusCode}: ${first.body.slice(0, 200)}`);
  const answer = first.json() as unknown;

  // Bare fastify: the same path, answering the same body, no plugins, no hooks.
  const bare = Fastify();
  bare.get('/api/v1/projects/:projectId/memory-typed/attributes', async () => answer);
  await bare.ready();
  try {
    const call = async (target: typeof app | typeof bare) => {
      const t0 = performance.now();
      const response = await target.inject({ method: 'GET', url, headers });
      const took = performance.now() - t0;
      if (response.statusCode !== 200 || response.body !== first.body) throw new Error(`GET ${url} answered ${response.statusCode}: ${response.body.slice(0, 200)}`);
      return took;
    };
    for (let i = 0; i < WARMUP; i++) {
      await call(app);
      await call(bare);
    }
    progress(`[${setup}] route: ${calls} GET ${url.replace(projectId, '{projectId}')} through the app and ${calls} through bare fastify, alternated`);
    const full: number[] = [];
    const plain: number[] = [];
    for (let i = 0; i < calls; i++) {
      full.push(await call(app));
      plain.push(await call(bare));
      if ((i + 1) % 1000 === 0) progress(`[${setup}] route: ${i + 1}/${calls}`);
    }
    addRow(
      run,
      'GET /memory-typed/attributes (one attribute) with an API key, app.inject',
      latencyMeasure('the app: rate limit, key lookup, permission, validation, the handler\'s read, serialisation', summarise(full)),
      latencyMeasure('bare fastify answering the same path and body, no plugins', summarise(plain)),
      undefined,
      [`${first.body.length}-byte answer; ${ctx.runtime.config.redisUrl ? 'the per-key rate limit counts in Redis' : 'the per-key rate limit counts in memory'}; no socket (app.inject)`],
      'no goal set (no issue set one)',
    );
  } finally {
    await bare.close();
  }
}
