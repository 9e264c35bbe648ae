import type { RouteOptions } from 'fastify';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createHarness, type Harness } from '../helpers/harness.js';

describe('OpenAPI', () => {
  let h: Harness;
  const routes: RouteOptions[] = [];
  beforeAll(async () => {
    h = await createHarness({ build: { onRoute: (route) => routes.push(route) } });
  });
  afterAll(() => h?.close());

  it('lists every route the app serves, with its methods', async () => {
    const res = await h.app.inject({ method: 'GET', url: '/openapi.json' });
    expect(res.statusCode).toBe(200);
    const doc = res.json();
    expect(doc.openapi).toMatch(/^3\./);
    const documented = new Set<string>();
    for (const [path, item] of Object.entries(doc.paths as Record<string, Record<string, unknown>>)) {
      for (const method of Object.keys(item)) documented.add(`${method.toUpperCase()} ${path}`);
    }
    const served = routes
      .filter((r) => !(r.schema as { hide?: boolean } | undefined)?.hide && !r.url.startsWith('/docs') && r.url !== '/openapi.json')
      .flatMap((r) => [r.method].flat().filter((m) => m !== 'HEAD').map((m) => `${m} ${r.url.replace(/:(\w+)/g, '{$1}')}`));
    expect(served.length).toBeGreaterThan(2);
    for (const route of served) expect(documented, `${route} missing from /openapi.json`).toContain(route);
    expect(documented).toContain('POST /api/v1/projects/{projectId}/admin/memory/embeddings/backfill');
    expect(documented).toContain('GET /readyz');
  });

  it('documents auth, the error body and each route\'s permission', async () => {
    const doc = (await h.app.inject({ method: 'GET', url: '/openapi.json' })).json();
    expect(doc.components.securitySchemes.bearerAuth).toMatchObject({ type: 'http', scheme: 'bearer' });
    const backfill = doc.paths['/api/v1/projects/{projectId}/admin/memory/embeddings/backfill'].post;
    expect(backfill.security).toEqual([{ bearerAuth: [] }]);
    expect(backfill.description).toMatch(/Requires WRITE_MEMORY/);
    expect(Object.keys(backfill.responses)).toEqual(expect.arrayContaining(['200', '400', '401', '403', '404', '429', '503']));
    expect(JSON.stringify(doc.components.schemas)).toMatch(/statusCode/);
    expect(backfill.parameters.some((p: { name: string; in: string }) => p.name === 'projectId' && p.in === 'path')).toBe(true);
  });

  it('serves the browsable reference at /docs', async () => {
    const res = await h.app.inject({ method: 'GET', url: '/docs/' });
    expect(res.statusCode).toBe(200);
    expect(res.headers['content-type']).toMatch(/html/);
  });
});
