// The pure parts of POST /memory/context: reading a conversation (turns, who it is about, the query)
// with worked examples, and the token budget with properties.
import fc from 'fast-check';
import { countTokens } from 'gpt-tokenizer/encoding/o200k_base';
import { describe, expect, it } from 'vitest';
import { queryOf, subjectCandidates, turnsOf, MAX_QUERY_CHARS } from '../../src/memory/context/conversation.js';
import { fitLines, joinLines } from '../../workers/memory/context.js';

describe('reading a conversation', () => {
  it('splits "Name: text" lines into turns, other lines continuing the turn before', () => {
    expect(turnsOf('Alice: hello\nthere\n\nAssistant: hi Alice\nMary Ann Smith: me too')).toEqual([
      { role: 'Alice', content: 'hello\nthere' },
      { role: 'Assistant', content: 'hi Alice' },
      { role: 'Mary Ann Smith', content: 'me too' },
    ]);
    expect(turnsOf('no speaker here\nAlice: now one')).toEqual([{ content: 'no speaker here' }, { role: 'Alice', content: 'now one' }]);
    expect(turnsOf('   \n')).toEqual([]);
  });

  it('orders the subjects it can name: explicit, a speaker naming themself, a named speaker, userId', () => {
    const turns = [
      { role: 'system', content: "I'm Claude, the assistant." },
      { role: 'bob', content: 'Hello' },
      { role: 'user', content: 'My name is Priya Shah and I need help.' },
    ];
    expect(subjectCandidates(turns, { subject: { kind: 'customer', externalId: 'c1' }, userId: 'u7' })).toEqual([
      { kind: 'customer', externalId: 'c1', origin: 'explicit', confidence: 1 },
      { kind: 'user', externalId: 'priya shah', origin: 'speaker-first-person', confidence: 0.8 },
      { kind: 'user', externalId: 'bob', origin: 'speaker', confidence: 0.6 },
      { kind: 'user', externalId: 'u7', origin: 'user', confidence: 0.5 },
    ]);
  });

  it('names nobody from machine or anonymous roles, or from "I\'m" followed by no name', () => {
    const turns = [
      { role: 'assistant', content: 'This is Lattice speaking.' },
      { role: 'user', content: "I'm Not sure. I'm so tired. I am going home." },
      { role: 'Customer', content: 'hello' },
      { role: 'tool', content: '{"name":"x"}' },
      { content: 'call me later' },
    ];
    expect(subjectCandidates(turns, {})).toEqual([]);
  });

  it('takes the same name once, at its most trusted origin, the latest speaker first', () => {
    const turns = [
      { role: 'alice', content: 'hi' },
      { role: 'bob', content: "This is Alice's friend" },
      { role: 'alice', content: "I'm Alice." },
    ];
    expect(subjectCandidates(turns, { userId: 'alice' }).map((c) => [c.externalId, c.origin])).toEqual([
      ['alice', 'speaker-first-person'],
      ['bob', 'speaker'],
    ]);
  });

  it('queries the intent and the last turn a person wrote, its end kept when long', () => {
    const turns = [
      { role: 'user', content: 'first question' },
      { role: 'user', content: 'second question' },
      { role: 'assistant', content: 'an answer' },
    ];
    expect(queryOf(turns)).toBe('second question');
    expect(queryOf(turns, '  book a table ')).toBe('book a table\nsecond question');
    expect(queryOf([{ role: 'assistant', content: 'only the model spoke' }])).toBe('only the model spoke');
    expect(queryOf([])).toBe('');
    const long = `${'a'.repeat(MAX_QUERY_CHARS)} the end`;
    expect(queryOf([{ content: long }])).toHaveLength(MAX_QUERY_CHARS);
    expect(queryOf([{ content: long }]).endsWith('the end')).toBe(true);
  });
});

describe('fitLines', () => {
  const line = fc.string({ minLength: 1, maxLength: 120 }).map((s) => `- ${s.replace(/\n/g, ' ')}`);
  it('keeps a prefix whose exact count is within the budget, and the next line would not fit', () => {
    fc.assert(
      fc.property(fc.array(line, { maxLength: 12 }), fc.integer({ min: 1, max: 400 }), (lines, budget) => {
        const header = 'What is remembered:';
        const { kept, tokens } = fitLines({ budget, header, lines });
        expect(kept).toBeGreaterThanOrEqual(0);
        expect(kept).toBeLessThanOrEqual(lines.length);
        expect(tokens).toBeLessThanOrEqual(budget);
        if (kept > 0) expect(tokens).toBe(countTokens(joinLines(header, lines.slice(0, kept))));
        else expect(tokens).toBe(0);
        if (kept < lines.length) expect(countTokens(joinLines(header, lines.slice(0, kept + 1)))).toBeGreaterThan(budget);
      }),
      { numRuns: 200 },
    );
  });

  it('keeps more with more budget', () => {
    fc.assert(
      fc.property(fc.array(line, { maxLength: 10 }), fc.integer({ min: 1, max: 300 }), fc.integer({ min: 0, max: 300 }), (lines, budget, more) => {
        const header = 'h';
        expect(fitLines({ budget: budget + more, header, lines }).kept).toBeGreaterThanOrEqual(fitLines({ budget, header, lines }).kept);
      }),
      { numRuns: 100 },
    );
  });

  it('worked example: three lines of known size', () => {
    const header = 'Remembered:';
    const lines = ['- one', '- two', '- three'];
    const all = countTokens(joinLines(header, lines));
    expect(fitLines({ budget: all, header, lines })).toEqual({ kept: 3, tokens: all });
    expect(fitLines({ budget: all - 1, header, lines }).kept).toBe(2);
    expect(fitLines({ budget: countTokens(header), header, lines })).toEqual({ kept: 0, tokens: 0 });
  });
});
