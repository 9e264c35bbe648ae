// The database fold of a typed batch (typed_fold, migration 0017) stores exactly the bits the
// service's own fold computes (foldPoints, foldLate in src/typed/accumulator.ts): random batches
// sent one after another, in order and late, with values whose sums round, leave each stored row
// equal to the service's fold of the same batches, field for field. Where the two could differ the
// service folds the batch itself: a value whose square underflows (Postgres raises an error where
// JavaScript gives 0), and an id outside ASCII.
import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { EMPTY_ACCUMULATOR, foldLate, foldPoints, type AccumulatorState, type NumericPoint } from '../../src/typed/accumulator.js';
import { foldInDatabase } from '../../src/typed/store/accumulators.js';
import { createHarness, type Harness } from '../helpers/harness.js';

const T0 = Date.parse('2026-03-01T00:00:00Z');
const at = (minutes: number) => new Date(T0 + minutes * 60_000).toISOString();

interface StoredRow {
  subject_external_id: string;
  count: string;
  sum: number;
  sum_sq: number;
  min_val: number | null;
  max_val: number | null;
  last_val: number | null;
  last_observed_at: Date | null;
  last_id: string | null;
  cumulative: number;
  ewma: number | null;
  ewma_var: number | null;
  series_stale: boolean;
}

type Model = AccumulatorState & { stale: boolean };

/** The service's fold of one batch into a key's state (typed/service.ts foldAccumulators). */
function fold(state: Model, points: NumericPoint[]): Model {
  const folded = foldPoints(state, points);
  return folded ? { ...folded, stale: state.stale } : { ...foldLate(state, points), stale: true };
}

const asModel = (row: StoredRow): Model => ({
  count: Number(row.count),
  sum: row.sum,
  sumSq: row.sum_sq,
  min: row.min_val,
  max: row.max_val,
  last: row.last_val,
  lastObservedAt: row.last_observed_at === null ? null : row.last_observed_at.getTime(),
  lastId: row.last_id,
  cumulative: row.cumulative,
  ewma: row.ewma,
  ewmaVar: row.ewma_var,
  stale: row.series_stale,
});

describe('the database fold of a typed batch', () => {
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
    const { rows } = await h.db.query<StoredRow>(
      `SELECT * FROM typed_accumulators WHERE project_id = $1 AND attribute_key = 'x' AND subject_external_id = ANY($2::text[])`,
      [projectId, subjects],
    );
    return new Map(rows.map((r) => [r.subject_external_id, asModel(r)]));
  };

  const ingest = async (rows: { id: string; subject: string; value: number; minute: number }[]) => {
    const res = await h.call('POST', projectId, '/memory-typed/observations', {
      body: {
        observations: rows.map((r) => ({ id: r.id, attributeKey: 'x', subjectKind: 'user', subjectExternalId: r.subject, valueNumeric: r.value, observedAt: at(r.minute) })),
      },
    });
    expect(res.statusCode, res.body).toBe(200);
    expect(res.json().accepted).toBe(rows.length);
  };

  it('stores the bits the service computes, batch after batch, in order and late', async () => {
    let run = 0;
    // Values with rounding sums (thirds, sevenths) and a spread of magnitudes.
    const value = fc.oneof(
      fc.integer({ min: -1000, max: 1000 }).map((k) => k / 3),
      fc.integer({ min: -1000, max: 1000 }).map((k) => k / 7),
      fc.double({ min: -1e6, max: 1e6, noNaN: true, noDefaultInfinity: true }).map((x) => (Object.is(x, -0) ? 0 : x)),
    );
    const batch = fc.array(fc.record({ subject: fc.integer({ min: 0, max: 2 }), minute: fc.integer({ min: 0, max: 40 }), value }), { minLength: 1, maxLength: 12 });
    await fc.assert(
      fc.asyncProperty(fc.array(batch, { minLength: 1, maxLength: 6 }), async (batches) => {
        run += 1;
        const subjectOf = (i: number) => `fold-${run}-${i}`;
        const model = new Map<string, Model>();
        let n = 0;
        for (const rows of batches) {
          const sent = rows.map((r) => ({ id: `obs-${run}-${n++}`, subject: subjectOf(r.subject), value: r.value, minute: r.minute }));
          await ingest(sent);
          const bySubject = new Map<string, NumericPoint[]>();
          for (const r of sent) bySubject.set(r.subject, [...(bySubject.get(r.subject) ?? []), { id: r.id, value: r.value, observedAt: Date.parse(at(r.minute)) }]);
          for (const [subject, points] of bySubject) model.set(subject, fold(model.get(subject) ?? { ...EMPTY_ACCUMULATOR, stale: false }, points));
          const got = await stored([...model.keys()]);
          for (const [subject, expected] of model) expect(got.get(subject), subject).toEqual(expected);
        }
      }),
      { numRuns: 25 },
    );
  }, 120_000);

  it('folds an ordinary batch in the database, and refuses, writing nothing, where it cannot give the same bits', async () => {
    const key = { subjectKind: 'user', subjectExternalId: 'direct', attributeKey: 'x' };
    const fold = (id: string, value: number, minute: number) =>
      h.db.transaction((tx) => foldInDatabase(tx, projectId, [{ key, points: [{ id, value, observedAt: Date.parse(at(minute)) }] }]));
    expect(await fold('direct-1', 2, 1)).toBe(true);
    expect((await stored(['direct'])).get('direct')).toMatchObject({ count: 1, sum: 2, ewma: 2, lastId: 'direct-1' });
    expect(await fold('direct-2', 1e-200, 2)).toBe(false);
    expect(await fold('direct-\u00e9', 5, 3)).toBe(false);
    expect((await stored(['direct'])).get('direct')).toMatchObject({ count: 1, sum: 2, ewma: 2, lastId: 'direct-1' });
  });

  it('folds in the service a value whose square underflows, and stores what the service computes', async () => {
    await ingest([{ id: 'tiny-1', subject: 'tiny', value: 1e-200, minute: 1 }]);
    await ingest([{ id: 'tiny-2', subject: 'tiny', value: 3, minute: 2 }]);
    const expected = fold(fold({ ...EMPTY_ACCUMULATOR, stale: false }, [{ id: 'tiny-1', value: 1e-200, observedAt: Date.parse(at(1)) }]), [
      { id: 'tiny-2', value: 3, observedAt: Date.parse(at(2)) },
    ]);
    expect(expected.sumSq).toBe(9);
    expect((await stored(['tiny'])).get('tiny')).toEqual(expected);
  });

  it('folds in the service a batch with an id outside ASCII, in the series order the service uses', async () => {
    const points = [
      { id: 'z-\u00e9', subject: 'accent', value: 4, minute: 5 },
      { id: 'z-\uff41', subject: 'accent', value: 6, minute: 5 },
    ];
    await ingest(points);
    const expected = fold({ ...EMPTY_ACCUMULATOR, stale: false }, points.map((p) => ({ id: p.id, value: p.value, observedAt: Date.parse(at(p.minute)) })));
    expect((await stored(['accent'])).get('accent')).toEqual(expected);
  });
});
