// The event horizon (migration 0015): occurredAt values come from a clock that no transaction holds,
// so appends of one project run at once; a poller reads only below the instant before which every
// event has committed. An event that commits late with an early occurredAt is therefore never
// skipped by a poller that already paged past later ones (WIRE.md decision 10). Two connections are
// needed to hold one append open while another commits: Postgres only.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { NewEvent } from '../../src/events/schemas.js';
import { backend, createHarness, type Harness } from '../helpers/harness.js';

const EVENTS = '/memory-events';

const event = (eventType: string): NewEvent => ({
  eventType,
  subject: { kind: 'user', externalId: 'u1' },
  severity: 'info',
  payload: {},
  sourceMemoryIds: [],
  sourcePatternId: null,
  emittedByPack: null,
  dedupeKey: `${eventType}:${Math.random()}`,
});

describe.skipIf(backend === 'pglite')('the event horizon', () => {
  let h: Harness;
  beforeAll(async () => {
    h = await createHarness();
  });
  afterAll(() => h?.close());

  const page = async (projectId: string, since?: string) => {
    const res = await h.call('GET', projectId, `${EVENTS}?limit=100${since ? `&since=${encodeURIComponent(since)}` : ''}`);
    expect(res.statusCode, res.body).toBe(200);
    return (res.json() as { eventType: string; occurredAt: string }[]).map((e) => ({ eventType: e.eventType, occurredAt: e.occurredAt }));
  };

  it('holds back events that committed after an earlier append still open, and shows both once it commits', async () => {
    const { projectId } = await h.project();
    expect((await h.call('POST', projectId, '/lattice/events/emit', { body: { eventType: 'before' } })).statusCode).toBe(200);

    let appended!: () => void;
    const appendedOpen = new Promise<void>((resolve) => (appended = resolve));
    let commit!: () => void;
    const mayCommit = new Promise<void>((resolve) => (commit = resolve));
    const slow = h.db.transaction(async (tx) => {
      const receipt = await h.apis.events.appendInTransaction(tx, projectId, [event('slow')]);
      appended();
      await mayCommit;
      return receipt.appended[0]!.occurredAt;
    });
    await appendedOpen;

    let fast, first;
    try {
      // A later append commits first: its occurredAt is after the open one's.
      fast = await h.call('POST', projectId, '/lattice/events/emit', { body: { eventType: 'fast' } });
      expect(fast.statusCode, fast.body).toBe(200);
      first = await page(projectId);
      expect(first.map((e) => e.eventType)).toEqual(['before']);
    } finally {
      commit();
    }
    const slowAt = await slow;
    expect(slowAt < fast.json().event.occurredAt).toBe(true);
    // The poller goes on from the last event it saw and misses neither.
    const next = await page(projectId, first.at(-1)!.occurredAt);
    expect(next.map((e) => e.eventType)).toEqual(['slow', 'fast']);
    expect(next[0]!.occurredAt).toBe(slowAt);
  });

  it('does not hold back one project for another project\'s open append', async () => {
    const a = await h.project();
    const b = await h.project();
    let appended!: () => void;
    const appendedOpen = new Promise<void>((resolve) => (appended = resolve));
    let commit!: () => void;
    const mayCommit = new Promise<void>((resolve) => (commit = resolve));
    const open = h.db.transaction(async (tx) => {
      await h.apis.events.appendInTransaction(tx, a.projectId, [event('a.open')]);
      appended();
      await mayCommit;
    });
    await appendedOpen;
    try {
      expect((await h.call('POST', b.projectId, '/lattice/events/emit', { body: { eventType: 'b.done' } })).statusCode).toBe(200);
      expect((await page(b.projectId)).map((e) => e.eventType)).toEqual(['b.done']);
    } finally {
      commit();
      await open;
    }
    expect((await page(a.projectId)).map((e) => e.eventType)).toEqual(['a.open']);
  });

  it('hands out unique, increasing occurredAt values to appends that run at once', async () => {
    const { projectId } = await h.project();
    const answers = await Promise.all(
      Array.from({ length: 40 }, (_, i) => h.call('POST', projectId, '/lattice/events/emit', { body: { eventType: 'burst', dedupeKey: `k${i}` } })),
    );
    expect(answers.map((a) => a.statusCode)).toEqual(Array(40).fill(200));
    const listed = await page(projectId);
    expect(listed).toHaveLength(40);
    const times = listed.map((e) => e.occurredAt);
    expect([...times].sort()).toEqual(times);
    expect(new Set(times).size).toBe(40);
  });
});
