// Names in the question (search/names.ts): which words of a query name someone or somewhere, and how
// much of them a memory holds.
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { nameMatcher, queryNames } from '../../../src/memory/search/names.js';

describe('names in a query', () => {
  it.each([
    ['What did Priya say about the Lisbon trip?', ['priya', 'lisbon']],
    ['When did I move to New York?', ['new york']],
    ["What is Emily Zhang's title?", ['emily zhang']],
    ['Did I tell you about my trip to Paris in March?', ['paris']],
    ['what did sarah say', []],
    ['I want to know what OK means', []],
    ['', []],
  ])('reads "%s" as naming %j', (query, names) => {
    expect(queryNames(query)).toEqual(names);
  });

  it('scores the share of the names a memory holds, as whole words in any case or among its entities', () => {
    const score = nameMatcher(['priya', 'lisbon']);
    expect(score('user: Priya loved LISBON.', null)).toBe(1);
    expect(score('We talked about Lisbonia', ['Priya'])).toBe(0.5);
    expect(score('Nothing named here', ['Porto'])).toBe(0);
    expect(nameMatcher([])('Priya', ['Priya'])).toBe(0);
  });

  it('keeps every score in [0, 1], whatever the text', () => {
    fc.assert(
      fc.property(fc.string(), fc.string(), (query, content) => {
        const s = nameMatcher(queryNames(query))(content, [content]);
        expect(s).toBeGreaterThanOrEqual(0);
        expect(s).toBeLessThanOrEqual(1);
      }),
    );
  });
});
