// typed.observation events appended behind the ingest (migration 0028): an ingest records in its
// transaction which observations are due an event (typed_event_outbox), and the typed.events job
// appends them, taking the row once. The harness runs no consumers, so each step here is the test's.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { JobContext } from '../../src/platform/queue.js';
import { typedJobs, type TypedService } from '../../src/typed/service.js';
import { shareEraseLock } from '../../src/typed/store/event-outbox.js';
import { backend, createHarness, type Harness } from '../helpers/harness.js';

const at = (minute: number) => new Date(Date.UTC(2026, 2, 1, 0, minute)).toISOString();
const hr = (subject: string, value: number, minute: number) => ({ attributeKey: 'hr', subjectKind: 'user', subjectExternalId: subject, valueNumeric: value, observedAt: at(minute) });

describe('typed.observation events appended behind the ingest', () => {
  let h: Harness;
  let projectId: string;
  let other: string;

  beforeAll(async () => {
    h = await createHarness({ consumers: false });
    projectId = (await h.project()).projectId;
    other = (await h.project()).projectId;
    for (const p of [projectId, other]) {
      for (const body of [{ attributeKey: 'hr', dataType: 'numeric', unit: 'bpm', maxValid: 250 }, { attributeKey: 'plan', dataType: 'categorical' }]) {
        const res = await h.call('POST', p, '/memory-typed/attributes', { body });
        expect(res.statusCode, res.body).toBe(201);
      }
    }
  });
  afterAll(async () => h?.close());

  const ingest = async (observations: unknown[]) => {
    const res = await h.call('POST', projectId, '/memory-typed/observations', { body: { observations } });
    expect(res.statusCode, res.body).toBe(200);
    return res.json() as { accepted: number; quarantined: number; duplicates: number };
  };
  const outbox = async (p = projectId) =>
    (await h.db.query<{ id: string; observation_ids: string[] }>('SELECT id, observation_ids FROM typed_event_outbox WHERE project_id = $1 ORDER BY created_at, id', [p])).rows;
  const events = async (subject: string) => {
    const res = await h.call('GET', projectId, `/memory-events?eventTypes=typed.observation&subjectExternalId=${subject}&limit=100`);
    expect(res.statusCode, res.body).toBe(200);
    return res.json() as { payload: { observationId: string; value: number; unit: string | null; source: string | null; observedAt: string } }[];
  };
  const stored = async (subject: string) =>
    (await h.db.query<{ id: string }>("SELECT id FROM typed_observations WHERE project_id = $1 AND subject_external_id = $2 AND status = 'accepted' AND value_numeric IS NOT NULL ORDER BY observed_at", [projectId, subject])).rows.map((r) => r.id);
  const eventsBacklog = async () => {
    const res = await h.call('GET', projectId, '/project');
    expect(res.statusCode, res.body).toBe(200);
    return (res.json() as { work: { module: string; name: string; pending: number; oldestPendingAt: string | null }[] }).work.find((w) => w.module === 'typed' && w.name === 'events')!;
  };

  it('records the accepted numeric rows of an ingest, appends their events once, in order, and shows them as a backlog meanwhile', async () => {
    const report = await ingest([hr('a1', 61, 0), hr('a1', 999, 1), hr('a1', 62, 2), { attributeKey: 'plan', subjectKind: 'user', subjectExternalId: 'a1', valueText: 'pro', observedAt: at(3) }, { ...hr('a1', 63, 4), source: 'watch' }]);
    expect(report).toMatchObject({ accepted: 4, quarantined: 1 });
    const [row, ...more] = await outbox();
    expect(more).toEqual([]);
    const numeric = await stored('a1');
    expect(numeric).toHaveLength(3);
    expect([...row!.observation_ids].sort()).toEqual([...numeric].sort());
    expect(await events('a1')).toEqual([]);
    expect(await eventsBacklog()).toMatchObject({ pending: 3, oldestPendingAt: expect.any(String) });

    expect(await h.apis.typed.appendOutboxEvents(projectId, row!.id)).toBe(3);
    const appended = await events('a1');
    expect(appended.map((e) => e.payload.value)).toEqual([61, 62, 63]);
    expect(appended.map((e) => e.payload.observationId)).toEqual(row!.observation_ids);
    expect(appended[2]!.payload).toMatchObject({ unit: 'bpm', source: 'watch', observedAt: at(4) });
    expect(await outbox()).toEqual([]);
    expect(await eventsBacklog()).toMatchObject({ pending: 0, oldestPendingAt: null });

    // Taken once: the row is gone, so a second run (a retried or swept job) appends nothing.
    expect(await h.apis.typed.appendOutboxEvents(projectId, row!.id)).toBeUndefined();
    expect(await events('a1')).toHaveLength(3);
  });

  it('writes no outbox row for a batch with no accepted numeric row', async () => {
    await ingest([{ attributeKey: 'plan', subjectKind: 'user', subjectExternalId: 'b1', valueText: 'free', observedAt: at(0) }, hr('b1', 500, 1)]);
    expect(await outbox()).toEqual([]);
  });

  it("never appends another project's row", async () => {
    await ingest([hr('c1', 70, 0)]);
    const [row] = await outbox();
    expect(await h.apis.typed.appendOutboxEvents(other, row!.id)).toBeUndefined();
    expect(await outbox()).toHaveLength(1);
    expect(await h.apis.typed.appendOutboxEvents(projectId, row!.id)).toBe(1);
  });

  it('is swept when its job was lost, and the typed.events job appends it', async () => {
    await ingest([hr('d1', 71, 0), hr('d1', 72, 1)]);
    const [row] = await outbox();
    expect((await h.apis.typed.sweepQueued(60_000)).events).toBe(0);
    expect((await h.apis.typed.sweepQueued(0)).events).toBe(1);
    // The job the sweep enqueued, run by hand (this harness has no consumers).
    const job = typedJobs(h.apis.typed as unknown as TypedService)['typed.events'];
    expect(await job({ projectId, outboxId: row!.id }, {} as JobContext)).toEqual({ appended: 2 });
    expect(await job({ projectId, outboxId: row!.id }, {} as JobContext)).toBeNull();
    expect((await events('d1')).map((e) => e.payload.value)).toEqual([71, 72]);
  });

  it('appends no event for an observation a hard delete erased before the job ran', async () => {
    await ingest([hr('gone', 80, 0), hr('kept', 81, 1), hr('gone', 82, 2)]);
    const [row] = await outbox();
    const erased = await h.call('POST', projectId, '/memory-compliance/hard-delete', { body: { subject: { kind: 'user', externalId: 'gone' }, reason: 'erasure request' } });
    expect(erased.statusCode, erased.body).toBe(200);
    expect(await h.apis.typed.appendOutboxEvents(projectId, row!.id)).toBe(1);
    expect(await events('gone')).toEqual([]);
    expect((await events('kept')).map((e) => e.payload.value)).toEqual([81]);
  });

  it.skipIf(backend !== 'pg')('makes a hard delete wait for a typed.events job that holds the erase lock (pg)', async () => {
    let release!: () => void;
    const held = new Promise<void>((resolve) => (release = resolve));
    // A job's transaction, stopped while it holds the lock shared.
    const job = h.db.transaction(async (tx) => {
      await shareEraseLock(tx, projectId);
      await held;
    });
    const erase = h.call('POST', projectId, '/memory-compliance/hard-delete', { body: { subject: { kind: 'user', externalId: 'waits' }, reason: 'erasure request' } });
    let answered = false;
    void erase.then(() => (answered = true));
    // The delete queues on the advisory lock, and stays there while the job holds it.
    await expect
      .poll(async () => (await h.db.query<{ n: number }>("SELECT count(*)::int AS n FROM pg_locks WHERE locktype = 'advisory' AND NOT granted")).rows[0]!.n, { timeout: 30_000 })
      .toBe(1);
    expect(answered).toBe(false);
    release();
    await job;
    expect((await erase).statusCode).toBe(200);
  });

  it.skipIf(backend !== 'pg')('appends a row once when two jobs take it at the same time (pg)', async () => {
    await ingest(Array.from({ length: 40 }, (_, i) => hr('e1', 60 + i, i)));
    const [row] = await outbox();
    const results = await Promise.all([h.apis.typed.appendOutboxEvents(projectId, row!.id), h.apis.typed.appendOutboxEvents(projectId, row!.id)]);
    expect(results.filter((r) => r === 40)).toHaveLength(1);
    expect(results.filter((r) => r === undefined)).toHaveLength(1);
    expect(await events('e1')).toHaveLength(40);
  });

  it('writes the outbox row for a queued ingest when its job ingests the batch', async () => {
    const res = await h.call('POST', projectId, '/memory-typed/observations/enqueue', { body: { observations: [hr('f1', 90, 0)] } });
    expect(res.statusCode, res.body).toBe(202);
    expect(await outbox()).toEqual([]);
    const { rows } = await h.db.query<{ id: string }>('SELECT id FROM typed_ingest_batches WHERE project_id = $1', [projectId]);
    // The typed.ingest job, as the consumers would run it.
    const jobs = h.lattice.modules.find((m) => m.name === 'typed')!.jobs!;
    expect(await jobs['typed.ingest']!({ projectId, batchId: rows[0]!.id }, {} as JobContext)).toMatchObject({ accepted: 1 });
    const [row] = await outbox();
    expect(await h.apis.typed.appendOutboxEvents(projectId, row!.id)).toBe(1);
    expect((await events('f1')).map((e) => e.payload.value)).toEqual([90]);
  });
});
