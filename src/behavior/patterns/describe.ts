// Words for patterns: a pattern memory's summary and a profile's cadence summary ("weekly",
// "every 14 days", "Fridays at 19:00"), from the pattern's metadata alone.
import type { PatternMeta } from './schemas.js';

const DAYS = ['Sundays', 'Mondays', 'Tuesdays', 'Wednesdays', 'Thursdays', 'Fridays', 'Saturdays'];

/** "daily", "weekly", "every 14 days", "monthly" ... for a period in days. */
export function periodWords(periodDays: number): string {
  const near = (target: number, tolerance: number) => Math.abs(periodDays - target) <= tolerance;
  if (near(1, 0.1)) return 'daily';
  if (near(7, 0.5)) return 'weekly';
  if (near(14, 1)) return 'every 14 days';
  if (near(30.4, 2.5)) return 'monthly';
  if (near(91, 7)) return 'quarterly';
  if (near(365, 20)) return 'yearly';
  if (periodDays < 1) return `every ${Math.max(1, Math.round(periodDays * 24))} hours`;
  return `every ${Math.round(periodDays)} days`;
}

const label = (meta: Pick<PatternMeta, 'eventType'>) => meta.eventType ?? 'activity';

export function summarise(meta: PatternMeta): string {
  const what = label(meta);
  const c = meta.cadence ?? {};
  switch (meta.patternKind) {
    case 'recurring_event':
      return `${what} recurs ${periodWords(c.periodDays ?? 0)} (about every ${(c.periodDays ?? 0).toFixed(1)} days)`;
    case 'day_of_week':
      return `${what} mostly on ${DAYS[c.dayOfWeek ?? 0]}`;
    case 'time_of_day':
      return `${what} usually around ${c.timeOfDayLocal} (${c.timezone ?? 'UTC'})`;
    case 'entity_preference':
      return `${what}: prefers ${meta.entityExternalIds?.[0] ?? 'one entity'}`;
    case 'declining_engagement':
      return `${what} declining: the recent rate is ${Math.round((meta.rateRatio ?? 0) * 100)}% of the earlier one`;
    default:
      return `${what}: ${meta.patternKind}`;
  }
}

/**
 * One line for a subject's cadence from its active patterns: the most confident recurring cadence,
 * with its day and time when those patterns hold for the same activity ("weekly, Fridays at 19:00").
 * Null when no pattern says anything about timing.
 */
export function cadenceSummary(patterns: readonly PatternMeta[]): string | null {
  const byConfidence = [...patterns].sort((a, b) => b.confidence - a.confidence);
  const recurring = byConfidence.find((p) => p.patternKind === 'recurring_event');
  const anchor = recurring ?? byConfidence.find((p) => p.patternKind === 'day_of_week' || p.patternKind === 'time_of_day');
  if (!anchor) return null;
  const same = (kind: string) => byConfidence.find((p) => p.patternKind === kind && p.eventType === anchor.eventType);
  const day = same('day_of_week')?.cadence?.dayOfWeek;
  const time = same('time_of_day')?.cadence?.timeOfDayLocal;
  const when = [day === undefined ? undefined : DAYS[day], time === undefined ? undefined : `at ${time}`].filter(Boolean).join(' ');
  const period = recurring?.cadence?.periodDays;
  return [period === undefined ? undefined : periodWords(period), when || undefined].filter(Boolean).join(', ') || null;
}
