// Behaviour intelligence through the API: mining activity into patterns (refreshed, deactivated,
// announced), the debounced mining queue, pattern projection with imminent events, declared-target
// predictions of every kind (recorded and scored), the upcoming list, profiles; permissions,
// entitlements, metering and isolation between projects.
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { createHarness, type Harness } from '../helpers/harness.js';
import { mulberry32 } from '../helpers/random.js';

const DAY = 86_400_000;
const HOUR = 3_600_000;

/** Weekly at the same hour, `weeks` times, the last `lastDaysAgo` days before now. */
function weekly(weeks: number, lastDaysAgo: number, now = Date.now()): Date[] {
  const last = now - lastDaysAgo * DAY;
  return Array.from({ length: weeks }, (_, i) => new Date(last - (weeks - 1 - i) * 7 * DAY));
}

describe('behaviour intelligence', () => {
  let h: Harness;
  let a: { projectId: string; apiKey: string };
  let b: { projectId: string; apiKey: string };
  const gymGoer = { kind: 'customer', externalId: 'c-gym' };

  async function saveEvents(projectId: string, subject: { kind: string; externalId: string }, times: Date[], eventType: string, extra: Record<string, unknown> = {}) {
    const ids: string[] = [];
    for (const at of times) {
      const res = await h.call('POST', projectId, '/admin/memory', {
        body: { content: `${eventType} visit by ${subject.externalId} at ${at.toISOString()}`, type: 'event', subject, validFrom: at.toISOString(), metadata: { eventType, ...extra } },
      });
      expect(res.statusCode, res.body).toBe(201);
      ids.push(res.json().id);
    }
    return ids;
  }

  beforeAll(async () => {
    h = await createHarness({ env: { BEHAVIOR_MINING_DEBOUNCE_MS: '0', BEHAVIOR_MINING_MAX_WAIT_MS: '0' } });
    a = await h.project();
    b = await h.project();
  });
  afterAll(async () => h?.close());

  describe('mining', () => {
    let sourceIds: string[];

    it('mines a weekly habit from event memories into patterns, and reads them back', async () => {
      sourceIds = await saveEvents(a.projectId, gymGoer, weekly(10, 6), 'gym', { entity: 'downtown club' });
      const res = await h.call('POST', a.projectId, '/lattice/patterns/extract', { body: { subject: gymGoer } });
      expect(res.statusCode, res.body).toBe(200);
      const report = res.json();
      expect(report).toMatchObject({ contactsProcessed: 1, patternsDeactivated: 0 });
      // With no debounce in this file, the mining the writes queued (every 10 s) may have run first:
      // this call then refreshes the patterns it created.
      expect(report.patternsCreated + report.patternsRefreshed).toBeGreaterThanOrEqual(4);
      const list = await h.call('GET', a.projectId, `/lattice/contacts/${gymGoer.externalId}/patterns`);
      expect(list.statusCode, list.body).toBe(200);
      const kinds = list.json().data.map((p: { metadata: { patternKind: string } }) => p.metadata.patternKind).sort();
      expect(kinds).toEqual(['day_of_week', 'entity_preference', 'recurring_event', 'time_of_day']);
      const recurring = list.json().data.find((p: { metadata: { patternKind: string } }) => p.metadata.patternKind === 'recurring_event');
      expect(recurring).toMatchObject({ contactId: 'c-gym', subject: gymGoer, active: true, metadata: { eventType: 'gym', active: true, hits: 9, misses: 0, cadence: { periodDays: 7 } } });
      expect(recurring.summary).toContain('weekly');
      expect(recurring.confidence).toBeCloseTo(10 / 11, 6);
      expect(recurring.sourceMemoryIds).toHaveLength(10);
      expect(new Set(recurring.sourceMemoryIds)).toEqual(new Set(sourceIds));
      const one = await h.call('GET', a.projectId, `/lattice/patterns/${recurring.id}`);
      expect(one.statusCode).toBe(200);
      // The same record; mining after new activity runs every 10 s in this file (no debounce) and may
      // have refreshed it between the two reads, which moves only its time-relative fields.
      const settled = (p: { updated: string; metadata: Record<string, unknown> }) => ({ ...p, updated: undefined, metadata: { ...p.metadata, observationWindowDays: undefined } });
      expect(settled(one.json())).toEqual(settled(recurring));
      // Patterns are memories of type behavior_pattern.
      const memory = await h.call('GET', a.projectId, `/admin/memory/${recurring.id}`);
      expect(memory.json()).toMatchObject({ type: 'behavior_pattern', subject: gymGoer });
      // The clients' explain follows metadata.sourceMemoryIds (WIRE.md decision 14): the provenance is there as well.
      expect(memory.json().metadata.sourceMemoryIds).toEqual(memory.json().sourceMemoryIds);
      expect(new Set(memory.json().metadata.sourceMemoryIds)).toEqual(new Set(sourceIds));
      // Each new pattern was announced. A poller sees an event once every append of the project begun
      // before it has committed (the event horizon): a mining running beside this one may hold it back.
      await expect
        .poll(async () => (await h.call('GET', a.projectId, '/memory-events?eventTypes=pattern.emerged')).json().map((e: { sourcePatternId: string }) => e.sourcePatternId), { timeout: 60_000, interval: 100 })
        .toContain(recurring.id);
    });

    it('counts each pattern once when two minings of a subject run at once: one creates, the other refreshes', async () => {
      const twin = { kind: 'customer', externalId: 'c-twin' };
      await saveEvents(a.projectId, twin, weekly(10, 6), 'swim', { entity: 'city pool' });
      // Wait for the mining the writes queued (debounce 0 here), then start afresh.
      await vi.waitFor(async () => expect((await h.call('GET', a.projectId, `/lattice/contacts/${twin.externalId}/patterns`)).json().data.length).toBe(4), { timeout: 60_000, interval: 100 });
      await h.db.query(`DELETE FROM memories WHERE project_id = $1 AND subject_external_id = $2 AND pattern_key IS NOT NULL`, [a.projectId, twin.externalId]);
      const reports = await Promise.all([1, 2].map(async () => (await h.call('POST', a.projectId, '/lattice/patterns/extract', { body: { subject: twin } })).json()));
      expect(reports.map((r) => r.patternsCreated).sort()).toEqual([0, 4]);
      expect(reports.map((r) => r.patternsRefreshed).sort()).toEqual([0, 4]);
      const list = (await h.call('GET', a.projectId, `/lattice/contacts/${twin.externalId}/patterns`)).json().data;
      expect(list).toHaveLength(4);
    });

    it('refreshes patterns on re-mining instead of duplicating them', async () => {
      const before = (await h.call('GET', a.projectId, `/lattice/contacts/${gymGoer.externalId}/patterns`)).json().data;
      const res = (await h.call('POST', a.projectId, '/lattice/patterns/extract', { body: { contactId: gymGoer.externalId } })).json();
      expect(res).toMatchObject({ contactsProcessed: 1, patternsCreated: 0, patternsRefreshed: before.length, patternsDeactivated: 0 });
      const after = (await h.call('GET', a.projectId, `/lattice/contacts/${gymGoer.externalId}/patterns`)).json().data;
      expect(after.map((p: { id: string }) => p.id).sort()).toEqual(before.map((p: { id: string }) => p.id).sort());
    });

    it('deactivates the patterns built on a memory that is deleted', async () => {
      const del = await h.call('DELETE', a.projectId, `/admin/memory/${sourceIds[9]}`);
      expect(del.statusCode).toBe(204);
      const active = (await h.call('GET', a.projectId, `/lattice/contacts/${gymGoer.externalId}/patterns`)).json().data;
      expect(active).toEqual([]);
      const all = (await h.call('GET', a.projectId, `/lattice/contacts/${gymGoer.externalId}/patterns?activeOnly=false`)).json().data;
      expect(all.length).toBeGreaterThanOrEqual(4);
      for (const p of all) expect(p).toMatchObject({ active: false, metadata: { active: false } });
      // Mining again from what is left finds the habit anew (the same rows, active again).
      const again = (await h.call('POST', a.projectId, '/lattice/patterns/extract', { body: { subject: gymGoer } })).json();
      expect(again.patternsCreated).toBe(0);
      expect(again.patternsRefreshed).toBeGreaterThanOrEqual(3);
    });

    it('deactivates a pattern that no longer holds when mined again', async () => {
      const quitter = { kind: 'customer', externalId: 'c-quit' };
      await saveEvents(a.projectId, quitter, weekly(8, 1), 'swim');
      await h.call('POST', a.projectId, '/lattice/patterns/extract', { body: { subject: quitter } });
      // 80 days later, a 90-day window holds only a couple of swims: nothing recurs any more.
      const later = await h.apis.behavior.extract(a.projectId, { subject: quitter }, new Date(Date.now() + 80 * DAY));
      expect(later.patternsDeactivated).toBeGreaterThanOrEqual(1);
    });

    it('leaves a monthly habit found over a year alone when a 90-day look cannot see it', async () => {
      const monthly = { kind: 'customer', externalId: 'c-month' };
      const last = Date.now() - 5 * DAY;
      await saveEvents(a.projectId, monthly, Array.from({ length: 8 }, (_, i) => new Date(last - (7 - i) * 30 * DAY)), 'rent');
      const wide = (await h.call('POST', a.projectId, '/lattice/patterns/extract', { body: { subject: monthly, windowDays: 365 } })).json();
      expect(wide.patternsCreated).toBeGreaterThanOrEqual(1);
      const narrow = (await h.call('POST', a.projectId, '/lattice/patterns/extract', { body: { subject: monthly, windowDays: 90 } })).json();
      expect(narrow.patternsDeactivated).toBe(0);
      const data = (await h.call('GET', a.projectId, `/lattice/contacts/${monthly.externalId}/patterns`)).json().data;
      expect(data.find((p: { metadata: { patternKind: string } }) => p.metadata.patternKind === 'recurring_event')).toMatchObject({ active: true, metadata: { cadence: { periodDays: 30 } } });
    });

    it('mines typed observations and events as activity too, by their type', async () => {
      await h.call('POST', a.projectId, '/memory-typed/attributes', { body: { attributeKey: 'order', dataType: 'numeric', unit: 'USD' } });
      const shopper = { kind: 'customer', externalId: 'c-shop' };
      const observations = weekly(12, 3).map((at, i) => ({ attributeKey: 'order', subjectKind: shopper.kind, subjectExternalId: shopper.externalId, valueNumeric: 20 + i, observedAt: at.toISOString() }));
      expect((await h.call('POST', a.projectId, '/memory-typed/observations', { body: { observations } })).json().accepted).toBe(12);
      await h.call('POST', a.projectId, '/lattice/patterns/extract', { body: { subject: shopper } });
      const data = (await h.call('GET', a.projectId, `/lattice/contacts/${shopper.externalId}/patterns`)).json().data;
      expect(data.find((p: { metadata: { patternKind: string } }) => p.metadata.patternKind === 'recurring_event')?.metadata).toMatchObject({ eventType: 'order', cadence: { periodDays: 7 } });
    });

    it('mines a subject once its new activity has been quiet for the debounce time (the queue the writes fill)', async () => {
      const runner = { kind: 'customer', externalId: 'c-run' };
      await saveEvents(a.projectId, runner, weekly(9, 2), 'run');
      // Each write appends a row (none waits on another's); the mining job folds them per subject.
      const queued = await h.db.query(
        `SELECT count(*)::int AS n, count(DISTINCT (subject_kind, subject_external_id))::int AS subjects FROM behavior_mining_queue WHERE project_id = $1 AND subject_external_id = 'c-run'`,
        [a.projectId],
      );
      expect(queued.rows[0]).toMatchObject({ subjects: 1 });
      expect((queued.rows[0] as { n: number }).n).toBeGreaterThanOrEqual(1);
      expect(await h.apis.behavior.mineDue()).toBeGreaterThanOrEqual(1);
      const data = (await h.call('GET', a.projectId, `/lattice/contacts/${runner.externalId}/patterns`)).json().data;
      expect(data.map((p: { metadata: { patternKind: string } }) => p.metadata.patternKind)).toContain('recurring_event');
      const left = await h.db.query(`SELECT count(*)::int AS n FROM behavior_mining_queue WHERE project_id = $1`, [a.projectId]);
      expect(left.rows[0]).toEqual({ n: 0 });
    });

    it('mines every subject with activity in the window when no subject is named (a job the call awaits), and nightly every subject with active patterns', async () => {
      const p = await h.project();
      for (const id of ['w1', 'w2', 'w3']) await saveEvents(p.projectId, { kind: 'customer', externalId: id }, weekly(8, 2), 'walk');
      await saveEvents(p.projectId, { kind: 'customer', externalId: 'once' }, [new Date(Date.now() - DAY)], 'walk');
      const all = (await h.call('POST', p.projectId, '/lattice/patterns/extract', { body: {} })).json();
      expect(all).toMatchObject({ contactsProcessed: 4, patternsDeactivated: 0 });
      // With no debounce in this file, the mining that new activity sets off may have found the
      // patterns first: the call then refreshes what that job created.
      expect(all.patternsCreated + all.patternsRefreshed).toBeGreaterThanOrEqual(3);
      const nightly = (await h.lattice.runtime.queue.run('behavior.mine-nightly', {})) as { mined: number };
      expect(nightly.mined).toBeGreaterThanOrEqual(3);
      const again = (await h.call('GET', p.projectId, '/lattice/contacts/w1/patterns')).json().data;
      expect(again.every((x: { active: boolean }) => x.active)).toBe(true);
    });

    it('pages a contact\'s patterns with a cursor', async () => {
      const first = (await h.call('GET', a.projectId, `/lattice/contacts/c-gym/patterns?limit=2`)).json();
      expect(first.data).toHaveLength(2);
      expect(first.nextCursor).toBe(first.data[1].id);
      const second = (await h.call('GET', a.projectId, `/lattice/contacts/c-gym/patterns?limit=2&cursor=${first.nextCursor}`)).json();
      expect(second.data.map((p: { id: string }) => p.id)).not.toContain(first.data[0].id);
      expect(second.data.every((p: { id: string }) => p.id < first.nextCursor)).toBe(true);
    });

    it('refuses bad input, a key without WRITE_MEMORY, and answers 404 across projects', async () => {
      const bad = await h.call('POST', a.projectId, '/lattice/patterns/extract', { body: { windowDays: 3 } });
      expect(bad.statusCode).toBe(400);
      expect(bad.json().code).toBe('VALIDATION_ERROR');
      const zone = await h.call('POST', a.projectId, '/lattice/patterns/extract', { body: { subject: gymGoer, timezone: 'Mars/Olympus' } });
      expect(zone.statusCode).toBe(400);
      const reader = await h.key(a.projectId, ['READ_MEMORY']);
      expect((await h.call('POST', a.projectId, '/lattice/patterns/extract', { apiKey: reader, body: {} })).statusCode).toBe(403);
      const pattern = (await h.call('GET', a.projectId, `/lattice/contacts/c-gym/patterns`)).json().data[0];
      expect((await h.call('GET', b.projectId, `/lattice/patterns/${pattern.id}`)).statusCode).toBe(404);
      expect((await h.call('GET', b.projectId, `/lattice/contacts/c-gym/patterns`)).json()).toEqual({ data: [], nextCursor: null });
      // A plain memory id is not a pattern.
      expect((await h.call('GET', a.projectId, `/lattice/patterns/${sourceIds[0]}`)).statusCode).toBe(404);
    });
  });

  describe('pattern projection', () => {
    it('extends the weekly habit to its next firing, with a Wilson interval around the confidence', async () => {
      const res = await h.call('POST', a.projectId, '/lattice/predict', { body: { subject: gymGoer, occurrencesPerPattern: 3, minConfidence: 0 } });
      expect(res.statusCode, res.body).toBe(200);
      const body = res.json();
      expect(body).toMatchObject({ subject: gymGoer, abstained: false, abstentionReason: null, eventsEmitted: 0 });
      expect(body.activePatternCount).toBeGreaterThanOrEqual(3);
      const recurring = body.predictions.filter((p: { patternKind: string }) => p.patternKind === 'recurring_event');
      expect(recurring).toHaveLength(3);
      const times = recurring.map((p: { expectedAt: string }) => Date.parse(p.expectedAt)).sort();
      expect(times[1] - times[0]).toBe(7 * DAY);
      for (const p of body.predictions) {
        expect(p.confidenceLower).toBeLessThanOrEqual(p.confidence);
        expect(p.confidenceUpper).toBeGreaterThanOrEqual(p.confidence);
        expect(p.sourceMemoryIds.length).toBeGreaterThan(0);
      }
      // Later firings are less certain.
      const byTime = [...recurring].sort((x, y) => Date.parse(x.expectedAt) - Date.parse(y.expectedAt));
      expect(byTime[0].confidence).toBeGreaterThan(byTime[2].confidence);
    });

    it('answers a declared target too when the body names one (the clients\' predictTarget posts it here)', async () => {
      const body = { subject: gymGoer, horizonDays: 14, target: { kind: 'event_occurrence', eventType: 'gym' } };
      const res = await h.call('POST', a.projectId, '/lattice/predict', { body });
      expect(res.statusCode, res.body).toBe(200);
      const both = res.json();
      const alone = (await h.call('POST', a.projectId, '/memory-intelligence/predict', { body })).json();
      // The same declared-target answer as the route of its own, beside the projection.
      expect(both.targetPrediction).toMatchObject({ targetKind: 'event_occurrence', eventType: 'gym', abstained: alone.targetPrediction.abstained });
      expect(both.targetPrediction.probability).toBeCloseTo(alone.targetPrediction.probability, 6);
      expect(both).toMatchObject({ abstained: both.targetPrediction.abstained, abstentionReason: both.targetPrediction.abstentionReason });
      expect(both.predictions.length).toBeGreaterThan(0);
      // Without a target the answer is the projection alone; a malformed target is refused.
      expect((await h.call('POST', a.projectId, '/lattice/predict', { body: { subject: gymGoer } })).json()).not.toHaveProperty('targetPrediction');
      expect((await h.call('POST', a.projectId, '/lattice/predict', { body: { subject: gymGoer, target: { kind: 'weather' } } })).statusCode).toBe(400);
      // Another project's subject of the same name has no history here.
      const other = (await h.call('POST', b.projectId, '/lattice/predict', { body })).json();
      expect(other.targetPrediction.abstained).toBe(true);
    });

    it('emits prediction.imminent once per subject, pattern and day', async () => {
      const first = (await h.call('POST', a.projectId, '/lattice/predict', { body: { subject: gymGoer, emitEvents: true, imminentWithinHours: 720, minConfidence: 0 } })).json();
      expect(first.eventsEmitted).toBeGreaterThanOrEqual(1);
      const again = (await h.call('POST', a.projectId, '/lattice/predict', { body: { subject: gymGoer, emitEvents: true, imminentWithinHours: 720, minConfidence: 0 } })).json();
      expect(again.eventsEmitted).toBe(0);
      const events = (await h.call('GET', a.projectId, '/memory-events?eventTypes=prediction.imminent')).json();
      expect(events).toHaveLength(first.eventsEmitted);
      expect(events[0]).toMatchObject({ subject: gymGoer, sourcePatternId: expect.stringMatching(/^mem_/) });
    });

    it('abstains with a reason: no patterns, or none above the confidence floor; ignores a target', async () => {
      const none = (await h.call('POST', a.projectId, '/lattice/predict', { body: { subject: { kind: 'customer', externalId: 'nobody' }, target: { kind: 'numeric' } } })).json();
      expect(none).toMatchObject({ predictions: [], activePatternCount: 0, abstained: true, abstentionReason: expect.stringMatching(/^insufficient_signal: /) });
      const high = (await h.call('POST', a.projectId, '/lattice/predict', { body: { subject: gymGoer, minConfidence: 1 } })).json();
      expect(high).toMatchObject({ predictions: [], abstained: true, abstentionReason: expect.stringMatching(/^insufficient_confidence: /) });
    });

    it('validates, gates by entitlement and permission, and meters', async () => {
      expect((await h.call('POST', a.projectId, '/lattice/predict', { body: {} })).statusCode).toBe(400);
      expect((await h.call('POST', a.projectId, '/lattice/predict', { body: { subject: gymGoer, limit: 0 } })).statusCode).toBe(400);
      const reader = await h.key(a.projectId, ['READ_MEMORY']);
      expect((await h.call('POST', a.projectId, '/lattice/predict', { apiKey: reader, body: { subject: gymGoer } })).statusCode).toBe(200);
      expect((await h.call('POST', a.projectId, '/lattice/predict', { apiKey: reader, body: { subject: gymGoer, emitEvents: true } })).statusCode).toBe(403);
      expect((await h.call('POST', a.projectId, '/lattice/predict', { apiKey: 'nope', body: { subject: gymGoer } })).statusCode).toBe(401);
      const free = await h.project({ plan: 'free' });
      for (const path of ['/lattice/predict', '/memory-intelligence/predict']) {
        const res = await h.call('POST', free.projectId, path, { body: { subject: gymGoer, target: { kind: 'event_occurrence' } } });
        expect(res.statusCode).toBe(403);
        expect(res.json()).toMatchObject({ code: 'FEATURE_DISABLED', message: expect.stringContaining('growth') });
      }
      const metered = await h.project({ plan: 'growth' });
      await h.apis.tenancy.setPlan(metered.projectId, 'growth', { 'memory.predictions': 2 });
      const used = await h.apis.tenancy.usage(metered.projectId, 'memory.predictions');
      expect(used).toBe(0);
      expect((await h.call('POST', metered.projectId, '/lattice/predict', { body: { subject: gymGoer } })).statusCode).toBe(200);
      expect((await h.call('POST', metered.projectId, '/memory-intelligence/predict', { body: { subject: gymGoer, target: { kind: 'event_occurrence' } } })).statusCode).toBe(200);
      const over = await h.call('POST', metered.projectId, '/lattice/predict', { body: { subject: gymGoer } });
      expect(over.statusCode).toBe(429);
      expect(over.json().code).toBe('QUOTA_EXCEEDED');
      expect(await h.apis.tenancy.usage(metered.projectId, 'memory.predictions')).toBe(2);
    });

    it("never shows another project's patterns", async () => {
      const res = (await h.call('POST', b.projectId, '/lattice/predict', { body: { subject: gymGoer } })).json();
      expect(res).toMatchObject({ predictions: [], activePatternCount: 0, abstained: true });
    });
  });

  describe('declared-target predictions', () => {
    const predict = (projectId: string, body: unknown) => h.call('POST', projectId, '/memory-intelligence/predict', { body });

    it('event_occurrence from the subject\'s own rate while the project is small, recorded with an id', async () => {
      const res = await predict(a.projectId, { subject: gymGoer, horizonDays: 14, target: { kind: 'event_occurrence', eventType: 'gym' } });
      expect(res.statusCode, res.body).toBe(200);
      const t = res.json().targetPrediction;
      expect(res.json().abstained).toBe(false);
      expect(t).toMatchObject({ targetKind: 'event_occurrence', eventType: 'gym', model: 'gamma_poisson', abstained: false, predictionId: expect.stringMatching(/^prd_/) });
      expect(t.probability).toBeGreaterThan(0.5);
      expect(t.probabilityLower).toBeLessThanOrEqual(t.probability);
      expect(t.probabilityUpper).toBeGreaterThanOrEqual(t.probability);
      expect(t.value).toBeGreaterThan(1);
      expect(t.evidenceMemoryIds.length).toBe(9);
      expect(t.explanation).toMatch(/Gamma posterior/);
      const row = await h.db.query(`SELECT target_kind, model, horizon_days FROM behavior_predictions WHERE project_id = $1 AND id = $2`, [a.projectId, t.predictionId]);
      expect(row.rows).toEqual([{ target_kind: 'event_occurrence', model: 'gamma_poisson', horizon_days: 14 }]);
    });

    it('event_occurrence from BG/NBD once 50 subjects have the activity, with recency lowering the chance', async () => {
      const p = await h.project();
      await h.call('POST', p.projectId, '/memory-typed/attributes', { body: { attributeKey: 'buy', dataType: 'numeric', unit: 'EUR' } });
      const now = Date.now();
      const observations: Record<string, unknown>[] = [];
      // 80 subjects simulated from the BG/NBD story (seeded): each buys at its own rate and may
      // drop out after any purchase. s0 bought 2 days ago after a steady run; s1 stopped long ago.
      const random = mulberry32(20261124);
      const history = (rate: number, dropout: number, start: number) => {
        const times = [start];
        for (;;) {
          if (random() < dropout) break;
          const next = times.at(-1)! - (Math.log(1 - random()) / rate) * DAY;
          if (next >= now - DAY) break;
          times.push(next);
        }
        return times;
      };
      const subjects: number[][] = Array.from({ length: 78 }, () => history(0.02 + 0.2 * random() ** 2, 0.05 + 0.3 * random(), now - (100 + 200 * random()) * DAY));
      subjects.unshift(Array.from({ length: 12 }, (_, k) => now - (2 + 10 * (11 - k)) * DAY), Array.from({ length: 12 }, (_, k) => now - (150 + 10 * (11 - k)) * DAY));
      subjects.forEach((times, s) => {
        for (const t of times) observations.push({ attributeKey: 'buy', subjectKind: 'customer', subjectExternalId: `s${s}`, valueNumeric: 10 + s, observedAt: new Date(t).toISOString() });
      });
      expect((await h.call('POST', p.projectId, '/memory-typed/observations', { body: { observations } })).json().accepted).toBe(observations.length);
      // The first ask finds no fit: the subject's own rate answers, and the fit is a job.
      const ask = async (externalId: string) => (await predict(p.projectId, { subject: { kind: 'customer', externalId }, horizonDays: 30, target: { kind: 'event_occurrence', eventType: 'buy' } })).json().targetPrediction;
      const first = await ask('s0');
      expect(first).toMatchObject({ model: 'gamma_poisson', explanation: expect.stringContaining('BG/NBD is being fitted') });
      await expect.poll(async () => (await ask('s0')).model, { timeout: 30_000, interval: 100 }).toBe('bgnbd');
      const active = await ask('s0');
      const lapsed = (await predict(p.projectId, { subject: { kind: 'customer', externalId: 's1' }, horizonDays: 30, target: { kind: 'event_occurrence', eventType: 'buy' } })).json().targetPrediction;
      expect(active.model).toBe('bgnbd');
      expect(lapsed.model).toBe('bgnbd');
      expect(active.explanation).toMatch(/BG\/NBD .* 80 subjects/);
      expect(active.probability).toBeGreaterThan(lapsed.probability);
      expect(lapsed.probability).toBeLessThan(0.5);
      for (const t of [active, lapsed]) {
        expect(t.probabilityLower).toBeLessThanOrEqual(t.probability);
        expect(t.probabilityUpper).toBeGreaterThanOrEqual(t.probability);
      }
      // The fit is cached per project, activity type and lookback.
      const cached = await h.db.query(`SELECT model, model_key, subjects FROM behavior_models WHERE project_id = $1 AND model = 'bgnbd'`, [p.projectId]);
      expect(cached.rows).toEqual([{ model: 'bgnbd', model_key: 'buy|365', subjects: 80 }]);
      // Once stale, the model still answers at once while a job refits it.
      await h.db.query(`UPDATE behavior_models SET fitted_at = now() - interval '7 hours' WHERE project_id = $1 AND model = 'bgnbd'`, [p.projectId]);
      expect((await ask('s0')).model).toBe('bgnbd');
      await expect
        .poll(async () => (await h.db.query<{ fresh: boolean }>(`SELECT fitted_at > now() - interval '1 hour' AS fresh FROM behavior_models WHERE project_id = $1 AND model = 'bgnbd'`, [p.projectId])).rows[0]!.fresh, { timeout: 30_000, interval: 100 })
        .toBe(true);
      // Profiles score RFM against these subjects: amounts of a currency attribute count as money.
      const profile = (await h.call('POST', p.projectId, '/lattice/profile', { body: { subject: { kind: 'customer', externalId: 's0' } } })).json();
      expect(profile).toMatchObject({ recencyScore: expect.any(Number), frequencyScore: expect.any(Number), monetaryScore: expect.any(Number) });
      expect(profile.recencyScore).toBeGreaterThanOrEqual(4);
      const gone = (await h.call('POST', p.projectId, '/lattice/profile', { body: { subject: { kind: 'customer', externalId: 's1' } } })).json();
      expect(gone.recencyScore).toBeLessThan(profile.recencyScore);
    });

    it('event_time: the next occurrence from the gaps, with an interval, overdue marked', async () => {
      // The gym-goer's visits were weekly; the last one left (the newest was deleted) was 13 days ago.
      const t = (await predict(a.projectId, { subject: gymGoer, target: { kind: 'event_time', eventType: 'gym' } })).json().targetPrediction;
      expect(t).toMatchObject({ targetKind: 'event_time', model: 'inter_arrival', overdue: true });
      // To a tenth of a day: the visits were laid out from the clock when the file began, which has
      // moved on by however long the tests before this one took.
      expect(t.daysUntil).toBeCloseTo(-6, 1);
      expect(Date.parse(t.expectedAtLower)).toBeLessThanOrEqual(Date.parse(t.expectedAt));
      expect(Date.parse(t.expectedAtUpper)).toBeGreaterThanOrEqual(Date.parse(t.expectedAt));
      expect(t.explanation).toContain('overdue');
      const runner = (await predict(a.projectId, { subject: { kind: 'customer', externalId: 'c-run' }, target: { kind: 'event_time', eventType: 'run' } })).json().targetPrediction;
      expect(runner).toMatchObject({ overdue: false });
      expect(runner.daysUntil).toBeCloseTo(5, 1);
    });

    it('numeric and anomaly from typed readings', async () => {
      await h.call('POST', a.projectId, '/memory-typed/attributes', { body: { attributeKey: 'hr', dataType: 'numeric', unit: 'bpm' } });
      const subject = { kind: 'patient', externalId: 'p1' };
      const values = [60, 62, 61, 59, 60, 61, 95];
      const observations = values.map((v, i) => ({ attributeKey: 'hr', subjectKind: 'patient', subjectExternalId: 'p1', valueNumeric: v, observedAt: new Date(Date.now() - (values.length - i) * HOUR).toISOString() }));
      await h.call('POST', a.projectId, '/memory-typed/observations', { body: { observations } });
      const level = (await predict(a.projectId, { subject, target: { kind: 'numeric', attributeKey: 'hr' } })).json().targetPrediction;
      expect(level).toMatchObject({ targetKind: 'numeric', model: 'ewma', abstained: false });
      expect(level.valueLower).toBeLessThanOrEqual(level.value);
      expect(level.valueUpper).toBeGreaterThanOrEqual(level.value);
      expect(level.evidenceMemoryIds).toHaveLength(7);
      const odd = (await predict(a.projectId, { subject, target: { kind: 'anomaly', attributeKey: 'hr' } })).json().targetPrediction;
      expect(odd).toMatchObject({ targetKind: 'anomaly', value: 95, isAnomaly: true, model: 'zscore' });
      expect(odd.anomalyScore).toBeGreaterThan(3);
      expect(odd.valueUpper).toBeLessThan(95);
    });

    it('abstains on thin or missing signal, never answering "no"', async () => {
      const unknown = (await predict(a.projectId, { subject: { kind: 'customer', externalId: 'ghost' }, target: { kind: 'event_occurrence' } })).json();
      expect(unknown).toMatchObject({ abstained: true, abstentionReason: expect.stringMatching(/^insufficient_signal: /), targetPrediction: { abstained: true, probability: null, predictionId: null } });
      const noKey = (await predict(a.projectId, { subject: gymGoer, target: { kind: 'numeric' } })).json();
      expect(noKey.abstained).toBe(true);
      const thin = (await predict(a.projectId, { subject: { kind: 'patient', externalId: 'p1' }, target: { kind: 'event_time', eventType: 'surgery' } })).json();
      expect(thin).toMatchObject({ abstained: true, abstentionReason: expect.stringContaining('at least 3') });
      expect((await predict(a.projectId, { subject: gymGoer, target: { kind: 'weather' } })).statusCode).toBe(400);
      expect((await predict(a.projectId, { subject: gymGoer })).statusCode).toBe(400);
      // Another project's key sees none of this subject's activity.
      expect((await predict(b.projectId, { subject: gymGoer, target: { kind: 'event_occurrence', eventType: 'gym' } })).json().abstained).toBe(true);
    });

    it('scores recorded predictions once their horizon has passed', async () => {
      const t = (await predict(a.projectId, { subject: gymGoer, horizonDays: 1, target: { kind: 'event_occurrence', eventType: 'gym' } })).json().targetPrediction;
      await saveEvents(a.projectId, gymGoer, [new Date(Date.now() + HOUR)], 'gym');
      expect(await h.apis.behavior.scoreDue(new Date(Date.now() + 2 * DAY))).toBeGreaterThanOrEqual(1);
      const row = await h.db.query(`SELECT hit, realized_value, scored_at IS NOT NULL AS scored FROM behavior_predictions WHERE project_id = $1 AND id = $2`, [a.projectId, t.predictionId]);
      expect(row.rows).toEqual([{ hit: true, realized_value: 1, scored: true }]);
    });

    it('scores event_time by the next occurrence against its interval, numeric by the next reading against its range', async () => {
      const runner = { kind: 'customer', externalId: 'c-run' };
      const time = (await predict(a.projectId, { subject: runner, target: { kind: 'event_time', eventType: 'run' } })).json().targetPrediction;
      await saveEvents(a.projectId, runner, [new Date(time.expectedAt)], 'run');
      const patient = { kind: 'patient', externalId: 'p1' };
      const level = (await predict(a.projectId, { subject: patient, horizonDays: 7, target: { kind: 'numeric', attributeKey: 'hr' } })).json().targetPrediction;
      const outside = level.valueUpper + 50;
      await h.call('POST', a.projectId, '/memory-typed/observations', {
        body: { observations: [{ attributeKey: 'hr', subjectKind: 'patient', subjectExternalId: 'p1', valueNumeric: outside, observedAt: new Date(Date.now() + HOUR).toISOString() }] },
      });
      await h.apis.behavior.scoreDue(new Date(Date.now() + 31 * DAY));
      const scored = async (id: string) => (await h.db.query(`SELECT hit, realized_value FROM behavior_predictions WHERE project_id = $1 AND id = $2 AND scored_at IS NOT NULL`, [a.projectId, id])).rows;
      expect(await scored(time.predictionId)).toEqual([{ hit: true, realized_value: Date.parse(time.expectedAt) }]);
      expect(await scored(level.predictionId)).toEqual([{ hit: false, realized_value: outside }]);
    });
  });

  describe('upcoming and profiles', () => {
    it('lists upcoming and overdue firings project-wide, overdue first', async () => {
      const late = { kind: 'customer', externalId: 'c-late' };
      await saveEvents(a.projectId, late, weekly(10, 10), 'yoga');
      await h.call('POST', a.projectId, '/lattice/patterns/extract', { body: { subject: late } });
      const res = await h.call('GET', a.projectId, '/lattice/predictions/upcoming?horizonDays=30');
      expect(res.statusCode, res.body).toBe(200);
      const list = res.json().predictions;
      expect(list.length).toBeGreaterThanOrEqual(2);
      const mine = list.find((p: { subject: { externalId: string } }) => p.subject.externalId === 'c-late');
      expect(mine).toMatchObject({ subject: late, overdue: true, patternKind: 'recurring_event' });
      expect(mine.hoursOverdue).toBeGreaterThan(0);
      expect(list[0].overdue).toBe(true);
      const firstOnTime = list.findIndex((p: { overdue: boolean }) => !p.overdue);
      expect(list.slice(firstOnTime).every((p: { overdue: boolean }) => !p.overdue)).toBe(true);
      expect((await h.call('GET', b.projectId, '/lattice/predictions/upcoming')).json().predictions).toEqual([]);
      expect((await h.call('GET', a.projectId, '/lattice/predictions/upcoming?limit=0')).statusCode).toBe(400);
    });

    it("scores each subject against the project as it is now while the project is small (the first profile's cut points are not kept)", async () => {
      const p = await h.project();
      const profile = async (externalId: string) => (await h.call('POST', p.projectId, '/lattice/profile', { body: { subject: { kind: 'customer', externalId } } })).json();
      // The first subject profiled is the project's best customer; scored against itself alone it is middling.
      await saveEvents(p.projectId, { kind: 'customer', externalId: 'best' }, weekly(8, 1), 'order', { amount: 100 });
      expect((await profile('best')).frequencyScore).toEqual(expect.any(Number));
      for (const [i, id] of ['second', 'third', 'fourth', 'fifth'].entries()) await saveEvents(p.projectId, { kind: 'customer', externalId: id }, weekly(2 + i, 10), 'order', { amount: 10 + i });
      const best = await profile('best');
      expect(best.frequencyScore).toBe(5);
      expect(best.monetaryScore).toBe(5);
      expect((await profile('second')).frequencyScore).toBe(1);
    });

    it('profiles a subject: RFM scores, segment, cadence, risks and contributing patterns', async () => {
      const res = await h.call('POST', a.projectId, '/lattice/profile', { body: { subject: { kind: 'customer', externalId: 'c-late' } } });
      expect(res.statusCode, res.body).toBe(200);
      const profile = res.json();
      expect(profile.rfmSegment).toEqual(expect.any(String));
      for (const s of [profile.recencyScore, profile.frequencyScore]) expect([1, 2, 3, 4, 5]).toContain(s);
      expect(profile.monetaryScore).toBeNull();
      expect(profile.cadenceSummary).toMatch(/^weekly, \w+days at \d\d:\d\d$/);
      expect(profile.risks).toContainEqual(expect.objectContaining({ kind: 'cadence_missed', sourcePatternId: expect.stringMatching(/^mem_/) }));
      expect(profile.contributingPatternIds.length).toBeGreaterThanOrEqual(3);
      const twin = (await h.call('POST', a.projectId, '/memory-intelligence/profile', { body: { subject: { kind: 'customer', externalId: 'c-late' } } })).json();
      expect(twin.contributingPatternIds).toEqual(profile.contributingPatternIds);
      const elsewhere = (await h.call('POST', b.projectId, '/lattice/profile', { body: { subject: { kind: 'customer', externalId: 'c-late' } } })).json();
      expect(elsewhere).toMatchObject({ rfmSegment: null, contributingPatternIds: [], activityCount: 0 });
      expect((await h.call('POST', a.projectId, '/lattice/profile', { body: {} })).statusCode).toBe(400);
      expect((await h.call('POST', a.projectId, '/lattice/profile', { apiKey: 'bad', body: { subject: { kind: 'x', externalId: 'y' } } })).statusCode).toBe(401);
    });
  });
});

describe('context bundles', () => {
  let h: Harness;
  let p: { projectId: string; apiKey: string };
  const subject = { kind: 'customer', externalId: 'ctx-1' };

  beforeAll(async () => {
    h = await createHarness();
    p = await h.project();
    const last = Date.now() - 3 * DAY;
    for (let i = 0; i < 10; i++) {
      const at = new Date(last - (9 - i) * 7 * DAY).toISOString();
      await h.call('POST', p.projectId, '/admin/memory', { body: { content: `coffee order placed at ${at}`, type: 'event', subject, validFrom: at, metadata: { eventType: 'coffee', entity: 'flat white' } } });
    }
    await h.call('POST', p.projectId, '/admin/memory', { body: { content: 'Prefers oat milk in every drink', type: 'preference', subject, importance: 9 } });
    await h.call('POST', p.projectId, '/admin/memory', { body: { content: 'Asked for the loyalty card terms', type: 'fact', subject, importance: 3, category: 'billing' } });
    await h.call('POST', p.projectId, '/memory-typed/attributes', { body: { attributeKey: 'spend', dataType: 'numeric', unit: 'USD' } });
    await h.call('POST', p.projectId, '/memory-typed/observations', {
      body: { observations: [4.5, 5, 4.8].map((v, i) => ({ attributeKey: 'spend', subjectKind: subject.kind, subjectExternalId: subject.externalId, valueNumeric: v, observedAt: new Date(Date.now() - (3 - i) * DAY).toISOString() })) },
    });
    await h.call('POST', p.projectId, '/lattice/patterns/extract', { body: { subject } });
  });
  afterAll(async () => h?.close());

  it('keeps the default budget, cutting the least distilled section first and saying so', async () => {
    const res = await h.call('POST', p.projectId, '/lattice/context', { body: { subject } });
    expect(res.statusCode, res.body).toBe(200);
    const bundle = res.json();
    expect(bundle.tokensEstimate).toBeGreaterThan(100);
    expect(bundle.tokensEstimate).toBeLessThanOrEqual(2000);
    // The bundle's size moves with the clock (day names, which patterns project inside the
    // horizon), so whether the observations fit is not fixed: when any section is cut, it says so.
    const full = (await h.call('POST', p.projectId, '/lattice/context', { body: { subject, maxTokens: 16_000 } })).json();
    for (const s of ['patterns', 'predictions', 'memories', 'observations'] as const) {
      if (bundle[s].length < full[s].length) expect(bundle.truncated).toContain(s);
      else expect(bundle.truncated).not.toContain(s);
    }
    expect(bundle.memories).toEqual(full.memories.slice(0, bundle.memories.length));
  });

  it('builds the five sections with provenance and guidance when the budget holds them all', async () => {
    const res = await h.call('POST', p.projectId, '/lattice/context', { body: { subject, maxTokens: 4000 } });
    expect(res.statusCode, res.body).toBe(200);
    const bundle = res.json();
    expect(bundle.profile).toMatchObject({ cadenceSummary: expect.stringContaining('weekly'), topEntity: 'flat white' });
    expect(bundle.patterns.map((x: { patternKind: string }) => x.patternKind)).toContain('recurring_event');
    // Three spend readings a day apart make a tentative daily pattern: listed with the contact's
    // patterns, left out of the bundle (too little is known for an agent to act on it).
    expect(bundle.patterns.map((x: { summary: string }) => x.summary).join(' | ')).not.toContain('spend');
    const all = (await h.call('GET', p.projectId, `/lattice/contacts/${subject.externalId}/patterns`)).json().data;
    expect(all.find((x: { metadata: { eventType: string } }) => x.metadata.eventType === 'spend')?.metadata.unseen).toBeGreaterThan(0);
    expect(bundle.predictions.length).toBeGreaterThanOrEqual(1);
    expect(bundle.memories[0]).toMatchObject({ content: 'Prefers oat milk in every drink', importance: 9 });
    expect(bundle.memories.length).toBeLessThanOrEqual(10);
    expect(bundle.observations).toContainEqual(expect.objectContaining({ content: expect.stringMatching(/^spend: latest 4.8 /), proofCount: 3 }));
    expect(bundle.truncated).toEqual([]);
    expect(bundle.tokensEstimate).toBeLessThanOrEqual(4000);
    expect(bundle.guidance).toMatch(/not "no"/);
    // Every claim's ids are gathered in provenance.
    for (const m of bundle.memories) expect(bundle.provenance.memoryIds).toContain(m.id);
    for (const x of bundle.patterns) expect(bundle.provenance.patternIds).toContain(x.id);
    for (const x of bundle.predictions) expect(bundle.provenance.patternIds).toContain(x.patternId);
    for (const o of bundle.observations) expect(bundle.provenance.observationIds).toContain(o.id);
  });

  it('cuts whole items to a hard token cap, lowest-priority sections first, and names them', async () => {
    const bundle = (await h.call('POST', p.projectId, '/lattice/context', { body: { subject, maxTokens: 200, memoryLimit: 100 } })).json();
    expect(bundle.tokensEstimate).toBeLessThanOrEqual(200);
    expect(bundle.truncated.length).toBeGreaterThan(0);
    expect(bundle.truncated).toContain('observations');
    // Below the floor it is clamped to 200, above the ceiling to 16,000.
    expect((await h.call('POST', p.projectId, '/lattice/context', { body: { subject, maxTokens: 10 } })).json().tokensEstimate).toBeLessThanOrEqual(200);
    const big = (await h.call('POST', p.projectId, '/lattice/context', { body: { subject, maxTokens: 1e9, memoryLimit: 100 } })).json();
    expect(big.truncated).toEqual([]);
  });

  it('builds only the sections asked for, and leaves excluded categories out', async () => {
    const only = (await h.call('POST', p.projectId, '/lattice/context', { body: { subject, include: ['memories'], excludeCategories: ['BILLING'] } })).json();
    expect(only.profile).toBeNull();
    expect(only.patterns).toEqual([]);
    expect(only.observations).toEqual([]);
    expect(only.memories.map((m: { content: string }) => m.content)).not.toContain('Asked for the loyalty card terms');
    const noCoffee = (await h.call('POST', p.projectId, '/lattice/context', { body: { subject, excludeCategories: ['coffee', 'spend'] } })).json();
    expect(noCoffee.patterns).toEqual([]);
    expect(noCoffee.predictions).toEqual([]);
    expect(noCoffee.observations).toEqual([]);
  });

  it('ranks the memories section by the memory search when given a query, within the subject and the project', async () => {
    await h.call('POST', p.projectId, '/admin/memory', { body: { content: 'Is allergic to hazelnuts', type: 'fact', subject, importance: 2 } });
    await h.call('POST', p.projectId, '/admin/memory', { body: { content: 'Is allergic to hazelnuts too', type: 'fact', subject: { kind: 'customer', externalId: 'ctx-other' }, importance: 9 } });
    while ((await h.call('POST', p.projectId, '/admin/memory/embeddings/backfill', { body: {} })).json().embedded > 0);
    // Without a query the low-importance memory is not first; with one, the memory that answers it is.
    const plain = (await h.call('POST', p.projectId, '/lattice/context', { body: { subject, include: ['memories'] } })).json();
    expect(plain.memories[0].content).toBe('Prefers oat milk in every drink');
    const res = await h.call('POST', p.projectId, '/lattice/context', { body: { subject, include: ['memories'], query: 'any nut allergy?', memoryLimit: 3, excludeCategories: ['billing'] } });
    expect(res.statusCode, res.body).toBe(200);
    const bundle = res.json();
    expect(bundle.memories[0].content).toBe('Is allergic to hazelnuts');
    expect(bundle.memories.length).toBeLessThanOrEqual(3);
    expect(bundle.memories.map((m: { content: string }) => m.content)).not.toContain('Is allergic to hazelnuts too');
    expect(bundle.memories.map((m: { content: string }) => m.content)).not.toContain('Asked for the loyalty card terms');
    expect(bundle.provenance.memoryIds).toContain(bundle.memories[0].id);
    // The query's words about time are read against referenceTime.
    await h.call('POST', p.projectId, '/admin/memory', { body: { content: 'Visited the Porto store', type: 'fact', subject, validFrom: '2026-03-12T10:00:00.000Z' } });
    await h.call('POST', p.projectId, '/admin/memory', { body: { content: 'Visited the Braga store', type: 'fact', subject, validFrom: '2026-06-12T10:00:00.000Z' } });
    while ((await h.call('POST', p.projectId, '/admin/memory/embeddings/backfill', { body: {} })).json().embedded > 0);
    const when = async (referenceTime: string) =>
      (await h.call('POST', p.projectId, '/lattice/context', { body: { subject, include: ['memories'], query: 'which store did they visit last month', referenceTime } })).json().memories[0].content;
    expect(await when('2026-04-02T00:00:00Z')).toBe('Visited the Porto store');
    expect(await when('2026-07-02T00:00:00Z')).toBe('Visited the Braga store');
    for (const body of [{ subject, query: '' }, { subject, query: 'x'.repeat(2001) }, { subject, query: 'nuts', referenceTime: 'soon' }]) {
      const bad = await h.call('POST', p.projectId, '/lattice/context', { body });
      expect(bad.statusCode, JSON.stringify(body).slice(0, 80)).toBe(400);
    }
    // Another project holding the same words sees none of them.
    const q = await h.project();
    const elsewhere = (await h.call('POST', q.projectId, '/lattice/context', { body: { subject, include: ['memories'], query: 'any nut allergy?' } })).json();
    expect(elsewhere.memories).toEqual([]);
  });

  it('batches in request order, with an empty bundle for an unknown subject', async () => {
    const ghost = { kind: 'customer', externalId: 'ghost' };
    const res = await h.call('POST', p.projectId, '/lattice/context/batch', { body: { subjects: [ghost, subject, ghost], maxTokens: 500 } });
    expect(res.statusCode, res.body).toBe(200);
    const { bundles } = res.json();
    expect(bundles.map((b: { subject: { externalId: string } }) => b.subject.externalId)).toEqual(['ghost', 'ctx-1', 'ghost']);
    expect(bundles[0]).toMatchObject({ profile: null, patterns: [], predictions: [], memories: [], observations: [], truncated: [] });
    expect(bundles[0].guidance).toMatch(/Nothing is known/);
    expect(bundles[1].patterns.length).toBeGreaterThan(0);
    for (const b of bundles) expect(b.tokensEstimate).toBeLessThanOrEqual(500);
  });

  it('validates, checks the key, and keeps projects apart', async () => {
    expect((await h.call('POST', p.projectId, '/lattice/context', { body: { subject, include: ['weather'] } })).statusCode).toBe(400);
    expect((await h.call('POST', p.projectId, '/lattice/context/batch', { body: { subjects: [] } })).statusCode).toBe(400);
    const tooMany = Array.from({ length: 501 }, (_, i) => ({ kind: 'c', externalId: `s${i}` }));
    expect((await h.call('POST', p.projectId, '/lattice/context/batch', { body: { subjects: tooMany } })).statusCode).toBe(400);
    expect((await h.call('POST', p.projectId, '/lattice/context', { apiKey: 'wrong', body: { subject } })).statusCode).toBe(401);
    const other = await h.project();
    const elsewhere = (await h.call('POST', other.projectId, '/lattice/context', { body: { subject } })).json();
    expect(elsewhere).toMatchObject({ profile: null, patterns: [], predictions: [], memories: [], observations: [] });
  });
});
