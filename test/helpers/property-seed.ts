// Property tests draw from a fixed seed in CI and from a fresh one elsewhere.
//
// CI must pass every time on a fresh clone, so a run there is reproducible: every fc.assert draws
// from FC_SEED (default below). A developer's run explores new inputs each time; fast-check prints
// the seed and path of any counterexample, and `FC_SEED=<seed> npm test` replays the run. A test
// that fixes its own seed keeps it.
import fc from 'fast-check';

const DEFAULT_CI_SEED = 20261128;

const fromEnv = process.env.FC_SEED;
if (fromEnv !== undefined) {
  const seed = Number(fromEnv);
  if (!Number.isSafeInteger(seed)) throw new Error(`FC_SEED must be an integer (fast-check prints the seed of a failing run), not "${fromEnv}"`);
  fc.configureGlobal({ seed });
} else if (process.env.CI) fc.configureGlobal({ seed: DEFAULT_CI_SEED });
