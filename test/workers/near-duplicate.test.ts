// The near-duplicate similarity's parts, pure: normalised words, their overlap, swapped roles.
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import {
  comparableWords,
  cosineFloor,
  lexicalSimilarity,
  nearDuplicateSimilarity,
  orderBreakpoints,
  wordOverlap,
} from '../../workers/near-duplicate.js';

const lexical = (a: string, b: string) => lexicalSimilarity(comparableWords(a), comparableWords(b));

describe('comparableWords', () => {
  it('drops case, punctuation, articles and function words, expands contractions, stems, and keeps negators and numbers', () => {
    expect(comparableWords("The customer doesn't eat peanuts, and can't drive!").words).toEqual(['custom', 'not', 'eat', 'peanut', 'not', 'drive']);
    expect(comparableWords('Order #4412 ships on 12 April').words).toEqual(['order', '4412', 'ship', '12', 'april']);
    expect(comparableWords('Was referred by Lena').words).toEqual(['refer', 'by', 'lena']);
  });

  it('keeps relational words in the order, not in the words', () => {
    const t = comparableWords('Prefers tea over coffee');
    expect(t.words).toEqual(['prefer', 'tea', 'coffe']);
    expect(t.sequence.map((s) => s.word)).toEqual(['prefer', 'tea', 'over', 'coffe']);
  });
});

describe('wordOverlap', () => {
  it('is the weighted Jaccard overlap (worked examples)', () => {
    expect(wordOverlap(['live', 'porto'], ['live', 'porto'])).toBe(1);
    expect(wordOverlap(['live', 'porto'], ['live', 'lisbon'])).toBeCloseTo(1 / 3, 12);
    expect(wordOverlap(['a', 'a', 'b'], ['a', 'b'])).toBeCloseTo(2 / 3, 12);
    expect(wordOverlap([], [])).toBe(1);
    expect(wordOverlap(['x'], [])).toBe(0);
  });

  it('is symmetric and in [0, 1]', () => {
    const words = fc.array(fc.constantFrom('a', 'b', 'c', 'd', 'e'), { maxLength: 8 });
    fc.assert(
      fc.property(words, words, (a, b) => {
        const ab = wordOverlap(a, b);
        expect(ab).toBeCloseTo(wordOverlap(b, a), 12);
        expect(ab >= 0 && ab <= 1).toBe(true);
      }),
    );
  });
});

describe('orderBreakpoints', () => {
  const breaks = (a: string, b: string) => orderBreakpoints(comparableWords(a), comparableWords(b));

  it('counts nothing for the same order, at most three for one moved phrase, four for swapped roles', () => {
    expect(breaks('Lives in Porto and works remotely', 'The customer lives in Porto, works remotely')).toBe(0);
    expect(breaks('On Fridays she goes swimming', 'She goes swimming on Fridays')).toBe(3);
    expect(breaks('Works remotely and lives in Porto', 'Lives in Porto and works remotely')).toBeLessThanOrEqual(3);
    expect(breaks('Prefers tea over coffee', 'Prefers coffee over tea')).toBe(4);
    expect(breaks('Sam owes Priya 200 euros', 'Priya owes Sam 200 euros')).toBe(4);
    // A repeated word ("Dr." twice) does not hide the swap.
    expect(breaks('Dr. Reyes referred the patient to Dr. Lind', 'Dr. Lind referred the patient to Dr. Reyes')).toBeGreaterThan(3);
  });
});

describe('lexicalSimilarity and the near-duplicate similarity', () => {
  it('is 1 for variants a person calls the same, and far below for one different fact', () => {
    expect(lexical('Customer lives in Porto and works remotely', 'The customer lives in Porto and works remotely.')).toBe(1);
    expect(lexical("Doesn't eat meat", 'Does not eat meat')).toBe(1);
    expect(lexical('Allergic to peanuts', 'Allergic to peanut')).toBe(1);
    expect(lexical('Lives in Porto', 'Lives in Lisbon')).toBeCloseTo((1 / 3) ** 3, 12);
    expect(lexical('Has paid off the car loan', 'Has not paid off the car loan')).toBeCloseTo(0.8 ** 3, 12);
    expect(lexical('Prefers tea over coffee', 'Prefers coffee over tea')).toBe(0.5);
  });

  it('weights the words 0.75 and the cosine 0.25, so at 0.92 the same words need a cosine of 0.68', () => {
    expect(nearDuplicateSimilarity(0.68, 1)).toBeCloseTo(0.92, 12);
    expect(cosineFloor(0.92)).toBeCloseTo(0.68, 12);
    expect(nearDuplicateSimilarity(1, 0.5)).toBeCloseTo(0.625, 12);
  });

  it('is 1 for a text with itself, symmetric, and in [0, 1]', () => {
    const sentence = fc
      .array(fc.constantFrom('the', 'customer', 'lives', 'in', 'Porto', 'Lisbon', 'not', 'over', 'tea', 'coffee', 'and', '2', '3', "doesn't"), {
        minLength: 1,
        maxLength: 10,
      })
      .map((w) => w.join(' '));
    fc.assert(
      fc.property(sentence, sentence, (a, b) => {
        expect(lexical(a, a)).toBe(1);
        const ab = lexical(a, b);
        expect(ab >= 0 && ab <= 1).toBe(true);
        expect(ab).toBeCloseTo(lexical(b, a), 12);
      }),
    );
  });
});
