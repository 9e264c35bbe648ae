import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { dedupGroups } from '../../workers/dedup.js';

function unit(values: number[]): number[] {
  const norm = Math.hypot(...values) || 1;
  return values.map((v) => v / norm);
}

/** Groups rows that all say the same words (so only the cosine guard decides), unless texts are given. */
function run(rows: number[][], partitions: number[], threshold: number, texts?: string[]): number[] {
  const dimensions = rows[0]?.length ?? 1;
  return Array.from(
    dedupGroups({
      dimensions,
      vectors: Float32Array.from(rows.flat()),
      texts: texts ?? rows.map(() => 'Customer lives in Porto'),
      partitions: Int32Array.from(partitions),
      threshold,
    }),
  );
}

const vector = fc.array(fc.double({ min: -1, max: 1, noNaN: true }), { minLength: 3, maxLength: 3 }).map(unit);

describe('dedupGroups', () => {
  it('groups a worked example: two near twins and a stranger', () => {
    // Same words: similarity = 0.75 + 0.25 x cosine; at 0.95 the cosine must reach 0.8 (the stranger's is 0).
    const rows = [unit([1, 0, 0]), unit([0.99, 0.1, 0]), unit([0, 1, 0]), unit([1, 0.01, 0])];
    expect(run(rows, [0, 0, 0, 0], 0.95)).toEqual([0, 0, 2, 0]);
  });

  it('groups texts that say the same, and never look-alikes that differ in a fact, however close their vectors', () => {
    const twin = unit([1, 0, 0]);
    const texts = ['Customer lives in Porto and works remotely', 'The customer lives in Porto and works remotely.', 'Customer lives in Lisbon and works remotely'];
    expect(run([twin, twin, twin], [0, 0, 0], 0.92, texts)).toEqual([0, 0, 2]);
  });

  it('never groups across partitions, even identical vectors', () => {
    const rows = [unit([1, 2, 3]), unit([1, 2, 3])];
    expect(run(rows, [0, 1], 0.9)).toEqual([0, 1]);
    expect(run(rows, [4, 4], 0.9)).toEqual([0, 0]);
  });

  it('links transitively (single linkage) and names each group by its smallest index', () => {
    const rows = [unit([1, 0, 0]), unit([0.95, 0.31, 0]), unit([0.81, 0.59, 0])];
    // Same words; at 0.985 the cosine must reach 0.94: 0~1 and 1~2 do, 0~2 does not: still one group.
    expect(run(rows, [0, 0, 0], 0.985)).toEqual([0, 0, 0]);
  });

  it('has the properties of a partition into groups', () => {
    fc.assert(
      fc.property(fc.array(fc.tuple(vector, fc.integer({ min: 0, max: 2 })), { minLength: 1, maxLength: 25 }), fc.double({ min: 0.5, max: 1, noNaN: true }), (items, threshold) => {
        const roots = run(items.map(([v]) => v), items.map(([, p]) => p), threshold);
        roots.forEach((root, i) => {
          expect(root).toBeLessThanOrEqual(i);
          expect(roots[root]).toBe(root); // the representative represents itself
          expect(items[root]![1]).toBe(items[i]![1]); // same partition
        });
        // Any pair at or above the threshold in one partition shares a group (same words: 0.75 + 0.25 x cosine).
        for (let i = 0; i < items.length; i++) {
          for (let j = i + 1; j < items.length; j++) {
            const dot = items[i]![0].reduce((s, x, d) => s + Math.fround(x) * Math.fround(items[j]![0][d]!), 0);
            if (items[i]![1] === items[j]![1] && 0.75 + 0.25 * dot >= threshold + 1e-6) expect(roots[i]).toBe(roots[j]);
          }
        }
      }),
    );
  });

  it('refuses vectors that do not match the item count', () => {
    expect(() => dedupGroups({ dimensions: 3, vectors: new Float32Array(5), texts: ['a', 'b'], partitions: new Int32Array(2), threshold: 0.9 })).toThrow(/expected 6 values/);
    expect(() => dedupGroups({ dimensions: 3, vectors: new Float32Array(6), texts: ['a'], partitions: new Int32Array(2), threshold: 0.9 })).toThrow(/expected 2 texts/);
  });
});
