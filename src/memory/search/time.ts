// Time in the question: "what did I do last week", "in May 2023", "two weeks ago" name a span of
// time, read against the search's reference time (`referenceTime`, default now; extract/nlp.ts
// reads the phrase). A memory that became true within the span scores 1; one near it less, falling
// linearly to 0 at `reach` outside it (a phrase like "two weeks ago" is loose by a few days, "in
// May" by a week or so). The part is added to the score (ranking.ts, RANKING.timeWeight) and shown
// in scoreParts.time; a question that names no time leaves every memory at 0.
import { dateSpanOf, type DateSpan } from '../extract/nlp.js';

const DAY_MS = 86_400_000;

export const TIME = {
  /** The nearness outside the span, as a share of its length ... */
  reachShare: 0.5,
  /** ... and never less than this many days. */
  minReachDays: 3,
} as const;

export interface TimeWindow extends DateSpan {
  /** How far outside the span a memory still scores (ms). */
  reachMs: number;
}

/**
 * Words without which no phrase names a time: most queries have none, and skip the date parser
 * (a millisecond or more per query).
 */
const TIME_WORD =
  /\b(?:yesterday|today|tonight|tomorrow|last|next|this|past|previous|coming|ago|since|before|after|earlier|later|recent(?:ly)?|during|until|weekend|week|weeks|month|months|year|years|day|days|morning|afternoon|evening|night|spring|summer|autumn|fall|winter|christmas|easter|jan(?:uary)?|feb(?:ruary)?|mar(?:ch)?|apr(?:il)?|may|june?|july?|aug(?:ust)?|sept?(?:ember)?|oct(?:ober)?|nov(?:ember)?|dec(?:ember)?|mon(?:day)?|tue(?:s|sday)?|wed(?:nesday)?|thu(?:rs|rsday)?|fri(?:day)?|sat(?:urday)?|sun(?:day)?|\d{4}|\d{1,2}(?:st|nd|rd|th)|\d{1,2}[/.-]\d{1,2})\b/i;

/** The span of time a query names, relative to `reference`, or undefined. */
export function timeWindow(query: string, reference: Date): TimeWindow | undefined {
  if (!TIME_WORD.test(query)) return undefined;
  const span = dateSpanOf(query, reference);
  if (!span) return undefined;
  const length = span.end.getTime() - span.start.getTime();
  return { ...span, reachMs: Math.max(TIME.minReachDays * DAY_MS, TIME.reachShare * length) };
}

/** In [0, 1]: 1 within the window, falling linearly to 0 at its reach outside it. */
export function timeScore(at: Date | string, window: TimeWindow | undefined): number {
  if (!window) return 0;
  const t = typeof at === 'string' ? Date.parse(at) : at.getTime();
  if (!Number.isFinite(t)) return 0;
  const gap = t < window.start.getTime() ? window.start.getTime() - t : t > window.end.getTime() ? t - window.end.getTime() : 0;
  return Math.max(0, 1 - gap / window.reachMs);
}
