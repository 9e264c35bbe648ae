import { SerializerSelector } from '@fastify/fast-json-stringify-compiler';
import type { FastifyInstance, RouteOptions } from 'fastify';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createHarness, type Harness } from '../helpers/harness.js';

describe('OpenAPI', () => {
  let h: Harness;
  const routes: RouteOptions[] = [];
  /** The shared schemas each route's scope holds, for compiling its serializers as Fastify would. */
  const scopeSchemas = new Map<RouteOptions, Record<string, unknown>>();
  beforeAll(async () => {
    h = await createHarness({
      build: {
        onRoute: function (this: FastifyInstance, route) {
          routes.push(route);
          scopeSchemas.set(route, this.getSchemas());
        },
      },
    });
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

  it("compiles every route's response serializers (the app compiles each on its first answer)", async () => {
    let compiled = 0;
    for (const route of routes) {
      const responses = (route.schema as { response?: Record<string, { content?: Record<string, { schema: unknown }> }> } | undefined)?.response ?? {};
      const compile = SerializerSelector()(scopeSchemas.get(route), {});
      for (const [httpStatus, schema] of Object.entries(responses)) {
        const bodies = schema.content ? Object.entries(schema.content).map(([contentType, media]) => ({ contentType, schema: media.schema })) : [{ schema }];
        for (const body of bodies) {
          const where = `${String(route.method)} ${route.url} ${httpStatus}`;
          expect(() => compile({ method: String(route.method), url: route.url, httpStatus, ...body }), where).not.toThrow();
          compiled++;
        }
      }
    }
    expect(compiled).toBeGreaterThan(routes.length);
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
