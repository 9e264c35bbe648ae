// Order statistics shared by the behaviour kernels.

/** Empirical quantile of sorted values by linear interpolation between order statistics (Hyndman and Fan type 7). */
export function quantile(sorted: readonly number[], q: number): number {
  const h = (sorted.length - 1) * q;
  const lo = Math.floor(h);
  return sorted[lo]! + (h - lo) * ((sorted[Math.min(lo + 1, sorted.length - 1)] ?? sorted[lo]!) - sorted[lo]!);
}

/** The median of values in any order. */
export const median = (values: readonly number[]): number => quantile([...values].sort((a, b) => a - b), 0.5);
