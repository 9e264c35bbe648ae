// Pattern projection: a subject's active patterns extended forward by their cadence. A recurring
// pattern fires at its last occurrence plus whole periods; a day-of-week pattern on the coming
// days of its weekday (at the usual time when a time-of-day pattern of the same activity says one).
// The k-th firing of a pattern gets confidence c^k (the habit has to hold k more times), and its
// 95% Wilson interval (Wilson, JASA 22, 1927) of the pattern's hit rate raised to the same power.
// Patterns without a cadence (entity preference, declining engagement, time of day alone) inform
// profiles and context but are not projected. Pure: `now` comes in.
import { local } from '../../../workers/behavior/mining.js';
import { wilson } from '../../../workers/behavior/targets.js';
import type { PatternRecord } from '../patterns/schemas.js';
import type { PredictedEvent } from './schemas.js';

const DAY_MS = 86_400_000;
const MINUTE_MS = 60_000;

export interface ProjectionOptions {
  now: number;
  horizonDays: number;
  occurrencesPerPattern: number;
  minConfidence: number;
  limit: number;
}

/** Firing times of one pattern within [now - window, now + horizon], at most `count`. */
function firings(p: PatternRecord, patterns: readonly PatternRecord[], o: ProjectionOptions): { times: number[]; windowMinutes: number } {
  const meta = p.metadata;
  const end = o.now + o.horizonDays * DAY_MS;
  const times: number[] = [];
  if (meta.patternKind === 'recurring_event') {
    const period = (meta.cadence?.periodDays ?? 0) * DAY_MS;
    const window = meta.toleranceMinutes ?? 0;
    if (!(period > 0)) return { times, windowMinutes: window };
    const last = Date.parse(meta.lastObservedAt);
    // The first firing not yet past its window; an overdue one is still due now.
    let t = last + Math.max(1, Math.ceil((o.now - window * MINUTE_MS - last) / period)) * period;
    while (t <= end && times.length < o.occurrencesPerPattern) {
      times.push(t);
      t += period;
    }
    return { times, windowMinutes: window };
  }
  if (meta.patternKind === 'day_of_week' && meta.cadence?.dayOfWeek !== undefined) {
    const timezone = meta.cadence.timezone ?? 'UTC';
    const usual = patterns.find((q) => q.metadata.patternKind === 'time_of_day' && q.metadata.eventType === meta.eventType)?.metadata;
    const [hh, mm] = (usual?.cadence?.timeOfDayLocal ?? '12:00').split(':').map(Number);
    const windowMinutes = usual ? (usual.toleranceMinutes ?? 60) : 720;
    // Walk the coming days at the usual local time; local() corrects for the zone's offset.
    for (let day = 0; day <= o.horizonDays + 7 && times.length < o.occurrencesPerPattern; day++) {
      const guess = Date.UTC(new Date(o.now).getUTCFullYear(), new Date(o.now).getUTCMonth(), new Date(o.now).getUTCDate() + day, hh!, mm!);
      const here = local(guess, timezone);
      const offset = ((here.minute - (hh! * 60 + mm!) + 720 + 1440) % 1440) - 720;
      const t = guess - offset * MINUTE_MS;
      if (local(t, timezone).weekday !== meta.cadence.dayOfWeek) continue;
      if (t < o.now - windowMinutes * MINUTE_MS || t > end) continue;
      times.push(t);
    }
    return { times, windowMinutes };
  }
  return { times, windowMinutes: 0 };
}

export function project(patterns: readonly PatternRecord[], o: ProjectionOptions): PredictedEvent[] {
  const out: PredictedEvent[] = [];
  for (const p of patterns) {
    if (!p.active) continue;
    const { hits, misses } = p.metadata;
    const { lower, upper } = wilson(hits, hits + misses);
    const { times, windowMinutes } = firings(p, patterns, o);
    times.forEach((t, i) => {
      const k = i + 1;
      const confidence = p.confidence ** k;
      if (confidence < o.minConfidence) return;
      out.push({
        patternId: p.id,
        patternKind: p.metadata.patternKind,
        eventType: p.metadata.eventType ?? null,
        description: k === 1 ? `Next: ${p.summary}` : `Firing ${k} of: ${p.summary}`,
        expectedAt: new Date(t).toISOString(),
        confidence,
        // The point always lies inside: c is the Beta mean, Wilson centres on the raw share.
        confidenceLower: Math.min(confidence, lower ** k),
        confidenceUpper: Math.max(confidence, upper ** k),
        windowMinutes,
        sourceMemoryIds: p.sourceMemoryIds,
      });
    });
  }
  out.sort((a, b) => b.confidence - a.confidence || Date.parse(a.expectedAt) - Date.parse(b.expectedAt) || (a.patternId < b.patternId ? -1 : 1));
  return out.slice(0, o.limit);
}
