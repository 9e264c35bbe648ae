// POST /memory/context through the API: the subject found from the conversation (explicit, a speaker
// naming themself, a named speaker, userId) or none, the project's search within it, the packing
// within the token budget, and the refusals: validation, permission, isolation.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { countTokens } from 'gpt-tokenizer/encoding/o200k_base';
import { createHarness, type Harness } from '../helpers/harness.js';

describe('POST /memory/context', () => {
  let h: Harness;
  let p: { projectId: string; apiKey: string };
  const context = (body: Record<string, unknown>, projectId = p.projectId, apiKey?: string) => h.call('POST', projectId, '/memory/context', { body, apiKey });
  const ok = async (body: Record<string, unknown>, projectId = p.projectId) => {
    const res = await context(body, projectId);
    expect(res.statusCode, res.body).toBe(200);
    return res.json();
  };
  const saved: Record<string, string> = {};
  const save = async (name: string, body: Record<string, unknown>) => {
    const res = await h.call('POST', p.projectId, '/admin/memory', { body: { type: 'fact', ...body } });
    expect(res.statusCode, res.body).toBe(201);
    saved[name] = res.json().id;
  };

  beforeAll(async () => {
    h = await createHarness();
    p = await h.project();
    // What the wrappers' capture writes: observe with the end user's id.
    const observed = await h.call('POST', p.projectId, '/memory/observe', { body: { text: 'I am allergic to peanuts and I live in Lisbon.', userId: 'alice' } });
    expect(observed.statusCode, observed.body).toBe(200);
    expect(observed.json().saved.length).toBeGreaterThan(0);
    await save('aliceHealth', { content: 'Alice takes insulin before dinner.', category: 'health', subject: { kind: 'user', externalId: 'alice' } });
    await save('priya', { content: 'Priya prefers window seats on long flights.', subject: { kind: 'user', externalId: 'priya' } });
    await save('policy', { content: 'The refund window for every order is 30 days.' });
    await save('customer', { content: 'Acme is on the Enterprise plan with 40 seats.', subject: { kind: 'customer', externalId: 'acme' } });
  });
  afterAll(() => h?.close());

  it('finds a named speaker\'s memories and packs them, best first, with the ids and an exact token count', async () => {
    const body = await ok({
      turns: [
        { role: 'system', content: 'You are a travel and food assistant.' },
        { role: 'alice', content: 'Do I have any food allergies you should know about?' },
      ],
    });
    expect(body.subject).toEqual({ kind: 'user', externalId: 'alice', origin: 'speaker', confidence: 0.6 });
    expect(body.context).toContain('peanuts');
    expect(body.context.split('\n')[0]).toContain('user alice');
    expect(body.query).toBe('Do I have any food allergies you should know about?');
    expect(body.memoryIds.length).toBeGreaterThan(0);
    // The memories are the subject's only, in the context's order, and the count is exact.
    const lines = body.context.split('\n').slice(1);
    expect(lines).toHaveLength(body.memoryIds.length);
    expect(body.context).not.toContain('window seats');
    expect(body.context).not.toContain('refund');
    expect(body.tokensEstimate).toBe(countTokens(body.context));
    expect(body).toMatchObject({ tokenBudget: 1200, droppedForBudget: 0, reason: null });
  });

  it('takes the subject from a speaker naming themself, from userId, or as given, in that order of trust', async () => {
    const self = await ok({ turns: [{ role: 'user', content: "Hi, I'm Priya. Which seat should you book for me?" }] });
    expect(self.subject).toMatchObject({ kind: 'user', externalId: 'priya', origin: 'speaker-first-person', confidence: 0.8 });
    expect(self.context).toContain('window seats');

    const byUser = await ok({ turns: [{ role: 'user', content: 'Where do I live these days?' }], userId: 'alice' });
    expect(byUser.subject).toMatchObject({ externalId: 'alice', origin: 'user' });
    expect(byUser.context).toContain('Lisbon');

    const explicit = await ok({ conversation: 'Priya: how many seats does the account have?', subject: { kind: 'customer', externalId: 'acme' } });
    expect(explicit.subject).toEqual({ kind: 'customer', externalId: 'acme', origin: 'explicit', confidence: 1 });
    expect(explicit.context).toContain('40 seats');
  });

  it('reads a conversation string of "Name: text" lines, its last line of a person being the query', async () => {
    const body = await ok({ conversation: 'Alice: I need a place to eat tonight.\nAssistant: Any constraints?\nAlice: Yes, what am I allergic to again?', intent: 'restaurant booking' });
    expect(body.subject).toMatchObject({ externalId: 'alice', origin: 'speaker' });
    expect(body.query).toBe('restaurant booking\nYes, what am I allergic to again?');
    expect(body.context).toContain('peanuts');
  });

  it('answers from the shared memories when the conversation names no one, and never from a guessed subject', async () => {
    const shared = await ok({ turns: [{ role: 'user', content: 'How long is the refund window?' }] });
    expect(shared.subject).toBeNull();
    expect(shared.context).toContain('30 days');
    expect(shared.context).not.toMatch(/peanuts|window seats|Enterprise/);

    // A named speaker the project knows nothing about: null, with the reason, not someone else's memories.
    const stranger = await ok({ turns: [{ role: 'bob', content: 'What am I allergic to?' }] });
    expect(stranger).toMatchObject({ context: null, subject: null, memoryIds: [], tokensEstimate: 0 });
    expect(stranger.reason).toContain('user:bob (speaker)');
  });

  it('keeps whole memories within the token budget and says how many did not fit', async () => {
    for (const [i, dish] of ['pasta', 'ramen', 'tacos', 'curry', 'paella', 'dumplings'].entries()) {
      await save(`dish${i}`, { content: `Carla cooked ${dish} for the family dinner on a weekday evening, and everyone asked for the recipe afterwards.`, subject: { kind: 'user', externalId: 'carla' } });
    }
    const whole = await ok({ turns: [{ role: 'carla', content: 'What did I cook for the family dinner?' }] });
    expect(whole.memoryIds).toHaveLength(6);
    const tight = await ok({ turns: [{ role: 'carla', content: 'What did I cook for the family dinner?' }], tokenBudget: 70 });
    expect(tight.tokensEstimate).toBeLessThanOrEqual(70);
    expect(tight.tokensEstimate).toBe(countTokens(tight.context));
    expect(tight.memoryIds.length).toBeGreaterThan(0);
    expect(tight.memoryIds).toEqual(whole.memoryIds.slice(0, tight.memoryIds.length));
    expect(tight.droppedForBudget).toBe(6 - tight.memoryIds.length);
    // limit bounds the search; the budget is clamped to its floor.
    expect((await ok({ turns: [{ role: 'carla', content: 'What did I cook?' }], limit: 2 })).memoryIds).toHaveLength(2);
    expect((await ok({ turns: [{ role: 'carla', content: 'What did I cook?' }], tokenBudget: 1 })).tokenBudget).toBe(50);
  });

  it('leaves out the categories it is asked to', async () => {
    const all = await ok({ turns: [{ role: 'alice', content: 'What do I take before dinner?' }] });
    expect(all.memoryIds).toContain(saved.aliceHealth);
    const without = await ok({ turns: [{ role: 'alice', content: 'What do I take before dinner?' }], excludeCategories: ['HEALTH'] });
    expect(without.memoryIds).not.toContain(saved.aliceHealth);
  });

  it('validates, needs READ_MEMORY, and never reads another project', async () => {
    for (const body of [{}, { turns: [] }, { turns: [{ role: 'user', content: '   ' }] }, { conversation: '' }, { turns: [{ content: 'x', extra: 1 }] }, { turns: 'hello' }, { tokenBudget: 'many', conversation: 'a' }]) {
      const res = await context(body);
      expect(res.statusCode, JSON.stringify(body)).toBe(400);
      expect(res.json().code).toBe('VALIDATION_ERROR');
    }
    const brain = await context({ conversation: 'Alice: hi', brainId: 'brn_1' });
    expect(brain.statusCode).toBe(404);
    const writer = await h.key(p.projectId, ['WRITE_MEMORY']);
    expect((await context({ conversation: 'Alice: hi' }, p.projectId, writer)).statusCode).toBe(403);
    // Project B: the same speaker, nothing of project A.
    const b = await h.project();
    const other = await ok({ turns: [{ role: 'alice', content: 'What am I allergic to?' }], userId: 'alice' }, b.projectId);
    expect(other).toMatchObject({ context: null, subject: null, memoryIds: [] });
    expect((await context({ conversation: 'Alice: hi' }, b.projectId, p.apiKey)).statusCode).toBe(404);
  });
});
