// The event log over HTTP: emit (validation, idempotency under replay and concurrency) and the
// poll (oldest first, strictly after `since`, paging that never repeats or skips an event).
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { appendAllTypedEvents, createHarness, type Harness } from '../helpers/harness.js';

const EMIT = '/lattice/events/emit';
const MICROS = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{6}Z$/;

interface PolledEvent {
  id: string;
  eventType: string;
  subject: { kind: string; externalId: string } | null;
  severity: string;
  payload: Record<string, unknown>;
  sourceMemoryIds: string[];
  sourcePatternId: string | null;
  emittedByPack: string | null;
  dedupeKey: string;
  occurredAt: string;
}

describe('events', () => {
  let h: Harness;
  let p: { projectId: string; apiKey: string };

  beforeAll(async () => {
    h = await createHarness();
    p = await h.project();
  });
  afterAll(async () => {
    await h?.close();
  });

  const emit = (body: unknown, projectId = p.projectId, apiKey?: string) => h.call('POST', projectId, EMIT, { body, ...(apiKey ? { apiKey } : {}) });
  const poll = async (query: string, projectId = p.projectId, apiKey?: string): Promise<PolledEvent[]> => {
    const res = await h.call('GET', projectId, `/memory-events${query}`, apiKey ? { apiKey } : {});
    expect(res.statusCode, res.body).toBe(200);
    return res.json();
  };

  describe('emit', () => {
    it('appends an event and answers {emitted, event{id, eventType, severity, occurredAt}, alertDispatches}', async () => {
      const res = await emit({
        eventType: 'order.placed',
        subject: { kind: 'customer', externalId: 'c-1' },
        severity: 'warn',
        payloadJson: '{"order":{"total":100},"category":"billing"}',
        sourceMemoryIds: ['mem_a', 'mem_b'],
        sourcePatternId: 'mem_p',
        emittedByPack: 'retail',
        dedupeKey: 'order-1',
      });
      expect(res.statusCode, res.body).toBe(200);
      const body = res.json();
      expect(body).toEqual({
        emitted: true,
        event: { id: expect.any(String), eventType: 'order.placed', severity: 'warn', occurredAt: expect.stringMatching(MICROS) },
        alertDispatches: 0,
      });
      const [logged] = await poll('?eventTypes=order.placed');
      expect(logged).toEqual({
        id: body.event.id,
        eventType: 'order.placed',
        subject: { kind: 'customer', externalId: 'c-1' },
        severity: 'warn',
        payload: { order: { total: 100 }, category: 'billing' },
        sourceMemoryIds: ['mem_a', 'mem_b'],
        sourcePatternId: 'mem_p',
        emittedByPack: 'retail',
        dedupeKey: 'order-1',
        occurredAt: body.event.occurredAt,
      });
    });

    it('takes the payload as an object too, and defaults severity to info, subject to null and payload to {}', async () => {
      const res = await emit({ eventType: 'defaults.check', dedupeKey: 'defaults-1' });
      expect(res.statusCode, res.body).toBe(200);
      expect(res.json().event.severity).toBe('info');
      const withObject = await emit({ eventType: 'defaults.check', payload: { a: [1, 2] }, dedupeKey: 'defaults-2' });
      expect(withObject.statusCode, withObject.body).toBe(200);
      const events = await poll('?eventTypes=defaults.check');
      expect(events.map((e) => [e.severity, e.subject, e.payload, e.sourceMemoryIds, e.sourcePatternId, e.emittedByPack])).toEqual([
        ['info', null, {}, [], null, null],
        ['info', null, { a: [1, 2] }, [], null, null],
      ]);
    });

    it('stores sourcePatternId and emittedByPack sent as null as null', async () => {
      // Bodies are not type-coerced: the string branch of Union(String, Null) would turn null into "".
      const res = await emit({ eventType: 'nulls.sent', sourcePatternId: null, emittedByPack: null, subject: null, dedupeKey: 'nulls-1' });
      expect(res.statusCode, res.body).toBe(200);
      const [logged] = await poll('?eventTypes=nulls.sent');
      expect(logged).toMatchObject({ subject: null, sourcePatternId: null, emittedByPack: null });
    });

    it('refuses an unknown severity, a missing or malformed eventType, and unknown fields with 400', async () => {
      for (const body of [
        { eventType: 'x.y', severity: 'fatal' },
        { eventType: 'x.y', severity: 'INFO' },
        { severity: 'info' },
        { eventType: '' },
        { eventType: 'has spaces' },
        { eventType: 'x.y', payloadJSON: '{}' },
      ]) {
        const res = await emit(body);
        expect(res.statusCode, JSON.stringify(body)).toBe(400);
        expect(res.json().code).toBe('VALIDATION_ERROR');
      }
    });

    it('refuses payloadJson that is not JSON, or JSON that is not an object, with 400 VALIDATION_ERROR', async () => {
      for (const payloadJson of ['{not json', '{"a":1', '[1,2,3]', '[]', '"text"', '42', 'null', 'true']) {
        const res = await emit({ eventType: 'bad.payload', payloadJson });
        expect(res.statusCode, payloadJson).toBe(400);
        expect(res.json().code).toBe('VALIDATION_ERROR');
      }
      expect(await poll('?eventTypes=bad.payload')).toEqual([]);
    });

    it('refuses payload and payloadJson together with 400', async () => {
      const res = await emit({ eventType: 'both.payloads', payload: { a: 1 }, payloadJson: '{"a":1}' });
      expect(res.statusCode).toBe(400);
      expect(res.json().code).toBe('VALIDATION_ERROR');
      expect(await poll('?eventTypes=both.payloads')).toEqual([]);
    });

    it('is idempotent per dedupeKey: a repeat answers emitted false with the stored event, and the log holds one', async () => {
      const first = await emit({ eventType: 'idem.key', payloadJson: '{"n":1}', dedupeKey: 'idem-1' });
      expect(first.json()).toMatchObject({ emitted: true });
      // Different content, same key: still the first event.
      const repeat = await emit({ eventType: 'idem.key', severity: 'critical', payloadJson: '{"n":2}', dedupeKey: 'idem-1' });
      expect(repeat.statusCode, repeat.body).toBe(200);
      expect(repeat.json()).toEqual({ emitted: false, event: first.json().event, alertDispatches: 0 });
      const logged = await poll('?eventTypes=idem.key');
      expect(logged).toHaveLength(1);
      expect(logged[0]!.payload).toEqual({ n: 1 });
      // Same content, another key: a second event.
      const other = await emit({ eventType: 'idem.key', payloadJson: '{"n":1}', dedupeKey: 'idem-2' });
      expect(other.json().emitted).toBe(true);
      expect(await poll('?eventTypes=idem.key')).toHaveLength(2);
    });

    it('keeps a replayed request without a dedupeKey to one event', async () => {
      const body = { eventType: 'replay.plain', subject: { kind: 'user', externalId: 'u1' }, payloadJson: '{"x":1}' };
      const first = await emit(body);
      const second = await emit(body);
      // The same content sent as an object, with the default severity spelled out, is the same event.
      const third = await emit({ eventType: 'replay.plain', subject: { kind: 'user', externalId: 'u1' }, severity: 'info', payload: { x: 1 } });
      expect(first.json().emitted).toBe(true);
      expect(second.json()).toMatchObject({ emitted: false, event: { id: first.json().event.id } });
      expect(third.json()).toMatchObject({ emitted: false, event: { id: first.json().event.id } });
      // Key order inside the payload does not make a new event.
      const reordered = await emit({ eventType: 'replay.plain', subject: { kind: 'user', externalId: 'u1' }, payloadJson: '{"y":{"b":2,"a":1},"x":1}' });
      const reorderedAgain = await emit({ eventType: 'replay.plain', subject: { kind: 'user', externalId: 'u1' }, payloadJson: '{"x":1,"y":{"a":1,"b":2}}' });
      expect(reordered.json().emitted).toBe(true);
      expect(reorderedAgain.json()).toMatchObject({ emitted: false, event: { id: reordered.json().event.id } });
      // Different content is a different event.
      const changed = await emit({ ...body, payloadJson: '{"x":2}' });
      expect(changed.json().emitted).toBe(true);
      expect(await poll('?eventTypes=replay.plain')).toHaveLength(3);
    });

    it('makes concurrent identical emits one event, emitted exactly once', async () => {
      const body = { eventType: 'race.same', subject: { kind: 'user', externalId: 'racer' }, payloadJson: '{"n":1}' };
      const answers = await Promise.all(Array.from({ length: 10 }, () => emit(body)));
      expect(answers.map((a) => a.statusCode)).toEqual(Array(10).fill(200));
      const bodies = answers.map((a) => a.json());
      expect(bodies.filter((b) => b.emitted)).toHaveLength(1);
      expect(new Set(bodies.map((b) => b.event.id)).size).toBe(1);
      expect(await poll('?eventTypes=race.same')).toHaveLength(1);

      const keyed = await Promise.all(Array.from({ length: 10 }, (_, i) => emit({ eventType: 'race.keyed', payloadJson: `{"i":${i}}`, dedupeKey: 'race-key' })));
      expect(keyed.filter((a) => a.json().emitted)).toHaveLength(1);
      expect(new Set(keyed.map((a) => a.json().event.id)).size).toBe(1);
      expect(await poll('?eventTypes=race.keyed')).toHaveLength(1);
    });
  });

  describe('poll', () => {
    it('pages forward by the last occurredAt through ~250 events written concurrently, every event exactly once, in strictly increasing order', async () => {
      const q = await h.project();
      const def = await h.call('POST', q.projectId, '/memory-typed/attributes', { body: { attributeKey: 'steps', dataType: 'numeric' } });
      expect(def.statusCode, def.body).toBe(201);
      const observations = (n: number, from: number) =>
        Array.from({ length: n }, (_, i) => ({
          attributeKey: 'steps',
          subjectKind: 'user',
          subjectExternalId: `u${(from + i) % 5}`,
          valueNumeric: from + i,
          observedAt: new Date(Date.UTC(2026, 0, 1) + (from + i) * 60_000).toISOString(),
        }));
      const emitMany = (n: number, tag: string) =>
        Array.from({ length: n }, (_, i) => emit({ eventType: `page.${tag}`, payloadJson: JSON.stringify({ i }), dedupeKey: `${tag}-${i}` }, q.projectId));

      // A poller walks the log with limit 7 while the writers run, and keeps going until it catches up.
      const seen: PolledEvent[] = [];
      let cursor: string | undefined;
      let writersDone = false;
      const walk = async () => {
        for (;;) {
          const page = await poll(`?limit=7${cursor ? `&since=${encodeURIComponent(cursor)}` : ''}`, q.projectId);
          expect(page.length).toBeLessThanOrEqual(7);
          seen.push(...page);
          if (page.length > 0) cursor = page.at(-1)!.occurredAt;
          else if (writersDone) return;
          else await new Promise((resolve) => setTimeout(resolve, 5));
        }
      };
      const writers = async () => {
        for (let i = 0; i < 10; i++) expect((await emit({ eventType: 'page.seq', payloadJson: `{"i":${i}}` }, q.projectId)).json().emitted).toBe(true);
        // A burst of single emits racing a bulk ingest whose 120 typed.observation events commit in one transaction.
        const burst = await Promise.all([
          h.call('POST', q.projectId, '/memory-typed/observations', { body: { observations: observations(120, 0) } }),
          ...emitMany(40, 'burst'),
        ]);
        expect(burst[0]!.json()).toMatchObject({ accepted: 120 });
        expect(burst.slice(1).every((r) => r.json().emitted === true)).toBe(true);
        const second = await Promise.all([
          ...emitMany(30, 'late'),
          h.call('POST', q.projectId, '/memory-typed/observations', { body: { observations: observations(50, 200) } }),
          ...emitMany(5, 'tail'),
        ]);
        expect(second.every((r) => r.statusCode === 200)).toBe(true);
        // The ingests' typed.observation events follow them (the typed.events job, one transaction
        // per ingest): the writers are done once those are appended too (seen in CI: 85 of 255).
        await appendAllTypedEvents(h);
        writersDone = true;
      };
      await Promise.all([walk(), writers()]);

      // Afterwards, a fresh walk from the start sees the same events in the same order.
      const all: PolledEvent[] = [];
      let since: string | undefined;
      for (;;) {
        const page = await poll(`?limit=7${since ? `&since=${encodeURIComponent(since)}` : ''}`, q.projectId);
        if (page.length === 0) break;
        all.push(...page);
        since = page.at(-1)!.occurredAt;
      }
      expect(all).toHaveLength(10 + 120 + 40 + 30 + 50 + 5);
      expect(all.filter((e) => e.eventType === 'typed.observation')).toHaveLength(170);
      expect(new Set(all.map((e) => e.id)).size).toBe(all.length);
      for (let i = 1; i < all.length; i++) expect(all[i]!.occurredAt > all[i - 1]!.occurredAt, `${all[i - 1]!.occurredAt} then ${all[i]!.occurredAt}`).toBe(true);
      for (const e of all) expect(e.occurredAt).toMatch(MICROS);
      // The concurrent poller saw every one exactly once, in the same order: none skipped, none repeated.
      expect(seen.map((e) => e.id)).toEqual(all.map((e) => e.id));
      // One big page agrees.
      expect((await poll('?limit=1000', q.projectId)).map((e) => e.id)).toEqual(all.map((e) => e.id));
      // The bulk ingest's events are contiguous: nothing else interleaves inside one transaction.
      const typedIndexes = all.flatMap((e, i) => (e.eventType === 'typed.observation' && (e.payload.value as number) < 120 ? [i] : []));
      expect(typedIndexes.at(-1)! - typedIndexes[0]!).toBe(119);
    });

    it('answers oldest first, strictly after since, 100 by default', async () => {
      const q = await h.project();
      await Promise.all(Array.from({ length: 105 }, (_, i) => emit({ eventType: 'many.one', dedupeKey: `m-${i}` }, q.projectId)));
      const first = await poll('', q.projectId);
      expect(first).toHaveLength(100);
      const rest = await poll(`?since=${encodeURIComponent(first.at(-1)!.occurredAt)}`, q.projectId);
      expect(rest).toHaveLength(5);
      const middle = first[49]!;
      const after = await poll(`?limit=3&since=${encodeURIComponent(middle.occurredAt)}`, q.projectId);
      expect(after.map((e) => e.id)).toEqual(first.slice(50, 53).map((e) => e.id));
      // since in another offset, same instant: same answer.
      const shifted = middle.occurredAt.replace(/^(\d{4}-\d{2}-\d{2}T)(\d{2})(.*)Z$/, (_all, day: string, hour: string, rest: string) => `${day}${String((Number(hour) + 1) % 24).padStart(2, '0')}${rest}+01:00`);
      if (!middle.occurredAt.includes('T23:')) {
        expect((await poll(`?limit=3&since=${encodeURIComponent(shifted)}`, q.projectId)).map((e) => e.id)).toEqual(after.map((e) => e.id));
      }
      expect(await poll(`?since=${encodeURIComponent(rest.at(-1)!.occurredAt)}`, q.projectId)).toEqual([]);
    });

    it('filters by a comma-separated list of event types', async () => {
      const q = await h.project();
      for (const eventType of ['kind.a', 'kind.b', 'kind.c', 'kind.a', 'kind.c']) {
        await emit({ eventType, dedupeKey: `${eventType}-${Math.random()}` }, q.projectId);
      }
      expect((await poll('?eventTypes=kind.a', q.projectId)).map((e) => e.eventType)).toEqual(['kind.a', 'kind.a']);
      expect((await poll('?eventTypes=kind.a,kind.c', q.projectId)).map((e) => e.eventType)).toEqual(['kind.a', 'kind.c', 'kind.a', 'kind.c']);
      expect((await poll(`?eventTypes=${encodeURIComponent(' kind.b , kind.c ,')}`, q.projectId)).map((e) => e.eventType)).toEqual(['kind.b', 'kind.c', 'kind.c']);
      expect(await poll('?eventTypes=kind.z', q.projectId)).toEqual([]);
      expect(await poll('?eventTypes=kind.*', q.projectId)).toEqual([]);
      const page = await poll('?eventTypes=kind.a,kind.c&limit=2', q.projectId);
      expect((await poll(`?eventTypes=kind.a,kind.c&since=${encodeURIComponent(page.at(-1)!.occurredAt)}`, q.projectId)).map((e) => e.eventType)).toEqual(['kind.a', 'kind.c']);
    });

    it('refuses limit 0, limit 1001, a non-numeric limit and a malformed since with 400', async () => {
      for (const query of ['?limit=0', '?limit=1001', '?limit=-1', '?limit=ten', '?since=yesterday', '?unknown=1']) {
        const res = await h.call('GET', p.projectId, `/memory-events${query}`);
        expect(res.statusCode, query).toBe(400);
        expect(res.json().code).toBe('VALIDATION_ERROR');
      }
      expect((await h.call('GET', p.projectId, '/memory-events?limit=1')).statusCode).toBe(200);
      expect((await h.call('GET', p.projectId, '/memory-events?limit=1000')).statusCode).toBe(200);
    });
  });

  describe('access', () => {
    it('lets a READ key poll but not emit (403), and answers 401 without a key', async () => {
      const readKey = await h.key(p.projectId, ['READ_MEMORY']);
      expect((await h.call('GET', p.projectId, '/memory-events', { apiKey: readKey })).statusCode).toBe(200);
      const denied = await emit({ eventType: 'read.only', dedupeKey: 'ro' }, p.projectId, readKey);
      expect(denied.statusCode).toBe(403);
      expect(await poll('?eventTypes=read.only')).toEqual([]);

      const anonymousPoll = await h.app.inject({ method: 'GET', url: `/api/v1/projects/${p.projectId}/memory-events` });
      expect(anonymousPoll.statusCode).toBe(401);
      const anonymousEmit = await h.app.inject({ method: 'POST', url: `/api/v1/projects/${p.projectId}${EMIT}`, payload: { eventType: 'anon.x' } });
      expect(anonymousEmit.statusCode).toBe(401);
      expect(await poll('?eventTypes=anon.x')).toEqual([]);
    });

    it("answers 404 to another project's key, and never shows one project's events to another", async () => {
      const a = await h.project();
      const b = await h.project();
      await emit({ eventType: 'secret.a', dedupeKey: 'same-key' }, a.projectId);
      expect((await h.call('GET', a.projectId, '/memory-events', { apiKey: b.apiKey })).statusCode).toBe(404);
      expect((await h.call('POST', a.projectId, EMIT, { apiKey: b.apiKey, body: { eventType: 'intruder.x' } })).statusCode).toBe(404);
      expect(await poll('', b.projectId)).toEqual([]);
      // The same dedupeKey in another project is another event.
      const onB = await emit({ eventType: 'own.b', dedupeKey: 'same-key' }, b.projectId);
      expect(onB.json().emitted).toBe(true);
      expect((await poll('', b.projectId)).map((e) => e.eventType)).toEqual(['own.b']);
      expect((await poll('', a.projectId)).map((e) => e.eventType)).toEqual(['secret.a']);
    });
  });
});
