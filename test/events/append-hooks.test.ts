// The event log's on-append hook, the seam higher domains (alert rules) plug into: subscribers run
// inside the appending transaction and act after it commits, and the log knows none of them.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createHarness, type Harness } from '../helpers/harness.js';

const EMIT = '/lattice/events/emit';

describe('append subscribers', () => {
  let h: Harness;
  /** What the test subscriber saw, per project. */
  const seen: { projectId: string; eventTypes: string[]; inTransaction: boolean }[] = [];
  const committed: { projectId: string; eventTypes: string[] }[] = [];

  beforeAll(async () => {
    h = await createHarness();
    h.apis.events.onAppend(async (tx, projectId, events) => {
      const eventTypes = events.map((e) => e.eventType);
      // The appended rows are visible through the transaction handed to the subscriber.
      const { rows } = await tx.query<{ n: number }>('SELECT count(*)::int AS n FROM events WHERE project_id = $1 AND id = ANY($2::text[])', [
        projectId,
        events.map((e) => e.id),
      ]);
      seen.push({ projectId, eventTypes, inTransaction: rows[0]!.n === events.length });
      if (eventTypes.includes('test.explode')) throw new Error('subscriber failed');
      if (!eventTypes.includes('test.notify')) return undefined;
      return { dispatches: 2, afterCommit: async () => void committed.push({ projectId, eventTypes }) };
    });
  });
  afterAll(() => h?.close());

  it('runs in the appending transaction, then after commit, and counts its dispatches', async () => {
    const { projectId } = await h.project();
    const res = await h.call('POST', projectId, EMIT, { body: { eventType: 'test.notify' } });
    expect(res.statusCode, res.body).toBe(200);
    // The alert rules' own subscriber found no rule: only the test subscriber's dispatches count.
    expect(res.json()).toMatchObject({ emitted: true, alertDispatches: 2 });
    expect(seen.filter((s) => s.projectId === projectId)).toEqual([{ projectId, eventTypes: ['test.notify'], inTransaction: true }]);
    expect(committed.filter((c) => c.projectId === projectId)).toEqual([{ projectId, eventTypes: ['test.notify'] }]);
  });

  it('is not called for a replay that appends nothing', async () => {
    const { projectId } = await h.project();
    await h.call('POST', projectId, EMIT, { body: { eventType: 'test.notify', dedupeKey: 'once' } });
    const replay = await h.call('POST', projectId, EMIT, { body: { eventType: 'test.notify', dedupeKey: 'once' } });
    expect(replay.json()).toMatchObject({ emitted: false, alertDispatches: 0 });
    expect(seen.filter((s) => s.projectId === projectId)).toHaveLength(1);
    expect(committed.filter((c) => c.projectId === projectId)).toHaveLength(1);
  });

  it('rolls the append back when a subscriber fails inside the transaction', async () => {
    const { projectId } = await h.project();
    const res = await h.call('POST', projectId, EMIT, { body: { eventType: 'test.explode' } });
    expect(res.statusCode).toBe(500);
    const polled = await h.call('GET', projectId, '/memory-events');
    expect(polled.json()).toEqual([]);
    expect(committed.filter((c) => c.projectId === projectId)).toEqual([]);
  });
});
