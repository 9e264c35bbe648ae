// Discovery clustering: the invariants of a behavior as properties, planted clusters recovered
// exactly (adjusted Rand index 1) at three noise levels, the sample-and-assign path, and a worked
// example.
import fc from 'fast-check';
import { Matrix } from 'ml-matrix';
import { describe, expect, it } from 'vitest';
import { clusterSubjects, similarities, type ClusterInput } from '../../../workers/discovery/cluster.js';
import { mulberry32 } from '../../helpers/random.js';

/** Adjusted Rand index (Hubert and Arabie, 1985) of two labelings of the same items. */
function adjustedRand(a: readonly number[], b: readonly number[]): number {
  const choose2 = (n: number) => (n * (n - 1)) / 2;
  const table = new Map<string, number>();
  const rows = new Map<number, number>();
  const cols = new Map<number, number>();
  a.forEach((x, i) => {
    const y = b[i]!;
    table.set(`${x}:${y}`, (table.get(`${x}:${y}`) ?? 0) + 1);
    rows.set(x, (rows.get(x) ?? 0) + 1);
    cols.set(y, (cols.get(y) ?? 0) + 1);
  });
  const index = [...table.values()].reduce((s, n) => s + choose2(n), 0);
  const sumRows = [...rows.values()].reduce((s, n) => s + choose2(n), 0);
  const sumCols = [...cols.values()].reduce((s, n) => s + choose2(n), 0);
  const expected = (sumRows * sumCols) / choose2(a.length);
  const max = (sumRows + sumCols) / 2;
  return max === expected ? 1 : (index - expected) / (max - expected);
}

/** Each row's cluster number (its index in the answer), -1 for rows in no cluster. */
function labels(n: number, clusters: ReturnType<typeof clusterSubjects>): number[] {
  const out = Array<number>(n).fill(-1);
  clusters.forEach((c, k) => c.members.forEach((m) => (out[m] = k)));
  return out;
}

/** Well-separated planted groups: centres far apart in [0, 1/sqrt(d)]^d, members within `noise` of theirs. */
function planted(groups: number, perGroup: number, d: number, noise: number, seed: number) {
  const random = mulberry32(seed);
  const scale = 1 / Math.sqrt(d);
  const centres = Array.from({ length: groups }, (_, g) => Array.from({ length: d }, (_, j) => (j % groups === g ? scale : 0)));
  const truth: number[] = [];
  const vectors = new Float64Array(groups * perGroup * d);
  let row = 0;
  for (let g = 0; g < groups; g++) {
    for (let i = 0; i < perGroup; i++, row++) {
      truth.push(g);
      for (let j = 0; j < d; j++) vectors[row * d + j] = Math.min(scale, Math.max(0, centres[g]![j]! + (random() * 2 - 1) * noise * scale));
    }
  }
  return { vectors, truth, n: groups * perGroup };
}

const arbitraryInput = fc
  .record({
    n: fc.integer({ min: 1, max: 40 }),
    d: fc.integer({ min: 1, max: 6 }),
    simThreshold: fc.double({ min: 0.3, max: 0.95, noNaN: true }),
    minClusterSize: fc.integer({ min: 1, max: 4 }),
    seed: fc.integer(),
  })
  .map(({ n, d, simThreshold, minClusterSize, seed }): ClusterInput => {
    const random = mulberry32(seed);
    const scale = 1 / Math.sqrt(d);
    return { vectors: Float64Array.from({ length: n * d }, () => random() * scale), n, d, sample: n, simThreshold, minClusterSize };
  });

const simOf = (input: ClusterInput) => {
  const m = new Matrix(input.n, input.d);
  for (let i = 0; i < input.n; i++) for (let j = 0; j < input.d; j++) m.set(i, j, input.vectors[i * input.d + j]!);
  return similarities(m, m);
};

describe('clusterSubjects', () => {
  it('keeps every two members at least simThreshold similar, each row in one cluster at most, clusters at least minClusterSize', () => {
    fc.assert(
      fc.property(arbitraryInput, (input) => {
        const s = simOf(input);
        const clusters = clusterSubjects(input);
        const seen = new Set<number>();
        for (const c of clusters) {
          expect(c.members.length).toBeGreaterThanOrEqual(input.minClusterSize);
          for (const m of c.members) {
            expect(seen.has(m)).toBe(false);
            seen.add(m);
            for (const o of c.members) expect(s.get(m, o)).toBeGreaterThanOrEqual(input.simThreshold - 1e-12);
          }
          expect(c.stability).toBeGreaterThanOrEqual(input.simThreshold - 1e-12);
          expect(c.stability).toBeLessThanOrEqual(1 + 1e-12);
        }
      }),
    );
  });

  it('puts the medoid first (the largest summed similarity), the others nearest it first, and is deterministic', () => {
    fc.assert(
      fc.property(arbitraryInput, (input) => {
        const s = simOf(input);
        const clusters = clusterSubjects(input);
        expect(clusterSubjects(input)).toEqual(clusters);
        for (const { members } of clusters) {
          const sum = (m: number) => members.reduce((acc, o) => acc + (o === m ? 0 : s.get(m, o)), 0);
          for (const m of members) expect(sum(members[0]!)).toBeGreaterThanOrEqual(sum(m) - 1e-9);
          for (let i = 2; i < members.length; i++) expect(s.get(members[0]!, members[i - 1]!)).toBeGreaterThanOrEqual(s.get(members[0]!, members[i]!) - 1e-12);
        }
      }),
    );
  });

  it('recovers well-separated planted groups exactly (adjusted Rand index 1) at three noise levels', () => {
    for (const noise of [0.02, 0.1, 0.2]) {
      const { vectors, truth, n } = planted(4, 30, 8, noise, 11);
      const clusters = clusterSubjects({ vectors, n, d: 8, sample: n, simThreshold: 0.75, minClusterSize: 3 });
      const found = labels(n, clusters);
      expect(found.every((k) => k >= 0), `noise ${noise}: every subject placed`).toBe(true);
      expect(adjustedRand(truth, found), `noise ${noise}`).toBe(1);
    }
  });

  it('clusters a sample, then assigns the rest to the first cluster all of whose sampled members they are close to', () => {
    const { vectors, truth, n } = planted(3, 100, 6, 0.05, 5);
    // Interleave the groups so that the sample (the first 60 rows) holds all three.
    const order = Array.from({ length: n }, (_, i) => (i % 3) * 100 + Math.floor(i / 3));
    const shuffled = new Float64Array(n * 6);
    order.forEach((from, to) => shuffled.set(vectors.subarray(from * 6, from * 6 + 6), to * 6));
    const clusters = clusterSubjects({ vectors: shuffled, n, d: 6, sample: 60, simThreshold: 0.75, minClusterSize: 3 });
    expect(clusters).toHaveLength(3);
    expect(clusters.map((c) => c.members.length)).toEqual([100, 100, 100]);
    expect(adjustedRand(order.map((i) => truth[i]!), labels(n, clusters))).toBe(1);
    // The medoid and the sampled members come first; the assigned ones after, nearest the medoid first.
    const s = simOf({ vectors: shuffled, n, d: 6, sample: n, simThreshold: 0.75, minClusterSize: 3 });
    for (const c of clusters) {
      expect(c.members.slice(0, 20).every((m) => m < 60)).toBe(true);
      const assigned = c.members.filter((m) => m >= 60);
      for (let i = 1; i < assigned.length; i++) expect(s.get(c.members[0]!, assigned[i - 1]!)).toBeGreaterThanOrEqual(s.get(c.members[0]!, assigned[i]!) - 1e-12);
    }
    // A cluster dropped for its stability takes no assigned rows: with minStability 1, nothing is kept.
    expect(clusterSubjects({ vectors: shuffled, n, d: 6, sample: 60, simThreshold: 0.75, minClusterSize: 3, minStability: 1 })).toEqual([]);
  });

  it('gives the worked answer on five points', () => {
    // Two tight pairs and a loner on a line: similarity 1 - distance.
    const vectors = Float64Array.from([0, 0.05, 0.9, 0.95, 0.5]);
    const clusters = clusterSubjects({ vectors, n: 5, d: 1, sample: 5, simThreshold: 0.9, minClusterSize: 2 });
    expect(clusters.map((c) => [...c.members].sort())).toEqual([
      [0, 1],
      [2, 3],
    ]);
    expect(clusters[0]!.stability).toBeCloseTo(0.95, 12);
    expect(clusterSubjects({ vectors, n: 5, d: 1, sample: 5, simThreshold: 0.9, minClusterSize: 3 })).toEqual([]);
    expect(adjustedRand([0, 0, 1, 1], [5, 5, 7, 7])).toBe(1);
    expect(adjustedRand([0, 0, 1, 1], [0, 1, 0, 1])).toBeCloseTo(-0.5, 12);
  });
});
