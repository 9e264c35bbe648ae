// Every project route, found by walking the app's routes: project A's key on project B's path is a
// 404 (never 403, never data), and no key at all is a 401.
import type { RouteOptions } from 'fastify';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createHarness, type Harness } from '../helpers/harness.js';

describe('cross-project isolation on every route', () => {
  let h: Harness;
  const routes: { method: string; url: string }[] = [];
  beforeAll(async () => {
    h = await createHarness({
      build: {
        onRoute: (route: RouteOptions) => {
          if (!route.url.startsWith('/api/v1/projects/:projectId/')) return;
          for (const method of [route.method].flat()) if (method !== 'HEAD') routes.push({ method, url: route.url });
        },
      },
    });
  });
  afterAll(() => h?.close());

  it('finds the project routes', () => {
    expect(routes.length).toBeGreaterThan(15);
  });

  it("answers 404 to another project's key and 401 without a key, on each of them", async () => {
    const a = await h.project();
    const b = await h.project();
    const m = (await h.call('POST', b.projectId, '/admin/memory', { body: { content: 'B secret' } })).json();
    for (const { method, url } of routes) {
      const path = url.replace(':projectId', b.projectId).replace(/:\w+/g, m.id);
      const body = method === 'GET' || method === 'DELETE' ? undefined : {};
      const foreign = await h.app.inject({ method: method as 'GET', url: path, headers: { authorization: `Bearer ${a.apiKey}` }, ...(body ? { payload: body } : {}) });
      expect(foreign.statusCode, `${method} ${url}`).toBe(404);
      expect(foreign.body).not.toContain('B secret');
      const anonymous = await h.app.inject({ method: method as 'GET', url: path, ...(body ? { payload: body } : {}) });
      expect(anonymous.statusCode, `${method} ${url}`).toBe(401);
    }
    expect((await h.call('GET', b.projectId, `/admin/memory/${m.id}`)).json().content).toBe('B secret');
  });
});
