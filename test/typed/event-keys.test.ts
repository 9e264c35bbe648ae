// typed.observation events are inserted without conflict handling (their keys name observations of
// one outbox row, taken once); a key that exists anyway must not lose the observation its event.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { FAST_INSERT_MIN_ROWS } from '../../src/platform/db.js';
import { appendAllTypedEvents, createHarness, type Harness } from '../helpers/harness.js';

describe('typed.observation event keys', () => {
  let h: Harness;
  let p: { projectId: string; apiKey: string };

  beforeAll(async () => {
    h = await createHarness();
    p = await h.project();
    await h.call('POST', p.projectId, '/memory-typed/attributes', { body: { attributeKey: 'hr', dataType: 'numeric' } });
  });
  afterAll(() => h?.close());

  it('ingests a row whose event key was already taken by a manual emit, and keeps every other event', async () => {
    const emitted = await h.call('POST', p.projectId, '/lattice/events/emit', { body: { eventType: 'manual.thing', dedupeKey: 'typed:clash-1' } });
    expect(emitted.json().emitted).toBe(true);
    const row = (id: string, value: number) => ({ id, attributeKey: 'hr', subjectKind: 'user', subjectExternalId: 'k1', valueNumeric: value, observedAt: `2026-01-01T00:00:0${value}Z` });
    const res = await h.call('POST', p.projectId, '/memory-typed/observations', { body: { observations: [row('clash-1', 1), row('fine-2', 2)] } });
    expect(res.statusCode, res.body).toBe(200);
    expect(res.json()).toMatchObject({ accepted: 2, duplicates: 0 });
    await appendAllTypedEvents(h);
    const typed = (await h.call('GET', p.projectId, '/memory-events?eventTypes=typed.observation')).json();
    // The clashing key keeps the manual event; the other observation got its event.
    expect(typed.map((e: { payload: { observationId: string } }) => e.payload.observationId)).toEqual(['fine-2']);
    expect((await h.call('GET', p.projectId, '/memory-typed/accumulator?subjectKind=user&subjectExternalId=k1&attributeKey=hr')).json()).toMatchObject({ count: 2, sum: 3 });
  });

  it(`does the same in a batch of ${FAST_INSERT_MIN_ROWS} rows or more, which inserts without conflict handling first`, async () => {
    await h.call('POST', p.projectId, '/lattice/events/emit', { body: { eventType: 'manual.thing', dedupeKey: 'typed:clash-big' } });
    const rows = [
      { id: 'clash-big', attributeKey: 'hr', subjectKind: 'user', subjectExternalId: 'k3', valueNumeric: 0, observedAt: new Date(Date.UTC(2026, 0, 3)).toISOString() },
      ...Array.from({ length: FAST_INSERT_MIN_ROWS }, (_, i) => ({
        attributeKey: 'hr', subjectKind: 'user', subjectExternalId: 'k3', valueNumeric: i + 1, observedAt: new Date(Date.UTC(2026, 0, 3, 0, 0, i + 1)).toISOString(),
      })),
    ];
    const res = await h.call('POST', p.projectId, '/memory-typed/observations', { body: { observations: rows } });
    expect(res.statusCode, res.body).toBe(200);
    expect(res.json()).toMatchObject({ accepted: FAST_INSERT_MIN_ROWS + 1, duplicates: 0 });
    await appendAllTypedEvents(h);
    const events = (await h.call('GET', p.projectId, `/memory-events?eventTypes=typed.observation&subjectExternalId=k3&limit=${FAST_INSERT_MIN_ROWS + 10}`)).json();
    expect(events).toHaveLength(FAST_INSERT_MIN_ROWS);
    expect(events.map((e: { payload: { observationId: string } }) => e.payload.observationId)).not.toContain('clash-big');
  });

  it('gives every accepted numeric row its own event when no key clashes', async () => {
    const rows = Array.from({ length: 50 }, (_, i) => ({ attributeKey: 'hr', subjectKind: 'user', subjectExternalId: 'k2', valueNumeric: i, observedAt: new Date(Date.UTC(2026, 0, 2, 0, 0, i)).toISOString() }));
    const res = await h.call('POST', p.projectId, '/memory-typed/observations', { body: { observations: rows } });
    expect(res.json().accepted).toBe(50);
    await appendAllTypedEvents(h);
    const events = (await h.call('GET', p.projectId, '/memory-events?eventTypes=typed.observation&subjectExternalId=k2&limit=100')).json();
    expect(events).toHaveLength(50);
    expect(new Set(events.map((e: { payload: { value: number } }) => e.payload.value)).size).toBe(50);
  });
});
