// The context budget (workers/behavior/budget.ts): whole items in priority order, counted with the
// real tokenizer; the assembled content never exceeds the budget.
import fc from 'fast-check';
import { countTokens } from 'gpt-tokenizer/encoding/o200k_base';
import { describe, expect, it } from 'vitest';
import { assemble, fitBudget, type BudgetInput } from '../../../workers/behavior/budget.js';

const item = (text: string) => JSON.stringify({ text });

describe('fitBudget', () => {
  it('keeps everything when it fits, and counts the assembled content exactly', () => {
    const input: BudgetInput = { maxTokens: 1000, fixed: '"guidance":"be kind"', sections: [{ name: 'a', items: [item('one'), item('two')] }, { name: 'b', items: [item('three')] }] };
    const out = fitBudget(input);
    expect(out).toEqual({ kept: [2, 1], truncated: [], tokens: countTokens(assemble(input, [2, 1])) });
    expect(assemble(input, out.kept)).toBe('{"guidance":"be kind","a":[{"text":"one"},{"text":"two"}],"b":[{"text":"three"}]}');
  });

  it('cuts the lower-priority section first, keeping a prefix of each, and names what it cut', () => {
    const long = item('word '.repeat(40));
    const input: BudgetInput = { maxTokens: 120, fixed: '"guidance":"g"', sections: [{ name: 'first', items: [long, long, long] }, { name: 'second', items: [item('x')] }] };
    const out = fitBudget(input);
    expect(out.kept[0]).toBe(2);
    expect(out.truncated).toContain('first');
    expect(out.tokens).toBeLessThanOrEqual(120);
  });

  it('never exceeds the budget, keeps a prefix of each section, and marks every section that lost items', () => {
    const words = fc.array(fc.constantFrom('alpha', 'beta', 'gamma', 'ünïcödé', '42', '{"x":1}', 'emoji 🙂', '\n'), { maxLength: 30 }).map((w) => item(w.join(' ')));
    fc.assert(
      fc.property(fc.array(fc.array(words, { maxLength: 8 }), { minLength: 1, maxLength: 5 }), fc.integer({ min: 20, max: 600 }), (sections, maxTokens) => {
        const input: BudgetInput = { maxTokens, fixed: '"guidance":"use this"', sections: sections.map((items, i) => ({ name: `s${i}`, items })) };
        const out = fitBudget(input);
        const assembled = countTokens(assemble(input, out.kept));
        expect(out.tokens).toBe(assembled);
        // Only an empty bundle's own overhead may stand above a tiny budget.
        if (countTokens(assemble(input, input.sections.map(() => 0))) <= maxTokens) expect(out.tokens).toBeLessThanOrEqual(maxTokens);
        out.kept.forEach((k, i) => {
          expect(k).toBeLessThanOrEqual(sections[i]!.length);
          expect(out.truncated.includes(`s${i}`)).toBe(k < sections[i]!.length);
        });
      }),
    );
  });
});
