// Near-duplicate grouping: items whose near-duplicate similarity (near-duplicate.ts: their words,
// with the cosine as a guard) is at or above a threshold, within the same partition, end up in one
// group (single linkage, union-find). Vectors are unit length, so cosine is the dot product; the
// words are compared only for pairs whose cosine can still reach the threshold. Pure.
import { comparableWords, cosineFloor, lexicalSimilarity, nearDuplicateSimilarity } from './near-duplicate.js';

export interface DedupInput {
  dimensions: number;
  /** Row-major n x dimensions, unit-length rows. */
  vectors: Float32Array;
  /** The items' texts, in the same order. */
  texts: string[];
  /** Items only group with items of the same partition (e.g. same scope and subject). */
  partitions: Int32Array;
  threshold: number;
}

/** For each item, the index of its group's representative (the smallest index in the group). */
export function dedupGroups({ dimensions, vectors, texts, partitions, threshold }: DedupInput): Int32Array {
  const n = partitions.length;
  if (vectors.length !== n * dimensions) throw new Error(`expected ${n * dimensions} values, got ${vectors.length}`);
  if (texts.length !== n) throw new Error(`expected ${n} texts, got ${texts.length}`);
  const floor = cosineFloor(threshold);
  const words = texts.map(comparableWords);
  const parent = Int32Array.from({ length: n }, (_, i) => i);
  const find = (i: number): number => {
    while (parent[i] !== i) {
      parent[i] = parent[parent[i]!]!;
      i = parent[i]!;
    }
    return i;
  };
  // Bucket by partition so that only same-partition pairs are compared.
  const buckets = new Map<number, number[]>();
  for (let i = 0; i < n; i++) {
    const bucket = buckets.get(partitions[i]!);
    if (bucket) bucket.push(i);
    else buckets.set(partitions[i]!, [i]);
  }
  for (const members of buckets.values()) {
    for (let x = 0; x < members.length; x++) {
      const i = members[x]!;
      const oi = i * dimensions;
      for (let y = x + 1; y < members.length; y++) {
        const j = members[y]!;
        const oj = j * dimensions;
        let dot = 0;
        for (let d = 0; d < dimensions; d++) dot += vectors[oi + d]! * vectors[oj + d]!;
        if (dot >= floor && nearDuplicateSimilarity(dot, lexicalSimilarity(words[i]!, words[j]!)) >= threshold) {
          const ri = find(i);
          const rj = find(j);
          if (ri !== rj) parent[Math.max(ri, rj)] = Math.min(ri, rj);
        }
      }
    }
  }
  const roots = new Int32Array(n);
  for (let i = 0; i < n; i++) roots[i] = find(i);
  return roots;
}
