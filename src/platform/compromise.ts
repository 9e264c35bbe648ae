// compromise (with its dates plugin), loaded on first use rather than at start: its ES modules are
// about 500 files, the largest share of what importing the app costs, and most processes (a worker
// that only embeds, a CLI command, a test file that never observes) never parse a sentence. Its
// one-file CommonJS build is required instead, which also loads in two thirds of the time.
import { createRequire } from 'node:module';
import type Compromise from 'compromise';
import type { DatesMethods } from 'compromise-dates';

type Nlp = typeof Compromise;
let loaded: Nlp | undefined;

/** The compromise instance, the dates plugin applied (one instance for the process). */
export function compromise(): Nlp {
  if (!loaded) {
    const require = createRequire(import.meta.url);
    const nlp = require('compromise') as Nlp;
    nlp.plugin(require('compromise-dates'));
    loaded = nlp;
  }
  return loaded;
}

export type { DatesMethods };
