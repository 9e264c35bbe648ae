// The OpenAPI document passes a standard lint: Redocly's recommended ruleset, errors and warnings
// alike (a client generator needs operationIds, servers and a security statement on every operation).
import { execFile } from 'node:child_process';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { operationIdFor } from '../../src/platform/openapi.js';
import { projectRoot } from '../../src/platform/project-root.js';
import { createHarness, type Harness } from '../helpers/harness.js';

const run = promisify(execFile);

interface Problem {
  ruleId: string;
  severity: string;
  message: string;
  location: { pointer: string }[];
}

describe('the OpenAPI document under a standard lint', () => {
  let h: Harness;
  let dir: string;
  beforeAll(async () => {
    h = await createHarness();
    dir = await mkdtemp(join(tmpdir(), 'lattice-openapi-'));
  });
  afterAll(async () => {
    await h?.close();
    await rm(dir, { recursive: true, force: true });
  });

  it("has no problem under Redocly's recommended rules", async () => {
    const doc = (await h.app.inject({ method: 'GET', url: '/openapi.json' })).json();
    const file = join(dir, 'openapi.json');
    await writeFile(file, JSON.stringify(doc));
    const cli = join(projectRoot(), 'node_modules/@redocly/cli/bin/cli.js');
    const result = await run(process.execPath, [cli, 'lint', file, '--extends', 'recommended', '--format', 'json'], { maxBuffer: 64 * 1024 * 1024 }).catch(
      (error: { stdout?: string; stderr?: string }) => ({ stdout: error.stdout ?? '', stderr: error.stderr ?? '' }),
    );
    const problems = (JSON.parse(result.stdout) as { problems: Problem[] }).problems;
    const summary = problems.map((p) => `${p.severity} ${p.ruleId} at ${p.location[0]?.pointer}`);
    // The rules the document does not follow, on purpose: health probes have no client error to
    // answer (no input), so they document 200 and 503 only; and the public clients' paths put
    // /admin/memory/entities/{entityId} beside /admin/memory/{memoryId}/confirm (a static segment
    // wins in the router, so the two never meet).
    const accepted = [
      'warn no-ambiguous-paths at #/paths/~1api~1v1~1projects~1{projectId}~1admin~1memory~1entities~1{entityId}',
      ...['/healthz', '/readyz'].map((path) => `warn operation-4xx-response at #/paths/~1${path.slice(1)}/get/responses`),
    ];
    expect(summary).toEqual(accepted);
  }, 60_000);

  it('gives every operation a unique, stable operationId', async () => {
    const doc = (await h.app.inject({ method: 'GET', url: '/openapi.json' })).json();
    const ids: string[] = [];
    for (const item of Object.values(doc.paths as Record<string, Record<string, { operationId?: string }>>)) {
      for (const op of Object.values(item)) ids.push(op.operationId!);
    }
    expect(ids.length).toBeGreaterThan(30);
    expect(new Set(ids).size).toBe(ids.length);
    for (const id of ids) expect(id).toMatch(/^(get|post|put|patch|delete)[A-Z][A-Za-z0-9]*$/);
    expect(operationIdFor('POST', '/api/v1/projects/{projectId}/admin/memory/search')).toBe('postAdminMemorySearch');
    expect(operationIdFor('GET', '/api/v1/projects/{projectId}/admin/memory/{id}')).toBe('getAdminMemoryById');
    expect(operationIdFor('POST', '/api/v1/projects/{projectId}/memory-typed/observations/enqueue')).toBe('postMemoryTypedObservationsEnqueue');
    expect(operationIdFor('GET', '/readyz')).toBe('getReadyz');
  });

  it('states security on every operation: the bearer key on project routes, none on health', async () => {
    const doc = (await h.app.inject({ method: 'GET', url: '/openapi.json' })).json();
    for (const [path, item] of Object.entries(doc.paths as Record<string, Record<string, { security?: unknown }>>)) {
      for (const op of Object.values(item)) {
        expect(op.security, path).toEqual(path.startsWith('/api/v1/projects/') ? [{ bearerAuth: [] }] : []);
      }
    }
    expect(doc.servers).toEqual([{ url: '/', description: expect.any(String) }]);
  });
});
