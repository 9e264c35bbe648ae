// Many different kinds of writes at once on the same few subjects: none fails with a deadlock or a
// serialization error, the database holds exactly what was answered as written, and a poller paging
// the event log meanwhile sees every event exactly once, in strictly increasing occurredAt order.
//
// Why: the writes used to take the same rows in different orders. An event emit took the project's
// clock row and then, through the events insert trigger, the subject's mining-queue row; a typed
// ingest took the subjects' queue rows first (the typed_observations insert trigger), folded the
// accumulators, and then appended its typed.observation events, taking the clock. Two such
// transactions crossed and Postgres aborted one with `deadlock detected` (40P01), which the API
// answered as a 500. Migration 0015 removed both shared rows. Saves and observes with activity
// metadata (metadata.eventType) take the same queue rows through the memories trigger; decisions
// and outcomes write memories and the evidence rows of what informed them. Other files race
// identical requests (races.test.ts) or one writer against a hard delete
// (compliance/concurrency.test.ts); this one mixes the kinds.
//
// On Postgres the pool here has POOL_MAX connections, so that many transactions truly overlap; on
// PGlite everything runs one statement at a time through one connection and the file must pass all
// the same. Every loop is bounded by a count, never by a clock: the writers make a fixed number of
// requests and the poller stops after a number of polls it can prove it needs, failing clearly
// beyond it.
import type { LightMyRequestResponse } from 'fastify';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { appendAllTypedEvents, backend, createHarness, foldAllTyped, type Harness } from '../helpers/harness.js';

/** Connections in the Postgres pool (the harness default is 5). */
const POOL_MAX = 20;
/** The subjects every write names. */
const SUBJECTS = ['s0', 's1', 's2', 's3'].map((externalId) => ({ kind: 'customer', externalId }));
const ATTRIBUTE = 'spend';

type Kind = 'emit' | 'ingest' | 'save' | 'observe' | 'decision' | 'outcome';
const KINDS: readonly Kind[] = ['emit', 'ingest', 'save', 'observe', 'decision', 'outcome'];

interface Answer {
  /** `emit #12` (which request), for the failure messages. */
  label: string;
  kind: Kind;
  status: number;
  body: string;
}

const answer = (label: string, kind: Kind, res: LightMyRequestResponse): Answer => ({ label, kind, status: res.statusCode, body: res.body });
/** The answers that are not 2xx, as `label -> status body`: the list the failure message shows. */
const failures = (answers: readonly Answer[]) => answers.filter((a) => a.status < 200 || a.status >= 300).map((a) => `${a.label} -> ${a.status} ${a.body.slice(0, 300)}`);
const json = (a: Answer) => JSON.parse(a.body);
const of = (answers: readonly Answer[], kind: Kind) => answers.filter((a) => a.kind === kind);

/** `n` observations of ATTRIBUTE, one after another over the subjects starting at `first`, each at its own time. */
function observationRows(request: number, n: number, first: number) {
  return Array.from({ length: n }, (_, k) => {
    const subject = SUBJECTS[(first + k) % SUBJECTS.length]!;
    return {
      attributeKey: ATTRIBUTE,
      subjectKind: subject.kind,
      subjectExternalId: subject.externalId,
      valueNumeric: request * 10 + k,
      observedAt: new Date(Date.UTC(2025, 0, 1) + (request * 10 + k) * 60_000).toISOString(),
      source: 'till',
    };
  });
}

describe(`concurrent writers of different kinds on shared subjects (${backend})`, () => {
  let h: Harness;

  beforeAll(async () => {
    // The rate limit is raised so that the answers measure the database, not the limiter.
    h = await createHarness({ max: POOL_MAX, env: { RATE_LIMIT_PER_MINUTE: '10000000' } });
  });
  afterAll(async () => {
    await h?.close();
  });

  const count = async (sql: string, params: unknown[]) => Number((await h.db.query<{ n: string }>(sql, params)).rows[0]!.n);

  /**
   * On Postgres, opens the pools' connections before anything is measured, by holding POOL_MAX
   * transactions open at once, then POOL_MAX read-only ones (which may have a pool of their own).
   * A cold pool opening its connections in the middle of a burst, on a loaded machine, can miss the
   * connect timeout and answer 503: a fault about connecting, not about the lock orders this file
   * is about. Best effort: should a connection fail, all are let go and the holding is tried again,
   * at most WARM_ATTEMPTS times. PGlite has its one connection already.
   */
  /** Deadlock or serialization victims the database adapter retried so far (none on PGlite, which runs one transaction at a time). */
  const conflicts = () => Object.values(h.db.poolStats?.() ?? {}).reduce((sum, pool) => sum + pool.conflicts, 0);

  async function warmPool(): Promise<void> {
    if (backend !== 'pg') return;
    const WARM_ATTEMPTS = 3;
    const holdAll = async (options: { readOnly?: boolean }): Promise<boolean> => {
      let arrived = 0;
      let releaseAll!: () => void;
      const released = new Promise<void>((resolve) => (releaseAll = resolve));
      const hold = () =>
        h.db
          .transaction(async (tx) => {
            await tx.query('SELECT 1');
            if (++arrived === POOL_MAX) releaseAll();
            await released;
          }, options)
          .finally(releaseAll);
      const held = await Promise.allSettled(Array.from({ length: POOL_MAX }, hold));
      return held.every((r) => r.status === 'fulfilled');
    };
    for (const options of [{}, { readOnly: true }]) {
      for (let attempt = 1; attempt <= WARM_ATTEMPTS; attempt++) if (await holdAll(options)) break;
    }
  }

  async function projectWithAttribute(): Promise<string> {
    const { projectId } = await h.project();
    const defined = await h.call('POST', projectId, '/memory-typed/attributes', { body: { attributeKey: ATTRIBUTE, dataType: 'numeric', unit: 'EUR' } });
    expect(defined.statusCode, defined.body).toBe(201);
    return projectId;
  }

  it('answers every concurrent emit, ingest, save, observe, decision and outcome without a 5xx, and stores exactly what it answered', async () => {
    const ROUNDS = 6;
    const PER_KIND = 7; // requests of each kind per round: 6 kinds x 7 = 42 at once
    const ROWS_PER_INGEST = 4;
    const projectId = await projectWithAttribute();

    // Every decision cites one evidence memory, so every outcome updates its evidence row.
    const evidence = await h.call('POST', projectId, '/admin/memory', { body: { content: 'Discounts bring lapsed customers back', confidence: 0.5 } });
    expect(evidence.statusCode, evidence.body).toBe(201);
    const evidenceId: string = evidence.json().id;
    const decisionBody = (subject: (typeof SUBJECTS)[number], key: string) => ({
      subject,
      decisionType: 'retention_offer',
      actionType: 'send_discount',
      informedBy: [{ memoryId: evidenceId, refType: 'collective' }],
      idempotencyKey: key,
    });
    // Outcomes cite decisions made before their round: one per subject now, then those of earlier rounds.
    const decisionIds: string[] = [];
    for (const [n, subject] of SUBJECTS.entries()) {
      const made = await h.call('POST', projectId, '/lattice/decisions', { body: decisionBody(subject, `seed-${n}`) });
      expect(made.statusCode, made.body).toBe(201);
      decisionIds.push(made.json().decisionId);
    }
    const seededDecisions = decisionIds.length;

    let successes = 0;
    /** Request `k` of its kind in `round`, the `n`th of the test: on subject k + round, so each round covers every subject with every kind. */
    const request = (kind: Kind, round: number, k: number, n: number): Promise<LightMyRequestResponse> => {
      const subject = SUBJECTS[(k + round) % SUBJECTS.length]!;
      switch (kind) {
        case 'emit':
          return h.call('POST', projectId, '/lattice/events/emit', { body: { eventType: 'purchase', subject, payload: { n }, dedupeKey: `emit-${n}` } });
        case 'ingest':
          // Several subjects per ingest, starting at a different one each time.
          return h.call('POST', projectId, '/memory-typed/observations', { body: { observations: observationRows(n, ROWS_PER_INGEST, k + round) } });
        case 'save':
          return h.call('POST', projectId, '/admin/memory', { body: { subject, content: `purchase ${n} of item ${k}`, type: 'event', metadata: { eventType: 'purchase' } } });
        case 'observe':
          return h.call('POST', projectId, '/memory/observe', { body: { subject, text: `I visited the gym for session ${n}.`, activityType: 'visit' } });
        case 'decision':
          return h.call('POST', projectId, '/lattice/decisions', { body: decisionBody(subject, `decision-${n}`) });
        case 'outcome': {
          const result = (k + round) % 2 === 0 ? 'success' : 'failure';
          if (result === 'success') successes++;
          return h.call('POST', projectId, '/lattice/outcomes', { body: { decisionId: decisionIds[(k * 7 + round) % decisionIds.length], result, idempotencyKey: `outcome-${n}` } });
        }
      }
    };

    await warmPool();
    const conflictsBefore = conflicts();
    const answers: Answer[] = [];
    const emittedKeys: string[] = [];
    for (let round = 0; round < ROUNDS; round++) {
      // The kinds interleave (emit, ingest, save, ... emit, ingest, ...) so that every kind overlaps every other.
      const batch = Array.from({ length: PER_KIND * KINDS.length }, (_, i) => ({ kind: KINDS[i % KINDS.length]!, k: Math.floor(i / KINDS.length), n: round * PER_KIND * KINDS.length + i }));
      for (const { kind, n } of batch) if (kind === 'emit') emittedKeys.push(`emit-${n}`);
      const answered = await Promise.all(batch.map(async ({ kind, k, n }) => answer(`round ${round} ${kind} #${n}`, kind, await request(kind, round, k, n))));
      answers.push(...answered);
      for (const a of of(answered, 'decision')) if (a.status === 201) decisionIds.push(json(a).decisionId);
    }

    // Every answer is a success: no deadlock, serialization failure or pool timeout reached a caller.
    expect(answers).toHaveLength(ROUNDS * PER_KIND * KINDS.length);
    expect(failures(answers), 'requests that did not answer 2xx').toEqual([]);
    // Not by retries: no transaction or statement was a deadlock or serialization victim at all.
    expect(conflicts() - conflictsBefore, 'transactions Postgres aborted as a conflict victim (then retried)').toBe(0);

    // Each answered as a new write, with the status its route gives one.
    const expectedStatus: Record<Kind, number> = { emit: 200, ingest: 200, save: 201, observe: 200, decision: 201, outcome: 201 };
    for (const kind of KINDS) expect(of(answers, kind).map((a) => a.status), kind).toEqual(Array(ROUNDS * PER_KIND).fill(expectedStatus[kind]));

    // Emits: every one appended, and the log holds exactly one event per dedupe key.
    const emits = of(answers, 'emit').map(json);
    expect(emits.every((b) => b.emitted === true)).toBe(true);
    const logged = await h.db.query<{ dedupe_key: string; n: string }>(
      "SELECT dedupe_key, count(*) AS n FROM events WHERE project_id = $1 AND event_type = 'purchase' GROUP BY dedupe_key",
      [projectId],
    );
    expect(Object.fromEntries(logged.rows.map((r) => [r.dedupe_key, Number(r.n)]))).toEqual(Object.fromEntries(emittedKeys.map((key) => [key, 1])));

    // Typed ingests: every row accepted; the observations, their typed.observation events and the
    // accumulators all count exactly the accepted rows.
    const reports = of(answers, 'ingest').map(json);
    expect(reports.every((r) => r.accepted === ROWS_PER_INGEST && r.quarantined === 0 && r.duplicates === 0), JSON.stringify(reports.slice(0, 3))).toBe(true);
    const accepted = reports.reduce((sum, r) => sum + r.accepted, 0);
    expect(await count("SELECT count(*) AS n FROM typed_observations WHERE project_id = $1 AND status = 'accepted'", [projectId])).toBe(accepted);
    await appendAllTypedEvents(h);
    expect(await count("SELECT count(*) AS n FROM events WHERE project_id = $1 AND event_type = 'typed.observation'", [projectId])).toBe(accepted);
    await foldAllTyped(h);
    expect(await count('SELECT coalesce(sum(count), 0) AS n FROM typed_accumulators WHERE project_id = $1', [projectId])).toBe(accepted);
    expect(await count('SELECT count(*) AS n FROM typed_unfolded WHERE project_id = $1', [projectId])).toBe(0);

    // Saves and observes: every memory they answered exists.
    const memoryIds = async (ids: string[]) =>
      (await h.db.query<{ id: string }>('SELECT id FROM memories WHERE project_id = $1 AND id = ANY($2::text[]) ORDER BY id', [projectId, ids])).rows.map((r) => r.id);
    const saved = of(answers, 'save').map((a) => json(a).id as string);
    expect(new Set(saved).size).toBe(saved.length);
    expect(await memoryIds(saved)).toEqual([...saved].sort());
    const observed = of(answers, 'observe').map((a) => json(a).saved as { id: string }[]);
    expect(observed.map((s) => s.length)).toEqual(Array(ROUNDS * PER_KIND).fill(1));
    const observedIds = observed.flat().map((m) => m.id);
    expect(await memoryIds(observedIds)).toEqual([...observedIds].sort());

    // Decisions and outcomes: one row each, and the evidence counts every outcome once (no update lost).
    expect(await count('SELECT count(*) AS n FROM learning_decisions WHERE project_id = $1', [projectId])).toBe(seededDecisions + ROUNDS * PER_KIND);
    expect(await count('SELECT count(*) AS n FROM learning_outcomes WHERE project_id = $1', [projectId])).toBe(ROUNDS * PER_KIND);
    const outcomes = of(answers, 'outcome');
    const { rows: refs } = await h.db.query<{ hits: number; misses: number }>('SELECT hits, misses FROM learning_ref_evidence WHERE project_id = $1 AND ref_id = $2', [projectId, evidenceId]);
    expect(refs).toEqual([{ hits: successes, misses: outcomes.length - successes }]);

    // Every subject's activity reached the mining queue.
    const queued = await h.db.query<{ subject_external_id: string }>('SELECT DISTINCT subject_external_id FROM behavior_mining_queue WHERE project_id = $1 ORDER BY 1', [projectId]);
    expect(queued.rows.map((r) => r.subject_external_id)).toEqual(SUBJECTS.map((s) => s.externalId));
  }, 180_000);

  it('lets a poller paging GET /memory-events by the last occurredAt see every event exactly once, in strictly increasing order, while emits and typed ingests run', async () => {
    const WRITERS = 12; // virtual clients, each sending its next request once the last is answered
    const WRITES = 180; // requests in all: every third a typed ingest, the others emits
    const ROWS_PER_INGEST = 5;
    const LIMIT = 7;
    const isIngest = (n: number) => n % 3 === 0;
    const ingests = Array.from({ length: WRITES }, (_, n) => n).filter(isIngest).length;
    const EXPECTED_EVENTS = WRITES - ingests + ingests * ROWS_PER_INGEST; // one per emit, one per ingested row
    const projectId = await projectWithAttribute();

    await warmPool();
    // The writers: a closed loop over a fixed number of requests.
    const answers: Answer[] = [];
    const progress = new Progress();
    let next = 0;
    const writer = async () => {
      for (let n = next++; n < WRITES; n = next++) {
        const res = isIngest(n)
          ? await h.call('POST', projectId, '/memory-typed/observations', { body: { observations: observationRows(n, ROWS_PER_INGEST, n) } })
          : await h.call('POST', projectId, '/lattice/events/emit', { body: { eventType: 'visit', subject: SUBJECTS[n % SUBJECTS.length], payload: { n }, dedupeKey: `visit-${n}` } });
        answers.push(answer(`${isIngest(n) ? 'ingest' : 'emit'} #${n}`, isIngest(n) ? 'ingest' : 'emit', res));
        progress.tick();
      }
    };

    // The poller pages with the last occurredAt it saw as `since`.
    const seen: { id: string; occurredAt: string }[] = [];
    let cursor: string | undefined;
    let polls = 0;
    const pollOnce = async (): Promise<number> => {
      polls++;
      const res = await h.call('GET', projectId, `/memory-events?limit=${LIMIT}${cursor === undefined ? '' : `&since=${encodeURIComponent(cursor)}`}`);
      expect(res.statusCode, res.body).toBe(200);
      const page = res.json() as { id: string; occurredAt: string }[];
      expect(page.length).toBeLessThanOrEqual(LIMIT);
      seen.push(...page.map(({ id, occurredAt }) => ({ id, occurredAt })));
      if (page.length > 0) cursor = page.at(-1)!.occurredAt;
      return page.length;
    };
    // While the writers run, an empty page waits for the next answered write (not for a clock): so
    // at most one empty poll per write, and every other poll returns at least one event.
    const MAX_POLLS_WHILE_WRITING = WRITES + EXPECTED_EVENTS + 1;
    const pollWhileWriting = async () => {
      while (!progress.done) {
        if (polls >= MAX_POLLS_WHILE_WRITING) throw new Error(`the poller made ${polls} polls while the writers ran, more than the ${MAX_POLLS_WHILE_WRITING} it can need`);
        const answered = progress.answered;
        if ((await pollOnce()) === 0) await progress.after(answered);
      }
    };

    // Both sides run to their end before anything is judged (a failing poller leaves no writer behind).
    const settled = await Promise.allSettled([Promise.all(Array.from({ length: WRITERS }, writer)).finally(() => progress.finish()), pollWhileWriting()]);
    for (const side of settled) if (side.status === 'rejected') throw side.reason;

    // Every write has been answered (so committed or rolled back), and the typed.observation events
    // the ingests left to their job are appended: the poller catches up in exactly as many polls as
    // the events after its cursor fill, plus the empty one that says so.
    await appendAllTypedEvents(h);
    const left = await count("SELECT count(*) AS n FROM events WHERE project_id = $1 AND occurred_at > coalesce($2::timestamptz, '-infinity')", [projectId, cursor ?? null]);
    const catchUpPolls = Math.ceil(left / LIMIT) + 1;
    let caughtUp = false;
    for (let n = 0; n < catchUpPolls && !caughtUp; n++) caughtUp = (await pollOnce()) === 0;
    if (!caughtUp) throw new Error(`the poller did not catch up within ${catchUpPolls} polls after the writers finished (it has seen ${seen.length} events)`);

    // Every write answered 2xx. (Soft, so that a failure here still shows whether paging held up.)
    expect(answers).toHaveLength(WRITES);
    expect.soft(failures(answers), 'writes that did not answer 2xx').toEqual([]);

    // The log holds exactly the events the writers were told were appended.
    const answeredEvents = answers
      .filter((a) => a.status === 200)
      .reduce((sum, a) => sum + (a.kind === 'emit' ? (json(a).emitted === true ? 1 : 0) : json(a).accepted), 0);
    const { rows } = await h.db.query<{ id: string }>('SELECT id FROM events WHERE project_id = $1 ORDER BY occurred_at', [projectId]);
    const stored = rows.map((r) => r.id);
    expect(stored).toHaveLength(answeredEvents);

    // No repeats.
    const ids = seen.map((e) => e.id);
    const repeated = ids.filter((id, i) => ids.indexOf(id) !== i);
    expect(repeated, 'events the poller saw more than once').toEqual([]);
    // Strictly increasing occurredAt (the engine's format is fixed width, so text order is time order).
    const outOfOrder = seen.flatMap((e, i) => (i > 0 && !(e.occurredAt > seen[i - 1]!.occurredAt) ? [`${seen[i - 1]!.occurredAt} then ${e.occurredAt} (${e.id})`] : []));
    expect(outOfOrder, 'occurredAt not strictly increasing').toEqual([]);
    // No skips: the poller saw exactly the events the database holds, in their order.
    const seenSet = new Set(ids);
    expect(stored.filter((id) => !seenSet.has(id)), 'events in the database the poller never saw').toEqual([]);
    expect(ids).toEqual(stored);
    expect(stored).toHaveLength(EXPECTED_EVENTS);
  }, 300_000);

  it('answers the connection pools\' figures in /readyz on Postgres, and none on PGlite', async () => {
    const res = await h.app.inject({ method: 'GET', url: '/readyz' });
    expect(res.statusCode, res.body).toBe(200);
    const { pools } = res.json() as { pools?: Record<string, { max: number; acquired: number; waiting: number; conflicts: number; maxWaitMs: number }> };
    if (backend === 'pglite') {
      expect(pools).toBeUndefined();
      return;
    }
    expect(Object.keys(pools!).sort()).toEqual(['statements', 'transactions']);
    expect(pools!.transactions).toMatchObject({ max: POOL_MAX, waiting: 0 });
    expect(pools!.transactions!.acquired).toBeGreaterThan(0);
    expect(pools!.statements!.acquired).toBeGreaterThan(0);
  });
});

/** Counts answered writes and wakes whoever waits for the next one (or for the end). */
class Progress {
  answered = 0;
  done = false;
  private waiters: (() => void)[] = [];

  tick(): void {
    this.answered++;
    this.wake();
  }

  finish(): void {
    this.done = true;
    this.wake();
  }

  /** Resolves once more than `answered` writes have been answered, or the writers are done. */
  async after(answered: number): Promise<void> {
    while (this.answered <= answered && !this.done) await new Promise<void>((resolve) => this.waiters.push(resolve));
  }

  private wake(): void {
    for (const resolve of this.waiters.splice(0)) resolve();
  }
}
