// The BG/NBD ("beta-geometric / negative binomial distribution") model of repeat events: Fader,
// Hardie and Lee, "'Counting Your Customers' the Easy Way: An Alternative to the Pareto/NBD Model",
// Marketing Science 24(2), 2005. While alive, a subject's events are a Poisson process of rate
// lambda ~ Gamma(r, alpha) (shape r, rate alpha); after each event it stops for good with probability
// p ~ Beta(a, b). A subject's history is summarised by x (repeat events after the first), tx (time
// of the last, from the first) and T (time from the first to the end of observation), in one unit of
// time throughout. Pure: data in, numbers out.
import gammaln from '@stdlib/math-base-special-gammaln';
import hyp2f1 from '@stdlib/math-base-special-hyp2f1';
import gammaQuantile from '@stdlib/stats-base-dists-gamma-quantile';
import { minimize } from './nelder-mead.js';

export interface BgnbdParams {
  r: number;
  alpha: number;
  a: number;
  b: number;
}

/** Subjects' histories, column-wise (typed arrays cross to the pool without copying). */
export interface Histories {
  x: Float64Array;
  tx: Float64Array;
  T: Float64Array;
}

export interface BgnbdFit extends BgnbdParams {
  /** The summed log-likelihood at the estimate. */
  logLikelihood: number;
  subjects: number;
  converged: boolean;
}

/**
 * One subject's log-likelihood (FHL 2005, equation 6, in the four-term form of Fader and Hardie's
 * implementation note): A1 + A2 + ln(exp(A3) + [x > 0] exp(A4)).
 */
export function logLikelihood({ r, alpha, a, b }: BgnbdParams, x: number, tx: number, T: number): number {
  const a1 = gammaln(r + x) - gammaln(r) + r * Math.log(alpha);
  const a2 = gammaln(a + b) + gammaln(b + x) - gammaln(b) - gammaln(a + b + x);
  const a3 = -(r + x) * Math.log(alpha + T);
  if (x === 0) return a1 + a2 + a3;
  const a4 = Math.log(a) - Math.log(b + x - 1) - (r + x) * Math.log(alpha + tx);
  const top = Math.max(a3, a4);
  return a1 + a2 + top + Math.log(Math.exp(a3 - top) + Math.exp(a4 - top));
}

export function totalLogLikelihood(params: BgnbdParams, h: Histories): number {
  let sum = 0;
  for (let i = 0; i < h.x.length; i++) sum += logLikelihood(params, h.x[i]!, h.tx[i]!, h.T[i]!);
  return sum;
}

const fromLog = ([r, alpha, a, b]: readonly number[]): BgnbdParams => ({ r: Math.exp(r!), alpha: Math.exp(alpha!), a: Math.exp(a!), b: Math.exp(b!) });

/**
 * Maximum-likelihood estimate over the subjects, by Nelder-Mead on the parameters' logarithms (which
 * keeps them positive), restarted from its own answer until it stops improving, as is usual for the
 * simplex method. Starts at r = a = b = 1 and alpha = the mean observation length (a rate of about
 * one event per observation window).
 */
export function fitBgnbd(h: Histories): BgnbdFit {
  const n = h.x.length;
  if (n === 0) throw new Error('fitBgnbd: no subjects');
  const meanT = h.T.reduce((s, t) => s + t, 0) / n;
  const objective = (p: readonly number[]) => -totalLogLikelihood(fromLog(p), h);
  let best = minimize(objective, [0, Math.log(Math.max(meanT, 1e-6)), 0, 0], { step: 1 });
  for (let restart = 0; restart < 5; restart++) {
    const again = minimize(objective, best.x, { step: 0.2 });
    const improved = again.value < best.value - 1e-9 * Math.abs(best.value);
    best = again.value <= best.value ? again : best;
    if (!improved) break;
  }
  return { ...fromLog(best.x), logLikelihood: -best.value, subjects: n, converged: best.converged };
}

/** ((alpha + T) / (alpha + T + t))^(r + x): E[exp(-lambda t)] under lambda's posterior Gamma(r + x, alpha + T). */
function noEventWhileAlive({ r, alpha }: BgnbdParams, x: number, T: number, t: number): number {
  return Math.exp((r + x) * (Math.log(alpha + T) - Math.log(alpha + T + t)));
}

/** P(alive at T | x, tx, T) (FHL 2005, equation 11); a subject with no repeat event is alive. */
export function probabilityAlive({ r, alpha, a, b }: BgnbdParams, x: number, tx: number, T: number): number {
  if (x === 0) return 1;
  const odds = Math.exp(Math.log(a) - Math.log(b + x - 1) + (r + x) * (Math.log(alpha + T) - Math.log(alpha + tx)));
  return 1 / (1 + odds);
}

/**
 * P(at least one event in (T, T + t] | x, tx, T). An alive subject makes none with probability
 * E[exp(-lambda t)] under lambda's posterior Gamma(r + x, alpha + T), that is
 * ((alpha + T) / (alpha + T + t))^(r + x); it cannot stop without an event (BG/NBD drops out only
 * just after one), and a subject that has stopped makes none.
 */
export function probabilityAtLeastOne(params: BgnbdParams, x: number, tx: number, T: number, t: number): number {
  if (t <= 0) return 0;
  return probabilityAlive(params, x, tx, T) * (1 - noEventWhileAlive(params, x, T, t));
}

/** E[events in (T, T + t] | x, tx, T] (FHL 2005, equation 10). Needs a > 1 for a finite mean. */
export function expectedEvents(params: BgnbdParams, x: number, tx: number, T: number, t: number): number {
  if (t <= 0) return 0;
  const { r, alpha, a, b } = params;
  const hyper = hyp2f1(r + x, b + x, a + b + x - 1, t / (alpha + T + t));
  const tail = 1 - noEventWhileAlive(params, x, T, t) * hyper;
  return ((a + b + x - 1) / (a - 1)) * tail * probabilityAlive(params, x, tx, T);
}

/** E[X(t)] for a new subject observed from time 0 (FHL 2005, equation 9). */
export function expectedEventsUnconditional({ r, alpha, a, b }: BgnbdParams, t: number): number {
  const z = t / (alpha + t);
  return ((a + b - 1) / (a - 1)) * (1 - Math.exp(r * (Math.log(alpha) - Math.log(alpha + t))) * hyp2f1(r, b, a + b - 1, z));
}

export interface OccurrenceForecast {
  probability: number;
  lower: number;
  upper: number;
  alive: number;
  expected: number;
  expectedLower: number;
  expectedUpper: number;
}

/**
 * P(at least one event within t) and the expected count, each with a 95% interval. The interval
 * carries the subject's own uncertainty: its rate's posterior Gamma(r + x, alpha + T) at the 2.5%
 * and 97.5% quantiles, mapped through P(alive) (1 - e^(-lambda t)) and P(alive) lambda t, widened to
 * hold the point (the model's dropout within the horizon puts the point below the mapped middle).
 * Where a <= 1 the BG/NBD mean is infinite; the expected count is then P(alive) E[lambda] t, the
 * count of a subject that stays alive through the horizon.
 */
export function forecastOccurrence(params: BgnbdParams, x: number, tx: number, T: number, t: number): OccurrenceForecast {
  const { r, alpha, a } = params;
  const alive = probabilityAlive(params, x, tx, T);
  const probability = probabilityAtLeastOne(params, x, tx, T, t);
  const rate = (q: number) => gammaQuantile(q, r + x, alpha + T);
  const [slow, fast] = [rate(0.025), rate(0.975)];
  const expected = a > 1 ? expectedEvents(params, x, tx, T, t) : (alive * (r + x) * t) / (alpha + T);
  return {
    probability,
    lower: Math.min(probability, alive * (1 - Math.exp(-slow * t))),
    upper: Math.max(probability, alive * (1 - Math.exp(-fast * t))),
    alive,
    expected,
    expectedLower: Math.min(expected, alive * slow * t),
    expectedUpper: Math.max(expected, alive * fast * t),
  };
}
