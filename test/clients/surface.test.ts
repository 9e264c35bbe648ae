// Issue 35: every call of the public TypeScript and Python clients gets a 2xx answer the client parses.
// test/clients/calls.ts lists the calls; this file makes each one as its client does (headers, body
// encoding, query encoding), with ids seeded here, and checks the answer: a 2xx whose body the client
// can parse into what it reads (or, for a call behind a deployment switch that is off by default, the
// documented error).
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createHarness, foldAllTyped, type Harness } from '../helpers/harness.js';
import { CALLS, type ClientCall } from './calls.js';

const DAY = 86_400_000;
const contact = { kind: 'contact', externalId: 'c-gym' };

describe("the public clients' calls against Lattice", () => {
  let h: Harness;
  let project: { projectId: string; apiKey: string };
  const shared: Record<string, string> = {};
  let seq = 0;

  /** A call on the project with the client's own headers and encoding (no harness defaults). */
  async function send(
    method: ClientCall['method'],
    path: string,
    options: { body?: unknown; query?: Record<string, string | number | boolean>; client?: ClientCall['client']; headers?: Record<string, string> } = {},
  ) {
    const client = options.client ?? 'ts';
    const query = new URLSearchParams();
    for (const [key, value] of Object.entries(options.query ?? {})) query.set(key, String(value));
    const qs = query.toString();
    const headers: Record<string, string> = { ...options.headers, authorization: `Bearer ${project.apiKey}` };
    const hasBody = client === 'py' ? options.body !== undefined : method !== 'GET' && method !== 'DELETE' && options.body != null;
    if (client === 'py') {
      headers['content-type'] = 'application/json';
      headers['user-agent'] = 'memmesh-python/0.4.0';
    } else if (method === 'POST' || method === 'PUT' || method === 'PATCH') {
      headers['content-type'] = 'application/json';
    }
    return h.app.inject({
      method,
      url: `/api/v1/projects/${project.projectId}${path}${qs ? `?${qs}` : ''}`,
      headers,
      ...(hasBody ? { payload: JSON.stringify(options.body) } : {}),
    });
  }

  async function ok(method: ClientCall['method'], path: string, body?: unknown): Promise<Record<string, unknown>> {
    const res = await send(method, path, { body });
    expect(res.statusCode, `seeding ${method} ${path}: ${res.body}`).toBeLessThan(300);
    return res.json();
  }

  /** Ids made fresh for each call that names them (the call may delete or change them). */
  const fresh: Record<string, () => Promise<string>> = {
    memoryId: async () => (await ok('POST', '/admin/memory', { content: `Seed memory ${++seq}: likes the downtown club`, subject: contact })).id as string,
    pendingMemoryId: async () => (await ok('POST', '/admin/memory', { content: `Seed pending memory ${++seq}`, subject: contact, status: 'pending' })).id as string,
    alertId: async () =>
      (
        await ok('POST', '/memory-alerts', {
          name: `Seed rule ${++seq}`,
          trigger: { kind: 'engine-event', eventTypes: ['risk.fired'] },
          notify: [{ kind: 'memory', writeAs: { content: 'Risk for {{subject.externalId}}' } }],
        })
      ).id as string,
    brainId: async () => (await ok('POST', '/brains', { externalId: `seed-brain-${++seq}`, name: `Seed brain ${seq}` })).id as string,
    decisionId: async () => {
      const res = await ok('POST', '/lattice/decisions', { subject: contact, decisionType: 'offer', actionType: 'apply_discount', informedBy: [{ memoryId: shared.patternId, refType: 'pattern' }] });
      return (res.decision as { decisionId: string }).decisionId;
    },
  };

  /** The call with every {placeholder} replaced, each fresh one seeded once for this call. */
  async function resolve(call: ClientCall): Promise<{ path: string; body: unknown; query?: Record<string, string | number | boolean> }> {
    const ids: Record<string, string> = { ...shared };
    const text = JSON.stringify({ path: call.path, body: call.body, query: call.query });
    for (const [, name] of text.matchAll(/\{(\w+)\}/g)) {
      if (ids[name!] !== undefined) continue;
      const make = fresh[name!];
      if (!make) throw new Error(`no seed for {${name}} in ${call.sdk}`);
      ids[name!] = await make();
    }
    const fill = (value: unknown): unknown => {
      if (typeof value === 'string') return value.replace(/\{(\w+)\}/g, (whole, name: string) => ids[name] ?? whole);
      if (Array.isArray(value)) return value.map(fill);
      if (value && typeof value === 'object') return Object.fromEntries(Object.entries(value).map(([k, v]) => [k, fill(v)]));
      return value;
    };
    return { path: fill(call.path) as string, body: fill(call.body), query: fill(call.query) as Record<string, string | number | boolean> | undefined };
  }

  beforeAll(async () => {
    h = await createHarness();
    project = await h.project();
    // A weekly habit of contact:c-gym, mined into patterns (and memories of type behavior_pattern).
    const last = Date.now() - 6 * DAY;
    for (let i = 0; i < 10; i++) {
      const at = new Date(last - (9 - i) * 7 * DAY).toISOString();
      await ok('POST', '/admin/memory', { content: `gym visit by c-gym at ${at}`, type: 'event', subject: contact, validFrom: at, metadata: { eventType: 'gym', entity: 'downtown club' } });
    }
    await ok('POST', '/lattice/patterns/extract', { subject: contact });
    const patterns = (await ok('GET', `/lattice/contacts/${contact.externalId}/patterns`)).data as { id: string; metadata: { patternKind: string } }[];
    const recurring = patterns.find((p) => p.metadata.patternKind === 'recurring_event');
    expect(recurring, 'a recurring_event pattern of c-gym').toBeDefined();
    shared.patternId = recurring!.id;
    shared.contactId = contact.externalId;
    // A person who works at an org: an entity with an edge.
    const sarah = await ok('POST', '/admin/memory/entities', { type: 'person', canonicalName: 'Sarah Chen', aliases: ['Sarah'] });
    const acme = await ok('POST', '/admin/memory/entities', { type: 'org', canonicalName: 'Acme Corp' });
    await ok('POST', '/admin/memory/edges', { subjectId: sarah.id, predicate: 'works_at', objectId: acme.id });
    shared.entityId = sarah.id as string;
    // A typed point of c-gym, folded into its accumulator.
    await ok('POST', '/memory-typed/attributes', { attributeKey: 'credit_score', dataType: 'numeric', minValid: 300, maxValid: 850 });
    await ok('POST', '/memory-typed/observations', { observations: [{ attributeKey: 'credit_score', subjectKind: 'contact', subjectExternalId: 'c-gym', valueNumeric: 700, observedAt: '2025-05-01T00:00:00.000Z' }] });
    await foldAllTyped(h);
  });
  afterAll(async () => h?.close());

  it('a memory channel sent without writeAs.scope (optional in both clients) is kept, and writes, at project scope', async () => {
    const rule = await ok('POST', '/memory-alerts', {
      name: 'no scope given',
      trigger: { kind: 'engine-event', eventTypes: ['scope.check'] },
      notify: [{ kind: 'memory', writeAs: { content: 'scope check for {{subject.externalId}}' } }],
    });
    expect(rule.notify).toEqual([{ kind: 'memory', writeAs: { content: 'scope check for {{subject.externalId}}', scope: 'project' } }]);
    const emitted = await ok('POST', '/lattice/events/emit', { eventType: 'scope.check', subject: { kind: 'contact', externalId: 'c-scope' } });
    expect(emitted.emitted).toBe(true);
    // Delivered after the emit commits: read the fire until its memory channel reports the write.
    type Fire = { deliveryResults: { ok: boolean; memoryId?: string }[] };
    const delivered = async () => ((await ok('GET', `/memory-alerts/${rule.id as string}/fires`)) as unknown as Fire[])[0]?.deliveryResults[0];
    await expect.poll(delivered, { timeout: 60_000, interval: 100 }).toMatchObject({ ok: true, memoryId: expect.any(String) });
    const written = await ok('GET', `/admin/memory/${(await delivered())!.memoryId}`);
    expect(written).toMatchObject({ scope: 'project', content: 'scope check for c-scope' });
  });

  for (const client of ['ts', 'py'] as const) {
    describe(client === 'ts' ? 'thinkfleet-memory-sdk (TypeScript)' : 'memmesh-python', () => {
      for (const call of CALLS.filter((c) => c.client === client)) {
        it(`${call.sdk}: ${call.method} ${call.path}`, async () => {
          const { path, body, query } = await resolve(call);
          const res = await send(call.method, path, { body, query, client, headers: call.headers });
          const where = `${call.method} ${path} -> ${res.statusCode} ${res.body.slice(0, 500)}`;
          if (call.expectError) {
            expect(res.statusCode, where).toBe(call.expectError.status);
            expect(res.json().code, where).toBe(call.expectError.code);
            expect(typeof res.json().message, where).toBe('string');
            return;
          }
          expect(res.statusCode, where).toBeGreaterThanOrEqual(200);
          expect(res.statusCode, where).toBeLessThan(300);
          if (res.statusCode === 204) {
            expect(call.reads, `${where}: 204 for a method that reads a body`).toBe('nothing');
            return;
          }
          // The TS client parses every 2xx but 204 as JSON; an empty body is a NETWORK_ERROR to it.
          if (client === 'py' && res.body === '') {
            expect(call.reads, where).toBe('nothing');
            return;
          }
          let parsed: unknown;
          expect(() => (parsed = JSON.parse(res.body)), `${where}: not JSON`).not.toThrow();
          const reads = call.reads;
          if (reads === 'array') expect(Array.isArray(parsed), `${where}: not an array`).toBe(true);
          else if (reads === 'object') expect(parsed !== null && typeof parsed === 'object' && !Array.isArray(parsed), `${where}: not an object`).toBe(true);
          else if (reads !== 'nothing') expect(Array.isArray((parsed as Record<string, unknown>)?.[reads.key]), `${where}: no array at ${reads.key}`).toBe(true);
          for (const item of Array.isArray(parsed) ? parsed : [parsed]) {
            for (const field of call.fields ?? []) expect(item, `${where}: the client reads ${field}`).toHaveProperty(field);
          }
        });
      }
    });
  }
});
