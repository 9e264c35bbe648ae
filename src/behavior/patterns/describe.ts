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

/** "HH:MM" to the nearest quarter hour. */
function quarterHour(time: string | undefined): string {
  const [h, m] = (time ?? '00:00').split(':').map(Number);
  const minutes = (Math.round(((h ?? 0) * 60 + (m ?? 0)) / 15) * 15) % 1440;
  return `${String(Math.floor(minutes / 60)).padStart(2, '0')}:${String(minutes % 60).padStart(2, '0')}`;
}

/**
 * A pattern's text (the memory's content). Its numbers are rounded (whole days, quarter hours) so
 * that re-mining a steady habit leaves the text, and so its embedding, as it was; the metadata
 * keeps the exact values.
 */
export function summarise(meta: PatternMeta): string {
  const line = describe(meta);
  return meta.unseen ? `${line} (tentative: seen ${meta.observationCount} times)` : line;
}

function describe(meta: PatternMeta): string {
  const what = label(meta);
  const c = meta.cadence ?? {};
  switch (meta.patternKind) {
    case 'recurring_event': {
      const words = periodWords(c.periodDays ?? 0);
      const days = Math.max(1, Math.round(c.periodDays ?? 0));
      return words.startsWith('every') ? `${what} recurs ${words}` : `${what} recurs ${words} (about every ${days} day${days === 1 ? '' : 's'})`;
    }
    case 'day_of_week':
      return `${what} mostly on ${DAYS[c.dayOfWeek ?? 0]}`;
    case 'time_of_day':
      return `${what} usually around ${quarterHour(c.timeOfDayLocal)} (${c.timezone ?? 'UTC'})`;
    case 'entity_preference':
      return `${what}: prefers ${meta.entityExternalIds?.[0] ?? 'one entity'}`;
    case 'declining_engagement':
      return `${what} declining: the recent rate is under ${Math.max(10, Math.ceil((meta.rateRatio ?? 0) * 10) * 10)}% of the earlier one`;
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
