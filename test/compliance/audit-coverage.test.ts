// Every audited route (its OpenAPI description says "Audited as <type>."), called with a valid
// request generated from its schema, leaves exactly one audit row naming the key and the event
// type before its answer arrives, and its route and status once the outcome is written behind the
// answer; an unaudited route leaves none. Read routes
// that take a subject record it (as a digest), so a subject filter finds them.
import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { AuditLog, subjectRef } from '../../src/compliance/audit-log.js';
import { projectOperations, type Operation } from '../helpers/fuzz-requests.js';
import { createHarness, type Harness } from '../helpers/harness.js';
import { SchemaFuzzer } from '../helpers/schema-arbitrary.js';

interface AuditDbRow {
  event_type: string;
  key_id: string;
  subject_ref: string | null;
  result_count: number;
  metadata: { route: string; statusCode: number; method: string };
}

/**
 * A generated path parameter as a URL can carry it: lone surrogates replaced (encodeURIComponent
 * throws on them), and cut until its escaped form is within the router's 100 characters (a longer
 * one is refused by the router before any hook, so no call is made to audit).
 */
function pathValue(value: unknown): string {
  let text = asText(value).replace(/[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/g, '\uFFFD');
  while (encodeURIComponent(text).length > 100) text = [...text].slice(0, -1).join('');
  return encodeURIComponent(text === '' ? 'x' : text);
}

/** A generated value as text (an object without a prototype has no String()). */
const asText = (value: unknown): string => (value !== null && typeof value === 'object' ? JSON.stringify(value) : String(value));

/** A seed per operation from its method and path: a route added elsewhere changes no other route's input. */
const seedOf = (key: string) => [...key].reduce((h, c) => (Math.imul(h, 31) + c.charCodeAt(0)) | 0, 7);

describe('the audit log covers every audited route', () => {
  let h: Harness;
  let operations: (Operation & { audit: string | undefined; description: string })[];
  const fuzzer = new SchemaFuzzer();

  beforeAll(async () => {
    h = await createHarness({ env: { RATE_LIMIT_PER_MINUTE: '10000000' } });
    const doc = h.app.swagger() as unknown as Parameters<typeof projectOperations>[0] & { paths: Record<string, Record<string, { description?: string }>> };
    const prefix = '/api/v1/projects/{projectId}';
    operations = projectOperations(doc).map((op) => {
      const description = doc.paths[prefix + op.path]![op.method.toLowerCase()]!.description ?? '';
      return { ...op, description, audit: /Audited as ([a-z_]+\.[a-z_]+)\./.exec(description)?.[1] };
    });
  });
  afterAll(() => h?.close());

  const rowsOf = async (projectId: string) =>
    (await h.db.query<AuditDbRow>('SELECT event_type, key_id, subject_ref, result_count, metadata FROM compliance_audit WHERE project_id = $1 ORDER BY id', [projectId])).rows;

  it('finds the audited routes: every read of memories, patterns, predictions, events and the graph', () => {
    const audited = operations.filter((o) => o.audit).map((o) => o.key);
    expect(audited.length).toBeGreaterThan(40);
    for (const key of ['POST /memory/search', 'GET /admin/memory/{memoryId}', 'POST /lattice/context', 'POST /lattice/predict', 'GET /memory-events', 'POST /memory-compliance/export', 'GET /admin/memory/graph/edges']) {
      expect(audited, key).toContain(key);
    }
  });

  it('writes one row per call to an audited route (whatever its answer), and none for the others', async () => {
    const p = await h.project();
    const key = (await h.apis.tenancy.listKeys(p.projectId))[0]!;
    let expected = 0;
    for (const op of operations) {
      if (op.key.startsWith('POST /mcp-server') || op.key.includes('hard-delete')) continue;
      const [params, query, body] = fc.sample(fc.tuple(fuzzer.valid(op.pathSchema), fuzzer.valid(op.querySchema), op.body ? fuzzer.valid(op.body) : fc.constant(undefined)), { numRuns: 1, seed: seedOf(op.key) })[0]!;
      let path = op.path;
      for (const [name, value] of Object.entries(params as Record<string, unknown>)) path = path.replace(`{${name}}`, pathValue(value));
      const qs = new URLSearchParams(Object.entries(query as Record<string, unknown>).map(([k, v]) => [k, asText(v)])).toString();
      const res = await h.call(op.method, p.projectId, qs ? `${path}?${qs}` : path, { body });
      // The row is durable when the answer arrives: no waiting.
      if (op.audit && res.statusCode !== 401 && res.statusCode !== 429) expected += 1;
      expect((await rowsOf(p.projectId)).length, `${op.key} -> ${res.statusCode}`).toBe(expected);
      // Its outcome is written behind the answer.
      await h.apis.compliance.auditSettled();
      const rows = await rowsOf(p.projectId);
      if (op.audit) {
        expect(rows.at(-1), op.key).toMatchObject({ event_type: op.audit, key_id: key.id, metadata: { method: op.method, statusCode: res.statusCode } });
        expect(rows.at(-1)!.metadata).not.toHaveProperty('incomplete');
        expect(rows.at(-1)!.metadata.route).toBe(`/api/v1/projects/:projectId${op.path.replace(/\{(\w+)\}/g, ':$1')}`);
      }
    }
    expect(expected).toBeGreaterThan(40);
  });

  it('records the subject of a read, the rows it answered, and the memories among them', async () => {
    const p = await h.project();
    const subject = { kind: 'user', externalId: 'audit-u1' };
    for (const content of ['Likes jasmine tea', 'Drinks jasmine tea on Sundays']) {
      expect((await h.call('POST', p.projectId, '/admin/memory', { body: { subject, content, type: 'preference' } })).statusCode).toBe(201);
    }
    const found = (await h.call('POST', p.projectId, '/memory/search', { body: { query: 'jasmine tea', subject } })).json();
    await h.apis.compliance.auditSettled();
    const rows = await rowsOf(p.projectId);
    const search = rows.find((r) => r.event_type === 'read.search')!;
    expect(search.subject_ref).toBe(subjectRef(p.projectId, subject.kind, subject.externalId));
    expect(search.result_count).toBe(found.length);
    const ids = (await h.db.query<{ memory_ids: string[] }>(`SELECT memory_ids FROM compliance_audit WHERE project_id = $1 AND event_type = 'read.search'`, [p.projectId])).rows[0]!.memory_ids;
    expect(ids.sort()).toEqual(found.map((m: { id: string }) => m.id).sort());
  });

  it('holds a begun row durably before its outcome, marked incomplete until the outcome is written (as a crash would leave it)', async () => {
    const p = await h.project();
    const log = new AuditLog(h.db, h.lattice.runtime.log);
    const record = { projectId: p.projectId, keyId: 'key_x', keyName: 'ops', eventType: 'read.search' as const, method: 'POST', route: '/r', requestId: 'req-1', at: new Date(), subject: { kind: 'user', externalId: 'u9' }, query: 'tea' };
    const entries = [log.begin(record), log.begin({ ...record, requestId: 'req-2' })];
    await Promise.all(entries.map((e) => e.durable));
    const begun = await rowsOf(p.projectId);
    expect(begun).toHaveLength(2);
    expect(begun.every((r) => (r.metadata as unknown as { incomplete: boolean }).incomplete === true && r.result_count === 0)).toBe(true);
    entries[0]!.end({ projectId: p.projectId, statusCode: 200, resultCount: 3, memoryIds: ['mem_a', 'mem_b'], metadata: { statusCode: 200 } });
    await log.settled();
    const [done, crashed] = await rowsOf(p.projectId);
    expect(done).toMatchObject({ result_count: 3, metadata: { statusCode: 200, method: 'POST' } });
    expect(done!.metadata).not.toHaveProperty('incomplete');
    expect(crashed!.metadata).toMatchObject({ incomplete: true });
    // The listing shows both; the subject is a digest.
    const listed = (await h.call('GET', p.projectId, '/memory-compliance/audit?subjectKind=user&subjectExternalId=u9')).json();
    expect(listed.map((r: { actorName: string; memoryIds: string | null }) => [r.actorName, r.memoryIds])).toEqual([
      ['ops', null],
      ['ops', 'mem_a,mem_b'],
    ]);
  });
});
