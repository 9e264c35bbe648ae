// A conversation context's token budget (POST /memory/context): a header and memory lines, best
// first, kept whole line by line while the text stays within the budget, counted with gpt-tokenizer's
// o200k_base (the encoding of OpenAI's GPT-4o family) over the text exactly as it is sent. Pure.
import { countTokens } from 'gpt-tokenizer/encoding/o200k_base';

export interface LinesInput {
  budget: number;
  header: string;
  /** Best first. */
  lines: string[];
}

export interface LinesOutput {
  /** How many of the lines fit (a prefix). */
  kept: number;
  /** Tokens of the header and the kept lines joined by newlines; 0 when none fits. */
  tokens: number;
}

export const joinLines = (header: string, lines: readonly string[]): string => [header, ...lines].join('\n');

export function fitLines(input: LinesInput): LinesOutput {
  const exact = (kept: number) => (kept === 0 ? 0 : countTokens(joinLines(input.header, input.lines.slice(0, kept))));
  // An estimate first: each line costs its own tokens plus one for the newline before it. Then the
  // exact count of the whole: text joined can take a token more or less at each join, so lines
  // come off the end while it is over the budget, and go on while the next still fits.
  let kept = 0;
  let running = countTokens(input.header);
  for (const line of input.lines) {
    const cost = countTokens(line) + 1;
    if (running + cost > input.budget) break;
    running += cost;
    kept++;
  }
  let tokens = exact(kept);
  while (kept > 0 && tokens > input.budget) tokens = exact(--kept);
  while (kept < input.lines.length) {
    const next = exact(kept + 1);
    if (next > input.budget) break;
    kept++;
    tokens = next;
  }
  return { kept, tokens };
}
