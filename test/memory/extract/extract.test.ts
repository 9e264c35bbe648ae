import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { contentHash, extractCandidates, type Candidate, type ExtractOptions } from '../../../src/memory/extract/extract.js';
import { OBSERVE_CORPUS, OBSERVE_NOW, type ExpectedSave, type ObserveTurn } from '../observe/observe-corpus.js';

const MEMORY_TYPES = ['fact', 'preference', 'event', 'insight', 'observation', 'rule', 'correction', 'summary', 'procedure', 'behavior_pattern', 'consent'];

function observe(text: string, role: ExtractOptions['role'] = 'user') {
  return extractCandidates(text, { role, now: OBSERVE_NOW });
}

/** Differences between what a turn saved and what it should save; empty when they agree. */
function mismatches(turn: ObserveTurn, saved: Candidate[]): string[] {
  const problems: string[] = [];
  if (saved.length !== turn.saves.length) {
    problems.push(`saved ${saved.length}, expected ${turn.saves.length}: ${JSON.stringify(saved.map((c) => c.content))}`);
  }
  turn.saves.forEach((want: ExpectedSave, i) => {
    const got = saved[i];
    if (!got) return;
    const tag = `#${i} ${JSON.stringify(got.content)}`;
    if (!got.content.toLowerCase().includes(want.contains.toLowerCase())) problems.push(`${tag} lacks "${want.contains}"`);
    if (got.type !== want.type) problems.push(`${tag} type ${got.type}, expected ${want.type}`);
    if (want.slot !== undefined && (got.slot ?? null) !== want.slot) problems.push(`${tag} slot ${got.slot}, expected ${want.slot}`);
    if (got.correction !== (want.correction ?? false)) problems.push(`${tag} correction ${got.correction}`);
    if (want.occurredOn !== undefined && got.occurredAt?.slice(0, 10) !== want.occurredOn) problems.push(`${tag} occurredAt ${got.occurredAt}, expected ${want.occurredOn}`);
    for (const e of want.entities ?? []) if (!got.entities.includes(e)) problems.push(`${tag} entities ${JSON.stringify(got.entities)} lack ${e}`);
    if (want.minImportance !== undefined && got.importance < want.minImportance) problems.push(`${tag} importance ${got.importance} < ${want.minImportance}`);
  });
  return problems;
}

describe('heuristic observe extraction on the corpus', () => {
  it('holds at least 60 turns covering every kind of statement', () => {
    expect(OBSERVE_CORPUS.length).toBeGreaterThanOrEqual(60);
    expect(new Set(OBSERVE_CORPUS.map((t) => t.id)).size).toBe(OBSERVE_CORPUS.length);
    const kinds = new Set(OBSERVE_CORPUS.map((t) => t.kind));
    for (const k of ['filler', 'fact', 'preference', 'health', 'correction', 'consent', 'rule', 'event', 'multi', 'assistant', 'system']) {
      expect(kinds, k).toContain(k);
    }
  });

  it.each(OBSERVE_CORPUS.map((t) => [t.id, t] as const))('%s saves what it should', (_id, turn) => {
    const { candidates } = observe(turn.text, turn.role);
    expect(mismatches(turn, candidates)).toEqual([]);
  });

  it('saves no filler at all and finds every expected statement (precision and recall 1 on the corpus)', () => {
    let expected = 0;
    let saved = 0;
    let matched = 0;
    let fillerSaved = 0;
    for (const turn of OBSERVE_CORPUS) {
      const { candidates } = observe(turn.text, turn.role);
      expected += turn.saves.length;
      saved += candidates.length;
      if (turn.saves.length === 0) fillerSaved += candidates.length;
      matched += turn.saves.filter((want) => candidates.some((c) => c.type === want.type && c.content.toLowerCase().includes(want.contains.toLowerCase()))).length;
    }
    expect(fillerSaved).toBe(0);
    expect(matched).toBe(expected);
    expect(saved).toBe(expected);
  });

  it('counts statements after splitting and before filtering', () => {
    expect(observe('ok thanks').candidateCount).toBe(1);
    expect(observe('').candidateCount).toBe(0);
    expect(observe('Hi! I live in Oslo. lol').candidateCount).toBe(3);
    expect(observe('A few things about me:\n- I am a night owl\n- I hate cilantro').candidateCount).toBe(3);
    expect(observe('I live in Lisbon. I live in Lisbon!')).toMatchObject({ candidateCount: 2, candidates: [{ slot: 'residence' }] });
  });
});

describe('worked examples', () => {
  it('reads "actually I moved to Berlin" as a correction of the residence', () => {
    const [c, ...rest] = observe('actually I moved to Berlin').candidates;
    expect(rest).toEqual([]);
    expect(c).toMatchObject({ type: 'correction', slot: 'residence', correction: true, content: 'Actually I moved to Berlin.' });
    expect(c?.entities).toContain('Berlin');
  });

  it('reads "I live in Paris" as the residence, not a correction', () => {
    expect(observe('I live in Paris').candidates).toEqual([
      expect.objectContaining({ type: 'fact', slot: 'residence', correction: false, content: 'I live in Paris.', entities: ['Paris'] }),
    ]);
  });

  it('keys "I prefer oat milk in my coffee" as preferred_milk', () => {
    expect(observe('I prefer oat milk in my coffee').candidates).toEqual([
      expect.objectContaining({ type: 'preference', slot: 'preferred_milk', content: 'I prefer oat milk in my coffee.' }),
    ]);
  });

  it('saves nothing for "ok thanks"', () => {
    expect(observe('ok thanks').candidates).toEqual([]);
  });

  it('dates "My daughter Emma starts school on September 3rd" relative to now', () => {
    const [c] = observe('My daughter Emma starts school on September 3rd').candidates;
    expect(c?.type).toBe('event');
    expect(c?.occurredAt).toBe('2025-09-03T00:00:00.000Z');
    expect(c?.entities).toContain('Emma');
    const aYearLater = extractCandidates('My daughter Emma starts school on September 3rd', { role: 'user', now: new Date('2026-06-15T12:00:00Z') });
    expect(aYearLater.candidates[0]?.occurredAt).toBe('2026-09-03T00:00:00.000Z');
  });

  it('keeps the speaker\'s words, cleaned: whitespace, capital letter, closing punctuation, no emoji', () => {
    expect(observe('  ok so   i  prefer   window seats 😊  ').candidates.map((c) => c.content)).toEqual(['I prefer window seats.']);
  });

  it('gives the same slot to a later statement about the same thing, so it can supersede', () => {
    const first = observe('I prefer oat milk in my coffee').candidates[0];
    const later = observe('Actually, I prefer almond milk now.').candidates[0];
    expect(later).toMatchObject({ slot: first?.slot, correction: true });
    expect(observe("Don't email me").candidates[0]?.slot).toBe(observe('You can email me').candidates[0]?.slot);
  });

  it('ranks health, consent and rules above small talk about third parties', () => {
    const [allergy] = observe("I'm allergic to peanuts.").candidates;
    const [consent] = observe("Please don't call me.").candidates;
    const [rule] = observe('Always book me an aisle seat.').candidates;
    const [observation] = observe('Emma loves dinosaurs.').candidates;
    expect(observation).toBeDefined();
    for (const high of [allergy, consent, rule]) expect(high!.importance).toBeGreaterThan(observation!.importance);
  });

  it('reads dates the same whatever the process time zone', () => {
    const dated = OBSERVE_CORPUS.filter((t) => t.saves.some((w) => w.occurredOn !== undefined));
    const run = () => dated.map((t) => observe(t.text, t.role).candidates.map((c) => c.occurredAt));
    const before = process.env.TZ;
    const inUtc = run();
    try {
      for (const tz of ['Pacific/Kiritimati', 'America/Los_Angeles']) {
        process.env.TZ = tz;
        expect(run()).toEqual(inUtc);
      }
    } finally {
      if (before === undefined) delete process.env.TZ;
      else process.env.TZ = before;
    }
  });

  it('rejects an invalid now', () => {
    expect(() => extractCandidates('I live in Paris', { role: 'user', now: new Date('nope') })).toThrow(RangeError);
  });
});

describe('contentHash', () => {
  it('collides for trivially different spellings of the same statement', () => {
    expect(contentHash('I live in Paris.')).toBe(contentHash('  i LIVE   in paris!! '));
    expect(contentHash('I live in Paris')).not.toBe(contentHash('I live in Berlin'));
    expect(contentHash('x')).toMatch(/^[0-9a-f]{64}$/);
  });
});

const FILLER = [
  'ok thanks', 'lol', 'hi', 'hello there', 'sounds good', 'got it', 'thank you so much!', '😀', '👍🏽', '🎉🎉', 'haha',
  'yes', 'no', 'sure', 'bye', 'can you help me?', 'ok', 'okay', 'thanks!', 'cool', 'great', 'hey', 'yep', 'nope',
  'good morning', 'how are you?', 'lmao', 'hehe', 'thx', 'perfect', 'alright', ':)', 'see you later', 'no worries',
  'that makes sense', 'awesome, thanks', 'hmm', 'you rock',
];
const SEPARATORS = [' ', '\n', '. ', '! ', ', ', ' - ', '\n- ', '? ', '  ', '\n\n', ' ... '];

const sentence = fc.constantFrom(
  'I live in Paris', 'My name is Anna', 'I prefer oat milk in my coffee', "I'm allergic to peanuts",
  'We are flying to Rome next Friday', 'Actually I moved to Berlin', "Don't email me", 'Always reply in French',
  'My daughter Emma starts school on September 3rd', 'I usually go running before work',
);
const anyText = fc.oneof(
  fc.string({ maxLength: 80 }),
  fc.array(fc.oneof(sentence, fc.constantFrom(...FILLER)), { maxLength: 6 }).chain((parts) =>
    fc.array(fc.constantFrom(...SEPARATORS), { minLength: parts.length, maxLength: parts.length }).map((seps) => parts.map((p, i) => p + seps[i]).join(''))),
);
const role = fc.constantFrom<ExtractOptions['role']>('user', 'assistant', 'system');
const now = fc.date({ min: new Date('2000-01-01T00:00:00Z'), max: new Date('2040-12-31T00:00:00Z'), noInvalidDate: true });

describe('properties of extraction', () => {
  it('is deterministic: the same text, role and now give the same answer', () => {
    fc.assert(fc.property(anyText, role, now, (text, r, n) => {
      expect(extractCandidates(text, { role: r, now: n })).toEqual(extractCandidates(text, { role: r, now: new Date(n.getTime()) }));
    }), { numRuns: 150 });
  });

  it('never returns empty content, keeps importance an integer in 0..10 and confidence in 0..1', () => {
    fc.assert(fc.property(anyText, role, now, (text, r, n) => {
      const { candidates, candidateCount } = extractCandidates(text, { role: r, now: n });
      expect(candidates.length).toBeLessThanOrEqual(candidateCount);
      for (const c of candidates) {
        expect(c.content.trim().length).toBeGreaterThan(0);
        expect(c.content).toMatch(/[.!?…]["')\]]?$/);
        expect(Number.isInteger(c.importance)).toBe(true);
        expect(c.importance).toBeGreaterThanOrEqual(0);
        expect(c.importance).toBeLessThanOrEqual(10);
        expect(c.confidence).toBeGreaterThanOrEqual(0);
        expect(c.confidence).toBeLessThanOrEqual(1);
        expect(MEMORY_TYPES).toContain(c.type);
        if (c.occurredAt !== undefined) expect(new Date(c.occurredAt).toISOString()).toBe(c.occurredAt);
      }
      expect(new Set(candidates.map((c) => contentHash(c.content))).size).toBe(candidates.length);
    }), { numRuns: 150 });
  });

  it('hashes content regardless of case, whitespace and trailing punctuation', () => {
    const word = fc.stringMatching(/^[A-Za-z0-9']{1,8}$/);
    fc.assert(fc.property(
      fc.array(word, { minLength: 1, maxLength: 6 }),
      fc.array(fc.constantFrom(' ', '  ', '\t', '\n'), { minLength: 6, maxLength: 6 }),
      fc.constantFrom('', '.', '!', '?', '...', '!!', ' .', '?!'),
      fc.boolean(),
      (words, gaps, tail, upper) => {
        const plain = words.join(' ');
        const spelled = `${gaps[0]}${words.map((w, i) => (i > 0 ? gaps[i % gaps.length] : '') + w).join('')}${tail}${gaps[1]}`;
        expect(contentHash(upper ? spelled.toUpperCase() : spelled.toLowerCase())).toBe(contentHash(plain));
      },
    ), { numRuns: 200 });
  });

  it('saves nothing for filler, however it is joined', () => {
    fc.assert(fc.property(
      fc.array(fc.constantFrom(...FILLER), { minLength: 1, maxLength: 6 }),
      fc.array(fc.constantFrom(...SEPARATORS), { minLength: 6, maxLength: 6 }),
      role,
      (parts, seps, r) => {
        const text = parts.map((p, i) => (i > 0 ? seps[i] : '') + p).join('');
        expect(extractCandidates(text, { role: r, now: OBSERVE_NOW }).candidates).toEqual([]);
      },
    ), { numRuns: 300 });
  });
});
