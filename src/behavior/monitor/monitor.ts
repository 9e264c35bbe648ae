// The pattern monitor: a habit that stops is news. An active pattern whose next expected firing has
// passed by more than its tolerance (metadata.nextExpectedAt + toleranceMinutes) is marked broken
// for that firing and announced as a `pattern.broken` event, which alert rules (engine-event
// triggers) fire on. A tick does this for one project (POST /lattice/monitor/tick); a schedule
// ticks every project with an overdue pattern every MONITOR_TICK_INTERVAL_MS. Re-mining leaves a
// pattern's next firing elsewhere (the habit resumed, or the pattern is deactivated): a mark holds
// for the firing it names only.
import type { EventsApi } from '../../events/index.js';
import type { MemoryApi } from '../../memory/index.js';
import { ENGINE_EVENT_TYPES } from '../../events/schemas.js';
import type { Db } from '../../platform/db.js';
import type { MonitorStatus, TickReport } from './schemas.js';
import * as store from './store.js';

const HOUR_MS = 3_600_000;
/** Patterns one tick of a project takes at most (the longest overdue first); `capped` says more wait. */
export const MONITOR_TICK_MAX = 500;

export class PatternMonitor {
  constructor(
    private readonly db: Db,
    private readonly events: Pick<EventsApi, 'emit'>,
    private readonly memory: Pick<MemoryApi, 'patchKeyed'>,
  ) {}

  async tick(projectId: string, now = new Date()): Promise<TickReport> {
    const started = performance.now();
    const due = await store.overduePatterns(this.db, projectId, now, MONITOR_TICK_MAX + 1);
    const checked = due.slice(0, MONITOR_TICK_MAX);
    let patternsBroken = 0;
    let breaksEmitted = 0;
    const failures: TickReport['failures'] = [];
    for (const p of checked) {
      const missed = p.metadata.nextExpectedAt;
      const toleranceMinutes = p.metadata.toleranceMinutes ?? 0;
      try {
        // Announced first, then marked: the event's dedupe key makes a second announcement of the
        // same missed firing a no-op, so a tick that fails between the two is safely redone.
        const result = await this.events.emit(projectId, {
          eventType: ENGINE_EVENT_TYPES.patternBroken,
          subject: p.subject,
          severity: 'warn',
          payload: {
            patternId: p.id,
            patternKind: p.metadata.patternKind,
            eventType: p.metadata.eventType ?? null,
            description: p.summary,
            expectedAt: missed,
            toleranceMinutes,
            hoursOverdue: (now.getTime() - Date.parse(missed) - toleranceMinutes * 60_000) / HOUR_MS,
            confidence: p.metadata.confidence,
          },
          sourceMemoryIds: p.sourceMemoryIds.slice(0, 100),
          sourcePatternId: p.id,
          dedupeKey: `pattern.broken:${p.id}:${missed}`,
        });
        if (result.emitted) breaksEmitted++;
        if (await this.markBroken(projectId, p.id, missed, now)) patternsBroken++;
      } catch (error) {
        failures.push({ patternId: p.id, error: error instanceof Error ? error.message : String(error) });
      }
    }
    const durationMs = performance.now() - started;
    await store.recordTick(this.db, projectId, { at: now, durationMs, checked: checked.length, broken: patternsBroken });
    return { patternsChecked: checked.length, patternsBroken, breaksEmitted, durationMs, capped: due.length > checked.length, failures };
  }

  /** The scheduled tick: every project with an overdue pattern. Answers how many patterns were marked. */
  /**
   * Marks a pattern broken for the firing it missed (metadata broken, brokenAt, brokenFor). A pattern
   * mined again meanwhile has another next firing and is left alone. Answers whether it was marked.
   */
  private async markBroken(projectId: string, id: string, missed: string, now: Date): Promise<boolean> {
    const marked = await this.memory.patchKeyed(this.db, projectId, [{ id, metadata: { broken: true, brokenAt: now.toISOString(), brokenFor: missed } }], { key: 'nextExpectedAt', equals: missed });
    return marked > 0;
  }

  async tickAll(now = new Date()): Promise<number> {
    let broken = 0;
    for (const projectId of await store.projectsWithOverduePatterns(this.db, now)) broken += (await this.tick(projectId, now)).patternsBroken;
    return broken;
  }

  async status(projectId: string, now = new Date()): Promise<MonitorStatus> {
    const [tick, counts] = await Promise.all([store.lastTick(this.db, projectId), store.monitorCounts(this.db, projectId, now)]);
    return { lastTickAt: tick ? tick.at.toISOString() : null, lastTickDurationMs: tick ? tick.durationMs : null, ...counts };
  }
}
