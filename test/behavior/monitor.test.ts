// The pattern monitor through the API (POST /lattice/monitor/tick, GET /lattice/monitor/status):
// an active pattern whose next firing is overdue beyond its tolerance is marked broken once for
// that firing and announced as pattern.broken, which an alert rule fires on through a real local
// webhook receiver; the scheduled job ticks every project; permissions and isolation; the engine's
// event types agree with the activity predicate of the events table.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ACTIVITY_MEMORY } from '../../src/behavior/activity/store.js';
import { ENGINE_EVENT_TYPES } from '../../src/events/schemas.js';
import { createHarness, type Harness } from '../helpers/harness.js';
import { startReceiver, type Receiver } from '../helpers/webhook-receiver.js';

const DAY = 86_400_000;

/** Weekly at the same hour, `weeks` times, the last `lastDaysAgo` days before now. */
function weekly(weeks: number, lastDaysAgo: number, now = Date.now()): Date[] {
  const last = now - lastDaysAgo * DAY;
  return Array.from({ length: weeks }, (_, i) => new Date(last - (weeks - 1 - i) * 7 * DAY));
}

type Subject = { kind: string; externalId: string };
type Pattern = { id: string; active: boolean; metadata: Record<string, unknown> };

describe('pattern monitor', () => {
  let h: Harness;
  let a: { projectId: string; apiKey: string };
  let b: { projectId: string; apiKey: string };
  let sink: Receiver;
  const lapsed: Subject = { kind: 'customer', externalId: 'm-lapsed' };
  const regular: Subject = { kind: 'customer', externalId: 'm-regular' };

  async function habit(projectId: string, subject: Subject, times: Date[]): Promise<void> {
    for (const at of times) {
      const res = await h.call('POST', projectId, '/admin/memory', {
        body: { content: `swim by ${subject.externalId} at ${at.toISOString()}`, type: 'event', subject, validFrom: at.toISOString(), metadata: { eventType: 'swim' } },
      });
      expect(res.statusCode, res.body).toBe(201);
    }
    const mined = await h.call('POST', projectId, '/lattice/patterns/extract', { body: { subject } });
    expect(mined.statusCode, mined.body).toBe(200);
  }
  const patterns = async (projectId: string, subject: Subject): Promise<Pattern[]> => (await h.call('GET', projectId, `/lattice/contacts/${subject.externalId}/patterns`)).json().data;
  /** The ids the upcoming list calls overdue (past expectedAt by more than the window): what the monitor must break. */
  const overdueIds = async (projectId: string): Promise<string[]> =>
    (await h.call('GET', projectId, '/lattice/predictions/upcoming?horizonDays=30&limit=200'))
      .json()
      .predictions.filter((p: { overdue: boolean }) => p.overdue)
      .map((p: { patternId: string }) => p.patternId)
      .sort();
  const brokenEvents = async (projectId: string) =>
    (await h.call('GET', projectId, '/memory-events?eventTypes=pattern.broken&limit=100')).json() as {
      eventType: string;
      subject: Subject;
      severity: string;
      sourcePatternId: string;
      payload: Record<string, unknown>;
    }[];

  beforeAll(async () => {
    sink = await startReceiver();
    h = await createHarness({ env: { WEBHOOK_ALLOW_PRIVATE_TARGETS: 'true', WEBHOOK_RETRY_BASE_MS: '50' } });
    a = await h.project();
    b = await h.project();
    await habit(a.projectId, lapsed, weekly(10, 12));
    await habit(a.projectId, regular, weekly(10, 1));
  });
  afterAll(async () => {
    await h?.close();
    await sink?.close();
  });

  it('reports what is due before the first tick', async () => {
    const due = await overdueIds(a.projectId);
    expect(due.length).toBeGreaterThan(0);
    const active = [...(await patterns(a.projectId, lapsed)), ...(await patterns(a.projectId, regular))].filter((p) => p.active);
    const res = await h.call('GET', a.projectId, '/lattice/monitor/status');
    expect(res.statusCode, res.body).toBe(200);
    expect(res.json()).toEqual({ lastTickAt: null, lastTickDurationMs: null, patternsDue: due.length, activePatternCount: active.length });
  });

  it('marks each overdue pattern broken once, announces it, and an alert rule fires on it', async () => {
    const rule = await h.call('POST', a.projectId, '/memory-alerts', {
      body: { name: 'habit broken', trigger: { kind: 'engine-event', eventTypes: ['pattern.broken'] }, notify: [{ kind: 'webhook', url: sink.url }] },
    });
    expect(rule.statusCode, rule.body).toBe(201);
    const due = await overdueIds(a.projectId);
    const regularIds = new Set((await patterns(a.projectId, regular)).map((p) => p.id));
    // The regular swimmer's last swim was yesterday: none of theirs is due.
    expect(due.some((id) => regularIds.has(id))).toBe(false);

    const tick = await h.call('POST', a.projectId, '/lattice/monitor/tick', { body: {} });
    expect(tick.statusCode, tick.body).toBe(200);
    expect(tick.json()).toMatchObject({ patternsChecked: due.length, patternsBroken: due.length, breaksEmitted: due.length, capped: false, failures: [] });
    expect(tick.json().durationMs).toBeGreaterThanOrEqual(0);

    const after = await patterns(a.projectId, lapsed);
    const broken = after.filter((p) => p.metadata.broken === true);
    expect(broken.map((p) => p.id).sort()).toEqual(due);
    for (const p of broken) {
      expect(p.active).toBe(true);
      expect(p.metadata.brokenFor).toBe(p.metadata.nextExpectedAt);
      expect(Date.parse(p.metadata.brokenAt as string)).toBeGreaterThan(Date.parse(p.metadata.nextExpectedAt as string));
    }
    expect((await patterns(a.projectId, regular)).some((p) => p.metadata.broken === true)).toBe(false);

    const events = await brokenEvents(a.projectId);
    expect(events.map((e) => e.sourcePatternId).sort()).toEqual(due);
    const recurring = broken.find((p) => p.metadata.patternKind === 'recurring_event')!;
    const announced = events.find((e) => e.sourcePatternId === recurring.id)!;
    expect(announced).toMatchObject({ subject: lapsed, severity: 'warn', payload: { patternId: recurring.id, patternKind: 'recurring_event', eventType: 'swim', expectedAt: recurring.metadata.nextExpectedAt } });
    expect(announced.payload.hoursOverdue).toBeGreaterThan(0);

    // The rule fired once per announcement, through the queue to the receiver.
    await expect.poll(() => sink.received.length, { timeout: 60_000, interval: 50 }).toBe(due.length);
    const delivered = sink.received.map((r) => (JSON.parse(r.body) as { data: { event?: { eventType?: string; sourcePatternId?: string } } }).data);
    expect(delivered.map((d) => d.event?.sourcePatternId).sort()).toEqual(due);
    expect(delivered.every((d) => d.event?.eventType === 'pattern.broken')).toBe(true);

    // Nothing is due now; a second tick marks and announces nothing.
    const status = (await h.call('GET', a.projectId, '/lattice/monitor/status')).json();
    expect(status.patternsDue).toBe(0);
    expect(Date.parse(status.lastTickAt)).toBeGreaterThan(Date.now() - 60_000);
    expect(status.lastTickDurationMs).toBeGreaterThanOrEqual(0);
    const again = await h.call('POST', a.projectId, '/lattice/monitor/tick');
    expect(again.statusCode, again.body).toBe(200);
    expect(again.json()).toMatchObject({ patternsChecked: 0, patternsBroken: 0, breaksEmitted: 0, capped: false, failures: [] });
    expect(await brokenEvents(a.projectId)).toHaveLength(due.length);
  });

  it('is ticked for every project with an overdue pattern by its scheduled job', async () => {
    const p = await h.project();
    const subject = { kind: 'customer', externalId: 'm-scheduled' };
    await habit(p.projectId, subject, weekly(8, 15));
    const due = await overdueIds(p.projectId);
    expect(due.length).toBeGreaterThan(0);
    const result = (await h.lattice.runtime.queue.run('behavior.monitor-tick', {})) as { broken: number };
    expect(result.broken).toBeGreaterThanOrEqual(due.length);
    expect((await brokenEvents(p.projectId)).map((e) => e.sourcePatternId).sort()).toEqual(due);
    const status = (await h.call('GET', p.projectId, '/lattice/monitor/status')).json();
    expect(status).toMatchObject({ patternsDue: 0 });
    expect(status.lastTickAt).not.toBeNull();
  });

  it("keeps the memories' activity predicate in SQL (index and mining trigger) the one the code reads with", async () => {
    // ACTIVITY_MEMORY (src/behavior/activity/store.ts) names the memory types that are never activity.
    const excluded = /type NOT IN \(([^)]*)\)/.exec(ACTIVITY_MEMORY)![1]!.split(',').map((t) => t.trim().replace(/'/g, ''));
    expect(excluded).toEqual(['behavior_pattern', 'decision', 'outcome', 'estimate', 'insight']);
    const { rows } = await h.db.query<{ def: string }>(`SELECT pg_get_indexdef('memories_activity'::regclass) AS def`);
    const array = /<> ALL \(ARRAY\[([^\]]*)\]/.exec(rows[0]!.def)?.[1] ?? /NOT IN \(([^)]*)\)/.exec(rows[0]!.def)![1]!;
    expect([...array.matchAll(/'([a-z_]+)'/g)].map((m) => m[1])).toEqual(excluded);
    expect(rows[0]!.def).toMatch(/subject_kind IS NOT NULL/);
    const trigger = await h.db.query<{ src: string }>(`SELECT prosrc AS src FROM pg_proc WHERE proname = 'behavior_enqueue_subjects'`);
    expect(trigger.rows[0]!.src).toContain(ACTIVITY_MEMORY.replace(/\bm\./g, ''));
  });

  it('does not count its own announcements as the subject\'s activity', async () => {
    // The events table's activity predicate (index events_activity and the mining queue's trigger)
    // lists the engine's event types as src/events/schemas.ts does, in the same order.
    const { rows } = await h.db.query<{ def: string }>(`SELECT pg_get_indexdef('events_activity'::regclass) AS def`);
    const listed = [...rows[0]!.def.matchAll(/'([a-z_.]+)'::text/g)].map((m) => m[1]);
    expect(listed).toEqual(Object.values(ENGINE_EVENT_TYPES));
    const trigger = await h.db.query<{ src: string }>(`SELECT prosrc AS src FROM pg_proc WHERE proname = 'behavior_enqueue_subjects'`);
    expect(trigger.rows[0]!.src).toContain(`event_type NOT IN (${Object.values(ENGINE_EVENT_TYPES).map((t) => `'${t}'`).join(', ')})`);
    // An announcement appends no row to the mining queue for the lapsed subject.
    const queued = async () =>
      (await h.db.query<{ n: number }>(`SELECT count(*)::int AS n FROM behavior_mining_queue WHERE project_id = $1 AND subject_external_id = $2`, [a.projectId, lapsed.externalId])).rows[0]!.n;
    const before = await queued();
    const emitted = await h.call('POST', a.projectId, '/lattice/events/emit', { body: { eventType: 'pattern.broken', subject: lapsed, payload: { note: 'by hand' } } });
    expect(emitted.statusCode, emitted.body).toBe(200);
    expect(await queued()).toBe(before);
  });

  it('needs WRITE_MEMORY to tick, READ_MEMORY to read the status, and refuses a body that is not an object', async () => {
    const reader = await h.key(a.projectId, ['READ_MEMORY']);
    const refused = await h.call('POST', a.projectId, '/lattice/monitor/tick', { apiKey: reader, body: {} });
    expect(refused.statusCode).toBe(403);
    expect(refused.json().code).toBe('AUTHORIZATION_ERROR');
    expect((await h.call('GET', a.projectId, '/lattice/monitor/status', { apiKey: reader })).statusCode).toBe(200);
    const writer = await h.key(a.projectId, ['WRITE_MEMORY']);
    expect((await h.call('GET', a.projectId, '/lattice/monitor/status', { apiKey: writer })).statusCode).toBe(403);
    const bad = await h.call('POST', a.projectId, '/lattice/monitor/tick', { body: [1, 2] });
    expect(bad.statusCode).toBe(400);
    expect(bad.json().code).toBe('VALIDATION_ERROR');
  });

  it("never touches or shows another project's patterns", async () => {
    const tick = await h.call('POST', b.projectId, '/lattice/monitor/tick', { body: {} });
    expect(tick.json()).toMatchObject({ patternsChecked: 0, patternsBroken: 0, breaksEmitted: 0 });
    expect((await h.call('GET', b.projectId, '/lattice/monitor/status')).json()).toMatchObject({ patternsDue: 0, activePatternCount: 0 });
    expect(await brokenEvents(b.projectId)).toEqual([]);
    // Project B's tick left A's record of its own last tick alone.
    const status = (await h.call('GET', a.projectId, '/lattice/monitor/status')).json();
    expect(status.lastTickAt).not.toBeNull();
  });
});
