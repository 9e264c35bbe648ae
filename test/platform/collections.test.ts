// appendTo: lists grown in place under their keys.
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { appendTo } from '../../src/platform/collections.js';

describe('appendTo', () => {
  it('makes the list on the first value and appends in order after', () => {
    const map = new Map<string, number[]>();
    appendTo(map, 'a', 1);
    appendTo(map, 'b', 2, 3);
    appendTo(map, 'a', 4, 5);
    expect([...map]).toEqual([['a', [1, 4, 5]], ['b', [2, 3]]]);
  });

  it('groups like a filter per key, keeping the order of arrival', () => {
    fc.assert(
      fc.property(fc.array(fc.tuple(fc.constantFrom('x', 'y', 'z'), fc.integer())), (pairs) => {
        const map = new Map<string, number[]>();
        for (const [key, value] of pairs) appendTo(map, key, value);
        for (const key of ['x', 'y', 'z']) {
          const expected = pairs.filter(([k]) => k === key).map(([, v]) => v);
          expect(map.get(key) ?? []).toEqual(expected);
        }
      }),
    );
  });
});
