// The behaviour domain's pure parts: projection of patterns (worked examples and properties),
// the RFM grid and quintile scores, the words for cadences, and the size of a mining chunk.
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { quintileScore } from '../../src/behavior/models.js';
import { cadenceSummary, periodWords, summarise } from '../../src/behavior/patterns/describe.js';
import { nextChunkSize } from '../../src/behavior/patterns/miner.js';
import type { PatternMeta, PatternRecord } from '../../src/behavior/patterns/schemas.js';
import { project } from '../../src/behavior/predict/projection.js';
import { segmentOf } from '../../src/behavior/profile/profile.js';
import { RFM_SEGMENTS } from '../../src/behavior/profile/schemas.js';

const DAY = 86_400_000;
const NOW = Date.UTC(2026, 10, 24, 12); // a Tuesday

function pattern(meta: Partial<PatternMeta> & Pick<PatternMeta, 'patternKind'>, id = 'mem_1'): PatternRecord {
  const full: PatternMeta = {
    contactId: 'c1',
    subjectKind: 'customer',
    confidence: 0.9,
    hits: 8,
    misses: 0,
    observationCount: 9,
    observationWindowDays: 60,
    lastObservedAt: new Date(NOW - 2 * DAY).toISOString(),
    active: true,
    ...meta,
  };
  return {
    id,
    projectId: 'p',
    contactId: 'c1',
    subject: { kind: 'customer', externalId: 'c1' },
    summary: summarise(full),
    metadata: full,
    active: full.active,
    confidence: full.confidence,
    sourceMemoryIds: ['mem_a'],
    created: new Date(NOW).toISOString(),
    updated: new Date(NOW).toISOString(),
  };
}

const options = { now: NOW, horizonDays: 30, occurrencesPerPattern: 1, minConfidence: 0, limit: 20 };

describe('project', () => {
  it('fires a recurring pattern at the last occurrence plus whole periods, c^k for the k-th', () => {
    const p = pattern({ patternKind: 'recurring_event', cadence: { periodDays: 7, timezone: 'UTC' }, toleranceMinutes: 2016, confidence: 0.9 });
    const out = project([p], { ...options, occurrencesPerPattern: 3 });
    expect(out.map((e) => Date.parse(e.expectedAt))).toEqual([NOW + 5 * DAY, NOW + 12 * DAY, NOW + 19 * DAY]);
    expect(out.map((e) => e.confidence)).toEqual([0.9, 0.9 ** 2, 0.9 ** 3].map((c) => expect.closeTo(c, 12)));
    expect(out[0]).toMatchObject({ windowMinutes: 2016, patternId: 'mem_1', patternKind: 'recurring_event', sourceMemoryIds: ['mem_a'] });
  });

  it('keeps an overdue firing due now while within its window, then moves to the next period', () => {
    const within = pattern({ patternKind: 'recurring_event', cadence: { periodDays: 7, timezone: 'UTC' }, toleranceMinutes: 1440, lastObservedAt: new Date(NOW - 7.5 * DAY).toISOString() });
    expect(Date.parse(project([within], options)[0]!.expectedAt)).toBe(NOW - 0.5 * DAY);
    const past = pattern({ patternKind: 'recurring_event', cadence: { periodDays: 7, timezone: 'UTC' }, toleranceMinutes: 60, lastObservedAt: new Date(NOW - 7.5 * DAY).toISOString() });
    expect(Date.parse(project([past], options)[0]!.expectedAt)).toBe(NOW + 6.5 * DAY);
  });

  it('fires a day-of-week pattern on the coming days of its weekday, at the usual time when known', () => {
    const friday = pattern({ patternKind: 'day_of_week', cadence: { dayOfWeek: 5, periodDays: 7, timezone: 'UTC' } });
    const evening = pattern({ patternKind: 'time_of_day', cadence: { timeOfDayLocal: '19:30', timezone: 'UTC' }, toleranceMinutes: 45 }, 'mem_2');
    const [first, second] = project([friday, evening], { ...options, occurrencesPerPattern: 2 });
    expect(first!.expectedAt).toBe('2026-11-27T19:30:00.000Z');
    expect(second!.expectedAt).toBe('2026-12-04T19:30:00.000Z');
    expect(first!.windowMinutes).toBe(45);
    // In a zone ahead of UTC, 19:30 local is earlier in UTC.
    const tokyo = pattern({ patternKind: 'day_of_week', cadence: { dayOfWeek: 5, periodDays: 7, timezone: 'Asia/Tokyo' } });
    expect(project([tokyo], options)[0]!.expectedAt).toBe('2026-11-27T03:00:00.000Z');
  });

  it('projects nothing for patterns without a cadence, inactive ones, or beyond the horizon', () => {
    const kinds = [pattern({ patternKind: 'entity_preference', entityExternalIds: ['x'] }), pattern({ patternKind: 'declining_engagement', rateRatio: 0.1 }), pattern({ patternKind: 'time_of_day', cadence: { timeOfDayLocal: '09:00' } })];
    expect(project(kinds, options)).toEqual([]);
    expect(project([pattern({ patternKind: 'recurring_event', cadence: { periodDays: 7 }, active: false })], options)).toEqual([]);
    expect(project([pattern({ patternKind: 'recurring_event', cadence: { periodDays: 60 }, toleranceMinutes: 0 })], { ...options, horizonDays: 30 })).toEqual([]);
  });

  it('keeps confidences and intervals in [0, 1] around the point, ranked, above the floor and within the limit', () => {
    const arbitraryPattern = fc.record({
      periodDays: fc.double({ min: 0.5, max: 60, noNaN: true }),
      hits: fc.integer({ min: 0, max: 50 }),
      misses: fc.integer({ min: 0, max: 50 }),
      lastDaysAgo: fc.double({ min: 0, max: 100, noNaN: true }),
      tolerance: fc.integer({ min: 0, max: 5000 }),
      dow: fc.option(fc.integer({ min: 0, max: 6 }), { nil: undefined }),
    });
    fc.assert(
      fc.property(fc.array(arbitraryPattern, { maxLength: 6 }), fc.integer({ min: 1, max: 5 }), fc.double({ min: 0, max: 1, noNaN: true }), fc.integer({ min: 1, max: 10 }), (specs, k, floor, limit) => {
        const patterns = specs.map((s, i) =>
          pattern(
            s.dow === undefined
              ? { patternKind: 'recurring_event', cadence: { periodDays: s.periodDays }, toleranceMinutes: s.tolerance, hits: s.hits, misses: s.misses, confidence: (s.hits + 1) / (s.hits + s.misses + 2), lastObservedAt: new Date(NOW - s.lastDaysAgo * DAY).toISOString() }
              : { patternKind: 'day_of_week', cadence: { dayOfWeek: s.dow, timezone: 'UTC' }, hits: s.hits, misses: s.misses, confidence: (s.hits + 1) / (s.hits + s.misses + 2) },
            `mem_${i}`,
          ),
        );
        const out = project(patterns, { ...options, occurrencesPerPattern: k, minConfidence: floor, limit });
        expect(out.length).toBeLessThanOrEqual(limit);
        for (const [i, e] of out.entries()) {
          expect(e.confidence).toBeGreaterThanOrEqual(floor);
          expect(0 <= e.confidenceLower && e.confidenceLower <= e.confidence && e.confidence <= e.confidenceUpper && e.confidenceUpper <= 1).toBe(true);
          expect(Date.parse(e.expectedAt)).toBeLessThanOrEqual(NOW + 30 * DAY);
          if (i > 0) expect(e.confidence).toBeLessThanOrEqual(out[i - 1]!.confidence);
        }
      }),
    );
  });
});

describe('RFM', () => {
  it('places every cell of the 5 x 5 grid in one of the named segments, as the grid says', () => {
    const grid = [1, 2, 3, 4, 5].map((r) => [1, 2, 3, 4, 5].map((f) => segmentOf(r, f)));
    expect(grid[4]).toEqual(['new_customers', 'potential_loyalists', 'potential_loyalists', 'champions', 'champions']);
    expect(grid[3]).toEqual(['promising', 'potential_loyalists', 'potential_loyalists', 'champions', 'champions']);
    expect(grid[2]).toEqual(['about_to_sleep', 'about_to_sleep', 'need_attention', 'loyal_customers', 'loyal_customers']);
    expect(grid[1]).toEqual(['hibernating', 'hibernating', 'at_risk', 'at_risk', 'cant_lose_them']);
    expect(grid[0]).toEqual(['lost', 'lost', 'at_risk', 'at_risk', 'cant_lose_them']);
    expect(new Set(grid.flat())).toEqual(new Set(RFM_SEGMENTS));
  });

  it('scores against quintile cut points: 1 to 5, monotone, reversed for recency', () => {
    const cuts = [10, 20, 30, 40];
    expect([5, 10, 15, 35, 50].map((v) => quintileScore(v, cuts))).toEqual([1, 1, 2, 4, 5]);
    expect([5, 15, 50].map((v) => quintileScore(v, cuts, false))).toEqual([5, 4, 1]);
    fc.assert(
      fc.property(fc.array(fc.double({ min: 0, max: 1000, noNaN: true }), { minLength: 4, maxLength: 4 }), fc.double({ min: 0, max: 1000, noNaN: true }), fc.double({ min: 0, max: 1000, noNaN: true }), (raw, x, y) => {
        const c = [...raw].sort((p, q) => p - q);
        const [lo, hi] = x <= y ? [x, y] : [y, x];
        expect(quintileScore(lo, c)).toBeLessThanOrEqual(quintileScore(hi, c));
        expect(quintileScore(lo, c, false)).toBeGreaterThanOrEqual(quintileScore(hi, c, false));
        for (const s of [quintileScore(x, c), quintileScore(x, c, false)]) expect(s >= 1 && s <= 5).toBe(true);
      }),
    );
  });
});

describe('cadence words', () => {
  it('names common periods and reads a cadence summary', () => {
    expect([1, 7, 14, 30, 10].map(periodWords)).toEqual(['daily', 'weekly', 'every 14 days', 'monthly', 'every 10 days']);
    const metas = [
      pattern({ patternKind: 'recurring_event', cadence: { periodDays: 7 }, eventType: 'gym' }).metadata,
      pattern({ patternKind: 'day_of_week', cadence: { dayOfWeek: 5 }, eventType: 'gym' }).metadata,
      pattern({ patternKind: 'time_of_day', cadence: { timeOfDayLocal: '19:00' }, eventType: 'gym' }).metadata,
    ];
    expect(cadenceSummary(metas)).toBe('weekly, Fridays at 19:00');
    expect(cadenceSummary([metas[0]!])).toBe('weekly');
    expect(cadenceSummary([pattern({ patternKind: 'recurring_event', cadence: { periodDays: 14 } }).metadata])).toBe('every 14 days');
    expect(cadenceSummary([pattern({ patternKind: 'entity_preference' }).metadata])).toBeNull();
  });

  it("rounds a pattern's text, so that re-mining a steady habit leaves it (and its embedding) as it was", () => {
    const text = (meta: Partial<PatternMeta> & Pick<PatternMeta, 'patternKind'>) => pattern({ eventType: 'gym', ...meta }).summary;
    expect(text({ patternKind: 'recurring_event', cadence: { periodDays: 7.04 } })).toBe('gym recurs weekly (about every 7 days)');
    expect(text({ patternKind: 'recurring_event', cadence: { periodDays: 6.9 } })).toBe(text({ patternKind: 'recurring_event', cadence: { periodDays: 7.1 } }));
    expect(text({ patternKind: 'recurring_event', cadence: { periodDays: 10.3 } })).toBe('gym recurs every 10 days');
    expect(text({ patternKind: 'time_of_day', cadence: { timeOfDayLocal: '19:06', timezone: 'UTC' } })).toBe('gym usually around 19:00 (UTC)');
    expect(text({ patternKind: 'time_of_day', cadence: { timeOfDayLocal: '23:53' } })).toBe('gym usually around 00:00 (UTC)');
    expect(text({ patternKind: 'day_of_week', cadence: { dayOfWeek: 0 } })).toBe('gym mostly on Sundays');
  });
});

describe('nextChunkSize', () => {
  it('starts with one subject, then sizes chunks to about 5,000 activities, between 1 and 250 subjects', () => {
    expect(nextChunkSize(0, 0)).toBe(1);
    // The soak's subjects: 8,000 activities each, so one at a time.
    expect(nextChunkSize(8_000, 1)).toBe(1);
    expect(nextChunkSize(1_000, 1)).toBe(5);
    expect(nextChunkSize(2_000, 100)).toBe(250);
    // Subjects with nothing read count as one activity each.
    expect(nextChunkSize(0, 40)).toBe(250);
  });

  it('never answers fewer than 1 or more than 250 subjects, and fewer for busier subjects', () => {
    fc.assert(
      fc.property(fc.nat(10_000_000), fc.integer({ min: 1, max: 10_000 }), fc.nat(10_000_000), (activities, subjects, more) => {
        const size = nextChunkSize(activities, subjects);
        expect(Number.isInteger(size)).toBe(true);
        expect(size).toBeGreaterThanOrEqual(1);
        expect(size).toBeLessThanOrEqual(250);
        expect(nextChunkSize(activities + more, subjects)).toBeLessThanOrEqual(size);
      }),
    );
  });
});
