// Facts that change: a statement about the subject in the third person ("Jane at Acme is on the
// Enterprise plan", "The customer moved to Denver") takes the slot the same fact in the first person
// would, so a later value supersedes it; and the slots of values that change in business notes:
// plan, account status, counts, role.
import { describe, expect, it } from 'vitest';
import { extractCandidates } from '../../../src/memory/extract/extract.js';
import { firstPersonReading } from '../../../src/memory/extract/third-person.js';

const now = new Date('2026-11-01T12:00:00Z');
const slotOf = (text: string, thirdParty = false) => {
  const { candidates } = extractCandidates(text, { role: 'user', now, thirdParty });
  expect(candidates, text).toHaveLength(1);
  return candidates[0]!.slot;
};

describe('third-person statements about the subject', () => {
  it.each([
    ['Jane at Acme is on the Enterprise plan.', 'plan'],
    ['Acme downgraded to the Pro plan this month.', 'plan'],
    ['Jane moved to Denver last year.', 'residence'],
    ['She is no longer vegetarian.', 'diet'],
    ["Jane's address is 12 Elm St, Springfield.", 'address'],
    ['Acme increased to 80 seats.', 'count_seat'],
    ['Jane was promoted to VP of Sales.', 'job_title'],
    ["Jane's account status is past due.", 'account_status'],
    ['They now work at Globex.', 'employer'],
  ])('reads "%s" about a third-party subject as slot %s', (text, slot) => {
    expect(slotOf(text, true)).toBe(slot);
  });

  it.each([
    ['The customer is on the Enterprise plan.', 'plan'],
    ['The customer downgraded to Pro.', 'plan'],
    ['The customer moved to Denver.', 'residence'],
    ['The client now works at Globex.', 'employer'],
    ['The account is now suspended.', 'account_status'],
  ])('reads "%s", naming the subject by its role, as slot %s whoever the subject is', (text, slot) => {
    expect(slotOf(text, false)).toBe(slot);
    expect(slotOf(text, true)).toBe(slot);
  });

  it('does not read a name as the subject in a user\'s own conversation: Jane moving is not the user moving', () => {
    expect(slotOf('Jane moved to Denver last year.', false)).toBeUndefined();
    expect(slotOf('She is no longer vegetarian.', false)).toBeUndefined();
  });

  it('does not take the name the statement opens with for the place or employer the slot needs', () => {
    // "Jane" names the subject; without a place named, no residence.
    expect(slotOf('Jane moved to a bigger flat.', true)).toBeUndefined();
    expect(slotOf('Jane moved to Lisbon.', true)).toBe('residence');
  });

  it('reads the first person for the cues: verb agreement, adverbs, negation, a possessive', () => {
    const read = (view: string) => firstPersonReading(view, { thirdParty: true, entities: ['Jane'] })?.view;
    expect(read('jane lives in denver')).toBe('i live in denver');
    expect(read('jane now carries two phones')).toBe('i now carry two phones');
    expect(read("jane isn't vegetarian any more")).toBe("i'm not vegetarian any more");
    expect(read("jane's plan is pro")).toBe('my plan is pro');
    expect(read("jane's on the pro plan")).toBe("i'm on the pro plan");
    expect(read("jane's been living in lisbon")).toBe("i've been living in lisbon");
    expect(read('jane, our contact, called')).toBeUndefined();
    expect(firstPersonReading('jane lives in denver', { thirdParty: false, entities: ['Jane'] })).toBeUndefined();
  });
});

describe('slots of values that change', () => {
  it.each([
    ["I'm on the Team plan.", 'plan'],
    ['We upgraded from Basic to the Business plan.', 'plan'],
    ['We cancelled our subscription.', 'plan'],
    ['My subscription is Premium.', 'plan'],
    ['We have 50 seats.', 'count_seat'],
    ['We cut back to 20 licenses.', 'count_license'],
    ['I have two kids.', 'count_kid'],
    ['My account is now suspended.', 'account_status'],
  ])('keys "%s" as %s', (text, slot) => {
    expect(slotOf(text)).toBe(slot);
  });

  it.each(['I upgraded to the new iPhone.', 'I switched teams last month.', 'We have a lot of users.', "I'm active on weekends."])('keys no slot for "%s"', (text) => {
    const { candidates } = extractCandidates(text, { role: 'user', now });
    expect(candidates.every((c) => c.slot === undefined)).toBe(true);
  });
});
