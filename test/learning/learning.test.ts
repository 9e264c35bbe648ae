// The closed loop through the API: decisions (refs checked, idempotent under concurrency, mirrored
// as memories), outcomes (worked Beta-Binomial updates with weights and partials, attribution
// windows, no lost update under concurrency, the pattern's confidence moving projections and
// surviving re-mining), the outcome list, effectiveness and calibration reports; validation,
// permissions and isolation between projects.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createHarness, type Harness } from '../helpers/harness.js';

const DAY = 86_400_000;

function expectError(res: { statusCode: number; json(): any }, status: number, code: string) {
  expect(res.statusCode).toBe(status);
  expect(res.json()).toMatchObject({ statusCode: status, code, message: expect.any(String) });
}

describe('learning loop', () => {
  let h: Harness;
  let a: { projectId: string; apiKey: string };
  let b: { projectId: string; apiKey: string };
  const subject = { kind: 'customer', externalId: 'c-loop' };

  /** A mined pattern written as mining writes it: `hits` of `hits + misses` periods held. */
  async function pattern(projectId: string, key: string, hits: number, misses: number, patternKind = 'recurring_event', who = subject) {
    const [written] = await h.apis.memory.upsertKeyed(projectId, [
      {
        key: `${patternKind}:${key}`,
        subjectKind: who.kind,
        subjectExternalId: who.externalId,
        type: 'behavior_pattern',
        content: `${key} (${patternKind}) recurs weekly`,
        confidence: (hits + 1) / (hits + misses + 2),
        metadata: {
          patternKind,
          eventType: key,
          cadence: { periodDays: 7 },
          confidence: (hits + 1) / (hits + misses + 2),
          hits,
          misses,
          active: true,
          nextExpectedAt: new Date(Date.now() + DAY).toISOString(),
          lastObservedAt: new Date(Date.now() - 6 * DAY).toISOString(),
          observationCount: hits + misses + 1,
          observationWindowDays: 90,
        },
        source: 'mining',
        sourceMemoryIds: [],
        validFrom: new Date(Date.now() - 90 * DAY),
        validTo: null,
      },
    ]);
    return written!.id;
  }

  const decide = (projectId: string, body: Record<string, unknown>, apiKey?: string) =>
    h.call('POST', projectId, '/lattice/decisions', { body: { subject, ...body }, ...(apiKey ? { apiKey } : {}) });
  const outcome = (projectId: string, body: Record<string, unknown>, apiKey?: string) => h.call('POST', projectId, '/lattice/outcomes', { body, ...(apiKey ? { apiKey } : {}) });
  const confidenceOf = async (projectId: string, patternId: string) => (await h.call('GET', projectId, `/lattice/patterns/${patternId}`)).json().confidence as number;

  beforeAll(async () => {
    h = await createHarness();
    a = await h.project();
    b = await h.project();
  });
  afterAll(async () => h?.close());

  describe('decisions', () => {
    it('records a decision with its refs, answers the record and the same under `decision`, and mirrors it as a decision memory', async () => {
      const patternId = await pattern(a.projectId, 'gym', 8, 0);
      const evidence = (await h.call('POST', a.projectId, '/admin/memory', { body: { content: 'Prefers morning calls', confidence: 0.6, subject } })).json();
      const res = await decide(a.projectId, {
        actor: 'retention-agent',
        decisionType: 'retention',
        policy: 'v2',
        actionType: 'send_offer',
        params: { discount: '10%' },
        informedBy: [{ memoryId: patternId }, { memoryId: evidence.id, refType: 'observation', weight: 0 }],
        metadata: { channel: 'email' },
      });
      expect(res.statusCode, res.body).toBe(201);
      const record = res.json();
      expect(record).toMatchObject({
        decisionId: expect.stringMatching(/^dec_/),
        subject,
        actor: 'retention-agent',
        decisionType: 'retention',
        policy: 'v2',
        actionType: 'send_offer',
        params: { discount: '10%' },
        // refType defaults to pattern, a weight of 0 counts as 1.
        informedBy: [
          { memoryId: patternId, refType: 'pattern', weight: 1 },
          { memoryId: evidence.id, refType: 'observation', weight: 1 },
        ],
        status: 'executed',
        metadata: { channel: 'email' },
        idempotencyKey: null,
      });
      const { decision, ...flat } = record;
      expect(decision).toEqual(flat);
      const memory = (await h.call('GET', a.projectId, `/admin/memory/${record.memoryId}`)).json();
      expect(memory).toMatchObject({ type: 'decision', subject, metadata: { decisionId: record.decisionId, actionType: 'send_offer' } });
      expect(memory.content).toContain(record.decisionId);
      expect(memory.sourceMemoryIds.sort()).toEqual([patternId, evidence.id].sort());
    });

    it('refuses a ref that is not in the project with 404 naming it, and writes nothing', async () => {
      const theirs = await pattern(b.projectId, 'b-only', 5, 0);
      const before = (await h.db.query(`SELECT count(*)::int AS n FROM learning_decisions WHERE project_id = $1`, [a.projectId])).rows[0];
      for (const ref of [{ memoryId: theirs, refType: 'pattern' }, { memoryId: 'prd_NOPE', refType: 'prediction' }, { memoryId: 'obs_NOPE', refType: 'observation' }]) {
        const res = await decide(a.projectId, { informedBy: [ref] });
        expectError(res, 404, 'NOT_FOUND');
        expect(res.json().message).toContain(ref.memoryId);
        expect(res.json().message).toContain('informedBy[0]');
      }
      // A memory that is not a pattern is no pattern ref.
      const plain = (await h.call('POST', a.projectId, '/admin/memory', { body: { content: 'just a fact' } })).json();
      expectError(await decide(a.projectId, { informedBy: [{ memoryId: plain.id, refType: 'pattern' }] }), 404, 'NOT_FOUND');
      const after = (await h.db.query(`SELECT count(*)::int AS n FROM learning_decisions WHERE project_id = $1`, [a.projectId])).rows[0];
      expect(after).toEqual(before);
    });

    it('refuses bad bodies with 400 naming the field', async () => {
      const cases: [Record<string, unknown>, string][] = [
        [{ subject: undefined }, 'subject'],
        [{ status: 'maybe' }, 'status'],
        [{ informedBy: [{ memoryId: 'mem_x', refType: 'rumour' }] }, 'refType'],
        [{ informedBy: [{ memoryId: 'mem_x', weight: -1 }] }, 'weight'],
        [{ occurredAt: 'yesterday' }, 'occurredAt'],
        [{ actorr: 'typo' }, 'actorr'],
      ];
      for (const [body, field] of cases) {
        const res = await h.call('POST', a.projectId, '/lattice/decisions', { body: { subject, ...body } });
        expectError(res, 400, 'VALIDATION_ERROR');
        expect(JSON.stringify(res.json()), field).toContain(field);
      }
    });

    it('answers the first record for a repeated idempotency key, also under 50 concurrent identical requests', async () => {
      const body = { actionType: 'call', idempotencyKey: 'decide-once' };
      const answers = await Promise.all(Array.from({ length: 50 }, () => decide(a.projectId, body)));
      expect(answers.map((r) => r.statusCode).sort((x, y) => x - y)).toEqual([...Array(49).fill(200), 201]);
      const ids = new Set(answers.map((r) => r.json().decisionId));
      expect(ids.size).toBe(1);
      const rows = await h.db.query(`SELECT memory_id FROM learning_decisions WHERE project_id = $1 AND idempotency_key = 'decide-once'`, [a.projectId]);
      expect(rows.rows).toHaveLength(1);
      const memories = await h.db.query(`SELECT count(*)::int AS n FROM memories WHERE project_id = $1 AND type = 'decision' AND metadata->>'decisionId' = $2`, [a.projectId, [...ids][0]]);
      expect(memories.rows[0]).toEqual({ n: 1 });
      // A later replay with another body still answers the original.
      const replay = await decide(a.projectId, { actionType: 'something else', idempotencyKey: 'decide-once' });
      expect(replay.statusCode).toBe(200);
      expect(replay.json()).toMatchObject({ decisionId: [...ids][0], actionType: 'call' });
      // The same key in another project is another decision.
      expect((await decide(b.projectId, body)).statusCode).toBe(201);
    });

    it('needs WRITE_MEMORY to record and READ_MEMORY to read', async () => {
      const reader = await h.key(a.projectId, ['READ_MEMORY']);
      const writer = await h.key(a.projectId, ['WRITE_MEMORY']);
      expectError(await decide(a.projectId, {}, reader), 403, 'AUTHORIZATION_ERROR');
      const made = await decide(a.projectId, { actionType: 'perm' }, writer);
      expect(made.statusCode).toBe(201);
      expectError(await outcome(a.projectId, { decisionId: made.json().decisionId, result: 'success' }, reader), 403, 'AUTHORIZATION_ERROR');
      for (const path of ['/lattice/outcomes', '/lattice/effectiveness', '/lattice/calibration']) {
        expect((await h.call('GET', a.projectId, path, { apiKey: reader })).statusCode, path).toBe(200);
        expectError(await h.call('GET', a.projectId, path, { apiKey: writer }), 403, 'AUTHORIZATION_ERROR');
      }
    });
  });

  describe('outcomes', () => {
    it('updates every ref by the Beta-Binomial rule: weights, partials, and the priors each ref brings', async () => {
      // Pattern: 8 of 8 periods held, mined confidence 9/10 with a prior worth 10 pseudo-outcomes.
      const patternId = await pattern(a.projectId, 'swim', 8, 0);
      // Observation memory of confidence 0.6: a prior worth 2 pseudo-outcomes.
      const note = (await h.call('POST', a.projectId, '/admin/memory', { body: { content: 'Answers emails on Mondays', confidence: 0.6, subject } })).json();
      const decision = (
        await decide(a.projectId, {
          actionType: 'email',
          informedBy: [
            { memoryId: patternId, refType: 'pattern', weight: 2 },
            { memoryId: note.id, refType: 'observation' },
          ],
        })
      ).json();

      const first = await outcome(a.projectId, { decisionId: decision.decisionId, result: 'success', reward: 5 });
      expect(first.statusCode, first.body).toBe(201);
      const one = first.json();
      expect(one).toMatchObject({ outcomeId: expect.stringMatching(/^out_/), decisionId: decision.decisionId, attributed: true, attributionNote: null });
      const byRef = (updates: any[]) => Object.fromEntries(updates.map((u) => [u.refId, u]));
      let u = byRef(one.updates);
      // Success, weight 2: (0.9 * 10 + 2) / (10 + 2) = 11/12.
      expect(u[patternId]).toMatchObject({ refType: 'pattern', hits: 2, misses: 0 });
      expect(u[patternId].priorConfidence).toBeCloseTo(0.9, 12);
      expect(u[patternId].posteriorConfidence).toBeCloseTo(11 / 12, 12);
      // Success, weight 1: (0.6 * 2 + 1) / 3.
      expect(u[note.id]).toMatchObject({ refType: 'observation', hits: 1, misses: 0 });
      expect(u[note.id].priorConfidence).toBeCloseTo(0.6, 12);
      expect(u[note.id].posteriorConfidence).toBeCloseTo(2.2 / 3, 12);

      // Partial: half a hit and half a miss per unit of weight.
      u = byRef((await outcome(a.projectId, { decisionId: decision.decisionId, result: 'partial' })).json().updates);
      expect(u[patternId]).toMatchObject({ hits: 3, misses: 1 });
      expect(u[patternId].priorConfidence).toBeCloseTo(11 / 12, 12);
      expect(u[patternId].posteriorConfidence).toBeCloseTo(12 / 14, 12);
      expect(u[note.id]).toMatchObject({ hits: 1.5, misses: 0.5 });
      expect(u[note.id].posteriorConfidence).toBeCloseTo(2.7 / 4, 12);

      // Failure.
      u = byRef((await outcome(a.projectId, { decisionId: decision.decisionId, result: 'failure' })).json().updates);
      expect(u[patternId]).toMatchObject({ hits: 3, misses: 3 });
      expect(u[patternId].posteriorConfidence).toBeCloseTo(12 / 16, 12);
      expect(u[note.id].posteriorConfidence).toBeCloseTo(2.7 / 5, 12);

      // The pattern carries its new confidence, which projections use from now on.
      expect(await confidenceOf(a.projectId, patternId)).toBeCloseTo(0.75, 12);
      const read = (await h.call('GET', a.projectId, `/lattice/patterns/${patternId}`)).json();
      expect(read.metadata).toMatchObject({ minedConfidence: 0.9, outcomeHits: 3, outcomeMisses: 3, hits: 8, misses: 0 });
      const projection = (await h.call('POST', a.projectId, '/lattice/predict', { body: { subject, horizonDays: 3 } })).json();
      const firing = projection.predictions.find((p: { patternId: string }) => p.patternId === patternId);
      expect(firing.confidence).toBeCloseTo(0.75, 12);
      // The outcome is mirrored as an outcome memory.
      expect((await h.call('GET', a.projectId, `/admin/memory/${one.memoryId}`)).json()).toMatchObject({ type: 'outcome', subject, metadata: { outcomeId: one.outcomeId, result: 'success' } });
    });

    it('counts a ref cited twice once, with its weights summed; a prediction ref starts from its stated probability', async () => {
      const gym = { kind: 'customer', externalId: 'c-pred' };
      for (let i = 1; i <= 6; i++) {
        await h.call('POST', a.projectId, '/admin/memory', {
          body: { content: `gym visit ${i}`, type: 'event', subject: gym, validFrom: new Date(Date.now() - i * 7 * DAY).toISOString(), metadata: { eventType: 'gym' } },
        });
      }
      const predicted = (await h.call('POST', a.projectId, '/memory-intelligence/predict', { body: { subject: gym, horizonDays: 14, target: { kind: 'event_occurrence', eventType: 'gym' } } })).json()
        .targetPrediction;
      expect(predicted.predictionId).toMatch(/^prd_/);
      const decision = (
        await decide(a.projectId, {
          subject: gym,
          informedBy: [
            { memoryId: predicted.predictionId, refType: 'prediction', weight: 1 },
            { memoryId: predicted.predictionId, refType: 'prediction', weight: 2 },
          ],
        })
      ).json();
      const { updates } = (await outcome(a.projectId, { decisionId: decision.decisionId, result: 'failure' })).json();
      expect(updates).toHaveLength(1);
      const p = predicted.probability;
      expect(updates[0]).toMatchObject({ refId: predicted.predictionId, refType: 'prediction', hits: 0, misses: 3 });
      expect(updates[0].priorConfidence).toBeCloseTo(p, 12);
      expect(updates[0].posteriorConfidence).toBeCloseTo((2 * p) / 5, 12);
    });

    it('stores an outcome outside the attribution window, or before the decision, and updates nothing', async () => {
      const patternId = await pattern(a.projectId, 'window', 4, 0);
      const decidedAt = new Date(Date.now() - 10 * DAY);
      const decision = (await decide(a.projectId, { occurredAt: decidedAt.toISOString(), informedBy: [{ memoryId: patternId }] })).json();
      const late = await outcome(a.projectId, { decisionId: decision.decisionId, result: 'success', attributionWindowSecs: 7 * 86_400 });
      expect(late.statusCode).toBe(201);
      expect(late.json()).toMatchObject({ attributed: false, updates: [], attributionNote: expect.stringContaining('attribution window') });
      const early = await outcome(a.projectId, { decisionId: decision.decisionId, result: 'success', realizedAt: new Date(decidedAt.getTime() - DAY).toISOString() });
      expect(early.json()).toMatchObject({ attributed: false, updates: [], attributionNote: expect.stringContaining('before the decision') });
      expect(await confidenceOf(a.projectId, patternId)).toBeCloseTo(5 / 6, 12);
      // Nor does an outcome of a decision that was skipped.
      const skipped = (await decide(a.projectId, { status: 'skipped', informedBy: [{ memoryId: patternId }] })).json();
      expect((await outcome(a.projectId, { decisionId: skipped.decisionId, result: 'success' })).json()).toMatchObject({ attributed: false, updates: [], attributionNote: expect.stringContaining('skipped') });
      expect(await confidenceOf(a.projectId, patternId)).toBeCloseTo(5 / 6, 12);
      // Within the window it counts.
      const inside = await outcome(a.projectId, { decisionId: decision.decisionId, result: 'failure', realizedAt: new Date(decidedAt.getTime() + DAY).toISOString(), attributionWindowSecs: 7 * 86_400 });
      expect(inside.json()).toMatchObject({ attributed: true, updates: [{ refId: patternId, hits: 0, misses: 1 }] });
      // Both kinds are listed, marked.
      const listed = (await h.call('GET', a.projectId, `/lattice/outcomes?decisionId=${decision.decisionId}`)).json().outcomes;
      expect(listed.map((o: { attributed: boolean }) => o.attributed).sort()).toEqual([false, false, true]);
    });

    it('loses no update under 50 concurrent outcomes on the same ref', async () => {
      const patternId = await pattern(a.projectId, 'busy', 3, 1);
      const decisions = await Promise.all(Array.from({ length: 5 }, () => decide(a.projectId, { informedBy: [{ memoryId: patternId }] })));
      const results = Array.from({ length: 50 }, (_, i) => (i % 5 === 0 ? 'failure' : 'success'));
      const answers = await Promise.all(results.map((result, i) => outcome(a.projectId, { decisionId: decisions[i % 5]!.json().decisionId, result })));
      expect(answers.every((r) => r.statusCode === 201)).toBe(true);
      // Each answer saw a distinct total: the updates were serialised, none lost.
      const totals = answers.map((r) => r.json().updates[0].hits + r.json().updates[0].misses).sort((x, y) => x - y);
      expect(totals).toEqual(Array.from({ length: 50 }, (_, i) => i + 1));
      const read = (await h.call('GET', a.projectId, `/lattice/patterns/${patternId}`)).json();
      expect(read.metadata).toMatchObject({ outcomeHits: 40, outcomeMisses: 10 });
      // Prior: mined (3 + 1) / (4 + 2), worth 6 pseudo-outcomes.
      expect(read.confidence).toBeCloseTo((4 + 40) / (6 + 50), 12);
    });

    it('answers the first recording for a repeated idempotency key, also under 50 concurrent identical requests, updating once', async () => {
      const patternId = await pattern(a.projectId, 'once', 2, 0);
      const decision = (await decide(a.projectId, { informedBy: [{ memoryId: patternId }] })).json();
      const body = { decisionId: decision.decisionId, result: 'success', idempotencyKey: 'outcome-once' };
      const answers = await Promise.all(Array.from({ length: 50 }, () => outcome(a.projectId, body)));
      expect(answers.map((r) => r.statusCode).sort((x, y) => x - y)).toEqual([...Array(49).fill(200), 201]);
      expect(new Set(answers.map((r) => r.json().outcomeId)).size).toBe(1);
      expect(answers.every((r) => JSON.stringify(r.json().updates) === JSON.stringify(answers[0]!.json().updates))).toBe(true);
      expect((await h.call('GET', a.projectId, `/lattice/patterns/${patternId}`)).json().metadata).toMatchObject({ outcomeHits: 1, outcomeMisses: 0 });
    });

    it('keeps outcome evidence through re-mining: the confidence is the new mined prior updated by it', async () => {
      const swimmer = { kind: 'customer', externalId: 'c-remine' };
      for (let i = 0; i < 8; i++) {
        await h.call('POST', a.projectId, '/admin/memory', {
          body: { content: `pool visit ${i}`, type: 'event', subject: swimmer, validFrom: new Date(Date.now() - (i * 7 + 1) * DAY).toISOString(), metadata: { eventType: 'pool' } },
        });
      }
      expect((await h.call('POST', a.projectId, '/lattice/patterns/extract', { body: { subject: swimmer } })).statusCode).toBe(200);
      const mined = (await h.call('GET', a.projectId, '/lattice/contacts/c-remine/patterns')).json().data.find((p: any) => p.metadata.patternKind === 'recurring_event');
      const { hits, misses } = mined.metadata;
      const decision = (await decide(a.projectId, { subject: swimmer, informedBy: [{ memoryId: mined.id }] })).json();
      await outcome(a.projectId, { decisionId: decision.decisionId, result: 'failure' });
      await outcome(a.projectId, { decisionId: decision.decisionId, result: 'failure' });
      const prior = (hits + 1) / (hits + misses + 2);
      const strength = Math.min(10, hits + misses + 2);
      const expected = (prior * strength) / (strength + 2);
      expect(await confidenceOf(a.projectId, mined.id)).toBeCloseTo(expected, 12);
      const again = (await h.call('POST', a.projectId, '/lattice/patterns/extract', { body: { subject: swimmer } })).json();
      expect(again.patternsRefreshed).toBeGreaterThanOrEqual(1);
      const after = (await h.call('GET', a.projectId, `/lattice/patterns/${mined.id}`)).json();
      expect(after.metadata).toMatchObject({ outcomeHits: 0, outcomeMisses: 2, hits, misses });
      expect(after.confidence).toBeCloseTo(expected, 12);
    });

    it('answers 404 for an unknown decision or another project\'s, and 400 for a bad body', async () => {
      expectError(await outcome(a.projectId, { decisionId: 'dec_UNKNOWN', result: 'success' }), 404, 'NOT_FOUND');
      const theirs = (await decide(b.projectId, { actionType: 'b-action' })).json();
      const res = await outcome(a.projectId, { decisionId: theirs.decisionId, result: 'success' });
      expectError(res, 404, 'NOT_FOUND');
      expect(res.body).not.toContain('b-action');
      const mine = (await decide(a.projectId, {})).json();
      for (const [body, field] of [
        [{ decisionId: mine.decisionId }, 'result'],
        [{ decisionId: mine.decisionId, result: 'win' }, 'result'],
        [{ decisionId: mine.decisionId, result: 'success', attributionWindowSecs: -1 }, 'attributionWindowSecs'],
        [{ decisionId: mine.decisionId, result: 'success', realizedAt: 'soon' }, 'realizedAt'],
        [{ result: 'success' }, 'decisionId'],
      ] as const) {
        const bad = await outcome(a.projectId, body);
        expectError(bad, 400, 'VALIDATION_ERROR');
        expect(JSON.stringify(bad.json()), field).toContain(field);
      }
    });
  });

  describe('reports', () => {
    let r: { projectId: string; apiKey: string };
    beforeAll(async () => {
      r = await h.project();
    });

    it('lists outcomes newest first with their decision\'s type and action, filtered, and only the project\'s own', async () => {
      const other = { kind: 'customer', externalId: 'c-other' };
      const d1 = (await decide(r.projectId, { decisionType: 'retention', actionType: 'email' })).json();
      const d2 = (await decide(r.projectId, { subject: other, decisionType: 'upsell', actionType: 'call' })).json();
      const o1 = (await outcome(r.projectId, { decisionId: d1.decisionId, result: 'success', outcomeType: 'reply', reward: 1 })).json();
      const o2 = (await outcome(r.projectId, { decisionId: d2.decisionId, result: 'failure' })).json();
      const o3 = (await outcome(r.projectId, { decisionId: d1.decisionId, result: 'partial', subject: other })).json();
      const all = (await h.call('GET', r.projectId, '/lattice/outcomes')).json().outcomes;
      expect(all.map((o: { outcomeId: string }) => o.outcomeId)).toEqual([o3.outcomeId, o2.outcomeId, o1.outcomeId]);
      expect(all[2]).toMatchObject({ decisionId: d1.decisionId, subject, decisionType: 'retention', actionType: 'email', outcomeType: 'reply', result: 'success', reward: 1, attributed: true });
      const ids = async (query: string) => (await h.call('GET', r.projectId, `/lattice/outcomes?${query}`)).json().outcomes.map((o: { outcomeId: string }) => o.outcomeId);
      expect(await ids('subjectKind=customer&subjectExternalId=c-other')).toEqual([o3.outcomeId, o2.outcomeId]);
      expect(await ids('decisionType=retention')).toEqual([o3.outcomeId, o1.outcomeId]);
      expect(await ids('actionType=call')).toEqual([o2.outcomeId]);
      expect(await ids('limit=1')).toEqual([o3.outcomeId]);
      expectError(await h.call('GET', r.projectId, '/lattice/outcomes?limit=0'), 400, 'VALIDATION_ERROR');
      // Another project sees none of them.
      const theirs = (await h.call('GET', b.projectId, '/lattice/outcomes?limit=1000')).json().outcomes;
      expect(theirs.some((o: { outcomeId: string }) => [o1.outcomeId, o2.outcomeId, o3.outcomeId].includes(o.outcomeId))).toBe(false);
    });

    it('rolls effectiveness up by action, decision type, policy and pattern kind, with minSupport', async () => {
      const e = await h.project();
      const cadence = await pattern(e.projectId, 'gym', 5, 0, 'recurring_event');
      const weekday = await pattern(e.projectId, 'gym', 5, 0, 'day_of_week');
      const run = async (body: Record<string, unknown>, results: string[], rewards: (number | undefined)[] = []) => {
        const d = (await decide(e.projectId, body)).json();
        for (const [i, result] of results.entries()) await outcome(e.projectId, { decisionId: d.decisionId, result, ...(rewards[i] === undefined ? {} : { reward: rewards[i] }) });
      };
      await run({ actionType: 'email', decisionType: 'retention', policy: 'v1', informedBy: [{ memoryId: cadence }, { memoryId: weekday }] }, ['success', 'success', 'failure'], [10, 20]);
      await run({ actionType: 'email', decisionType: 'upsell', informedBy: [{ memoryId: cadence }] }, ['success']);
      await run({ actionType: 'call' }, ['partial']);
      // An outcome outside its window does not count.
      const d = (await decide(e.projectId, { actionType: 'call', occurredAt: new Date(Date.now() - 2 * DAY).toISOString() })).json();
      await outcome(e.projectId, { decisionId: d.decisionId, result: 'success', attributionWindowSecs: 60 });

      const report = async (query: string) => (await h.call('GET', e.projectId, `/lattice/effectiveness${query}`)).json().rows;
      const byAction = await report('');
      expect(byAction).toEqual([
        { groupKey: 'email', n: 4, successRate: 0.75, avgReward: 15, confidence: 4 / 6, successes: 3, failures: 1, partials: 0 },
        { groupKey: 'call', n: 1, successRate: 0.5, avgReward: 0, confidence: 1.5 / 3, successes: 0, failures: 0, partials: 1 },
      ]);
      expect((await report('?groupBy=action_type&minSupport=2')).map((x: { groupKey: string }) => x.groupKey)).toEqual(['email']);
      expect((await report('?groupBy=decision_type')).map((x: { groupKey: string; n: number }) => [x.groupKey, x.n])).toEqual([
        ['retention', 3],
        ['(none)', 1],
        ['upsell', 1],
      ]);
      expect((await report('?groupBy=policy')).map((x: { groupKey: string; n: number }) => [x.groupKey, x.n])).toEqual([
        ['v1', 3],
        ['(none)', 2],
      ]);
      // A decision citing two kinds counts in both.
      expect((await report('?groupBy=pattern_kind')).map((x: { groupKey: string; n: number }) => [x.groupKey, x.n])).toEqual([
        ['recurring_event', 4],
        ['day_of_week', 3],
        ['(none)', 1],
      ]);
      expectError(await h.call('GET', e.projectId, '/lattice/effectiveness?groupBy=colour'), 400, 'VALIDATION_ERROR');
      expectError(await h.call('GET', e.projectId, '/lattice/effectiveness?minSupport=0'), 400, 'VALIDATION_ERROR');
      // Another project's report holds none of it.
      expect((await h.call('GET', b.projectId, '/lattice/effectiveness?groupBy=policy')).json().rows.some((x: { groupKey: string }) => x.groupKey === 'v1')).toBe(false);
    });

    it('buckets predictions by stated probability and patterns by confidence, with hasData, edges and clamping', async () => {
      const c = await h.project();
      const insert = (id: string, probability: number | null, hit: boolean | null, scored: boolean) =>
        h.db.query(
          `INSERT INTO behavior_predictions (project_id, id, subject_kind, subject_external_id, target_kind, horizon_days, lookback_days, model, probability,
             explanation, made_at, due_at, scored_at, hit)
           VALUES ($1, $2, 'customer', 'c-cal', 'event_occurrence', 30, 365, 'gamma_poisson', $3, 'test', now(), now(), $4, $5)`,
          [c.projectId, id, probability, scored ? new Date() : null, hit],
        );
      await insert('prd_cal1', 0.1, false, true);
      await insert('prd_cal2', 0.2, true, true); // on the edge: bucket [0.2, 0.4)
      await insert('prd_cal3', 0.3, null, false); // not scored yet
      await insert('prd_cal4', 1, true, true); // 1 falls in the last bucket
      await insert('prd_cal5', 0.9, false, true);
      await insert('prd_cal6', null, true, true); // states no probability (say, numeric): not bucketed
      await pattern(c.projectId, 'cal', 8, 0); // confidence 0.9
      const res = await h.call('GET', c.projectId, '/lattice/calibration');
      expect(res.statusCode).toBe(200);
      const report = res.json();
      expect(report.buckets.map((x: { lower: number; upper: number }) => [x.lower, x.upper])).toEqual([
        [0, 0.2],
        [0.2, 0.4],
        [0.4, 0.6],
        [0.6, 0.8],
        [0.8, 1],
      ]);
      expect(report.buckets.map((x: any) => [x.predictions, x.patterns, x.hits, x.misses, x.hasData])).toEqual([
        [1, 0, 0, 1, true],
        [2, 0, 1, 0, true], // one of the two is not scored yet
        [0, 0, 0, 0, false],
        [0, 0, 0, 0, false],
        [2, 1, 1, 1, true],
      ]);
      expect(report.buckets[1].realizedHitRate).toBe(1);
      expect(report.buckets[2]).toMatchObject({ realizedHitRate: 0, meanPredicted: null, patternOutcomes: 0, patternHits: 0, patternMeanConfidence: null });
      expect(report.buckets[4]).toMatchObject({ realizedHitRate: 0.5, meanPredicted: 0.95 });
      expect(report).toMatchObject({ totalPredictions: 5, totalPatterns: 1, scoredPredictions: 4 });
      // Brier: (0.1^2 + 0.8^2 + 0 + 0.9^2) / 4; ECE: 1/4 * 0.1 + 1/4 * 0.8 + 2/4 * |0.95 - 0.5|.
      expect(report.brierScore).toBeCloseTo((0.01 + 0.64 + 0 + 0.81) / 4, 12);
      expect(report.expectedCalibrationError).toBeCloseTo(0.025 + 0.2 + 0.225, 12);
      const count = async (q: string) => (await h.call('GET', c.projectId, `/lattice/calibration?bucketCount=${q}`)).json().buckets.length;
      expect([await count('0'), await count('1'), await count('7.6'), await count('20'), await count('50'), await count('-3')]).toEqual([1, 1, 8, 20, 20, 1]);
      // One bucket holds everything.
      expect((await h.call('GET', c.projectId, '/lattice/calibration?bucketCount=1')).json().buckets[0]).toMatchObject({ predictions: 5, patterns: 1, hits: 2, misses: 2 });
      // A bucket with no scored prediction has no data, whatever its patterns.
      await pattern(c.projectId, 'cal-mid', 0, 0); // confidence 0.5
      expect((await h.call('GET', c.projectId, '/lattice/calibration')).json().buckets[2]).toMatchObject({ patterns: 1, predictions: 0, hasData: false });
      // An empty project has buckets without data, and no scores.
      const empty = (await h.call('GET', b.projectId, '/lattice/calibration')).json();
      expect(empty).toMatchObject({ totalPredictions: 0, totalPatterns: expect.any(Number), scoredPredictions: 0, brierScore: null, expectedCalibrationError: null });
      expect(empty.buckets.every((x: { hasData: boolean; realizedHitRate: number }) => !x.hasData || x.realizedHitRate >= 0)).toBe(true);
    });

    it("reads a pattern's outcomes against its confidence when each came, and scores a prediction end to end", async () => {
      const c = await h.project();
      const who = { kind: 'customer', externalId: 'c-e2e' };
      for (let i = 1; i <= 6; i++) {
        await h.call('POST', c.projectId, '/admin/memory', {
          body: { content: `visit ${i}`, type: 'event', subject: who, validFrom: new Date(Date.now() - i * 5 * DAY).toISOString(), metadata: { eventType: 'visit' } },
        });
      }
      const t = (await h.call('POST', c.projectId, '/memory-intelligence/predict', { body: { subject: who, horizonDays: 1, target: { kind: 'event_occurrence', eventType: 'visit' } } })).json()
        .targetPrediction;
      await h.call('POST', c.projectId, '/admin/memory', { body: { content: 'visit 7', type: 'event', subject: who, validFrom: new Date(Date.now() + 3_600_000).toISOString(), metadata: { eventType: 'visit' } } });
      while ((await h.apis.behavior.scoreDue(new Date(Date.now() + 2 * DAY))) > 0);
      const patternId = await pattern(c.projectId, 'e2e', 0, 0); // confidence 0.5, prior worth 2
      const d = (await decide(c.projectId, { subject: who, informedBy: [{ memoryId: patternId, weight: 2 }] })).json();
      await outcome(c.projectId, { decisionId: d.decisionId, result: 'success' }); // at 0.5; then (1 + 2) / 4
      await outcome(c.projectId, { decisionId: d.decisionId, result: 'partial' }); // at 0.75; then (1 + 3) / 6
      const report = (await h.call('GET', c.projectId, '/lattice/calibration?bucketCount=10')).json();
      const bucketOf = (p: number) => report.buckets[Math.min(9, Math.floor(p * 10))];
      expect(bucketOf(0.5)).toMatchObject({ patternOutcomes: 2, patternHits: 2, patternMeanConfidence: 0.5 });
      expect(bucketOf(0.75)).toMatchObject({ patternOutcomes: 2, patternHits: 1, patternMeanConfidence: 0.75 });
      expect(bucketOf(4 / 6)).toMatchObject({ patterns: 1, patternOutcomes: 0 });
      expect(report.scoredPredictions).toBe(1);
      expect(bucketOf(t.probability)).toMatchObject({ predictions: 1, hits: 1, misses: 0, hasData: true });
      expect(report.brierScore).toBeCloseTo((t.probability - 1) ** 2, 12);
    });
  });
});
