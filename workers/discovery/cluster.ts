// Discovery clustering of subjects' feature vectors: similarity 1 - Euclidean distance (the
// vectors are scaled so that the largest possible distance is 1), then a deterministic threshold
// clustering in which every two members of a cluster are at least `simThreshold` similar (the
// complete-linkage condition: Sorensen 1948, as in Everitt et al., "Cluster Analysis", 5th ed.,
// 4.2), grown greedily from the densest unassigned subject (most neighbours above the threshold,
// ties to the lower row), candidates taken nearest first. Large inputs are clustered on their first
// `sample` rows (the caller passes a deterministic sample first); every other row then joins the
// first cluster all of whose sampled members it is `simThreshold` similar to, so the guarantee
// holds against the sampled members. Pure: vectors in, row indices out. Matrix products by ml-matrix.
import { Matrix } from 'ml-matrix';

export interface ClusterInput {
  /** Row-major n x d feature vectors. */
  vectors: Float64Array;
  n: number;
  d: number;
  /** The first `sample` rows are clustered; the rest are assigned afterwards. */
  sample: number;
  simThreshold: number;
  minClusterSize: number;
  /** Clusters less cohesive are dropped before the rest of the rows are assigned (default 0). */
  minStability?: number;
}

export interface Cluster {
  /** Row indices, the medoid first, then the sampled members by similarity to it, then the rest. */
  members: number[];
  /** Mean pairwise similarity of the sampled members (1 for a single one). */
  stability: number;
}

/** How many rest rows are compared against the sample at once (bounds the memory of one product). */
const REST_CHUNK = 1024;

function rows(vectors: Float64Array, d: number, from: number, to: number): Matrix {
  const m = new Matrix(to - from, d);
  for (let i = from; i < to; i++) for (let j = 0; j < d; j++) m.set(i - from, j, vectors[i * d + j]!);
  return m;
}

function squaredNorms(m: Matrix): Float64Array {
  const out = new Float64Array(m.rows);
  for (let i = 0; i < m.rows; i++) {
    let s = 0;
    for (let j = 0; j < m.columns; j++) s += m.get(i, j) ** 2;
    out[i] = s;
  }
  return out;
}

/** Similarities 1 - |a - b| between the rows of a and of b (|a - b|^2 = |a|^2 + |b|^2 - 2 a.b). */
export function similarities(a: Matrix, b: Matrix): Matrix {
  const dots = a.mmul(b.transpose());
  const na = squaredNorms(a);
  const nb = squaredNorms(b);
  for (let i = 0; i < a.rows; i++) {
    for (let j = 0; j < b.rows; j++) dots.set(i, j, 1 - Math.sqrt(Math.max(0, na[i]! + nb[j]! - 2 * dots.get(i, j))));
  }
  return dots;
}

export function clusterSubjects(input: ClusterInput): Cluster[] {
  const { vectors, n, d, simThreshold: t } = input;
  const sample = Math.min(n, input.sample);
  if (sample === 0) return [];
  const x = rows(vectors, d, 0, sample);
  const s = similarities(x, x);
  const density = new Int32Array(sample);
  for (let i = 0; i < sample; i++) for (let j = 0; j < sample; j++) if (i !== j && s.get(i, j) >= t) density[i]!++;
  const order = Array.from({ length: sample }, (_, i) => i).sort((a, b) => density[b]! - density[a]! || a - b);

  const assigned = new Uint8Array(sample);
  const found: number[][] = [];
  for (const seed of order) {
    if (assigned[seed]) continue;
    const members = [seed];
    assigned[seed] = 1;
    const candidates: number[] = [];
    for (let j = 0; j < sample; j++) if (!assigned[j] && s.get(seed, j) >= t) candidates.push(j);
    candidates.sort((a, b) => s.get(seed, b) - s.get(seed, a) || a - b);
    for (const c of candidates) {
      if (members.every((m) => s.get(m, c) >= t)) {
        members.push(c);
        assigned[c] = 1;
      }
    }
    if (members.length >= 1) found.push(members);
  }

  // Medoid first (the largest summed similarity to the others; ties to the lower row), the others
  // nearest it first; stability, the mean pairwise similarity.
  const clusters = found.map((members) => {
    let medoid = members[0]!;
    let best = -Infinity;
    for (const m of [...members].sort((a, b) => a - b)) {
      const sum = members.reduce((acc, o) => acc + (o === m ? 0 : s.get(m, o)), 0);
      if (sum > best) [best, medoid] = [sum, m];
    }
    const rest = members.filter((m) => m !== medoid).sort((a, b) => s.get(medoid, b) - s.get(medoid, a) || a - b);
    let pairs = 0;
    let total = 0;
    for (let i = 0; i < members.length; i++) {
      for (let j = i + 1; j < members.length; j++) {
        total += s.get(members[i]!, members[j]!);
        pairs++;
      }
    }
    return { members: [medoid, ...rest], stability: pairs === 0 ? 1 : total / pairs };
  });

  // Only clusters that are kept take the rest of the rows: each row joins the first whose every
  // sampled member it is similar enough to, after the sampled members, nearest the medoid first.
  const kept = clusters.filter((c) => c.members.length >= input.minClusterSize && c.stability >= (input.minStability ?? 0));
  if (n > sample && kept.length > 0) {
    const extras = kept.map(() => [] as { row: number; similarity: number }[]);
    for (let from = sample; from < n; from += REST_CHUNK) {
      const to = Math.min(n, from + REST_CHUNK);
      const r = similarities(rows(vectors, d, from, to), x);
      for (let i = 0; i < to - from; i++) {
        const k = kept.findIndex((c) => c.members.every((m) => r.get(i, m) >= t));
        if (k >= 0) extras[k]!.push({ row: from + i, similarity: r.get(i, kept[k]!.members[0]!) });
      }
    }
    kept.forEach((c, k) => c.members.push(...extras[k]!.sort((a, b) => b.similarity - a.similarity || a.row - b.row).map((e) => e.row)));
  }
  return kept;
}
