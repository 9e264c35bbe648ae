// The observe extractor's window onto compromise: sentence splitting, entity spotting (people,
// places, organisations), date spotting relative to a caller-supplied `now`, and a few part-of-speech
// questions. Everything that touches the NLP library lives here so the heuristics stay plain text.
import { compromise, type DatesMethods } from '../../platform/compromise.js';

/** Parse with the dates plugin's methods visible to the type checker. */
function parse(text: string) {
  return compromise()<DatesMethods>(text);
}

/** Sentences of one line of text, as compromise splits them (abbreviations and decimals kept whole). */
export function splitSentences(line: string): string[] {
  return compromise()
    .tokenize(line)
    .json()
    .map((s: { text?: unknown }) => (typeof s.text === 'string' ? s.text.trim() : ''))
    .filter((s: string) => s.length > 0);
}

const TITLE_ONLY = new Set(['st', 'dr', 'mr', 'mrs', 'ms', 'prof', 'mt']);

function cleanEntity(raw: string): string | null {
  let name = raw
    .replace(/[’]/g, "'")
    .replace(/'s$/i, '')
    .replace(/^[^\p{L}\p{N}]+/u, '')
    .replace(/[^\p{L}\p{N}.]+$/u, '')
    .trim();
  // A trailing full stop belongs to the sentence, unless the entity is an initialism ("U.S.").
  if (name.endsWith('.') && !/^(?:\p{L}\.){2,}$/u.test(name)) name = name.slice(0, -1);
  if (name.length < 2 || TITLE_ONLY.has(name.replace(/\.$/, '').toLowerCase())) return null;
  if (name === name.toLowerCase()) name = name.replace(/(^|[\s-])(\p{L})/gu, (_m, sep: string, c: string) => sep + c.toUpperCase());
  return name;
}

type Doc = ReturnType<typeof parse>;

/** People, places and organisations named in the text, in that order, each once; then other proper
 * nouns compromise does not know by name ("Bosch", "Giulia"), which are usually one of the three. */
function entitiesOf(doc: Doc): string[] {
  const found = [
    ...doc.people().out('array'), ...doc.places().out('array'), ...doc.organizations().out('array'),
    ...(doc.match('#ProperNoun+').not('(#Date|#Pronoun|#Demonym|#Language|#Actor)').out('array') as string[])
      .flatMap((s) => s.split(/,\s*/)),
  ] as string[];
  const seen = new Set<string>();
  const out: string[] = [];
  for (const raw of found) {
    const name = cleanEntity(raw);
    // A bare proper noun already inside a named entity ("Texas" in "Austin, Texas") adds nothing.
    if (!name || seen.has(name.toLowerCase()) || out.some((e) => e.toLowerCase().includes(name.toLowerCase()))) continue;
    seen.add(name.toLowerCase());
    out.push(name);
  }
  return out;
}

export interface SpottedDate {
  /** ISO date-time of the start of the first dated phrase, or undefined when none was usable. */
  occurredAt?: string;
  /** A phrase names a calendar day, week, month, season or year (not just a time of day). */
  dayLevel: boolean;
  /** A phrase repeats ("every Monday"): a habit rather than a moment. */
  repeating: boolean;
}

const TIME_ONLY_WORDS = /\b(?:at|by|around|about|before|after|on|in|from|until|till|the|\d{1,2}(?::\d{2})?\s*(?:am|pm|a\.m\.|p\.m\.)?|noon|midnight|o'?clock|morning|afternoon|evening|night|half|past|quarter|to)\b/gi;

interface DateMatch { text?: string; dates?: { start?: string | null; repeat?: unknown } }

function datedMatches(doc: Doc, now: Date): DateMatch[] {
  return doc.dates({ today: now, timezone: 'UTC' }).json() as DateMatch[];
}

function firstDated(matches: DateMatch[]): { phrase: string; start: string } | undefined {
  for (const m of matches) {
    const start = m.dates?.start;
    if (typeof start === 'string' && !m.dates?.repeat) return { phrase: m.text ?? '', start };
  }
  return undefined;
}

const FUTURE_CUE = /\b(?:will|'ll|going to|gonna|next|upcoming|coming|planning|plan to|tomorrow|soon|starts?|begins?|due|scheduled|booked|confirmed|reserved|planned|arranged)\b/i;
const PAST_CUE = /\b(?:since|ago|last|previous|earlier|yesterday)\b/i;

/** compromise-dates prefers the next "April"; a statement about the past means the last one. */
function aimsAtThePast(doc: Doc): boolean {
  const text = doc.text();
  return !FUTURE_CUE.test(text) && (doc.has('#PastTense') || PAST_CUE.test(text));
}

const WEEKDAY = /\b(?:mon|tues?|wed(?:nes)?|thu(?:rs?)?|fri|sat(?:ur)?|sun)(?:day)?\b/i;
const MONTH_OR_SEASON = /\b(?:jan|feb|mar|apr|may|jun|jul|aug|sep|sept|oct|nov|dec)[a-z]*\b|\b(?:spring|summer|autumn|fall|winter)\b/i;

/** Move a future-biased date back into the past by the unit its phrase names (week, year, month). */
function stepBack(date: Date, phrase: string, now: Date): void {
  for (let guard = 0; date > now && guard < 60; guard++) {
    if (WEEKDAY.test(phrase)) date.setUTCDate(date.getUTCDate() - 7);
    else if (MONTH_OR_SEASON.test(phrase)) date.setUTCFullYear(date.getUTCFullYear() - 1);
    else if (/\b\d{1,2}(?:st|nd|rd|th)\b/i.test(phrase)) date.setUTCMonth(date.getUTCMonth() - 1);
    else return;
  }
}

/**
 * spacetime, under compromise-dates, holds years from -4000 to 4000 only: a `now` past that
 * overflows the stack, and a date near it sends the duration it computes for every match into an
 * endless loop ("We met on 3999-12-31", "in 721,700 days", "in 1000 years" said in 2999), which
 * would hold the event loop for good. A statement is read for dates only when nothing it can name
 * comes near that edge: `now`, every number (as a year), and `now` moved by every count of a unit.
 */
const YEAR_LIMIT = 3900;
const UNIT_YEARS: readonly [RegExp, number][] = [
  [/^(?:millenni(?:um|a)s?)$/i, 1000],
  [/^(?:centur(?:y|ies))$/i, 100],
  [/^(?:decades?)$/i, 10],
  [/^(?:years?|yrs?)$/i, 1],
  [/^(?:quarters?)$/i, 1 / 4],
  [/^(?:months?|mos?)$/i, 1 / 12],
  [/^(?:fortnights?)$/i, 14 / 365],
  [/^(?:weeks?|wks?)$/i, 7 / 365],
  [/^(?:days?)$/i, 1 / 365],
  [/^(?:hours?|hrs?|minutes?|mins?|seconds?|secs?)$/i, 1 / 8760],
];
/** A number (digits, maybe in groups of three: 721,700) and the word after it. */
const NUMBER_AND_WORD = /(?<!\d)(\d{1,3}(?:[,' _]\d{3})+|\d+)(?!\d)(?:\s*-?\s*([a-z]+))?/gi;

function datesWithinReach(text: string, now: Date): boolean {
  const year = now.getUTCFullYear();
  if (!(Math.abs(year) < YEAR_LIMIT)) return false;
  // "a thousand years": a count in words, too large to bound by its digits.
  if (/\b(?:thousands?|millions?|billions?|trillions?)\b/i.test(text)) return false;
  for (const [, digits, word] of text.matchAll(NUMBER_AND_WORD)) {
    const value = Number(digits!.replace(/\D/g, ''));
    if (value >= YEAR_LIMIT) return false;
    const perUnit = word === undefined ? undefined : UNIT_YEARS.find(([unit]) => unit.test(word))?.[1];
    if (perUnit !== undefined && Math.abs(year) + value * perUnit >= YEAR_LIMIT) return false;
  }
  return true;
}

/** Dates in the text, read in UTC relative to `now` so the same input always gives the same answer. */
function datesOf(doc: Doc, now: Date): SpottedDate {
  if (!datesWithinReach(doc.text(), now)) return { dayLevel: false, repeating: false };
  const matches = datedMatches(doc, now);
  const repeating = matches.some((m) => Boolean(m.dates?.repeat));
  let found = firstDated(matches);
  if (!found) return { dayLevel: false, repeating };
  // compromise reads "turning 40 next month" as the 40th day after next month; a bare count in
  // front of a relative phrase is not part of the date.
  const leadingCount = /^\s*\d{1,3}\s+(?=(?:next|last|this|coming)\b)/i.exec(found.phrase);
  if (leadingCount) {
    found = firstDated(datedMatches(parse(found.phrase.slice(leadingCount[0].length)), now));
    if (!found) return { dayLevel: false, repeating };
  }
  const date = new Date(found.start);
  if (Number.isNaN(date.getTime())) return { dayLevel: false, repeating };
  if (date > now && !/\b\d{4}\b/.test(found.phrase) && aimsAtThePast(doc)) stepBack(date, found.phrase, now);
  const dayLevel = found.phrase.replace(TIME_ONLY_WORDS, '').replace(/[^\p{L}\p{N}]+/gu, '').length > 0;
  return { occurredAt: date.toISOString(), dayLevel, repeating };
}

export interface DateSpan {
  /** The phrase that names the span ("last week", "in May 2023"). */
  phrase: string;
  start: Date;
  /** The span's last instant (the end of the day, week, month or year named). */
  end: Date;
}

/**
 * The first span of time a question names, read relative to `now` ("last week", "in May 2023",
 * "two weeks ago", "yesterday"), or undefined. A question asks about what is past: "in March" asked
 * in November is the March before, unless it says it looks ahead ("next", "will", "upcoming").
 */
export function dateSpanOf(text: string, now: Date): DateSpan | undefined {
  if (!datesWithinReach(text, now)) return undefined;
  const doc = parse(text);
  for (const m of datedMatches(doc, now)) {
    const start = m.dates?.start;
    const end = (m.dates as { end?: string | null } | undefined)?.end;
    if (typeof start !== 'string' || m.dates?.repeat) continue;
    const from = new Date(start);
    const to = new Date(typeof end === 'string' ? end : start);
    if (Number.isNaN(from.getTime()) || Number.isNaN(to.getTime())) continue;
    const phrase = (m.text ?? '').trim();
    if (from > now && !/\b\d{4}\b/.test(phrase) && !FUTURE_CUE.test(doc.text())) {
      const moved = new Date(from);
      stepBack(moved, phrase, now);
      to.setTime(to.getTime() - (from.getTime() - moved.getTime()));
      from.setTime(moved.getTime());
    }
    if (to < from) continue;
    return { phrase, start: from, end: to };
  }
  return undefined;
}

const LEAD = '^(please|pls|plz|kindly)?';

/** The sentence opens with an instruction: an imperative or bare infinitive with no subject in front
 * ("Book me a table", "Keep answers short", "Never reveal ..."). */
function imperativeOf(doc: Doc): boolean {
  return doc.has(`${LEAD} (#Imperative|#Infinitive|never|always)`) || doc.has(`${LEAD} (do|does) not #Verb`) || doc.has(`${LEAD} don't #Verb`);
}

export interface Analysis {
  entities: string[];
  date: SpottedDate;
  /** compromise's own question detection (catches questions typed without a question mark). */
  question: boolean;
  imperative: boolean;
}

/** Everything the extractor asks compromise about one statement, from a single parse. */
export function analyse(text: string, now: Date): Analysis {
  const doc = parse(text);
  const entities = entitiesOf(doc);
  const question = doc.questions().found;
  const imperative = imperativeOf(doc);
  return { entities, question, imperative, date: datesOf(doc, now) };
}

export function startsImperative(text: string): boolean {
  return imperativeOf(parse(text));
}

export function hasVerb(text: string): boolean {
  return parse(text).has('#Verb');
}

/** An occupation-like noun ("engineer", "teacher"), by compromise's #Actor tag. */
export function isActorNoun(word: string): boolean {
  return parse(word).has('#Actor');
}

export function isPersonName(text: string): boolean {
  return parse(text).has('(#Person|#FirstName)');
}

export function singular(word: string): string {
  // With an article in front compromise reads the word as a noun ("the seats"), not a verb.
  const nouns = parse(`the ${word}`).nouns();
  if (!nouns.found || !nouns.has('#Plural')) return word;
  const out = nouns.toSingular().text('normal').replace(/^the\s+/, '');
  return out.length > 0 ? out : word;
}
