// A context bundle's token budget: sections of items (each already JSON text) in priority order are
// kept whole-item by whole-item until the budget is spent, counted with a real tokenizer
// (gpt-tokenizer's o200k_base, the encoding of OpenAI's GPT-4o family). The count is of the bundle's
// content exactly as it is assembled here, so the answer's tokensEstimate never exceeds maxTokens.
// Pure: text in, the number of items kept per section out.
import { countTokens } from 'gpt-tokenizer/encoding/o200k_base';

export interface BudgetInput {
  maxTokens: number;
  /** JSON members always kept (guidance, subject), e.g. `"guidance":"...","subject":{...}`. */
  fixed: string;
  /** In priority order: a section keeps a prefix of its items; a later section only what is left. */
  sections: { name: string; items: string[] }[];
}

export interface BudgetOutput {
  /** Items kept per section, in the order given. */
  kept: number[];
  /** Sections that lost items. */
  truncated: string[];
  /** Tokens of the assembled content. */
  tokens: number;
}

/** The content the budget counts: one JSON object of the fixed members and each section's kept items. */
export function assemble(input: BudgetInput, kept: readonly number[]): string {
  const parts = input.sections.map((s, i) => `${JSON.stringify(s.name)}:[${s.items.slice(0, kept[i]).join(',')}]`);
  return `{${[input.fixed, ...parts].filter((p) => p.length > 0).join(',')}}`;
}

export function fitBudget(input: BudgetInput): BudgetOutput {
  const kept = input.sections.map(() => 0);
  const truncated = new Set<string>();
  // Each item costs its own tokens plus about one for the comma that joins it; the exact count
  // of the whole is checked below.
  let running = countTokens(assemble(input, kept));
  input.sections.forEach((section, i) => {
    for (const item of section.items) {
      const cost = countTokens(item) + 1;
      if (running + cost > input.maxTokens) {
        truncated.add(section.name);
        break;
      }
      running += cost;
      kept[i]!++;
    }
  });
  // Merging at the joins can shift the count by a token or two: drop the lowest-priority items
  // until the exact count fits.
  let tokens = countTokens(assemble(input, kept));
  while (tokens > input.maxTokens) {
    let last = kept.length - 1;
    while (last >= 0 && kept[last] === 0) last--;
    if (last < 0) break;
    kept[last]!--;
    truncated.add(input.sections[last]!.name);
    tokens = countTokens(assemble(input, kept));
  }
  return { kept, truncated: input.sections.filter((s) => truncated.has(s.name)).map((s) => s.name), tokens };
}
