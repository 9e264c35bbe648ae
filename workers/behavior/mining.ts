// Pattern mining over one subject's activity times: a recurring cadence, a favourite day of the week,
// a usual time of day. Pure: the times and the end of the observation window come in, patterns come
// out; no clock. Every pattern's confidence is the mean of a Beta posterior over its hits and misses
// (uniform prior: (hits + 1) / (hits + misses + 2)), so the outcome loop can go on updating it.
// A cadence seen only 3 to 5 times, or a preference named 3 or 4 times, is kept as a tentative
// pattern: each observation it lacks to be a full one counts as MINING.unseenWeight misses (`unseen` says
// how many in all), so its confidence is low and honest (3 occurrences on cadence: 3/16),
// decisions can cite it, and outcomes move it from there. A few gaps look regular by chance often,
// and a customer seen 3 times may not come back: on the apparel purchases (bench/pattern-calibration.ts)
// the next firing of such a cadence came true 15 to 18% of the time.
import binomialCdf from '@stdlib/stats-base-dists-binomial-cdf';
import { median } from './stats.js';

const DAY_MS = 86_400_000;
const MINUTES_PER_DAY = 1440;

export interface MiningInput {
  /** Activity times, ms since the epoch, in any order. */
  times: Float64Array;
  /** The end of the observation window (ms since the epoch): "now" for the caller. */
  now: number;
  /** IANA time zone for day of week and time of day (default UTC). */
  timezone?: string;
  /** The entity each activity names (a product, a place), aligned with `times`; null where none. */
  entities?: readonly (string | null)[];
}

export type PatternKind = 'recurring_event' | 'day_of_week' | 'time_of_day' | 'entity_preference' | 'declining_engagement';

export interface MinedPattern {
  patternKind: PatternKind;
  cadence: { periodDays?: number; dayOfWeek?: number; timeOfDayLocal?: string; timezone: string };
  /** entity_preference: the preferred entity. */
  entity?: string;
  /** declining_engagement: the recent rate as a share of the earlier one. */
  rateRatio?: number;
  /** Beta posterior mean of the pattern holding: (hits + 1) / (hits + misses + 2). */
  confidence: number;
  hits: number;
  /** The observations it did not hold for, and `unseen` more. */
  misses: number;
  /** A tentative pattern's pseudo-misses (MINING.unseenWeight for each observation short of a full one's), counted among the misses; 0 for a full pattern. */
  unseen: number;
  observationCount: number;
  observationWindowDays: number;
  lastObservedAt: number;
  nextExpectedAt?: number;
  toleranceMinutes: number;
}

/** Activities closer together than this count as one occurrence (a burst, a session). */
const SAME_OCCURRENCE_MS = 60 * 60 * 1000;

export const MINING = {
  /** recurring_event: the gaps between occurrences a full pattern needs, and the least a tentative one does. */
  minGaps: 5,
  tentativeMinGaps: 2,
  /** A tentative pattern: the misses each observation it lacks counts as. */
  unseenWeight: 4,
  /** recurring_event: a gap is on cadence when within this fraction of the period (of its multiple). */
  tolerance: 0.2,
  /** recurring_event: least share of elapsed periods with an on-cadence occurrence. */
  minHitShare: 0.6,
  /** day_of_week and time_of_day: least number of occurrences. */
  minOccurrences: 5,
  /** day_of_week: least share of occurrences on the day, and the binomial test's level (7 days tested). */
  minDayShare: 0.5,
  dayTestLevel: 0.001,
  /** time_of_day: the Rayleigh test's level, and the widest circular spread accepted (minutes). */
  timeTestLevel: 0.001,
  maxTimeSpreadMinutes: 120,
  /** entity_preference: activities naming an entity a full pattern needs, and the least a tentative one does; least share of the top one, the binomial test's level. */
  minEntityActivities: 5,
  tentativeMinEntityActivities: 3,
  minEntityShare: 0.5,
  entityTestLevel: 0.05,
  /** declining_engagement: least occurrences, the recent share of the window, the one-sided test's level, the largest recent/earlier rate ratio. */
  minDeclineOccurrences: 8,
  recentShare: 1 / 3,
  declineTestLevel: 0.01,
  maxDeclineRatio: 0.5,
} as const;

export function minePatterns(input: MiningInput): MinedPattern[] {
  const timezone = input.timezone ?? 'UTC';
  const occurrences = collapse(input.times);
  if (occurrences.length === 0) return [];
  const context = { occurrences, now: input.now, timezone, first: occurrences[0]!, last: occurrences.at(-1)! };
  return [recurring(context), dayOfWeek(context), timeOfDay(context), entityPreference(context, input), decliningEngagement(context)].filter(
    (p): p is MinedPattern => p !== undefined,
  );
}

/** Many subjects' (or activity types') mining in one pool task: the per-task cost is paid once. */
export function minePatternsBatch(inputs: readonly MiningInput[]): MinedPattern[][] {
  return inputs.map(minePatterns);
}

interface Context {
  occurrences: number[];
  now: number;
  timezone: string;
  first: number;
  last: number;
}

function collapse(times: Float64Array): number[] {
  const sorted = Array.from(times).filter(Number.isFinite).sort((a, b) => a - b);
  const out: number[] = [];
  for (const t of sorted) if (out.length === 0 || t - out.at(-1)! >= SAME_OCCURRENCE_MS) out.push(t);
  return out;
}

const windowDays = (c: Context) => Math.max(0, (c.now - c.first) / DAY_MS);

/** The counts and Beta posterior mean of a pattern that holds for `hits` of `n` observations. */
const heldFor = (c: Context, hits: number, n: number, unseen = 0) => ({
  confidence: (hits + 1) / (n + unseen + 2),
  hits,
  misses: n - hits + unseen,
  unseen,
  observationCount: n,
  observationWindowDays: windowDays(c),
  lastObservedAt: c.last,
});

/**
 * A cadence from robust inter-arrival times: the period is the median gap, refined as the median of
 * each gap divided by the number of periods it spans (so a missed occurrence, a gap of two periods,
 * does not drag the period up). A gap is a hit when it is within `tolerance` of its multiple of the
 * period; every period it spans beyond the first is a miss, and so is every period elapsed since the
 * last occurrence. The regularity test is the share of hits among elapsed periods. Fewer than
 * minGaps gaps (at least tentativeMinGaps) make a tentative pattern: the gaps it lacks are misses.
 */
function recurring(c: Context): MinedPattern | undefined {
  const gaps = c.occurrences.slice(1).map((t, i) => (t - c.occurrences[i]!) / DAY_MS);
  if (gaps.length < MINING.tentativeMinGaps) return undefined;
  const unseen = MINING.unseenWeight * Math.max(0, MINING.minGaps - gaps.length);
  let period = median(gaps);
  for (let pass = 0; pass < 2; pass++) period = median(gaps.map((g) => g / Math.max(1, Math.round(g / period))));
  if (!(period > 0)) return undefined;
  let hits = 0;
  let misses = 0;
  for (const g of gaps) {
    const spans = Math.max(1, Math.round(g / period));
    const onCadence = Math.abs(g / spans - period) <= MINING.tolerance * period;
    hits += onCadence ? 1 : 0;
    misses += spans - 1 + (onCadence ? 0 : 1);
  }
  misses += Math.max(0, Math.floor((c.now - c.last) / DAY_MS / period - MINING.tolerance));
  if (hits / (hits + misses) < MINING.minHitShare) return undefined;
  return {
    patternKind: 'recurring_event',
    cadence: { periodDays: period, timezone: c.timezone },
    confidence: (hits + 1) / (hits + misses + unseen + 2),
    hits,
    misses: misses + unseen,
    unseen,
    observationCount: c.occurrences.length,
    observationWindowDays: windowDays(c),
    lastObservedAt: c.last,
    nextExpectedAt: c.last + period * DAY_MS,
    // Tolerance grows with the cadence: hours for a daily habit, days for a monthly one.
    toleranceMinutes: Math.round(MINING.tolerance * period * MINUTES_PER_DAY),
  };
}

/**
 * A favourite day of the week: the most frequent local weekday among the occurrences, kept when it
 * holds at least half of them and an exact binomial test rejects "every day alike" (p = 1/7) at
 * dayTestLevel, Bonferroni-corrected for the 7 days.
 */
function dayOfWeek(c: Context): MinedPattern | undefined {
  const n = c.occurrences.length;
  if (n < MINING.minOccurrences) return undefined;
  const counts = new Array<number>(7).fill(0);
  for (const t of c.occurrences) counts[local(t, c.timezone).weekday]!++;
  const top = Math.max(...counts);
  const day = counts.indexOf(top);
  const pValue = 7 * (1 - binomialCdf(top - 1, n, 1 / 7));
  if (top / n < MINING.minDayShare || pValue >= MINING.dayTestLevel) return undefined;
  return {
    patternKind: 'day_of_week',
    cadence: { dayOfWeek: day, periodDays: 7, timezone: c.timezone },
    ...heldFor(c, top, n),
    toleranceMinutes: MINUTES_PER_DAY / 2,
  };
}

/**
 * A usual time of day, by circular statistics (Mardia and Jupp, "Directional Statistics", 2000):
 * minutes of the local day as angles; the mean direction is the usual time, the mean resultant
 * length R its concentration. Kept when the Rayleigh test rejects uniform times at timeTestLevel
 * (p-value by Zar's approximation, "Biostatistical Analysis", 1999) and the circular standard
 * deviation sqrt(-2 ln R) is within maxTimeSpreadMinutes. Hits are occurrences within two spreads.
 */
function timeOfDay(c: Context): MinedPattern | undefined {
  const n = c.occurrences.length;
  if (n < MINING.minOccurrences) return undefined;
  const angles = c.occurrences.map((t) => (2 * Math.PI * local(t, c.timezone).minute) / MINUTES_PER_DAY);
  const cos = angles.reduce((s, a) => s + Math.cos(a), 0) / n;
  const sin = angles.reduce((s, a) => s + Math.sin(a), 0) / n;
  const r = Math.min(1, Math.hypot(cos, sin)); // float error can put identical times a hair above 1
  const z = n * r * r;
  const pValue = Math.min(1, Math.exp(Math.sqrt(1 + 4 * n + 4 * (n * n - n * n * r * r)) - (1 + 2 * n)));
  const spread = (Math.sqrt(-2 * Math.log(Math.max(r, 1e-12))) * MINUTES_PER_DAY) / (2 * Math.PI);
  if (z <= 0 || pValue >= MINING.timeTestLevel || spread > MINING.maxTimeSpreadMinutes) return undefined;
  const meanMinute = ((((Math.atan2(sin, cos) * MINUTES_PER_DAY) / (2 * Math.PI)) % MINUTES_PER_DAY) + MINUTES_PER_DAY) % MINUTES_PER_DAY;
  const tolerance = Math.max(15, Math.round(2 * spread));
  const hits = angles.filter((a) => circularMinutes((a * MINUTES_PER_DAY) / (2 * Math.PI), meanMinute) <= tolerance).length;
  const rounded = Math.round(meanMinute) % MINUTES_PER_DAY;
  return {
    patternKind: 'time_of_day',
    cadence: { timeOfDayLocal: `${String(Math.floor(rounded / 60)).padStart(2, '0')}:${String(rounded % 60).padStart(2, '0')}`, timezone: c.timezone },
    ...heldFor(c, hits, n),
    toleranceMinutes: tolerance,
  };
}

/**
 * A preferred entity: among the activities that name one, the most named, kept when it holds at
 * least half of them and an exact binomial test rejects "all named entities alike" at entityTestLevel
 * (Bonferroni-corrected for the number of distinct entities; with one entity ever named, the share
 * alone decides). Hits are activities naming it, misses those naming another. Fewer than
 * minEntityActivities (at least tentativeMinEntityActivities) make a tentative pattern: the
 * activities it lacks are misses.
 */
function entityPreference(c: Context, input: MiningInput): MinedPattern | undefined {
  const named = (input.entities ?? []).filter((e): e is string => typeof e === 'string' && e.length > 0);
  if (named.length < MINING.tentativeMinEntityActivities) return undefined;
  const counts = new Map<string, number>();
  for (const e of named) counts.set(e, (counts.get(e) ?? 0) + 1);
  // Ties break by name, so the answer does not depend on the input's order.
  const [entity, top] = [...counts].sort((a, b) => b[1] - a[1] || (a[0] < b[0] ? -1 : 1))[0]!;
  const n = named.length;
  const distinct = counts.size;
  if (top / n < MINING.minEntityShare) return undefined;
  if (distinct > 1 && distinct * (1 - binomialCdf(top - 1, n, 1 / distinct)) >= MINING.entityTestLevel) return undefined;
  return {
    patternKind: 'entity_preference',
    cadence: { timezone: c.timezone },
    entity,
    ...heldFor(c, top, n, MINING.unseenWeight * Math.max(0, MINING.minEntityActivities - n)),
    toleranceMinutes: 0,
  };
}

/**
 * Declining engagement: the window (first occurrence to now) split into an earlier part and the
 * most recent third. Under a constant rate the recent count is Binomial(n, recent share of the
 * window) given the total n (the conditional test for two Poisson rates, Przyborowski and
 * Wilenski, Biometrika 31, 1940); kept when its lower tail is below declineTestLevel and the recent
 * rate is at most half the earlier one. Hits are the expected recent occurrences that did not
 * happen, misses the ones that did; confidence is their Beta posterior mean like every pattern's.
 */
function decliningEngagement(c: Context): MinedPattern | undefined {
  const n = c.occurrences.length;
  const span = c.now - c.first;
  if (n < MINING.minDeclineOccurrences || !(span > 0)) return undefined;
  const split = c.now - span * MINING.recentShare;
  const recent = c.occurrences.filter((t) => t >= split).length;
  const earlier = n - recent;
  const earlierRate = earlier / (span * (1 - MINING.recentShare));
  const recentRate = recent / (span * MINING.recentShare);
  const ratio = earlierRate > 0 ? recentRate / earlierRate : 1;
  const pValue = binomialCdf(recent, n, MINING.recentShare);
  if (pValue >= MINING.declineTestLevel || ratio > MINING.maxDeclineRatio) return undefined;
  const expectedRecent = earlierRate * span * MINING.recentShare;
  const hits = Math.max(0, Math.round(expectedRecent - recent));
  return {
    patternKind: 'declining_engagement',
    cadence: { timezone: c.timezone },
    rateRatio: ratio,
    confidence: (hits + 1) / (hits + recent + 2),
    hits,
    misses: recent,
    unseen: 0,
    observationCount: n,
    observationWindowDays: windowDays(c),
    lastObservedAt: c.last,
    toleranceMinutes: 0,
  };
}

/** The distance between two minutes of the day, around the clock. */
export function circularMinutes(a: number, b: number): number {
  const d = Math.abs(a - b) % MINUTES_PER_DAY;
  return Math.min(d, MINUTES_PER_DAY - d);
}

const formatters = new Map<string, Intl.DateTimeFormat>();
const WEEKDAYS = ['Sun', 'Mon', 'Tue', 'Wed', 'Thu', 'Fri', 'Sat'];

/** The local weekday (0 = Sunday) and minute of the day of an instant in a time zone. */
export function local(t: number, timezone: string): { weekday: number; minute: number } {
  if (timezone === 'UTC') {
    const d = new Date(t);
    return { weekday: d.getUTCDay(), minute: d.getUTCHours() * 60 + d.getUTCMinutes() };
  }
  let format = formatters.get(timezone);
  if (!format) {
    format = new Intl.DateTimeFormat('en-US', { timeZone: timezone, weekday: 'short', hour: '2-digit', minute: '2-digit', hourCycle: 'h23' });
    formatters.set(timezone, format);
  }
  const parts = Object.fromEntries(format.formatToParts(t).map((p) => [p.type, p.value]));
  return { weekday: WEEKDAYS.indexOf(parts.weekday!), minute: Number(parts.hour) * 60 + Number(parts.minute) };
}
