// Pattern mining (workers/behavior/mining.ts): worked examples, properties, and a seeded synthetic
// population whose planted habits must be found (at least 95%, with the right period within 10%)
// while pure-noise subjects get a pattern at most 5% of the time.
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { mulberry32 } from '../../helpers/random.js';
import { circularMinutes, local, minePatterns, type MinedPattern } from '../../../workers/behavior/mining.js';

const DAY = 86_400_000;
const MONDAY_9AM = Date.UTC(2026, 0, 5, 9, 0); // 5 January 2026 was a Monday
const times = (xs: readonly number[]) => Float64Array.from(xs);
const kind = (patterns: MinedPattern[], k: MinedPattern['patternKind']) => patterns.find((p) => p.patternKind === k);

describe('minePatterns: worked examples', () => {
  it('finds a weekly Monday 09:00 habit as a 7-day cadence, Mondays, and 09:00', () => {
    const weekly = Array.from({ length: 10 }, (_, i) => MONDAY_9AM + i * 7 * DAY);
    const now = weekly.at(-1)! + 3 * DAY;
    const patterns = minePatterns({ times: times(weekly), now });
    const recurring = kind(patterns, 'recurring_event')!;
    expect(recurring.cadence.periodDays).toBe(7);
    // 9 gaps, all on cadence, no period elapsed since the last: Beta(9 + 1, 0 + 1) mean 10 / 11.
    expect(recurring).toMatchObject({ hits: 9, misses: 0, observationCount: 10, lastObservedAt: weekly.at(-1), nextExpectedAt: weekly.at(-1)! + 7 * DAY });
    expect(recurring.confidence).toBeCloseTo(10 / 11, 12);
    expect(recurring.observationWindowDays).toBeCloseTo(66, 12);
    expect(recurring.toleranceMinutes).toBe(Math.round(0.2 * 7 * 1440));
    expect(kind(patterns, 'day_of_week')).toMatchObject({ cadence: { dayOfWeek: 1 }, hits: 10, misses: 0 });
    expect(kind(patterns, 'time_of_day')).toMatchObject({ cadence: { timeOfDayLocal: '09:00', timezone: 'UTC' }, hits: 10 });
  });

  it('counts a missed week as a miss, not as a longer period, and the weeks since the last occurrence too', () => {
    const weeks = [0, 1, 2, 3, 5, 6, 7, 8]; // week 4 missed
    const occurrences = weeks.map((w) => MONDAY_9AM + w * 7 * DAY);
    const now = occurrences.at(-1)! + 15 * DAY; // two periods elapsed since the last
    const recurring = kind(minePatterns({ times: times(occurrences), now }), 'recurring_event')!;
    expect(recurring.cadence.periodDays).toBe(7);
    // 7 gaps: 6 of one week (hits), one of two weeks (a hit for its second week, a miss for its
    // first); then floor(15 / 7 - 0.2) = 1 miss since. hits 7, misses 2.
    expect(recurring).toMatchObject({ hits: 7, misses: 2 });
    expect(recurring.confidence).toBeCloseTo(8 / 11, 12);
  });

  it('reads day and time in the subject\'s time zone', () => {
    // 23:30 UTC on Sundays is 08:30 on Mondays in Tokyo (UTC+9, no daylight saving).
    const sundays = Array.from({ length: 8 }, (_, i) => Date.UTC(2026, 0, 4, 23, 30) + i * 7 * DAY);
    const patterns = minePatterns({ times: times(sundays), now: sundays.at(-1)! + DAY, timezone: 'Asia/Tokyo' });
    expect(kind(patterns, 'day_of_week')!.cadence).toEqual({ dayOfWeek: 1, periodDays: 7, timezone: 'Asia/Tokyo' });
    expect(kind(patterns, 'time_of_day')!.cadence.timeOfDayLocal).toBe('08:30');
    expect(local(sundays[0]!, 'UTC')).toEqual({ weekday: 0, minute: 23 * 60 + 30 });
  });

  it('takes activity within an hour of another as the same occurrence', () => {
    const weekly = Array.from({ length: 8 }, (_, i) => MONDAY_9AM + i * 7 * DAY);
    const bursts = weekly.flatMap((t) => [t, t + 10 * 60_000, t + 50 * 60_000]);
    const now = weekly.at(-1)! + DAY;
    expect(minePatterns({ times: times(bursts), now })).toEqual(minePatterns({ times: times(weekly), now }));
  });

  it('finds nothing in no activity, or in too little to tell', () => {
    expect(minePatterns({ times: times([]), now: MONDAY_9AM })).toEqual([]);
    const two = [MONDAY_9AM, MONDAY_9AM + 7 * DAY];
    expect(minePatterns({ times: times(two), now: two.at(-1)! + DAY })).toEqual([]);
  });

  it('keeps a cadence seen 3 to 5 times as a tentative pattern whose missing gaps count as misses', () => {
    const four = Array.from({ length: 4 }, (_, i) => MONDAY_9AM + i * 7 * DAY);
    const found = minePatterns({ times: times(four), now: four.at(-1)! + DAY });
    // Only the cadence: four occurrences are too few for the day and time tests.
    expect(found.map((p) => p.patternKind)).toEqual(['recurring_event']);
    // Three gaps on cadence, two short of a full pattern's five, each worth 4 misses: Beta(3 + 1, 8 + 1), mean 4/13.
    expect(found[0]).toMatchObject({ hits: 3, misses: 8, unseen: 8, observationCount: 4, cadence: { periodDays: 7 } });
    expect(found[0]!.confidence).toBeCloseTo(4 / 13, 12);
    expect(found[0]!.nextExpectedAt).toBe(four.at(-1)! + 7 * DAY);
    // Three occurrences: two gaps, three short, 3/16; six: a full pattern, 6/7, nothing unseen.
    const confidence = (n: number) => {
      const ts = Array.from({ length: n }, (_, i) => MONDAY_9AM + i * 7 * DAY);
      return kind(minePatterns({ times: times(ts), now: ts.at(-1)! + DAY }), 'recurring_event')!;
    };
    expect(confidence(3).confidence).toBeCloseTo(3 / 16, 12);
    expect(confidence(6)).toMatchObject({ unseen: 0, hits: 5, misses: 0 });
    expect(confidence(6).confidence).toBeCloseTo(6 / 7, 12);
  });

  it('never lets fewer on-cadence occurrences carry more confidence than more of them', () => {
    fc.assert(
      fc.property(fc.integer({ min: 1, max: 60 }), fc.integer({ min: 3, max: 12 }), (periodDays, n) => {
        const mine = (k: number) => {
          const ts = Array.from({ length: k }, (_, i) => MONDAY_9AM + i * periodDays * DAY);
          return kind(minePatterns({ times: times(ts), now: ts.at(-1)! + 60_000 }), 'recurring_event')!;
        };
        const fewer = mine(n);
        const more = mine(n + 1);
        expect(fewer.confidence).toBeLessThan(more.confidence);
        // The Beta posterior mean over the counts it reports, unseen misses included.
        expect(fewer.confidence).toBeCloseTo((fewer.hits + 1) / (fewer.hits + fewer.misses + 2), 12);
        expect(fewer.unseen).toBe(4 * Math.max(0, 5 - (n - 1)));
      }),
    );
  });

  it('wraps time of day around midnight', () => {
    // 23:50 and 00:10 alternate: the usual time is midnight, not noon.
    const nights = Array.from({ length: 10 }, (_, i) => Date.UTC(2026, 0, 1 + 3 * i, i % 2 ? 0 : 23, i % 2 ? 10 : 50));
    expect(kind(minePatterns({ times: times(nights), now: nights.at(-1)! + DAY }), 'time_of_day')!.cadence.timeOfDayLocal).toBe('00:00');
    expect(circularMinutes(1430, 10)).toBe(20);
  });
});

describe('minePatterns: properties', () => {
  it('keeps confidence a Beta posterior mean in (0, 1), in the order the input comes', () => {
    fc.assert(
      fc.property(fc.array(fc.integer({ min: 0, max: 400 * 24 }), { maxLength: 80 }), fc.integer({ min: 0, max: 30 * 24 }), (hours, after) => {
        const ts = hours.map((h) => MONDAY_9AM + h * 3_600_000);
        const now = MONDAY_9AM + (Math.max(0, ...hours) + after) * 3_600_000;
        const patterns = minePatterns({ times: times(ts), now });
        for (const p of patterns) {
          expect(p.confidence).toBeCloseTo((p.hits + 1) / (p.hits + p.misses + 2), 12);
          expect(p.confidence > 0 && p.confidence < 1).toBe(true);
          expect(p.hits).toBeGreaterThanOrEqual(0);
          expect(p.misses).toBeGreaterThanOrEqual(0);
        }
        expect(minePatterns({ times: times([...ts].reverse()), now })).toEqual(patterns);
      }),
      { numRuns: 200 },
    );
  });
});

// ---------------------------------------------------------------------------------------------
// A synthetic population

interface Planted {
  kind: 'weekly' | 'biweekly' | 'monthly' | 'day_of_week' | 'time_of_day' | 'noise';
  times: number[];
  now: number;
  period?: number;
  dayOfWeek?: number;
  minute?: number;
}

function population(seed: number, perKind: number): Planted[] {
  const random = mulberry32(seed);
  const uniform = (lo: number, hi: number) => lo + (hi - lo) * random();
  const start = Date.UTC(2025, 0, 1);
  const subjects: Planted[] = [];
  // Cadences with each occurrence jittered by up to 7% of the period and 10% of occurrences missed.
  for (const [kind, period, count] of [['weekly', 7, 26], ['biweekly', 14, 20], ['monthly', 30, 15]] as const) {
    for (let s = 0; s < perKind; s++) {
      const origin = start + uniform(0, 60) * DAY;
      const ts: number[] = [];
      for (let k = 0; k < count; k++) if (random() >= 0.1) ts.push(origin + (k + uniform(-0.07, 0.07)) * period * DAY + uniform(8, 20) * 3_600_000);
      subjects.push({ kind, times: ts, now: origin + count * period * DAY, period });
    }
  }
  // A favourite weekday in 70% of 20 weeks, at any hour.
  for (let s = 0; s < perKind; s++) {
    const day = Math.floor(uniform(0, 7));
    const firstSunday = Date.UTC(2025, 0, 5);
    const ts: number[] = [];
    for (let w = 0; w < 20; w++) if (random() < 0.7) ts.push(firstSunday + (w * 7 + day) * DAY + uniform(0, 24) * 3_600_000);
    subjects.push({ kind: 'day_of_week', times: ts, now: firstSunday + 141 * DAY, dayOfWeek: day });
  }
  // A usual time of day (within 20 minutes) on 40% of 40 days.
  for (let s = 0; s < perKind; s++) {
    const minute = Math.floor(uniform(0, 1440));
    const ts: number[] = [];
    for (let d = 0; d < 40; d++) if (random() < 0.4) ts.push(start + d * DAY + (minute + uniform(-20, 20)) * 60_000);
    subjects.push({ kind: 'time_of_day', times: ts, now: start + 40 * DAY, minute });
  }
  // Noise: a Poisson process (mean gap 2 to 20 days) at any time, over 120 to 365 days.
  for (let s = 0; s < 3 * perKind; s++) {
    const span = uniform(120, 365);
    const gap = uniform(2, 20);
    const ts: number[] = [];
    for (let t = -Math.log(1 - random()) * gap; t < span; t += -Math.log(1 - random()) * gap) ts.push(start + t * DAY);
    subjects.push({ kind: 'noise', times: ts, now: start + span * DAY });
  }
  return subjects;
}

/** Whether the subject's planted habit is among its patterns, with the right period, day or time. */
function found(subject: Planted, patterns: MinedPattern[]): boolean {
  switch (subject.kind) {
    case 'weekly':
    case 'biweekly':
    case 'monthly': {
      const p = kind(patterns, 'recurring_event');
      return p !== undefined && Math.abs(p.cadence.periodDays! / subject.period! - 1) <= 0.1;
    }
    case 'day_of_week':
      return kind(patterns, 'day_of_week')?.cadence.dayOfWeek === subject.dayOfWeek;
    case 'time_of_day': {
      const p = kind(patterns, 'time_of_day');
      if (!p) return false;
      const [h, m] = p.cadence.timeOfDayLocal!.split(':').map(Number);
      return circularMinutes(h! * 60 + m!, subject.minute!) <= 30;
    }
    case 'noise':
      return patterns.length > 0;
  }
}

describe('minePatterns on a synthetic population', () => {
  it('finds at least 95% of planted habits with the right cadence, and gives at most 5% of noise subjects a pattern', () => {
    const subjects = population(20261124, 200);
    const tally = new Map<Planted['kind'], { n: number; found: number }>();
    for (const subject of subjects) {
      const patterns = minePatterns({ times: times(subject.times), now: subject.now });
      const row = tally.get(subject.kind) ?? { n: 0, found: 0 };
      row.n++;
      if (found(subject, patterns)) row.found++;
      tally.set(subject.kind, row);
    }
    const rate = (k: Planted['kind']) => tally.get(k)!.found / tally.get(k)!.n;
    const table = [...tally].map(([k, { n, found: f }]) => `| ${k} | ${n} | ${f} | ${(f / n).toFixed(3)} |`).join('\n');
    console.log(`| planted | subjects | with the pattern | share |\n| --- | --: | --: | --: |\n${table}`);
    for (const k of ['weekly', 'biweekly', 'monthly', 'day_of_week', 'time_of_day'] as const) expect(rate(k), k).toBeGreaterThanOrEqual(0.95);
    expect(rate('noise')).toBeLessThanOrEqual(0.05);
  });
});

describe('minePatterns: entity preference and declining engagement', () => {
  const daily = (n: number, start = MONDAY_9AM) => Array.from({ length: n }, (_, i) => start + i * DAY);

  it('finds the entity named in most activities, with a Beta posterior over named activities', () => {
    const ts = daily(10);
    const entities = ['espresso', 'espresso', 'tea', 'espresso', null, 'espresso', 'espresso', 'espresso', 'espresso', 'espresso'];
    const p = kind(minePatterns({ times: times(ts), now: ts.at(-1)! + DAY, entities }), 'entity_preference')!;
    // 9 activities name an entity, 8 of them espresso: Beta(8 + 1, 1 + 1) mean 9 / 11.
    expect(p).toMatchObject({ entity: 'espresso', hits: 8, misses: 1, observationCount: 9 });
    expect(p.confidence).toBeCloseTo(9 / 11, 12);
  });

  it('finds no preference among entities named alike, nor with too few named', () => {
    const ts = daily(12);
    const spread = ts.map((_, i) => ['a', 'b', 'c', 'd'][i % 4]!);
    expect(kind(minePatterns({ times: times(ts), now: ts.at(-1)! + DAY, entities: spread }), 'entity_preference')).toBeUndefined();
    const few = ts.map((_, i) => (i < 2 ? 'a' : null));
    expect(kind(minePatterns({ times: times(ts), now: ts.at(-1)! + DAY, entities: few }), 'entity_preference')).toBeUndefined();
  });

  it('keeps a preference named 3 or 4 times as a tentative pattern, the missing activities as misses', () => {
    const ts = daily(12);
    const four = ts.map((_, i) => (i < 4 ? 'a' : null));
    const p = kind(minePatterns({ times: times(ts), now: ts.at(-1)! + DAY, entities: four }), 'entity_preference')!;
    // Four of four name it, one short of a full pattern's five, worth 4 misses: Beta(4 + 1, 4 + 1), mean 1/2.
    expect(p).toMatchObject({ entity: 'a', hits: 4, misses: 4, unseen: 4, observationCount: 4 });
    expect(p.confidence).toBeCloseTo(1 / 2, 12);
  });

  it('finds engagement that fell away: daily for 60 days, then silent for 30', () => {
    const ts = daily(60);
    const now = ts.at(-1)! + 31 * DAY;
    const p = kind(minePatterns({ times: times(ts), now }), 'declining_engagement')!;
    expect(p).toBeDefined();
    // The recent third (30.3 days) holds none of the 60; the earlier rate expected about 30 there.
    expect(p.misses).toBe(0);
    expect(p.hits).toBeGreaterThanOrEqual(29);
    expect(p.rateRatio).toBe(0);
    expect(p.confidence).toBeGreaterThan(0.9);
  });

  it('finds no decline in a steady habit that is still going', () => {
    const ts = daily(90);
    expect(kind(minePatterns({ times: times(ts), now: ts.at(-1)! + DAY }), 'declining_engagement')).toBeUndefined();
  });

  it('keeps every confidence in (0, 1) and names an entity that was given', () => {
    fc.assert(
      fc.property(
        fc.array(fc.record({ t: fc.integer({ min: 0, max: 200 * 24 }), e: fc.option(fc.constantFrom('a', 'b', 'c'), { nil: null }) }), { maxLength: 80 }),
        (rows) => {
          const patterns = minePatterns({ times: times(rows.map((r) => MONDAY_9AM + r.t * 3_600_000)), now: MONDAY_9AM + 201 * DAY, entities: rows.map((r) => r.e) });
          for (const p of patterns) {
            expect(p.confidence).toBeGreaterThan(0);
            expect(p.confidence).toBeLessThan(1);
            if (p.patternKind === 'entity_preference') expect(['a', 'b', 'c']).toContain(p.entity);
          }
        },
      ),
    );
  });
});
