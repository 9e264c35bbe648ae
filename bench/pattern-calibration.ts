// Pattern calibration on real purchases (MemMesh issue, deliverable 8): are mined patterns'
// confidences honest, and do the tentative patterns mined from 3 to 5 occurrences keep them so?
// The apparel retailer's purchases (bench/apparel.ts): for each calibration end, every customer's
// purchases up to it (each at noon of its day) are mined as the service mines them
// (workers/behavior/mining.ts, the calibration end as now), and every pattern with a cadence is
// projected to its next firing as POST /lattice/predict projects it (projection.ts, the first
// firing, its confidence). A firing is a hit when the customer bought within its window (the
// pattern's tolerance either side of the expected time) after the calibration end. Brier score and
// ECE (10 equal-width buckets) for the full patterns alone (what mining answered before tentative
// patterns), for all of them, and for the tentative ones alone, beside the same-run baseline of a
// constant (each set's own hit rate, the best constant there is in hindsight). Pure and in memory,
// a second or two:
//   npx tsx bench/pattern-calibration.ts
import { minePatterns } from '../workers/behavior/mining.js';
import { project } from '../src/behavior/predict/projection.js';
import type { PatternRecord } from '../src/behavior/patterns/schemas.js';
import { dayOf, loadPurchases } from './apparel.js';
import { markdownTable, progress } from './support.js';

const DAY_MS = 86_400_000;
const MINUTE_MS = 60_000;
const CALIBRATION_ENDS = ['2005-12-31', '2006-06-30', '2006-12-31'];
const BUCKETS = 10;

interface Firing {
  confidence: number;
  hit: boolean;
  tentative: boolean;
  kind: string;
}

function firings(calEnd: string): Firing[] {
  const end = dayOf(calEnd) + 1;
  const byCustomer = new Map<string, number[]>();
  for (const p of loadPurchases()) byCustomer.set(p.customer, [...(byCustomer.get(p.customer) ?? []), p.day]);
  const out: Firing[] = [];
  for (const [customer, days] of byCustomer) {
    const before = days.filter((d) => d < end).map((d) => d * DAY_MS + 12 * 3_600_000);
    const after = days.filter((d) => d >= end).map((d) => d * DAY_MS + 12 * 3_600_000);
    if (before.length === 0) continue;
    const now = end * DAY_MS;
    const mined = minePatterns({ times: Float64Array.from(before), now });
    const records: PatternRecord[] = mined.map((m, i) => ({
      id: `${customer}-${i}`,
      projectId: 'bench',
      contactId: customer,
      subject: { kind: 'customer', externalId: customer },
      summary: m.patternKind,
      metadata: {
        patternKind: m.patternKind,
        contactId: customer,
        subjectKind: 'customer',
        eventType: 'purchase',
        cadence: m.cadence,
        confidence: m.confidence,
        hits: m.hits,
        misses: m.misses,
        ...(m.unseen > 0 ? { unseen: m.unseen } : {}),
        observationCount: m.observationCount,
        observationWindowDays: m.observationWindowDays,
        lastObservedAt: new Date(m.lastObservedAt).toISOString(),
        ...(m.nextExpectedAt === undefined ? {} : { nextExpectedAt: new Date(m.nextExpectedAt).toISOString() }),
        toleranceMinutes: m.toleranceMinutes,
        active: true,
      },
      active: true,
      confidence: m.confidence,
      sourceMemoryIds: [],
      created: new Date(now).toISOString(),
      updated: new Date(now).toISOString(),
    }));
    for (const p of project(records, { now, horizonDays: 365, occurrencesPerPattern: 1, minConfidence: 0, limit: 100 })) {
      const at = Date.parse(p.expectedAt);
      const window = p.windowMinutes * MINUTE_MS;
      const record = records.find((r) => r.id === p.patternId)!;
      out.push({ confidence: p.confidence, hit: after.some((t) => t >= at - window && t <= at + window), tentative: (record.metadata.unseen ?? 0) > 0, kind: p.patternKind });
    }
  }
  return out;
}

function scores(xs: readonly Firing[]): { n: number; meanConfidence: number; hitRate: number; brier: number; ece: number; baseBrier: number } {
  const n = xs.length;
  if (n === 0) return { n, meanConfidence: NaN, hitRate: NaN, brier: NaN, ece: NaN, baseBrier: NaN };
  const hitRate = xs.filter((x) => x.hit).length / n;
  const brier = xs.reduce((s, x) => s + (x.confidence - (x.hit ? 1 : 0)) ** 2, 0) / n;
  const baseBrier = xs.reduce((s, x) => s + (hitRate - (x.hit ? 1 : 0)) ** 2, 0) / n;
  let ece = 0;
  for (let b = 0; b < BUCKETS; b++) {
    const inBucket = xs.filter((x) => Math.min(BUCKETS - 1, Math.floor(x.confidence * BUCKETS)) === b);
    if (inBucket.length === 0) continue;
    const mean = inBucket.reduce((s, x) => s + x.confidence, 0) / inBucket.length;
    const rate = inBucket.filter((x) => x.hit).length / inBucket.length;
    ece += (inBucket.length / n) * Math.abs(mean - rate);
  }
  return { n, meanConfidence: xs.reduce((s, x) => s + x.confidence, 0) / n, hitRate, brier, ece, baseBrier };
}

const rows: string[][] = [];
for (const calEnd of CALIBRATION_ENDS) {
  progress(`mining and projecting as of ${calEnd}`);
  const all = firings(calEnd);
  for (const [name, set] of [
    ['full patterns (before)', all.filter((x) => !x.tentative)],
    ['all patterns (now)', all],
    ['tentative alone', all.filter((x) => x.tentative)],
  ] as const) {
    const s = scores(set);
    const f = (v: number) => (Number.isFinite(v) ? v.toFixed(3) : '-');
    rows.push([calEnd, name, String(s.n), f(s.meanConfidence), f(s.hitRate), f(s.brier), f(s.baseBrier), f(s.ece)]);
  }
}
console.log(markdownTable(['calibration end', 'projected firings of', 'n', 'mean confidence', 'hit rate', 'Brier', 'Brier, constant', 'ECE'], rows, (i) => i >= 2));
