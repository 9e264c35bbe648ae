// Accumulators folded behind the ingest (migration 0017, TypedService.foldPending): an ingest
// appends its numeric points to typed_unfolded and creates new accumulator rows, and never locks an
// existing one; the typed.fold job folds the points in batches, skipping rows another transaction
// holds; a read folds what is still waiting, so it is exact either way. The fold of each batch is
// foldBatch (foldPoints, or foldLate and a rebuild), checked field for field against foldBatch over
// the same batches: what the SQL stores and takes back, grouped per key and ingest, loses nothing.
import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { EMPTY_ACCUMULATOR, foldBatch, fromSeries, type AccumulatorState, type NumericPoint } from '../../src/typed/accumulator.js';
import { toState, type AccumulatorRow } from '../../src/typed/store/accumulators.js';
import type { JobContext } from '../../src/platform/queue.js';
import { typedJobs, type TypedService } from '../../src/typed/service.js';
import { backend, createHarness, type Harness } from '../helpers/harness.js';

const T0 = Date.parse('2026-03-01T00:00:00Z');
const at = (minutes: number) => new Date(T0 + minutes * 60_000).toISOString();

type Model = AccumulatorState & { stale: boolean };
const EMPTY: Model = { ...EMPTY_ACCUMULATOR, stale: false };

interface Sent {
  id: string;
  subject: string;
  value: number;
  minute: number;
}
const pointOf = (r: Sent): NumericPoint => ({ id: r.id, value: r.value, observedAt: Date.parse(at(r.minute)) });

describe('accumulators folded behind the ingest', () => {
  let h: Harness;
  let projectId: string;

  beforeAll(async () => {
    h = await createHarness({ consumers: false });
    projectId = (await h.project()).projectId;
    const res = await h.call('POST', projectId, '/memory-typed/attributes', { body: { attributeKey: 'x', dataType: 'numeric' } });
    expect([200, 201]).toContain(res.statusCode);
  });
  afterAll(async () => h?.close());

  const stored = async (subjects: string[]): Promise<Map<string, Model>> => {
    const { rows } = await h.db.query<AccumulatorRow>(
      `SELECT * FROM typed_accumulators WHERE project_id = $1 AND attribute_key = 'x' AND subject_external_id = ANY($2::text[])`,
      [projectId, subjects],
    );
    return new Map(rows.map((r) => [r.subject_external_id, toState(r)]));
  };
  const waiting = async (subject: string) =>
    (
      await h.db.query<{ n: number }>(
        `SELECT coalesce(sum(cardinality(observation_ids)), 0)::int AS n FROM typed_unfolded WHERE project_id = $1 AND subject_external_id = $2`,
        [projectId, subject],
      )
    ).rows[0]!.n;
  const read = async (subject: string) => {
    const res = await h.call('GET', projectId, `/memory-typed/accumulator?subjectKind=user&subjectExternalId=${subject}&attributeKey=x`);
    expect(res.statusCode, res.body).toBe(200);
    return res.json();
  };
  const ingest = async (rows: Sent[], accepted = rows.length) => {
    const res = await h.call('POST', projectId, '/memory-typed/observations', {
      body: { observations: rows.map((r) => ({ id: r.id, attributeKey: 'x', subjectKind: 'user', subjectExternalId: r.subject, valueNumeric: r.value, observedAt: at(r.minute) })) },
    });
    expect(res.statusCode, res.body).toBe(200);
    expect(res.json().accepted).toBe(accepted);
    expect(res.json().duplicates).toBe(rows.length - accepted);
  };

  it('appends the points and creates the row at ingest; the fold stores them and leaves nothing waiting', async () => {
    await ingest([{ id: 'a-1', subject: 'a', value: 3, minute: 1 }, { id: 'a-2', subject: 'a', value: 5, minute: 2 }]);
    expect(await waiting('a')).toBe(2);
    expect((await stored(['a'])).get('a')).toEqual(EMPTY);
    // The read folds what waits.
    expect(await read('a')).toMatchObject({ count: 2, sum: 8, min: 3, max: 5, last: 5 });
    expect(await h.apis.typed.foldPending()).toBe(1);
    expect(await waiting('a')).toBe(0);
    expect((await stored(['a'])).get('a')).toMatchObject({ count: 2, sum: 8, min: 3, max: 5, last: 5, lastId: 'a-2', stale: false });
    expect(await h.apis.typed.foldPending()).toBe(0);
  });

  it('counts an exact repeat sent again under another id as a duplicate, and folds it once', async () => {
    await ingest([{ id: 'd-1', subject: 'd', value: 7, minute: 3 }]);
    await ingest([{ id: 'd-2', subject: 'd', value: 7, minute: 3 }, { id: 'd-3', subject: 'd', value: 7, minute: 3 }, { id: 'd-4', subject: 'd', value: 8, minute: 3 }], 1);
    expect(await waiting('d')).toBe(2);
    expect(await read('d')).toMatchObject({ count: 2, sum: 15 });
    await h.apis.typed.foldPending();
    expect((await stored(['d'])).get('d')).toMatchObject({ count: 2, sum: 15, lastId: 'd-4' });
  });

  it('folds, in the typed.fold job, every key waiting, past one transaction of 500 keys', async () => {
    const rows: Sent[] = Array.from({ length: 600 }, (_, i) => ({ id: `job-${i}`, subject: `job-${String(i).padStart(3, '0')}`, value: i, minute: 1 }));
    await ingest(rows);
    const jobs = typedJobs(h.apis.typed as unknown as TypedService);
    expect(await jobs['typed.fold']({}, {} as JobContext)).toEqual({ folded: 600 });
    const { rows: left } = await h.db.query<{ n: number }>(`SELECT count(*)::int AS n FROM typed_unfolded WHERE project_id = $1`, [projectId]);
    expect(left[0]!.n).toBe(0);
    expect((await stored(['job-599'])).get('job-599')).toMatchObject({ count: 1, sum: 599, lastId: 'job-599' });
    expect(await jobs['typed.fold']({}, {} as JobContext)).toEqual({ folded: 0 });
  });

  it('stores, batch after batch, the bits of the service fold, and reads answer the same before and after', async () => {
    let run = 0;
    // Values with rounding sums (thirds, sevenths) and a spread of magnitudes.
    const value = fc.oneof(
      fc.integer({ min: -1000, max: 1000 }).map((k) => k / 3),
      fc.integer({ min: -1000, max: 1000 }).map((k) => k / 7),
      fc.double({ min: -1e6, max: 1e6, noNaN: true, noDefaultInfinity: true }).map((x) => (Object.is(x, -0) ? 0 : x)),
    );
    const batch = fc.array(fc.record({ subject: fc.integer({ min: 0, max: 2 }), minute: fc.integer({ min: 0, max: 40 }), value }), { minLength: 1, maxLength: 12 });
    await fc.assert(
      fc.asyncProperty(fc.array(batch, { minLength: 1, maxLength: 5 }), async (batches) => {
        run += 1;
        const model = new Map<string, Model>();
        // An exact repeat (subject, attribute, observedAt, value, source) of a row already sent is a
        // duplicate, within a batch or across batches: it is counted as such and never folded.
        const sentKeys = new Set<string>();
        let n = 0;
        for (const rows of batches) {
          const sent = rows.map((r) => ({ id: `obs-${run}-${String(n++).padStart(3, '0')}`, subject: `fold-${run}-${r.subject}`, value: r.value, minute: r.minute }));
          const fresh = sent.filter((r) => {
            const key = `${r.subject}|${r.minute}|${r.value}`;
            if (sentKeys.has(key)) return false;
            sentKeys.add(key);
            return true;
          });
          await ingest(sent, fresh.length);
          const bySubject = new Map<string, NumericPoint[]>();
          for (const r of fresh) bySubject.set(r.subject, [...(bySubject.get(r.subject) ?? []), pointOf(r)]);
          if (bySubject.size === 0) continue;
          // Read before the fold: the answer counts the waiting points.
          const [first] = bySubject.keys();
          const before = await read(first!);
          await h.apis.typed.foldPending();
          for (const [subject, points] of bySubject) model.set(subject, foldBatch(model.get(subject) ?? EMPTY, points));
          const got = await stored([...model.keys()]);
          for (const [subject, expected] of model) expect(got.get(subject), subject).toEqual(expected);
          const after = await read(first!);
          expect(after).toEqual({ ...before, updated: after.updated });
        }
      }),
      { numRuns: 20 },
    );
  }, 120_000);

  it('reads exactly what a from-scratch computation gives while points wait, late ones included', async () => {
    const rows: Sent[] = [
      { id: 'w-1', subject: 'w', value: 10, minute: 10 },
      { id: 'w-2', subject: 'w', value: 20, minute: 20 },
    ];
    await ingest(rows);
    await h.apis.typed.foldPending();
    const late: Sent[] = [{ id: 'w-3', subject: 'w', value: 40, minute: 5 }, { id: 'w-4', subject: 'w', value: 70, minute: 30 }];
    await ingest(late);
    expect(await waiting('w')).toBe(2);
    const scratch = fromSeries([...rows, ...late].map(pointOf));
    const got = await read('w');
    expect(got).toMatchObject({ count: 4, sum: scratch.sum, min: scratch.min, max: scratch.max, last: scratch.last });
    expect(got.ewma).toBeCloseTo(scratch.ewma!, 9);
    expect(got.ewmaVar).toBeCloseTo(scratch.ewmaVar!, 9);
  });
});

describe.skipIf(backend !== 'pg')('an ingest and a fold while another transaction holds the row (Postgres)', () => {
  let h: Harness;
  let projectId: string;
  beforeAll(async () => {
    h = await createHarness({ consumers: false });
    projectId = (await h.project()).projectId;
    await h.call('POST', projectId, '/memory-typed/attributes', { body: { attributeKey: 'x', dataType: 'numeric' } });
  });
  afterAll(async () => h?.close());

  it('ingests without waiting, and the fold skips the held row and takes it once it is free', async () => {
    const observation = (id: string, value: number, minute: number) => ({ id, attributeKey: 'x', subjectKind: 'user', subjectExternalId: 'held', valueNumeric: value, observedAt: at(minute) });
    expect((await h.call('POST', projectId, '/memory-typed/observations', { body: { observations: [observation('h-1', 1, 1)] } })).statusCode).toBe(200);
    let release!: () => void;
    const held = new Promise<void>((resolve) => (release = resolve));
    let locked!: () => void;
    const lockedNow = new Promise<void>((resolve) => (locked = resolve));
    // Another transaction holds the subject's accumulator row, as a fold does while it folds.
    const holder = h.db.transaction(async (tx) => {
      await tx.query(`SELECT 1 FROM typed_accumulators WHERE project_id = $1 AND subject_external_id = 'held' FOR UPDATE`, [projectId]);
      locked();
      await held;
    });
    await lockedNow;
    try {
      // Answered while the row is held: an ingest never waits on it.
      const res = await h.call('POST', projectId, '/memory-typed/observations', { body: { observations: [observation('h-2', 2, 2)] } });
      expect(res.statusCode, res.body).toBe(200);
      // The fold skips the held row (and does not wait on it either).
      expect(await h.apis.typed.foldPending()).toBe(0);
    } finally {
      release();
      await holder;
    }
    expect(await h.apis.typed.foldPending()).toBe(1);
    const { rows } = await h.db.query<{ count: number; sum: number }>(`SELECT count::int AS count, sum FROM typed_accumulators WHERE project_id = $1 AND subject_external_id = 'held'`, [projectId]);
    expect(rows).toEqual([{ count: 2, sum: 3 }]);
  });
});
