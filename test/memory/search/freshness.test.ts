// Newer first (freshness.ts): of two live memories of one subject holding one fact with different
// values, the newer ranks above the older; worked examples and properties.
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { newerFirst, type Scored } from '../../../src/memory/search/freshness.js';
import type { Memory } from '../../../src/memory/schemas.js';

let next = 0;
function memory(content: string, day: number, extra: Partial<Memory> = {}): Memory {
  return {
    id: `m${String(next++).padStart(4, '0')}`,
    content,
    type: 'fact',
    scope: 'project',
    status: 'confirmed',
    importance: 5,
    subject: { kind: 'contact', externalId: 'jane' },
    validFrom: new Date(Date.UTC(2026, 0, 1 + day)).toISOString(),
    validTo: null,
    supersededById: null,
    metadata: null,
    ...extra,
  } as Memory;
}
const hit = (m: Memory, score: number): Scored => ({ memory: m, score });
/** newerFirst, with its scores written back onto the hits. */
function apply(hits: Scored[], window: number) {
  const demoted = newerFirst(hits, window);
  for (const h of hits) h.score = demoted.get(h.memory.id)?.score ?? h.score;
  return demoted;
}
const order = (hits: Scored[]) => [...hits].sort((a, b) => b.score - a.score).map((h) => h.memory.content);

describe('newer first', () => {
  it('puts an older value of the same slot under the newer one, and says by how much', () => {
    const old = hit(memory('Jane at Acme is on the Enterprise plan.', 1, { metadata: { slot: 'plan' } }), 0.8);
    const now = hit(memory('Acme downgraded to Pro.', 30, { metadata: { slot: 'plan' } }), 0.5);
    const other = hit(memory('Jane reported the CSV export is slow.', 10), 0.6);
    const demoted = apply([old, now, other], 10);
    expect(order([old, now, other])).toEqual(['Jane reported the CSV export is slow.', 'Acme downgraded to Pro.', 'Jane at Acme is on the Enterprise plan.']);
    expect(demoted.get(old.memory.id)).toEqual({ newerId: now.memory.id, score: expect.closeTo(0.4999, 6) });
    expect(demoted.size).toBe(1);
  });

  it('reads two short unslotted memories sharing half their words as one fact restated', () => {
    const old = hit(memory('Customer plan: Enterprise.', 1), 0.9);
    const now = hit(memory('Customer plan: Pro.', 5), 0.7);
    apply([old, now], 10);
    expect(order([old, now])).toEqual(['Customer plan: Pro.', 'Customer plan: Enterprise.']);
  });

  it('leaves alone different facts, the same words twice, other subjects, other slots and superseded memories', () => {
    const cases: [Scored, Scored][] = [
      [hit(memory('I have a dog named Rex.', 1), 0.9), hit(memory('I started a pottery class.', 5), 0.7)],
      [hit(memory('Customer plan: Enterprise.', 1), 0.9), hit(memory('Customer plan: Enterprise!', 5), 0.7)],
      [hit(memory('Customer plan: Enterprise.', 1), 0.9), hit(memory('Customer plan: Pro.', 5, { subject: { kind: 'contact', externalId: 'bob' } }), 0.7)],
      [hit(memory('Lives in Denver.', 1, { metadata: { slot: 'residence' } }), 0.9), hit(memory('Works at Denver Health.', 5, { metadata: { slot: 'employer' } }), 0.7)],
      [hit(memory('Customer plan: Enterprise.', 1), 0.9), hit(memory('Customer plan: Pro.', 5, { status: 'superseded' }), 0.7)],
      [hit(memory('Customer plan: Enterprise.', 1, { subject: null }), 0.9), hit(memory('Customer plan: Pro.', 5, { subject: null }), 0.7)],
      [hit(memory('Hiked the Alps with Tom.', 1, { type: 'event' }), 0.9), hit(memory('Hiked the Pyrenees with Tom.', 5, { type: 'event' }), 0.7)],
    ];
    for (const [a, b] of cases) {
      expect(apply([a, b], 10).size, a.memory.content).toBe(0);
      expect([a.score, b.score]).toEqual([0.9, 0.7]);
    }
  });

  it('reads two short memories close in meaning as one fact: at cosine 0.45, or 0.3 when the newer says it changed', () => {
    const pair = (oldText: string, newText: string, cosine: number, newScore = 0.5) => {
      const old = hit(memory(oldText, 1), 0.8);
      const now = hit(memory(newText, 30), newScore);
      old.near = new Map([[now.memory.id, cosine]]);
      return apply([old, now], 10).has(old.memory.id);
    };
    expect(pair("I'm on the basic plan.", 'We use the Team tier.', 0.5)).toBe(true);
    expect(pair("I'm on the basic plan.", 'Just switched us over to the Team tier.', 0.34)).toBe(true);
    expect(pair("I'm on the basic plan.", 'We use the Team tier.', 0.34)).toBe(false);
    // The newer must answer nearly as well (at least 0.4 of the older's score) ...
    expect(pair("I'm on the basic plan.", 'We use the Team tier.', 0.5, 0.3)).toBe(false);
    // ... and neither may hold a question or run long.
    expect(pair("I'm on the basic plan.", 'Should we switch to the Team tier?', 0.6)).toBe(false);
    expect(pair("I'm on the basic plan.", `We use the Team tier ${'and we like it a lot '.repeat(10)}.`, 0.6)).toBe(false);
  });

  it('orders a chain of three values newest first, whatever order they are found in', () => {
    const v1 = hit(memory('Seats: 50.', 1, { metadata: { slot: 'count_seat' } }), 0.9);
    const v2 = hit(memory('Seats: 80.', 5, { metadata: { slot: 'count_seat' } }), 0.95);
    const v3 = hit(memory('Seats: 20.', 9, { metadata: { slot: 'count_seat' } }), 0.4);
    apply([v1, v2, v3], 10);
    expect(order([v1, v2, v3])).toEqual(['Seats: 20.', 'Seats: 80.', 'Seats: 50.']);
  });

  it('moves an older memory down the page, never off it: the newer must be on the page (at least 5 long)', () => {
    const top = hit(memory('Customer plan: Enterprise.', 1), 0.9);
    const newer = hit(memory('Customer plan: Pro.', 5), 0.2);
    const middle = Array.from({ length: 3 }, (_, i) => hit(memory(`Unrelated note number ${i}.`, 3), 0.5 - i * 0.01));
    apply([top, newer, ...middle], 1);
    // The newer is fifth, within the least page of 5: the older goes under it.
    expect(top.score).toBeLessThan(newer.score);
    const far = hit(memory('Customer plan: Basic.', 1), 0.9);
    const farNewer = hit(memory('Customer plan: Team.', 9), 0.2);
    const between = Array.from({ length: 6 }, (_, i) => hit(memory(`Another note ${i}.`, 3), 0.5 - i * 0.01));
    expect(apply([far, farNewer, ...between], 5).size).toBe(0);
    expect(apply([far, farNewer, ...between], 10).get(far.memory.id)?.newerId).toBe(farNewer.memory.id);
    // Outside the window nothing is looked at.
    const outside = hit(memory('Customer plan: Starter.', 1), 0.1);
    const newest = hit(memory('Customer plan: Scale.', 9), 0.05);
    const fillers = Array.from({ length: 6 }, (_, i) => hit(memory(`Top note ${i}.`, 2), 0.9 - i * 0.01));
    expect(apply([...fillers, outside, newest], 1).size).toBe(0);
  });

  it('never raises a score, changes nothing it is given, and after it no live memory ranks above a newer one holding the same slot', () => {
    const arb = fc.array(fc.record({ day: fc.integer({ min: 0, max: 20 }), slot: fc.constantFrom('plan', 'residence', undefined), score: fc.double({ min: 0, max: 1, noNaN: true }) }), { minLength: 1, maxLength: 12 });
    fc.assert(
      fc.property(arb, (rows) => {
        const hits = rows.map((r) => hit(memory(`Note ${r.slot ?? 'none'} ${r.day}`, r.day, { metadata: r.slot ? { slot: r.slot } : null }), r.score));
        const before = hits.map((h) => h.score);
        const demoted = newerFirst(hits, hits.length);
        expect(hits.map((h) => h.score)).toEqual(before);
        for (const h of hits) h.score = demoted.get(h.memory.id)?.score ?? h.score;
        hits.forEach((h, i) => expect(h.score).toBeLessThanOrEqual(before[i]!));
        for (const a of hits) {
          for (const b of hits) {
            const slot = a.memory.metadata?.slot;
            if (slot && slot === b.memory.metadata?.slot && Date.parse(b.memory.validFrom) > Date.parse(a.memory.validFrom)) expect(a.score).toBeLessThan(b.score);
          }
        }
      }),
    );
  });
});
