// Worked examples of the soak's verdict (bench/soak-verdict.ts): each bound held and broken.
import { describe, expect, it } from 'vitest';
import { judge } from '../../bench/soak-verdict.js';
import type { Sample } from '../../bench/workload.js';

/** One request a second for `seconds`, each taking `latency(second)` ms and answering `status(second)`. */
const soak = (seconds: number, latency: (second: number) => number, status: (second: number) => number = () => 200): (Sample & { at: number })[] =>
  Array.from({ length: seconds }, (_, second) => ({ op: 'search', status: status(second), ms: latency(second), at: second * 1000 }));
/** An RSS reading every 10 s. */
const readings = (seconds: number, rss: (second: number) => number): [number, number][] =>
  Array.from({ length: seconds / 10 + 1 }, (_, i) => [i * 10, rss(i * 10)]);

describe('the soak verdict', () => {
  it('holds a flat, error-free soak', () => {
    const verdict = judge(soak(600, () => 20), readings(600, () => 500));
    expect(verdict.held).toBe(true);
    expect(verdict.lines).toEqual([
      'held: 0 of 600 requests answered other than 2xx',
      'held: server RSS after the first minute 500 MB, at the end 500 MB, highest 500 MB: +0.0% at most (bound +10%)',
      'held: p99 of the first minute 20.00 ms, of the last 20.00 ms: 1.00x (bound 1.5x)',
    ]);
  });

  it('fails on one answer that is not 2xx', () => {
    const verdict = judge(soak(600, () => 20, (s) => (s === 300 ? 503 : 200)), readings(600, () => 500));
    expect(verdict.held).toBe(false);
    expect(verdict.lines[0]).toBe('FAILED: 1 of 600 requests answered other than 2xx');
  });

  it('measures memory from the end of the first minute: growth before it is warm-up, after it at most 10%', () => {
    // 200 MB at start, 500 MB at one minute (warm-up), then up to 545 MB (+9%): held.
    const warm = (s: number) => (s < 60 ? 200 : 500 + (45 * (s - 60)) / 540);
    expect(judge(soak(600, () => 20), readings(600, warm)).held).toBe(true);
    // A peak of 560 MB mid-way (+12%) fails even though the end is back at 500 MB.
    const peak = (s: number) => (s === 300 ? 560 : s < 60 ? 200 : 500);
    const verdict = judge(soak(600, () => 20), readings(600, peak));
    expect(verdict.held).toBe(false);
    expect(verdict.lines[1]).toBe('FAILED: server RSS after the first minute 500 MB, at the end 500 MB, highest 560 MB: +12.0% at most (bound +10%)');
  });

  it('compares the p99 of the last minute with the first: 1.5x holds, more fails', () => {
    expect(judge(soak(600, (s) => (s >= 540 ? 30 : 20)), readings(600, () => 500)).held).toBe(true);
    const slower = judge(soak(600, (s) => (s >= 540 ? 31 : 20)), readings(600, () => 500));
    expect(slower.held).toBe(false);
    expect(slower.lines[2]).toBe('FAILED: p99 of the first minute 20.00 ms, of the last 31.00 ms: 1.55x (bound 1.5x)');
  });

  it('judges a soak under two minutes on its errors only', () => {
    const verdict = judge(soak(90, (s) => s * 100), readings(90, (s) => 100 + s * 10));
    expect(verdict).toEqual({ held: true, lines: ['held: 0 of 90 requests answered other than 2xx', '(a soak under two minutes: memory and latency over time are not judged)'] });
  });
});
