// Typed attributes over HTTP: definitions, synchronous and queued ingest, quarantine, duplicates
// under concurrency, accumulators against a from-scratch computation, observation filters, events,
// metering and project isolation.
import type { LightMyRequestResponse } from 'fastify';
import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createLattice, type Lattice } from '../../src/modules.js';
import { createLogger } from '../../src/platform/logger.js';
import { derive, fromSeries, type NumericPoint } from '../../src/typed/accumulator.js';
import { loadRules } from '../../src/typed/store/attributes.js';
import { insertIngestBatch } from '../../src/typed/store/ingest-batches.js';
import { insertObservations } from '../../src/typed/store/observations.js';
import { checkRows } from '../../src/typed/validate.js';
import { backend, createHarness, appendAllTypedEvents, foldAllTyped, REDIS_URL, SERVER_DATABASE_URL, type Harness } from '../helpers/harness.js';
import { onEveryNode, shardName } from '../helpers/citus.js';

type Row = Record<string, unknown>;
type Project = { projectId: string; apiKey: string };

const ATTRIBUTES = '/memory-typed/attributes';
const OBSERVATIONS = '/memory-typed/observations';
const ENQUEUE = '/memory-typed/observations/enqueue';

const T0 = Date.parse('2026-01-01T00:00:00Z');
const at = (minutes: number) => new Date(T0 + minutes * 60_000).toISOString();
const qs = (query: Record<string, string | number>) => new URLSearchParams(Object.entries(query).map(([k, v]) => [k, String(v)])).toString();

/** |a - b| within 1e-9 relative to the larger of |expected|, `scale` and 1. */
function expectClose(actual: number | null, expected: number | null, scale: number, label: string): void {
  if (expected === null) {
    expect(actual, label).toBeNull();
    return;
  }
  expect(actual, label).not.toBeNull();
  expect(Math.abs(actual! - expected), `${label}: ${actual} vs ${expected}`).toBeLessThanOrEqual(1e-9 * Math.max(1, Math.abs(expected), scale));
}

function api(h: Harness) {
  return {
    async define(projectId: string, body: Row, apiKey?: string) {
      const res = await h.call('POST', projectId, ATTRIBUTES, { body, ...(apiKey ? { apiKey } : {}) });
      expect([200, 201], res.body).toContain(res.statusCode);
      return res.json();
    },
    ingest: (projectId: string, observations: Row[], apiKey?: string) => h.call('POST', projectId, OBSERVATIONS, { body: { observations }, ...(apiKey ? { apiKey } : {}) }),
    enqueue: (projectId: string, observations: Row[], apiKey?: string) => h.call('POST', projectId, ENQUEUE, { body: { observations }, ...(apiKey ? { apiKey } : {}) }),
    async observations(projectId: string, query: Record<string, string | number> = {}) {
      const res = await h.call('GET', projectId, `${OBSERVATIONS}?${qs({ limit: 1000, ...query })}`);
      expect(res.statusCode, res.body).toBe(200);
      return res.json() as Row[];
    },
    accumulatorResponse: (projectId: string, subjectKind: string, subjectExternalId: string, attributeKey: string) =>
      h.call('GET', projectId, `/memory-typed/accumulator?${qs({ subjectKind, subjectExternalId, attributeKey })}`),
    async accumulator(projectId: string, subjectKind: string, subjectExternalId: string, attributeKey: string) {
      const res = await h.call('GET', projectId, `/memory-typed/accumulator?${qs({ subjectKind, subjectExternalId, attributeKey })}`);
      expect(res.statusCode, res.body).toBe(200);
      return res.json();
    },
    async events(projectId: string, subjectKind: string, subjectExternalId: string) {
      await appendAllTypedEvents(h);
      const res = await h.call('GET', projectId, `/memory-events?${qs({ eventTypes: 'typed.observation', subjectKind, subjectExternalId, limit: 1000 })}`);
      expect(res.statusCode, res.body).toBe(200);
      return res.json() as { eventType: string; subject: { kind: string; externalId: string } | null; payload: Row }[];
    },
    async batches(projectId: string) {
      const { rows } = await h.db.query<{ id: string; row_count: number; observations: Row[] }>(
        'SELECT id, row_count, observations FROM typed_ingest_batches WHERE project_id = $1',
        [projectId],
      );
      return rows;
    },
  };
}

const numeric = (subjectExternalId: string, valueNumeric: number, minutes: number, extra: Row = {}): Row => ({
  attributeKey: 'hr',
  subjectKind: 'user',
  subjectExternalId,
  valueNumeric,
  observedAt: at(minutes),
  ...extra,
});

describe('typed attributes over HTTP', () => {
  let h: Harness;
  let a: ReturnType<typeof api>;
  let p: Project;

  beforeAll(async () => {
    h = await createHarness();
    a = api(h);
    p = await h.project();
    await a.define(p.projectId, { attributeKey: 'hr', dataType: 'numeric', unit: 'bpm', minValid: 20, maxValid: 300 });
    await a.define(p.projectId, { attributeKey: 'plan', dataType: 'categorical' });
  });
  afterAll(async () => {
    await h?.close();
  });

  describe('attribute definitions', () => {
    it('creates with 201, and a re-post answers 200 and replaces every field', async () => {
      const created = await h.call('POST', p.projectId, ATTRIBUTES, {
        body: { attributeKey: 'weight', dataType: 'numeric', unit: 'kg', minValid: 1, maxValid: 500, required: true, metadata: { source: 'scale' } },
      });
      expect(created.statusCode).toBe(201);
      expect(created.json()).toMatchObject({
        id: expect.stringMatching(/^att_/),
        projectId: p.projectId,
        attributeKey: 'weight',
        dataType: 'numeric',
        unit: 'kg',
        minValid: 1,
        maxValid: 500,
        required: true,
        metadata: { source: 'scale' },
        metadataJson: '{"source":"scale"}',
      });
      const replaced = await h.call('POST', p.projectId, ATTRIBUTES, { body: { attributeKey: 'weight', dataType: 'numeric', maxValid: 400 } });
      expect(replaced.statusCode).toBe(200);
      expect(replaced.json()).toMatchObject({ id: created.json().id, unit: null, minValid: null, maxValid: 400, required: false, metadata: null, metadataJson: null });
      const listed = (await h.call('GET', p.projectId, `${ATTRIBUTES}?attributeKey=weight`)).json();
      expect(listed).toEqual([replaced.json()]);
    });

    it('lists by attributeKey, with limit and offset in key order', async () => {
      for (const key of ['list.c', 'list.a', 'list.b']) await a.define(p.projectId, { attributeKey: key, dataType: 'boolean' });
      const all = (await h.call('GET', p.projectId, ATTRIBUTES)).json() as { attributeKey: string }[];
      const keys = all.map((x) => x.attributeKey);
      expect(keys).toEqual([...keys].sort());
      expect(keys).toEqual(expect.arrayContaining(['hr', 'plan', 'list.a', 'list.b', 'list.c']));
      const one = (await h.call('GET', p.projectId, `${ATTRIBUTES}?attributeKey=list.b`)).json();
      expect(one).toHaveLength(1);
      expect(one[0]).toMatchObject({ attributeKey: 'list.b', dataType: 'boolean' });
      const start = keys.indexOf('list.a');
      const page = (await h.call('GET', p.projectId, `${ATTRIBUTES}?limit=2&offset=${start}`)).json() as { attributeKey: string }[];
      expect(page.map((x) => x.attributeKey)).toEqual(['list.a', 'list.b']);
      expect((await h.call('GET', p.projectId, `${ATTRIBUTES}?attributeKey=nothing.here`)).json()).toEqual([]);
    });

    it('refuses a dataType change once the attribute has observations (409), allows it before', async () => {
      await a.define(p.projectId, { attributeKey: 'mood', dataType: 'numeric' });
      const early = await h.call('POST', p.projectId, ATTRIBUTES, { body: { attributeKey: 'mood', dataType: 'categorical' } });
      expect(early.statusCode).toBe(200);
      expect(early.json().dataType).toBe('categorical');
      const ingested = await a.ingest(p.projectId, [{ attributeKey: 'mood', subjectKind: 'user', subjectExternalId: 'm1', valueText: 'happy', observedAt: at(0) }]);
      expect(ingested.json().accepted).toBe(1);
      const change = await h.call('POST', p.projectId, ATTRIBUTES, { body: { attributeKey: 'mood', dataType: 'numeric' } });
      expect(change.statusCode).toBe(409);
      expect(change.json().code).toBe('CONFLICT');
      const [still] = (await h.call('GET', p.projectId, `${ATTRIBUTES}?attributeKey=mood`)).json();
      expect(still.dataType).toBe('categorical');
      // Same dataType, other fields: fine.
      expect((await h.call('POST', p.projectId, ATTRIBUTES, { body: { attributeKey: 'mood', dataType: 'categorical', unit: 'label' } })).statusCode).toBe(200);
    });

    it('answers 400 for a bad dataType, an unknown field or a bad key', async () => {
      for (const body of [
        { attributeKey: 'x1', dataType: 'float' },
        { attributeKey: 'x2', dataType: 'numeric', bogus: true },
        { attributeKey: 'has space', dataType: 'numeric' },
        { attributeKey: '', dataType: 'numeric' },
        { dataType: 'numeric' },
      ]) {
        const res = await h.call('POST', p.projectId, ATTRIBUTES, { body });
        expect(res.statusCode, JSON.stringify(body)).toBe(400);
        expect(res.json().code).toBe('VALIDATION_ERROR');
      }
      const keys = ((await h.call('GET', p.projectId, ATTRIBUTES)).json() as { attributeKey: string }[]).map((x) => x.attributeKey);
      expect(keys).not.toContain('x1');
      expect(keys).not.toContain('x2');
    });

    it('needs WRITE_MEMORY to define (403) and a key at all (401)', async () => {
      const readOnly = await h.key(p.projectId, ['READ_MEMORY']);
      const denied = await h.call('POST', p.projectId, ATTRIBUTES, { apiKey: readOnly, body: { attributeKey: 'ro', dataType: 'numeric' } });
      expect(denied.statusCode).toBe(403);
      expect(denied.json().code).toBe('AUTHORIZATION_ERROR');
      const deniedIngest = await a.ingest(p.projectId, [numeric('ro', 60, 0)], readOnly);
      expect(deniedIngest.statusCode).toBe(403);
      expect((await h.call('GET', p.projectId, ATTRIBUTES, { apiKey: readOnly })).statusCode).toBe(200);
      const anonymous = await h.app.inject({ method: 'POST', url: `/api/v1/projects/${p.projectId}${ATTRIBUTES}`, payload: { attributeKey: 'anon', dataType: 'numeric' } });
      expect(anonymous.statusCode).toBe(401);
      expect(anonymous.json().code).toBe('AUTHENTICATION_ERROR');
      expect((await h.call('GET', p.projectId, `${ATTRIBUTES}?attributeKey=ro`)).json()).toEqual([]);
      expect(await a.observations(p.projectId, { subject: 'user:ro' })).toEqual([]);
    });
  });

  describe('synchronous ingest', () => {
    it('reports accepted, quarantined and duplicates with reasons keyed by id or index', async () => {
      const res = await a.ingest(p.projectId, [
        numeric('r1', 60, 0),
        numeric('r1', 60, 0), // exact repeat of row 0
        numeric('r1', 512, 1),
        { ...numeric('r1', 10, 2), id: 'low-1' },
        { ...numeric('r1', 70, 3), attributeKey: 'nope' },
        { ...numeric('r1', 70, 4), valueText: 'seventy' },
        { ...numeric('r1', 70, 5), observedAt: 'yesterday' },
        { ...numeric('r1', 70, 6), trust: 2 },
        { attributeKey: 'plan', subjectKind: 'user', subjectExternalId: 'r1', valueNumeric: 3, observedAt: at(7) },
        { ...numeric('r1', 80, 8), subjectKind: undefined },
        numeric('r1', 80, 9, { trust: 0.5, source: 'watch' }),
      ]);
      expect(res.statusCode, res.body).toBe(200);
      expect(res.json()).toEqual({
        accepted: 2,
        quarantined: 8,
        duplicates: 1,
        quarantineReasons: {
          '2': 'value 512 above maxValid 300',
          'low-1': 'value 10 below minValid 20',
          '4': "unknown attribute 'nope': define it with POST /memory-typed/attributes first",
          '5': "numeric attribute 'hr' takes only valueNumeric (got valueText too)",
          '6': "observedAt 'yesterday' is not an ISO 8601 timestamp",
          '7': 'trust 2 is outside [0, 1]',
          '8': "categorical attribute 'plan' needs valueText (got valueNumeric)",
          '9': 'missing subjectKind',
        },
      });
      const accepted = await a.observations(p.projectId, { subjectExternalId: 'r1', status: 'accepted' });
      expect(accepted.map((o) => [o.valueNumeric, o.trust, o.qualityScore, o.source])).toEqual([
        [80, 0.5, 0.5, 'watch'],
        [60, 1, 1, null],
      ]);
    });

    it('stores quarantined rows with their reason and the row as sent', async () => {
      const row = { ...numeric('q1', 999, 0), id: 'q-999', source: 'import' };
      const res = await a.ingest(p.projectId, [row]);
      expect(res.json()).toMatchObject({ accepted: 0, quarantined: 1, quarantineReasons: { 'q-999': 'value 999 above maxValid 300' } });
      const stored = await a.observations(p.projectId, { subject: 'user:q1', status: 'quarantined' });
      expect(stored).toHaveLength(1);
      expect(stored[0]).toMatchObject({
        id: 'q-999',
        projectId: p.projectId,
        status: 'quarantined',
        quarantineReason: 'value 999 above maxValid 300',
        raw: row,
        valueNumeric: 999,
        observedAt: at(0),
      });
      expect(await a.observations(p.projectId, { subject: 'user:q1', status: 'accepted' })).toEqual([]);
      expect((await a.accumulator(p.projectId, 'user', 'q1', 'hr')).count).toBe(0);
    });

    it('fails the whole call with 400 for a wrong JSON type, storing nothing', async () => {
      const res = await a.ingest(p.projectId, [numeric('t1', 60, 0), { ...numeric('t1', 61, 1), valueNumeric: 'sixty' }]);
      expect(res.statusCode).toBe(400);
      expect(res.json().code).toBe('VALIDATION_ERROR');
      expect(res.json().message).toMatch(/observations\.1\.valueNumeric/);
      expect(await a.observations(p.projectId, { subjectExternalId: 't1' })).toEqual([]);
    });

    // JSON bodies are validated without type coercion (src/app.ts): "12" is not a number here.
    it('fails the whole call with 400 for a numeric string, a number as text or a string as boolean', async () => {
      for (const wrong of [{ valueNumeric: '12' }, { attributeKey: 'plan', valueNumeric: undefined, valueText: 12 }, { valueBool: 'true' }, { trust: '0.5' }]) {
        const res = await a.ingest(p.projectId, [numeric('t2', 60, 0), { ...numeric('t2', 61, 1), ...wrong }]);
        expect(res.statusCode, JSON.stringify(wrong)).toBe(400);
        expect(res.json().code).toBe('VALIDATION_ERROR');
        expect(res.json().message).toMatch(/observations\.1\./);
      }
      expect(await a.observations(p.projectId, { subjectExternalId: 't2' })).toEqual([]);
    });

    it('answers 400 for more than 10000 rows or none', async () => {
      const rows = Array.from({ length: 10_001 }, (_, i) => numeric('big-refused', 60, i));
      const res = await a.ingest(p.projectId, rows);
      expect(res.statusCode).toBe(400);
      expect(res.json().code).toBe('VALIDATION_ERROR');
      expect((await a.ingest(p.projectId, [])).statusCode).toBe(400);
      expect((await a.enqueue(p.projectId, rows)).statusCode).toBe(400);
      expect(await a.observations(p.projectId, { subjectExternalId: 'big-refused' })).toEqual([]);
    });

    it('quarantines a reused client id with different content under a new id; an exact repeat is a duplicate', async () => {
      const first = await a.ingest(p.projectId, [{ ...numeric('c1', 60, 0), id: 'client-7' }]);
      expect(first.json()).toMatchObject({ accepted: 1, quarantined: 0 });
      const repeat = await a.ingest(p.projectId, [{ ...numeric('c1', 60, 0), id: 'client-7' }]);
      expect(repeat.json()).toEqual({ accepted: 0, quarantined: 0, duplicates: 1, quarantineReasons: {} });
      const clash = await a.ingest(p.projectId, [{ ...numeric('c1', 65, 1), id: 'client-7' }]);
      expect(clash.json()).toEqual({ accepted: 0, quarantined: 1, duplicates: 0, quarantineReasons: { 'client-7': "id 'client-7' is already used by a different observation" } });
      const stored = await a.observations(p.projectId, { subject: 'user:c1' });
      expect(stored).toHaveLength(2);
      const original = stored.find((o) => o.id === 'client-7')!;
      expect(original).toMatchObject({ status: 'accepted', valueNumeric: 60 });
      const moved = stored.find((o) => o.id !== 'client-7')!;
      expect(moved).toMatchObject({
        id: expect.stringMatching(/^obs_/),
        status: 'quarantined',
        valueNumeric: 65,
        quarantineReason: "id 'client-7' is already used by a different observation",
        raw: expect.objectContaining({ id: 'client-7', valueNumeric: 65 }),
      });
      expect(await a.accumulator(p.projectId, 'user', 'c1', 'hr')).toMatchObject({ count: 1, sum: 60, last: 60 });
    });

    it('counts a row repeated with its client id inside one batch as a duplicate', async () => {
      const row = { ...numeric('inbatch-same', 60, 0), id: 'inbatch-1' };
      const res = await a.ingest(p.projectId, [row, row]);
      expect(res.json()).toEqual({ accepted: 1, quarantined: 0, duplicates: 1, quarantineReasons: {} });
      expect((await a.accumulator(p.projectId, 'user', 'inbatch-same', 'hr')).count).toBe(1);
    });

    it('quarantines a client id reused with different content inside one batch', async () => {
      const res = await a.ingest(p.projectId, [
        { ...numeric('inbatch-diff', 60, 0), id: 'inbatch-2' },
        { ...numeric('inbatch-diff', 65, 1), id: 'inbatch-2' },
      ]);
      expect(res.json()).toEqual({ accepted: 1, quarantined: 1, duplicates: 0, quarantineReasons: { 'inbatch-2': "id 'inbatch-2' is already used by a different observation" } });
      const stored = await a.observations(p.projectId, { subject: 'user:inbatch-diff' });
      expect(stored.map((o) => o.status).sort()).toEqual(['accepted', 'quarantined']);
      const kept = stored.find((o) => o.status === 'accepted')!;
      expect(kept.id).toBe('inbatch-2');
      expect(stored.find((o) => o.status === 'quarantined')!.valueNumeric).toBe(kept.valueNumeric === 60 ? 65 : 60);
      expect(await a.accumulator(p.projectId, 'user', 'inbatch-diff', 'hr')).toMatchObject({ count: 1, sum: kept.valueNumeric });
    });

    it('takes a batch of 10000 rows in one request', async () => {
      const rows = Array.from({ length: 10_000 }, (_, i) => numeric(i % 2 === 0 ? 'bulk-even' : 'bulk-odd', 20 + (i % 200), i));
      const res = await a.ingest(p.projectId, rows);
      expect(res.statusCode, res.body.slice(0, 500)).toBe(200);
      expect(res.json()).toEqual({ accepted: 10_000, quarantined: 0, duplicates: 0, quarantineReasons: {} });
      const even = rows.filter((_, i) => i % 2 === 0).map((r) => r.valueNumeric as number);
      const odd = rows.filter((_, i) => i % 2 === 1).map((r) => r.valueNumeric as number);
      expect(await a.accumulator(p.projectId, 'user', 'bulk-even', 'hr')).toMatchObject({
        count: 5000,
        sum: even.reduce((s, v) => s + v, 0),
        min: Math.min(...even),
        max: Math.max(...even),
        last: even.at(-1),
        lastObservedAt: at(9998),
      });
      expect(await a.accumulator(p.projectId, 'user', 'bulk-odd', 'hr')).toMatchObject({ count: 5000, sum: odd.reduce((s, v) => s + v, 0), last: odd.at(-1) });
    }, 60_000);

    it('keeps observedAt at millisecond precision and counts another spelling of the same instant as a duplicate', async () => {
      const res = await a.ingest(p.projectId, [
        numeric('ms1', 60, 0, { observedAt: '2026-01-01T00:00:00.123456Z' }),
        numeric('ms1', 60, 0, { observedAt: '2026-01-01T01:00:00.123+01:00' }),
      ]);
      expect(res.json()).toMatchObject({ accepted: 1, duplicates: 1 });
      const [stored] = await a.observations(p.projectId, { subject: 'user:ms1' });
      expect(stored!.observedAt).toBe('2026-01-01T00:00:00.123Z');
    });

    it('quarantines an observedAt Postgres cannot store (year 0000) instead of failing the call', async () => {
      const res = await a.ingest(p.projectId, [numeric('y0', 60, 0, { observedAt: '0000-01-01T00:00:00Z' })]);
      expect(res.statusCode).toBe(200);
      expect(res.json().quarantined).toBe(1);
    });

    it('keeps the accumulator readable after very large values', async () => {
      await a.define(p.projectId, { attributeKey: 'steps-unbounded', dataType: 'numeric' });
      const res = await a.ingest(p.projectId, [
        { ...numeric('huge', 0, 0), attributeKey: 'steps-unbounded' },
        { ...numeric('huge', 0, 1), attributeKey: 'steps-unbounded', valueNumeric: 1e200 },
      ]);
      expect(res.statusCode).toBe(200);
      expect((await a.accumulatorResponse(p.projectId, 'user', 'huge', 'steps-unbounded')).statusCode).toBe(200);
    });
  });

  describe('duplicates and concurrency', () => {
    it('counts the same batch sent in 5 parallel requests once', async () => {
      const rows = Array.from({ length: 20 }, (_, i) => numeric('dup-par', 40 + i, i));
      const responses = await Promise.all(Array.from({ length: 5 }, () => a.ingest(p.projectId, rows)));
      for (const res of responses) expect(res.statusCode, res.body).toBe(200);
      const reports = responses.map((r) => r.json());
      expect(reports.reduce((s, r) => s + r.accepted, 0)).toBe(20);
      expect(reports.reduce((s, r) => s + r.duplicates, 0)).toBe(80);
      expect(reports.every((r) => r.quarantined === 0)).toBe(true);
      expect(await a.accumulator(p.projectId, 'user', 'dup-par', 'hr')).toMatchObject({ count: 20, sum: rows.reduce((s, r) => s + (r.valueNumeric as number), 0), last: 59 });
      expect(await a.observations(p.projectId, { subject: 'user:dup-par' })).toHaveLength(20);
      expect(await a.events(p.projectId, 'user', 'dup-par')).toHaveLength(20);
    });

    // A third transaction holds the middle row until both requests wait on it, so they meet there.
    it('counts overlapping batches in opposite orders once when they meet at a row another transaction holds', async () => {
      const rows = Array.from({ length: 21 }, (_, i) => numeric('race', 40 + i, i));
      const rules = await loadRules(h.db, p.projectId, ['hr']);
      let pending: Promise<LightMyRequestResponse[]> | undefined;
      const blocker = h.db.transaction(async (tx) => {
        expect((await insertObservations(tx, p.projectId, checkRows([rows[10]!], rules))).size).toBe(1);
        pending = Promise.all([a.ingest(p.projectId, rows), a.ingest(p.projectId, [...rows].reverse())]);
        if (backend === 'pg') {
          // Both requests have inserted their half and wait for the middle row.
          await expect
            .poll(async () => onEveryNode(h.db, `SELECT count(*) FROM pg_stat_activity WHERE datname = current_database() AND wait_event_type = 'Lock' AND query ~ '^INSERT INTO ${shardName('typed_observations')}'`), {
              timeout: 60_000,
            })
            .toBe(2);
        } else {
          await new Promise((resolve) => setTimeout(resolve, 100));
        }
        throw new Error('roll back the blocker');
      });
      await expect(blocker).rejects.toThrow('roll back the blocker');
      const responses = await pending!;
      for (const res of responses) expect(res.statusCode, res.body).toBe(200);
      const reports = responses.map((r) => r.json());
      expect(reports.reduce((s, r) => s + r.accepted, 0)).toBe(21);
      expect(reports.reduce((s, r) => s + r.duplicates, 0)).toBe(21);
      expect((await a.accumulator(p.projectId, 'user', 'race', 'hr')).count).toBe(21);
    }, 120_000);

    it('accumulates concurrent random batches exactly as a from-scratch computation over the stored rows', async () => {
      await a.define(p.projectId, { attributeKey: 'prop', dataType: 'numeric' });
      let run = 0;
      // Multiples of 1/4: sums are exact whatever the fold order, so sum/min/max/last compare exactly.
      const value = fc.integer({ min: -40_000, max: 40_000 }).map((k) => (k === 0 ? 0 : k / 4));
      const input = fc.integer({ min: 1, max: 3 }).chain((subjects) =>
        fc
          .uniqueArray(fc.record({ subject: fc.integer({ min: 0, max: subjects - 1 }), minute: fc.integer({ min: 0, max: 12 }), value, clientId: fc.boolean() }), {
            minLength: 1,
            maxLength: 30,
            selector: (r) => `${r.subject}|${r.minute}|${r.value}`,
          })
          .chain((rows) =>
            fc.tuple(
              fc.constant(rows),
              fc.shuffledSubarray(
                rows.map((_, i) => i),
                { minLength: rows.length, maxLength: rows.length },
              ),
              fc.array(fc.nat(), { maxLength: 3 }),
            ),
          ),
      );
      await fc.assert(
        fc.asyncProperty(input, async ([rows, order, cuts]) => {
          run += 1;
          const subjectOf = (i: number) => `prop-${run}-${i}`;
          const sent = rows.map((r, i) => ({
            ...(r.clientId ? { id: `prop-${run}-row-${i}` } : {}),
            attributeKey: 'prop',
            subjectKind: 'user',
            subjectExternalId: subjectOf(r.subject),
            valueNumeric: r.value,
            observedAt: at(r.minute),
          }));
          const positions = [...new Set(cuts.map((c) => (c % order.length) + 1))].filter((c) => c < order.length).sort((x, y) => x - y);
          const batches: Row[][] = [];
          let start = 0;
          for (const end of [...positions, order.length]) {
            batches.push(order.slice(start, end).map((i) => sent[i]!));
            start = end;
          }
          const responses = await Promise.all(batches.map((batch) => a.ingest(p.projectId, batch)));
          for (const res of responses) expect(res.statusCode, res.body).toBe(200);
          expect(responses.reduce((s, r) => s + r.json().accepted, 0)).toBe(rows.length);

          for (const subject of new Set(rows.map((r) => r.subject))) {
            const externalId = subjectOf(subject);
            const stored = await a.observations(p.projectId, { subjectKind: 'user', subjectExternalId: externalId, attributeKey: 'prop', status: 'accepted' });
            const expectedValues = rows.filter((r) => r.subject === subject).map((r) => r.value);
            expect(stored.map((o) => o.valueNumeric).sort((x, y) => (x as number) - (y as number))).toEqual([...expectedValues].sort((x, y) => x - y));
            const points: NumericPoint[] = stored.map((o) => ({ id: o.id as string, value: o.valueNumeric as number, observedAt: Date.parse(o.observedAt as string) }));
            const scratch = fromSeries(points);
            const derived = derive(scratch);
            const got = await a.accumulator(p.projectId, 'user', externalId, 'prop');
            expect(got).toMatchObject({
              count: scratch.count,
              sum: scratch.sum,
              sumSq: scratch.sumSq,
              min: scratch.min,
              max: scratch.max,
              last: scratch.last,
              cumulative: scratch.cumulative,
              lastObservedAt: new Date(scratch.lastObservedAt!).toISOString(),
            });
            const maxAbs = Math.max(...points.map((pt) => Math.abs(pt.value)));
            expectClose(got.ewma, scratch.ewma, maxAbs, 'ewma');
            expectClose(got.ewmaVar, scratch.ewmaVar, maxAbs * maxAbs, 'ewmaVar');
            expectClose(got.mean, derived.mean, maxAbs, 'mean');
            expectClose(got.variance, derived.variance, maxAbs * maxAbs, 'variance');
            expectClose(got.stddev, derived.stddev, maxAbs, 'stddev');
          }
        }),
        { numRuns: 15 },
      );
    }, 60_000);

    it('keeps last and rebuilds the EWMA when an older observation arrives later', async () => {
      await a.ingest(p.projectId, [numeric('ooo', 50, 10)]);
      const late = await a.ingest(p.projectId, [numeric('ooo', 30, 5)]);
      expect(late.json().accepted).toBe(1);
      const acc = await a.accumulator(p.projectId, 'user', 'ooo', 'hr');
      // In observedAt order the series is 30, 50: ewma 30 + 0.3 * 20 = 36; ewmaVar 0.7 * (20 * 6) = 84.
      expect(acc).toMatchObject({ count: 2, sum: 80, min: 30, max: 50, last: 50, lastObservedAt: at(10), mean: 40, variance: 100, stddev: 10 });
      expect(acc.ewma).toBeCloseTo(36, 9);
      expect(acc.ewmaVar).toBeCloseTo(84, 9);
      // A newer one continues from there: 36 + 0.3 * (60 - 36) = 43.2.
      await a.ingest(p.projectId, [numeric('ooo', 60, 20)]);
      const next = await a.accumulator(p.projectId, 'user', 'ooo', 'hr');
      expect(next).toMatchObject({ count: 3, last: 60 });
      expect(next.ewma).toBeCloseTo(43.2, 9);
    });

    it('folds late data without reading the series, and the rebuild job stores the EWMA the reads computed', async () => {
      // Each batch folded on its own (the typed.fold job), as two runs of it would.
      await a.ingest(p.projectId, [numeric('job', 50, 10)]);
      await foldAllTyped(h);
      await a.ingest(p.projectId, [numeric('job', 30, 5)]);
      await foldAllTyped(h);
      const row = async () =>
        (
          await h.db.query<{ series_stale: boolean; ewma: number; count: number }>(
            `SELECT series_stale, ewma, count FROM typed_accumulators WHERE project_id = $1 AND subject_external_id = 'job'`,
            [p.projectId],
          )
        ).rows[0]!;
      // Stored at once: the moments; the EWMA still that of [50], marked for the rebuild.
      expect(await row()).toMatchObject({ series_stale: true, ewma: 50, count: 2 });
      expect((await a.accumulator(p.projectId, 'user', 'job', 'hr')).ewma).toBeCloseTo(36, 9);
      expect(await h.apis.typed.rebuildStaleSeries()).toBeGreaterThanOrEqual(1);
      const rebuilt = await row();
      expect(rebuilt.series_stale).toBe(false);
      expect(rebuilt.ewma).toBeCloseTo(36, 9);
      expect((await a.accumulator(p.projectId, 'user', 'job', 'hr')).ewma).toBeCloseTo(36, 9);
    });
  });

  describe('reading observations', () => {
    beforeAll(async () => {
      await a.define(p.projectId, { attributeKey: 'flt', dataType: 'numeric', maxValid: 1000 });
      await a.define(p.projectId, { attributeKey: 'flt2', dataType: 'numeric' });
      const row = (kind: string, id: string, attributeKey: string, value: number, minutes: number): Row => ({
        id: `flt-${kind}-${id}-${attributeKey}-${minutes}`,
        attributeKey,
        subjectKind: kind,
        subjectExternalId: id,
        valueNumeric: value,
        observedAt: at(minutes),
      });
      const res = await a.ingest(p.projectId, [
        row('user', 'flt-a', 'flt', 10, 0),
        row('user', 'flt-a', 'flt', 20, 1),
        row('user', 'flt-a', 'flt', 30, 2),
        row('user', 'flt-a', 'flt2', 40, 3),
        row('account', 'flt-a', 'flt', 50, 4),
        row('user', 'flt-b', 'flt', 60, 5),
        row('user', 'flt-b', 'flt', 5000, 6), // quarantined: above maxValid
      ]);
      expect(res.json()).toMatchObject({ accepted: 6, quarantined: 1 });
    });
    const ids = (rows: Row[]) => rows.map((r) => r.id);

    it('filters by subject as kind:id or as a bare id of any kind, newest observed first', async () => {
      expect(ids(await a.observations(p.projectId, { subject: 'user:flt-a' }))).toEqual(['flt-user-flt-a-flt2-3', 'flt-user-flt-a-flt-2', 'flt-user-flt-a-flt-1', 'flt-user-flt-a-flt-0']);
      expect(ids(await a.observations(p.projectId, { subject: 'flt-a', attribute: 'flt' }))).toEqual([
        'flt-account-flt-a-flt-4',
        'flt-user-flt-a-flt-2',
        'flt-user-flt-a-flt-1',
        'flt-user-flt-a-flt-0',
      ]);
      expect(ids(await a.observations(p.projectId, { subjectKind: 'account', subjectExternalId: 'flt-a' }))).toEqual(['flt-account-flt-a-flt-4']);
    });

    it('filters by attribute under either spelling', async () => {
      expect(ids(await a.observations(p.projectId, { attribute: 'flt2' }))).toEqual(['flt-user-flt-a-flt2-3']);
      expect(ids(await a.observations(p.projectId, { attributeKey: 'flt2' }))).toEqual(['flt-user-flt-a-flt2-3']);
      expect(await a.observations(p.projectId, { attributeKey: 'flt', subjectKind: 'user', subjectExternalId: 'flt-b' })).toHaveLength(2);
    });

    it('filters by since (inclusive) and until (exclusive)', async () => {
      expect(ids(await a.observations(p.projectId, { attribute: 'flt', since: at(1), until: at(4) }))).toEqual(['flt-user-flt-a-flt-2', 'flt-user-flt-a-flt-1']);
      expect(ids(await a.observations(p.projectId, { attribute: 'flt', since: at(5) }))).toEqual(['flt-user-flt-b-flt-6', 'flt-user-flt-b-flt-5']);
      expect(await a.observations(p.projectId, { attribute: 'flt', until: at(0) })).toEqual([]);
    });

    it('filters by minValue and maxValue (inclusive)', async () => {
      expect(ids(await a.observations(p.projectId, { attribute: 'flt', minValue: 20, maxValue: 50 }))).toEqual(['flt-account-flt-a-flt-4', 'flt-user-flt-a-flt-2', 'flt-user-flt-a-flt-1']);
      expect(ids(await a.observations(p.projectId, { attribute: 'flt', minValue: 1000 }))).toEqual(['flt-user-flt-b-flt-6']);
    });

    it('filters by status', async () => {
      const quarantined = await a.observations(p.projectId, { attribute: 'flt', status: 'quarantined' });
      expect(quarantined).toEqual([expect.objectContaining({ id: 'flt-user-flt-b-flt-6', status: 'quarantined', quarantineReason: 'value 5000 above maxValid 1000' })]);
      expect(await a.observations(p.projectId, { attribute: 'flt', status: 'accepted' })).toHaveLength(5);
      expect((await h.call('GET', p.projectId, `${OBSERVATIONS}?status=pending`)).statusCode).toBe(400);
    });

    it('pages with limit and offset', async () => {
      const all = ids(await a.observations(p.projectId, { attribute: 'flt' }));
      expect(all).toHaveLength(6);
      const pages = [];
      for (let offset = 0; offset < 6; offset += 4) pages.push(...ids(await a.observations(p.projectId, { attribute: 'flt', limit: 4, offset })));
      expect(pages).toEqual(all);
      expect(await a.observations(p.projectId, { attribute: 'flt', limit: 2, offset: 6 })).toEqual([]);
      expect((await h.call('GET', p.projectId, `${OBSERVATIONS}?limit=1001`)).statusCode).toBe(400);
    });
  });

  describe('accumulator reads', () => {
    it('answers 404 for an attribute that is not defined', async () => {
      const res = await a.accumulatorResponse(p.projectId, 'user', 'u1', 'never-defined');
      expect(res.statusCode).toBe(404);
      expect(res.json().code).toBe('NOT_FOUND');
    });

    it('answers count 0 with nulls for a defined attribute with no data', async () => {
      expect(await a.accumulator(p.projectId, 'user', 'nobody', 'hr')).toEqual({
        subjectKind: 'user',
        subjectExternalId: 'nobody',
        attributeKey: 'hr',
        count: 0,
        sum: 0,
        sumSq: 0,
        min: null,
        max: null,
        last: null,
        minVal: null,
        maxVal: null,
        lastVal: null,
        lastObservedAt: null,
        cumulative: 0,
        mean: null,
        variance: null,
        stddev: null,
        ewma: null,
        ewmaVar: null,
        updated: null,
      });
    });

    it('answers 400 when a query parameter is missing', async () => {
      for (const query of ['subjectKind=user&subjectExternalId=u1', 'subjectKind=user&attributeKey=hr', 'subjectExternalId=u1&attributeKey=hr']) {
        const res = await h.call('GET', p.projectId, `/memory-typed/accumulator?${query}`);
        expect(res.statusCode, query).toBe(400);
        expect(res.json().code).toBe('VALIDATION_ERROR');
      }
    });

    it('shows the SDK aliases minVal/maxVal/lastVal and derived statistics', async () => {
      await a.ingest(p.projectId, [numeric('alias', 40, 0), numeric('alias', 60, 1)]);
      expect(await a.accumulator(p.projectId, 'user', 'alias', 'hr')).toMatchObject({
        count: 2,
        sum: 100,
        sumSq: 5200,
        min: 40,
        minVal: 40,
        max: 60,
        maxVal: 60,
        last: 60,
        lastVal: 60,
        cumulative: 100,
        mean: 50,
        variance: 100,
        stddev: 10,
        // 40, then 60: ewma 40 + 0.3 * 20 = 46; ewmaVar 0.7 * (0 + 20 * 6) = 84
        ewma: 46,
        ewmaVar: 84,
        updated: expect.any(String),
      });
    });
  });

  describe('typed.observation events', () => {
    it('emits one event per accepted numeric observation, none for categorical, quarantined or duplicate rows', async () => {
      const res = await a.ingest(p.projectId, [
        numeric('ev1', 61, 0, { source: 'watch' }),
        numeric('ev1', 62, 1),
        numeric('ev1', 62, 1),
        numeric('ev1', 999, 2),
        { attributeKey: 'plan', subjectKind: 'user', subjectExternalId: 'ev1', valueText: 'pro', observedAt: at(3) },
      ]);
      expect(res.json()).toMatchObject({ accepted: 3, quarantined: 1, duplicates: 1 });
      const events = await a.events(p.projectId, 'user', 'ev1');
      expect(events).toHaveLength(2);
      const stored = await a.observations(p.projectId, { subject: 'user:ev1', attribute: 'hr', status: 'accepted' });
      expect(events.map((e) => e.payload.observationId).sort()).toEqual(stored.map((o) => o.id).sort());
      const first = events.find((e) => e.payload.value === 61)!;
      expect(first).toMatchObject({
        eventType: 'typed.observation',
        subject: { kind: 'user', externalId: 'ev1' },
        payload: { attributeKey: 'hr', value: 61, unit: 'bpm', observedAt: at(0), source: 'watch' },
      });
      expect(events.map((e) => e.payload.value).sort()).toEqual([61, 62]);
    });

    it('emits none for a batch of categorical rows', async () => {
      const res = await a.ingest(p.projectId, [
        { attributeKey: 'plan', subjectKind: 'user', subjectExternalId: 'ev2', valueText: 'free', observedAt: at(0) },
        { attributeKey: 'plan', subjectKind: 'user', subjectExternalId: 'ev2', valueText: 'pro', observedAt: at(1) },
      ]);
      expect(res.json().accepted).toBe(2);
      expect(await a.events(p.projectId, 'user', 'ev2')).toEqual([]);
      expect((await a.accumulator(p.projectId, 'user', 'ev2', 'plan')).count).toBe(0);
    });
  });

  describe('metering (events-ingested)', () => {
    let free: Project;
    beforeAll(async () => {
      free = await h.project({ plan: 'free' });
      await h.apis.tenancy.setPlan(free.projectId, 'free', { 'events-ingested': 5 });
      await a.define(free.projectId, { attributeKey: 'hr', dataType: 'numeric' });
    });

    it('refuses a whole batch over quota with 429 and Retry-After, takes one within it, and refuses enqueue over it', async () => {
      const six = Array.from({ length: 6 }, (_, i) => numeric('m1', 60 + i, i));
      const over = await a.ingest(free.projectId, six);
      expect(over.statusCode).toBe(429);
      expect(over.json().code).toBe('QUOTA_EXCEEDED');
      expect(Number(over.headers['retry-after'])).toBeGreaterThan(0);
      expect(await a.observations(free.projectId)).toEqual([]);
      expect((await a.accumulator(free.projectId, 'user', 'm1', 'hr')).count).toBe(0);
      expect(await a.events(free.projectId, 'user', 'm1')).toEqual([]);

      // Quarantined and duplicate rows count too: 4 rows, one of them a repeat, one unknown.
      const within = await a.ingest(free.projectId, [six[0]!, six[1]!, six[1]!, { ...six[2]!, attributeKey: 'nope' }]);
      expect(within.statusCode, within.body).toBe(200);
      expect(within.json()).toMatchObject({ accepted: 2, quarantined: 1, duplicates: 1 });
      const last = await a.ingest(free.projectId, [six[3]!]);
      expect(last.statusCode).toBe(200);
      expect(await h.apis.tenancy.usage(free.projectId, 'events-ingested')).toBe(5);

      const enqueued = await a.enqueue(free.projectId, [six[4]!]);
      expect(enqueued.statusCode).toBe(429);
      expect(enqueued.json().code).toBe('QUOTA_EXCEEDED');
      expect(enqueued.headers['retry-after']).toBeDefined();
      expect(await a.batches(free.projectId)).toEqual([]);
      expect((await a.accumulator(free.projectId, 'user', 'm1', 'hr')).count).toBe(3);
    });

    it('takes a batch of exactly the quota', async () => {
      const other = await h.project({ plan: 'free' });
      await h.apis.tenancy.setPlan(other.projectId, 'free', { 'events-ingested': 5 });
      await a.define(other.projectId, { attributeKey: 'hr', dataType: 'numeric' });
      const res = await a.ingest(other.projectId, Array.from({ length: 5 }, (_, i) => numeric('m2', 60 + i, i)));
      expect(res.statusCode).toBe(200);
      expect(res.json().accepted).toBe(5);
      expect((await a.ingest(other.projectId, [numeric('m2', 1, 99)])).statusCode).toBe(429);
    });
  });

  describe('queued ingest', () => {
    it('answers 202 with the count and ingests through the queue, quarantine included', async () => {
      const rows = [numeric('enq1', 60, 0), numeric('enq1', 70, 1), numeric('enq1', 512, 2), numeric('enq1', 80, 3), numeric('enq1', 80, 3)];
      const res = await a.enqueue(p.projectId, rows);
      expect(res.statusCode).toBe(202);
      expect(res.json()).toEqual({ enqueued: 5 });
      await expect.poll(async () => (await a.accumulator(p.projectId, 'user', 'enq1', 'hr')).count, { timeout: 60_000 }).toBe(3);
      expect(await a.accumulator(p.projectId, 'user', 'enq1', 'hr')).toMatchObject({ sum: 210, last: 80 });
      const quarantined = await a.observations(p.projectId, { subject: 'user:enq1', status: 'quarantined' });
      expect(quarantined).toEqual([expect.objectContaining({ valueNumeric: 512, quarantineReason: 'value 512 above maxValid 300', raw: rows[2] })]);
      expect(await a.observations(p.projectId, { subject: 'user:enq1' })).toHaveLength(4);
      expect(await a.events(p.projectId, 'user', 'enq1')).toHaveLength(3);
      await expect.poll(async () => (await a.batches(p.projectId)).length, { timeout: 60_000 }).toBe(0);
    }, 180_000);

    it('answers 400 for a wrong JSON type and queues nothing', async () => {
      const res = await a.enqueue(p.projectId, [{ ...numeric('enq2', 60, 0), valueNumeric: 'sixty' }]);
      expect(res.statusCode).toBe(400);
      expect(await a.batches(p.projectId)).toEqual([]);
    });
  });

  describe('project isolation', () => {
    let other: Project;
    beforeAll(async () => {
      other = await h.project();
    });

    it("answers 404 for another project's key on this project's paths", async () => {
      const key = other.apiKey;
      const calls = [
        h.call('GET', p.projectId, ATTRIBUTES, { apiKey: key }),
        h.call('POST', p.projectId, ATTRIBUTES, { apiKey: key, body: { attributeKey: 'intruder', dataType: 'numeric' } }),
        h.call('GET', p.projectId, OBSERVATIONS, { apiKey: key }),
        h.call('POST', p.projectId, OBSERVATIONS, { apiKey: key, body: { observations: [numeric('intruder', 60, 0)] } }),
        h.call('POST', p.projectId, ENQUEUE, { apiKey: key, body: { observations: [numeric('intruder', 60, 0)] } }),
        h.call('GET', p.projectId, '/memory-typed/accumulator?subjectKind=user&subjectExternalId=r1&attributeKey=hr', { apiKey: key }),
      ];
      for (const res of await Promise.all(calls)) {
        expect(res.statusCode, res.body).toBe(404);
        expect(res.json().code).toBe('NOT_FOUND');
      }
      expect((await h.call('GET', p.projectId, `${ATTRIBUTES}?attributeKey=intruder`)).json()).toEqual([]);
      expect(await a.observations(p.projectId, { subject: 'user:intruder' })).toEqual([]);
    });

    it("does not show one project's attributes, observations or accumulators to another", async () => {
      expect((await h.call('GET', other.projectId, ATTRIBUTES)).json()).toEqual([]);
      expect(await a.observations(other.projectId)).toEqual([]);
      expect(await a.observations(other.projectId, { subject: 'user:r1' })).toEqual([]);
      const acc = await a.accumulatorResponse(other.projectId, 'user', 'r1', 'hr');
      expect(acc.statusCode).toBe(404);
    });

    it('keeps the same attributeKey, subject and client id independent per project', async () => {
      await a.define(other.projectId, { attributeKey: 'hr', dataType: 'numeric', minValid: 0, maxValid: 1000 });
      const row = { ...numeric('iso', 500, 0), id: 'iso-1' };
      const mine = await a.ingest(p.projectId, [row]);
      expect(mine.json()).toMatchObject({ accepted: 0, quarantined: 1, quarantineReasons: { 'iso-1': 'value 500 above maxValid 300' } });
      const theirs = await a.ingest(other.projectId, [row]);
      expect(theirs.json()).toMatchObject({ accepted: 1, quarantined: 0, duplicates: 0 });
      expect(await a.accumulator(other.projectId, 'user', 'iso', 'hr')).toMatchObject({ count: 1, last: 500 });
      expect((await a.accumulator(p.projectId, 'user', 'iso', 'hr')).count).toBe(0);
      const [definition] = (await h.call('GET', p.projectId, `${ATTRIBUTES}?attributeKey=hr`)).json();
      expect(definition).toMatchObject({ projectId: p.projectId, minValid: 20, maxValid: 300 });
      expect(await a.events(p.projectId, 'user', 'iso')).toEqual([]);
      expect(await a.events(other.projectId, 'user', 'iso')).toHaveLength(1);
    });
  });
});

describe('queued ingest is durable before a consumer runs', () => {
  let h: Harness;
  let a: ReturnType<typeof api>;
  let p: Project;

  beforeAll(async () => {
    h = await createHarness({ consumers: false });
    a = api(h);
    p = await h.project();
    await a.define(p.projectId, { attributeKey: 'hr', dataType: 'numeric', maxValid: 300 });
  });
  afterAll(async () => {
    await h?.close();
  });

  it('stores the batch before answering 202 and ingests it once consumers start', async () => {
    const rows = [numeric('dur', 60, 0), numeric('dur', 80, 1), numeric('dur', 700, 2)];
    const res = await a.enqueue(p.projectId, rows);
    expect(res.statusCode).toBe(202);
    expect(res.json()).toEqual({ enqueued: 3 });
    const batches = await a.batches(p.projectId);
    expect(batches).toHaveLength(1);
    expect(batches[0]).toMatchObject({ id: expect.stringMatching(/^tib_/), row_count: 3, observations: rows });
    expect(await a.observations(p.projectId)).toEqual([]);
    expect((await a.accumulator(p.projectId, 'user', 'dur', 'hr')).count).toBe(0);

    await h.lattice.startConsumers();
    await expect.poll(async () => (await a.accumulator(p.projectId, 'user', 'dur', 'hr')).count, { timeout: 60_000 }).toBe(2);
    await expect.poll(async () => (await a.batches(p.projectId)).length, { timeout: 60_000 }).toBe(0);
    expect(await a.accumulator(p.projectId, 'user', 'dur', 'hr')).toMatchObject({ sum: 140, last: 80 });
    expect(await a.observations(p.projectId, { status: 'quarantined' })).toEqual([expect.objectContaining({ valueNumeric: 700, quarantineReason: 'value 700 above maxValid 300' })]);
    expect(await a.observations(p.projectId)).toHaveLength(3);
  }, 180_000);

  it('ingests a stored batch whose job was lost once the sweep finds it, and leaves a fresh one to its job', async () => {
    // A batch in the table with no job anywhere: what a crash between the insert and the enqueue leaves.
    await insertIngestBatch(h.db, 'tib_lost_job', p.projectId, [numeric('lost', 90, 0)]);
    expect((await h.apis.typed.sweepQueued(60_000)).batches).toBe(0);
    expect((await h.apis.typed.sweepQueued(0)).batches).toBe(1);
    await expect.poll(async () => (await a.accumulator(p.projectId, 'user', 'lost', 'hr')).count, { timeout: 60_000 }).toBe(1);
    await expect.poll(async () => (await a.batches(p.projectId)).length, { timeout: 60_000 }).toBe(0);
    // Sweeping again finds nothing, and nothing is ingested twice.
    expect((await h.apis.typed.sweepQueued(0)).batches).toBe(0);
    expect(await a.observations(p.projectId, { subject: 'user:lost' })).toHaveLength(1);
  }, 180_000);
});

describe.skipIf(!REDIS_URL || !SERVER_DATABASE_URL)('queued ingest consumed by a separate worker context', () => {
  let h: Harness;
  let a: ReturnType<typeof api>;
  let p: Project;
  let worker: Lattice | undefined;

  beforeAll(async () => {
    // This context only produces jobs; a second one on the same database and queue consumes them.
    h = await createHarness({ consumers: false });
    a = api(h);
    p = await h.project();
    await a.define(p.projectId, { attributeKey: 'hr', dataType: 'numeric' });
  });
  afterAll(async () => {
    await worker?.close();
    await h?.close();
  });

  it('is picked up by the other context', async () => {
    const rows = Array.from({ length: 50 }, (_, i) => numeric('remote', 60 + i, i));
    expect((await a.enqueue(p.projectId, rows.slice(0, 25))).statusCode).toBe(202);
    expect(await a.batches(p.projectId)).toHaveLength(1);
    worker = await createLattice(h.config, { log: createLogger('silent'), db: await h.database.open() });
    await worker.startConsumers();
    // One queued before the worker started, one after.
    expect((await a.enqueue(p.projectId, rows.slice(25))).statusCode).toBe(202);
    await expect.poll(async () => (await a.accumulator(p.projectId, 'user', 'remote', 'hr')).count, { timeout: 60_000 }).toBe(50);
    await expect.poll(async () => (await a.batches(p.projectId)).length, { timeout: 60_000 }).toBe(0);
    expect(await a.accumulator(p.projectId, 'user', 'remote', 'hr')).toMatchObject({ last: 109, sum: rows.reduce((s, r) => s + (r.valueNumeric as number), 0) });
  }, 180_000);
});
