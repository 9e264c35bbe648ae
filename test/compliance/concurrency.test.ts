// A hard delete while the same subject is being written to: no error reaches either caller (a
// deadlock or serialization failure is retried inside), every write answered before the delete was
// asked for is gone, and what survives is whole (the running statistics agree with the
// observations left, so nothing was half erased).
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createHarness, foldAllTyped, uniqueName, type Harness } from '../helpers/harness.js';

describe('hard delete under concurrent writes of the same subject', () => {
  let h: Harness;
  beforeAll(async () => {
    h = await createHarness({ env: { RATE_LIMIT_PER_MINUTE: '10000000' } });
  });
  afterAll(() => h?.close());

  it('answers 200 while writers run, erases every write answered before it, and leaves survivors consistent', async () => {
    const p = await h.project();
    const subject = { kind: 'customer', externalId: uniqueName('busy') };
    await h.call('POST', p.projectId, '/memory-typed/attributes', { body: { attributeKey: 'spend', dataType: 'numeric' } });

    interface Ack {
      at: number;
      status: number;
    }
    const acks: Ack[] = [];
    let stop = false;
    let n = 0;
    const writer = async (w: number) => {
      while (!stop) {
        const i = n++;
        const res =
          i % 2 === 0
            ? await h.call('POST', p.projectId, '/admin/memory', { body: { subject, content: `purchase ${w}-${i} of item ${i % 7}`, type: 'event', metadata: { eventType: 'purchase' } } })
            : await h.call('POST', p.projectId, '/memory-typed/observations', {
                body: { observations: [{ attributeKey: 'spend', subjectKind: subject.kind, subjectExternalId: subject.externalId, valueNumeric: i, observedAt: new Date(Date.now() - i * 1000).toISOString() }] },
              });
        acks.push({ at: performance.now(), status: res.statusCode });
      }
    };
    const writers = [0, 1, 2, 3].map(writer);
    const deletes: { sentAt: number; answeredAt: number; status: number; body: string }[] = [];
    for (let round = 0; round < 3; round++) {
      // Each delete goes in while the writers run, once they have had three more writes answered
      // (however long those take on a busy machine).
      const target = acks.length + 3;
      await expect.poll(() => acks.length, { timeout: 60_000, interval: 10 }).toBeGreaterThanOrEqual(target);
      const sentAt = performance.now();
      const res = await h.call('POST', p.projectId, '/memory-compliance/hard-delete', { body: { subject, reason: `round ${round}` } });
      deletes.push({ sentAt, answeredAt: performance.now(), status: res.statusCode, body: res.body });
    }
    stop = true;
    await Promise.all(writers);

    expect(deletes.map((d) => d.status), deletes.map((d) => d.body).join('\n')).toEqual([200, 200, 200]);
    expect(acks.every((a) => a.status === 200 || a.status === 201), JSON.stringify(acks.filter((a) => a.status >= 300).slice(0, 3))).toBe(true);
    expect(acks.length).toBeGreaterThan(8);

    // Nothing the writers were told was stored before the last delete answered survives it (the
    // erase runs again until a pass finds nothing, so writes committed while it ran go too): what
    // is left was answered after it, save the writes in flight at that instant (one per writer).
    const last = deletes.at(-1)!;
    expect(acks.filter((a) => a.at < last.sentAt).length).toBeGreaterThan(0);
    const left = async (sql: string) => Number((await h.db.query<{ n: string }>(sql, [p.projectId, subject.kind, subject.externalId])).rows[0]!.n);
    const memories = await left('SELECT count(*) AS n FROM memories WHERE project_id = $1 AND subject_kind = $2 AND subject_external_id = $3');
    const observations = await left(`SELECT count(*) AS n FROM typed_observations WHERE project_id = $1 AND subject_kind = $2 AND subject_external_id = $3 AND status = 'accepted'`);
    const answeredAfter = acks.filter((a) => a.at >= last.answeredAt).length;
    expect(memories + observations).toBeLessThanOrEqual(answeredAfter + 4);

    // Survivors are whole: the accumulator counts exactly the observations left, once what waits is folded.
    await foldAllTyped(h);
    const accumulated = await left('SELECT coalesce(sum(count), 0) AS n FROM typed_accumulators WHERE project_id = $1 AND subject_kind = $2 AND subject_external_id = $3');
    expect(accumulated).toBe(observations);

    // A final delete with nothing writing leaves nothing at all.
    const final = await h.call('POST', p.projectId, '/memory-compliance/hard-delete', { body: { subject, reason: 'final' } });
    expect(final.statusCode).toBe(200);
    expect(await left('SELECT count(*) AS n FROM memories WHERE project_id = $1 AND subject_kind = $2 AND subject_external_id = $3')).toBe(0);
    expect(await left('SELECT count(*) AS n FROM typed_observations WHERE project_id = $1 AND subject_kind = $2 AND subject_external_id = $3')).toBe(0);
    expect(await left('SELECT count(*) AS n FROM typed_accumulators WHERE project_id = $1 AND subject_kind = $2 AND subject_external_id = $3')).toBe(0);
    expect(await left('SELECT count(*) AS n FROM typed_unfolded WHERE project_id = $1 AND subject_kind = $2 AND subject_external_id = $3')).toBe(0);
  }, 240_000);
});
