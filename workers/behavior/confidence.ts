// A pattern's (or any cited ref's) confidence once decisions acting on it have outcomes: the Beta-Binomial update
// (conjugate Beta prior; Gelman et al., Bayesian Data Analysis, 3rd ed., section 2.4). Mining gives
// the prior: its mean is the mined confidence, (hits + 1) / (hits + misses + 2), and its weight, in
// pseudo-outcomes, the mined evidence (hits + misses + 2) capped at PATTERN_PRIOR_STRENGTH. The cap
// is the point: a habit seen 200 times is not 200 times as good a guide to what acting on it will
// achieve, so ten outcomes move its confidence halfway to what they say, and a hundred settle it.
// Other refs (predictions, observations) carry a single claim and a prior worth 2 pseudo-outcomes
// (as much as the uniform prior). Pure.

export const PATTERN_PRIOR_STRENGTH = 10;
export const CLAIM_PRIOR_STRENGTH = 2;

export interface BetaPrior {
  /** The prior mean, in [0, 1]. */
  confidence: number;
  /** The prior's weight in pseudo-outcomes (alpha + beta). */
  strength: number;
}

/** The mean of Beta(c s + hits, (1 - c) s + misses): the prior updated by weighted outcomes. */
export function posteriorConfidence(prior: BetaPrior, hits: number, misses: number): number {
  return (prior.confidence * prior.strength + hits) / (prior.strength + hits + misses);
}

/** The prior a mined pattern brings: its mined confidence, weighted by its evidence up to the cap. */
export function patternPrior(minedHits: number, minedMisses: number): BetaPrior {
  return { confidence: (minedHits + 1) / (minedHits + minedMisses + 2), strength: Math.min(PATTERN_PRIOR_STRENGTH, minedHits + minedMisses + 2) };
}

/** The prior of a single claim (a prediction's probability, an observation's confidence). */
export function claimPrior(confidence: number): BetaPrior {
  return { confidence: Math.min(1, Math.max(0, confidence)), strength: CLAIM_PRIOR_STRENGTH };
}
