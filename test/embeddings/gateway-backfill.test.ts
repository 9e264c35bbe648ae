// The gateway embedder as the configured alternative, end to end, and the column dimension that
// the first boot fixes for the deployment.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createLattice } from '../../src/modules.js';
import { EmbeddingDimensionMismatch } from '../../src/memory/search/dimension.js';
import { countEmbedded, insertMemories, readEmbedding } from '../../src/memory/store.js';
import { newId } from '../../src/platform/ids.js';
import { createLogger } from '../../src/platform/logger.js';
import { createHarness, testConfig, type Harness } from '../helpers/harness.js';
import { startModelGateway, type ModelGateway } from '../helpers/model-gateway.js';

describe('backfill with EMBEDDING_PROVIDER=gateway', () => {
  let gateway: ModelGateway;
  let h: Harness;
  beforeAll(async () => {
    gateway = await startModelGateway({ dimensions: 16 });
    h = await createHarness({
      env: {
        EMBEDDING_PROVIDER: 'gateway',
        MODEL_GATEWAY_URL: gateway.url,
        MODEL_GATEWAY_API_KEY: 'gw-secret',
        EMBEDDING_MODEL: 'test-embed',
        EMBEDDING_DIMENSIONS: '16',
      },
    });
  });
  afterAll(async () => {
    await h?.close();
    await gateway?.close();
  });

  it('embeds through the gateway with the configured model and key, into a 16-dimension column', async () => {
    const p = await h.project();
    await insertMemories(h.db, [
      { id: newId('mem'), projectId: p.projectId, content: 'prefers oat milk' },
      { id: newId('mem'), projectId: p.projectId, content: 'lives in Berlin' },
    ]);
    const res = await h.call('POST', p.projectId, '/admin/memory/embeddings/backfill', { body: {} });
    expect(res.statusCode).toBe(200);
    expect(res.json()).toMatchObject({ embedded: 2, remaining: 0, etaSeconds: 0 });
    const call = gateway.requests.find((r) => r.path === '/v1/embeddings')!;
    expect(call.authorization).toBe('Bearer gw-secret');
    expect(call.body).toMatchObject({ model: 'test-embed', input: expect.arrayContaining(['prefers oat milk', 'lives in Berlin']) });
    const { rows } = await h.db.query<{ id: string; model: string }>('SELECT id, embedding_model AS model FROM memories WHERE project_id = $1', [p.projectId]);
    expect(rows.every((r) => r.model === 'test-embed')).toBe(true);
    const vector = await readEmbedding(h.db, p.projectId, rows[0]!.id);
    expect(vector).toHaveLength(16);
    expect(Math.hypot(...vector!)).toBeCloseTo(1, 5);
    expect(await countEmbedded(h.db, p.projectId)).toMatchObject({ total: 2, embedded: 2 });
  });

  it('refuses to boot with another dimension on the same database, naming both', async () => {
    const config = testConfig(h.database, { EMBEDDING_DIMENSIONS: '512' });
    const error = await createLattice(config, { log: createLogger('silent'), db: h.db }).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(EmbeddingDimensionMismatch);
    expect((error as Error).message).toMatch(/EMBEDDING_DIMENSIONS is 512 but the database stores 16-dimension embeddings/);
  });
});
