// The mining queue (migration 0015): writes only append a row per subject, so none waits on
// another; the mining job folds a subject's rows into one and takes the due subjects off.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { claimDueSubjects, compactMiningQueue, miningBacklog } from '../../src/behavior/patterns/store.js';
import { createHarness, type Harness } from '../helpers/harness.js';

describe('the mining queue', () => {
  let h: Harness;
  beforeAll(async () => {
    h = await createHarness({ consumers: false });
  });
  afterAll(() => h?.close());

  const append = (projectId: string, externalId: string, firstAt: string, lastAt: string) =>
    h.db.query(`INSERT INTO behavior_mining_queue (project_id, subject_kind, subject_external_id, first_at, last_at) VALUES ($1, 'user', $2, $3, $4)`, [
      projectId,
      externalId,
      firstAt,
      lastAt,
    ]);
  const rows = async (projectId: string) =>
    (
      await h.db.query<{ subject_external_id: string; first_at: Date; last_at: Date }>(
        `SELECT subject_external_id, first_at, last_at FROM behavior_mining_queue WHERE project_id = $1 ORDER BY subject_external_id`,
        [projectId],
      )
    ).rows.map((r) => ({ subject: r.subject_external_id, firstAt: new Date(r.first_at).toISOString(), lastAt: new Date(r.last_at).toISOString() }));

  it('folds a subject\'s rows into one with the earliest first and the latest last time', async () => {
    const { projectId } = await h.project();
    await append(projectId, 'ana', '2026-01-01T00:00:10Z', '2026-01-01T00:00:10Z');
    await append(projectId, 'ana', '2026-01-01T00:00:05Z', '2026-01-01T00:00:30Z');
    await append(projectId, 'ana', '2026-01-01T00:00:20Z', '2026-01-01T00:00:20Z');
    await append(projectId, 'bo', '2026-01-01T00:00:01Z', '2026-01-01T00:00:01Z');
    expect(await miningBacklog(h.db, projectId)).toMatchObject({ pending: 2, oldestPendingAt: new Date('2026-01-01T00:00:01Z') });
    expect(await compactMiningQueue(h.db)).toBeGreaterThanOrEqual(2);
    expect(await rows(projectId)).toEqual([
      { subject: 'ana', firstAt: '2026-01-01T00:00:05.000Z', lastAt: '2026-01-01T00:00:30.000Z' },
      { subject: 'bo', firstAt: '2026-01-01T00:00:01.000Z', lastAt: '2026-01-01T00:00:01.000Z' },
    ]);
    expect(await compactMiningQueue(h.db)).toBe(0);
  });

  it('claims a subject once it has been quiet, or has waited the longest allowed, and takes all its rows', async () => {
    const { projectId } = await h.project();
    // quiet: last activity at :30, before the quiet cut-off of :40
    await append(projectId, 'quiet', '2026-02-01T00:00:00Z', '2026-02-01T00:00:10Z');
    await append(projectId, 'quiet', '2026-02-01T00:00:20Z', '2026-02-01T00:00:30Z');
    // busy: active after the cut-off, but waiting since before the longest-wait cut-off of :05
    await append(projectId, 'busy', '2026-02-01T00:00:01Z', '2026-02-01T00:00:50Z');
    // fresh: active after the cut-off and waiting only since :45
    await append(projectId, 'fresh', '2026-02-01T00:00:45Z', '2026-02-01T00:00:55Z');
    const claimed = await claimDueSubjects(h.db, new Date('2026-02-01T00:00:40Z'), new Date('2026-02-01T00:00:05Z'), 100);
    expect((claimed.get(projectId) ?? []).map((s) => s.externalId).sort()).toEqual(['busy', 'quiet']);
    expect((await rows(projectId)).map((r) => r.subject)).toEqual(['fresh']);
  });

  it('queues a subject from each kind of activity write, without one write waiting on another', async () => {
    const { projectId } = await h.project();
    const subject = { kind: 'user', externalId: 'writer' };
    await Promise.all([
      h.call('POST', projectId, '/lattice/events/emit', { body: { eventType: 'login', subject } }),
      h.call('POST', projectId, '/admin/memory', { body: { content: 'went for a run', type: 'event', subject } }),
      h.call('POST', projectId, '/lattice/events/emit', { body: { eventType: 'logout', subject } }),
    ]);
    const queued = await rows(projectId);
    expect(queued.length).toBe(3);
    expect(new Set(queued.map((r) => r.subject))).toEqual(new Set(['writer']));
  });
});
