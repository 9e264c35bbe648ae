// Time in the question (search/time.ts): the span a query names, read against a reference time, and
// how near a memory's validFrom is to it; worked examples and properties.
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { TIME, timeScore, timeWindow } from '../../../src/memory/search/time.js';

const reference = new Date('2026-11-27T12:00:00Z');
const DAY = 86_400_000;

describe('the span of time a query names', () => {
  it.each([
    ['What did I do last week?', '2026-11-16T00:00:00.000Z', '2026-11-22T23:59:59.999Z'],
    ['What happened in May 2023?', '2023-05-01T00:00:00.000Z', '2023-05-31T23:59:59.999Z'],
    // A question looks back: "in March" asked in November is the March before.
    ['What did I buy in March?', '2026-03-01T00:00:00.000Z', '2026-03-31T23:59:59.999Z'],
    ['what did we discuss yesterday', '2026-11-26T00:00:00.000Z', '2026-11-26T23:59:59.999Z'],
    ['what is planned for next month', '2026-12-01T00:00:00.000Z', '2026-12-31T23:59:59.999Z'],
  ])('reads "%s" as %s to %s', (query, start, end) => {
    const window = timeWindow(query, reference)!;
    expect(window.start.toISOString()).toBe(start);
    expect(window.end.toISOString()).toBe(end);
  });

  it('finds none in a question without time, or with a year no calendar can hold', () => {
    expect(timeWindow('What food allergies do I have?', reference)).toBeUndefined();
    expect(timeWindow('what happened in 721,700 days', reference)).toBeUndefined();
  });

  it('scores 1 inside the span, less outside, 0 beyond its reach (half its length, at least 3 days)', () => {
    const window = timeWindow('What did I do last week?', reference)!;
    const week = window.end.getTime() - window.start.getTime();
    expect(window.reachMs).toBe(TIME.reachShare * week);
    expect(timeScore('2026-11-18T09:00:00Z', window)).toBe(1);
    expect(timeScore('2026-11-24T00:00:00Z', window)).toBeCloseTo(1 - (1 * DAY + 1) / (0.5 * week), 6);
    expect(timeWindow('what did we discuss yesterday', reference)!.reachMs).toBe(TIME.minReachDays * DAY);
    expect(timeScore('2026-11-01T00:00:00Z', window)).toBe(0);
    expect(timeScore('2026-11-18T09:00:00Z', undefined)).toBe(0);
    const year = timeWindow('in 2024', reference)!;
    expect(year.reachMs).toBeCloseTo(0.5 * (year.end.getTime() - year.start.getTime()), -3);
  });

  it('keeps the score in [0, 1], and never higher further from the span', () => {
    const window = timeWindow('What happened in May 2023?', reference)!;
    fc.assert(
      fc.property(fc.integer({ min: -2000, max: 2000 }), fc.integer({ min: 0, max: 500 }), (days, further) => {
        const at = window.end.getTime() + days * DAY;
        const score = timeScore(new Date(at), window);
        expect(score).toBeGreaterThanOrEqual(0);
        expect(score).toBeLessThanOrEqual(1);
        const away = days >= 0 ? at + further * DAY : window.start.getTime() - (window.start.getTime() - at) - further * DAY;
        if (at > window.end.getTime() || at < window.start.getTime()) expect(timeScore(new Date(away), window)).toBeLessThanOrEqual(score);
      }),
    );
  });
});
