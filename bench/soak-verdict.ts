// The soak's verdict (issue 38): what `npm run soak` must hold, judged over its samples and the
// server's memory readings. Kept apart from the soak's script so that a test can give it worked
// examples (test/reliability/soak-verdict.test.ts).
import { ms, summarise } from './support.js';
import type { Sample } from './workload.js';

/** What the soak must hold (issue 38): no error, flat memory after warm-up, no creeping latency. */
const MAX_RSS_GROWTH = 0.1;
const MAX_P99_RATIO = 1.5;
const MINUTE_MS = 60_000;

/**
 * The soak's verdict over samples stamped with when they were sent (ms into the soak) and the
 * server's RSS by seconds into it: every answer 2xx; RSS from the end of the first minute to the
 * end grows by at most MAX_RSS_GROWTH (its highest reading after the first minute as well as its
 * last); the p99 of the last minute at most MAX_P99_RATIO times the first's. A soak shorter than
 * two minutes has no separate first and last minute, and is judged on its errors only.
 */
export function judge(samples: readonly (Sample & { at: number })[], rssAt: readonly [number, number][]): { held: boolean; lines: string[] } {
  const lines: string[] = [];
  let held = true;
  const check = (ok: boolean, text: string) => {
    held &&= ok;
    lines.push(`${ok ? 'held' : 'FAILED'}: ${text}`);
  };
  const failed = samples.filter((s) => s.status < 200 || s.status >= 300).length;
  check(failed === 0, `${failed} of ${samples.length} requests answered other than 2xx`);
  const end = samples.reduce((latest, s) => Math.max(latest, s.at), 0);
  if (end < 2 * MINUTE_MS) {
    lines.push(`(a soak under two minutes: memory and latency over time are not judged)`);
    return { held, lines };
  }
  const afterWarmUp = rssAt.filter(([second]) => second * 1000 >= MINUTE_MS);
  const base = afterWarmUp[0]?.[1];
  if (base !== undefined) {
    const last = afterWarmUp.at(-1)![1];
    const highest = afterWarmUp.reduce((most, [, rss]) => Math.max(most, rss), base);
    const growth = (highest - base) / base;
    check(
      growth <= MAX_RSS_GROWTH,
      `server RSS after the first minute ${base.toFixed(0)} MB, at the end ${last.toFixed(0)} MB, highest ${highest.toFixed(0)} MB: +${(growth * 100).toFixed(1)}% at most (bound +${MAX_RSS_GROWTH * 100}%)`,
    );
  }
  const p99 = (from: number, to: number) => summarise(samples.filter((s) => s.at >= from && s.at < to).map((s) => s.ms)).p99;
  const first = p99(0, MINUTE_MS);
  const lastMinute = p99(end - MINUTE_MS, end + 1);
  check(lastMinute <= MAX_P99_RATIO * first, `p99 of the first minute ${ms(first)}, of the last ${ms(lastMinute)}: ${(lastMinute / first).toFixed(2)}x (bound ${MAX_P99_RATIO}x)`);
  return { held, lines };
}

