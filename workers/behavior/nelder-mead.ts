// Derivative-free minimisation: the Nelder-Mead simplex method (Nelder and Mead, "A Simplex Method
// for Function Minimization", The Computer Journal 7, 1965), with the standard coefficients and the
// shrink step as Lagarias, Reeds, Wright and Wright state them ("Convergence Properties of the
// Nelder-Mead Simplex Method in Low Dimensions", SIAM J. Optim. 9, 1998). Used to fit the few
// parameters of the behaviour models by maximum likelihood; deterministic (no randomness).

export interface MinimizeOptions {
  /** Size of the first simplex's steps from the start, per coordinate (default 0.5). */
  step?: number;
  /** Stop when the simplex's values differ by less than this (default 1e-10, relative)... */
  tolerance?: number;
  /** ...and its points by less than this (default 1e-9, relative to the best point's size). */
  xTolerance?: number;
  maxIterations?: number;
}

export interface Minimum {
  x: number[];
  value: number;
  iterations: number;
  converged: boolean;
}

const REFLECT = 1;
const EXPAND = 2;
const CONTRACT = 0.5;
const SHRINK = 0.5;

/** Minimises `f` from `start`. A non-finite value counts as +Infinity (a point outside the domain). */
export function minimize(f: (x: readonly number[]) => number, start: readonly number[], options: MinimizeOptions = {}): Minimum {
  const { step = 0.5, tolerance = 1e-10, xTolerance = 1e-9, maxIterations = 2000 * start.length } = options;
  const value = (x: readonly number[]) => {
    const v = f(x);
    return Number.isFinite(v) ? v : Number.POSITIVE_INFINITY;
  };
  const n = start.length;
  let simplex = [start.slice(), ...start.map((_, i) => start.map((x, j) => (i === j ? x + step : x)))];
  let values = simplex.map(value);
  const towards = (from: readonly number[], to: readonly number[], t: number) => from.map((x, i) => x + t * (to[i]! - x));

  let iterations = 0;
  for (; iterations < maxIterations; iterations++) {
    const order = values.map((v, i) => [v, i] as const).sort((a, b) => a[0] - b[0]).map(([, i]) => i);
    simplex = order.map((i) => simplex[i]!);
    values = order.map((i) => values[i]!);
    const best = values[0]!;
    const worst = values[n]!;
    // Both the values and the points must have come together: a simplex lying across the minimum
    // (points on either side at equal height) has equal values long before it has found it.
    const valuesClose = Math.abs(worst - best) <= tolerance * (Math.abs(best) + tolerance);
    const spread = Math.max(...simplex.slice(1).map((x) => Math.max(...x.map((xi, i) => Math.abs(xi - simplex[0]![i]!)))));
    const pointsClose = spread <= xTolerance * (1 + Math.max(...simplex[0]!.map(Math.abs)));
    if (valuesClose && pointsClose) return { x: simplex[0]!, value: best, iterations, converged: true };

    const centroid = simplex.slice(0, n).reduce((sum, x) => sum.map((s, i) => s + x[i]! / n), new Array<number>(n).fill(0));
    const reflected = towards(centroid, simplex[n]!, -REFLECT);
    const fr = value(reflected);
    if (fr < best) {
      const expanded = towards(centroid, simplex[n]!, -EXPAND);
      const fe = value(expanded);
      [simplex[n], values[n]] = fe < fr ? [expanded, fe] : [reflected, fr];
      continue;
    }
    if (fr < values[n - 1]!) {
      [simplex[n], values[n]] = [reflected, fr];
      continue;
    }
    // Contract: outside when the reflection improved on the worst, inside otherwise.
    const outside = fr < worst;
    const contracted = outside ? towards(centroid, reflected, CONTRACT) : towards(centroid, simplex[n]!, CONTRACT);
    const fc = value(contracted);
    if (fc < (outside ? fr : worst)) {
      [simplex[n], values[n]] = [contracted, fc];
      continue;
    }
    for (let i = 1; i <= n; i++) {
      simplex[i] = towards(simplex[0]!, simplex[i]!, SHRINK);
      values[i] = value(simplex[i]!);
    }
  }
  const at = values.indexOf(Math.min(...values));
  return { x: simplex[at]!, value: values[at]!, iterations, converged: false };
}
