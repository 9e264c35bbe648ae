import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { newId, ulid, type IdPrefix } from '../../src/platform/ids.js';

const CROCKFORD = /^[0123456789ABCDEFGHJKMNPQRSTVWXYZ]{26}$/;
const MAX_TIME = 2 ** 48 - 1;

/** Plain code-unit order, as a database with the C collation and a byte-wise index sort. */
function isSorted(ids: readonly string[]): boolean {
  return ids.every((id, i) => i === 0 || ids[i - 1]! < id);
}

describe('ids', () => {
  it.each<IdPrefix>(['mem', 'ent', 'job', 'key'])('prefixes %s ids with the prefix and an underscore, then a 26-character ULID', (prefix) => {
    const id = newId(prefix);
    const [head, body, ...rest] = id.split('_');
    expect(head).toBe(prefix);
    expect(rest).toEqual([]);
    expect(body).toMatch(CROCKFORD);
  });

  it('encodes the time in the first 10 characters', () => {
    expect(ulid(0).slice(0, 10)).toBe('0000000000');
    expect(ulid(MAX_TIME).slice(0, 10)).toBe('7ZZZZZZZZZ');
    expect(ulid(1_700_000_000_000).slice(0, 10)).toBe('01HF7YAT00');
  });

  it('makes ULID bodies of Crockford base32 for any 48-bit time', () => {
    fc.assert(
      fc.property(fc.integer({ min: 0, max: MAX_TIME }), (time) => {
        expect(ulid(time)).toMatch(CROCKFORD);
      }),
    );
  });

  it('makes distinct ids', () => {
    const ids = new Set(Array.from({ length: 10_000 }, () => newId('mem')));
    expect(ids.size).toBe(10_000);
  });

  it('sorts ids made in sequence in the order they were made, including many in one millisecond', () => {
    fc.assert(
      fc.property(
        fc.integer({ min: 0, max: MAX_TIME - 10_000 }),
        // Steps of 0 keep the same millisecond; runs of them exercise the increment.
        fc.array(fc.oneof(fc.constant(0), fc.constant(0), fc.integer({ min: 1, max: 50 })), { minLength: 1, maxLength: 200 }),
        (start, steps) => {
          let time = start;
          const ids = steps.map((step) => ulid((time += step)));
          expect(isSorted(ids)).toBe(true);
        },
      ),
    );
  });

  it('keeps order across a thousand ids in the same millisecond', () => {
    const now = Date.now();
    const ids = Array.from({ length: 1000 }, () => ulid(now));
    expect(new Set(ids).size).toBe(1000);
    expect(isSorted(ids)).toBe(true);
  });

  it('sorts an id for an earlier time before one for a later time, whatever order they were made in', () => {
    fc.assert(
      fc.property(fc.integer({ min: 0, max: MAX_TIME }), fc.integer({ min: 0, max: MAX_TIME }), (a, b) => {
        fc.pre(a !== b);
        const later = ulid(Math.max(a, b));
        const earlier = ulid(Math.min(a, b));
        expect(earlier < later).toBe(true);
      }),
    );
  });

  it('sorts newId values made in sequence in generation order', () => {
    const ids = Array.from({ length: 5000 }, () => newId('evt'));
    expect(isSorted(ids)).toBe(true);
  });
});
