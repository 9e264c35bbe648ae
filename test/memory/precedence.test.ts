// Precedence between memories that disagree: the policy's rules with worked examples (pure), and
// GET, PUT /admin/memory/precedence through the API with search honouring the policy.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Memory } from '../../src/memory/schemas.js';
import { DEFAULT_PRECEDENCE, disagreeOnASlot, policyProblems, precedenceFirst, tierOf, winner, type PrecedencePolicy } from '../../src/memory/search/precedence.js';
import { createHarness, type Harness } from '../helpers/harness.js';

const memory = (id: string, over: Partial<Memory> = {}): Memory =>
  ({
    id,
    content: `value of ${id}`,
    scope: 'user',
    status: 'confirmed',
    confirmedAt: null,
    category: null,
    subject: { kind: 'user', externalId: 'u1' },
    metadata: { slot: 'residence' },
    ...over,
  }) as Memory;

describe('the precedence rules', () => {
  const verified = memory('v', { confirmedAt: '2026-01-01T00:00:00.000Z' });
  const local = memory('l');
  const base = memory('b', { scope: 'platform' });
  const brain = memory('k', { metadata: { slot: 'residence', brainId: 'brn_1' } });

  it('reads a memory\'s tier from how it came to be', () => {
    expect([verified, local, base, brain].map(tierOf)).toEqual(['human_verified', 'local', 'base', 'licensed_brain']);
    expect(tierOf(memory('p', { status: 'pending', confirmedAt: null }))).toBe('local');
  });

  it('prefers an override for the category, then the nearer scope, then the default order', () => {
    const policy: PrecedencePolicy = { ...DEFAULT_PRECEDENCE, overrides: [{ category: 'Address', winningTier: 'local' }] };
    expect(winner(verified, local, DEFAULT_PRECEDENCE)).toBe(verified);
    expect(winner(memory('a', { category: 'address', confirmedAt: 'x' }), memory('c', { category: 'address' }), policy)?.id).toBe('c');
    // Nearer scope wins before the order; without scopeNearestWins the order decides.
    const session = memory('s', { scope: 'session' });
    expect(winner(verified, session, DEFAULT_PRECEDENCE)).toBe(session);
    expect(winner(verified, session, { ...DEFAULT_PRECEDENCE, scopeNearestWins: false })).toBe(verified);
    expect(winner(brain, local, { ...DEFAULT_PRECEDENCE, defaultOrder: ['licensed_brain', 'local', 'human_verified', 'base'] })).toBe(brain);
    // One tier and one scope: no say (newer first decides).
    expect(winner(local, memory('l2'), DEFAULT_PRECEDENCE)).toBeUndefined();
  });

  it('puts each loser just under its winner, a chain included, and leaves the rest alone', () => {
    const hits = [
      { memory: local, score: 0.9 },
      { memory: memory('l0', { content: 'value of l' }), score: 0.95 }, // the same content: no disagreement
      { memory: verified, score: 0.5 },
      { memory: memory('other', { metadata: { slot: 'employer' } }), score: 0.8 },
      { memory: memory('x', { subject: { kind: 'user', externalId: 'u2' } }), score: 0.99 },
    ];
    const moved = precedenceFirst(hits, DEFAULT_PRECEDENCE, 0.01);
    expect([...moved.keys()].sort()).toEqual(['l', 'l0']);
    expect(moved.get('l')).toEqual({ winnerId: 'v', score: 0.49 });
    const base2 = memory('b2', { scope: 'platform' });
    const chain = precedenceFirst([{ memory: base2, score: 0.9 }, { memory: local, score: 0.8 }, { memory: verified, score: 0.7 }], { ...DEFAULT_PRECEDENCE, scopeNearestWins: false }, 0.01);
    expect(chain.get('l')!.score).toBeCloseTo(0.69, 10);
    expect(chain.get('b2')!.score).toBeLessThan(chain.get('l')!.score);
  });

  it('reads a policy only when two live memories of one subject fill one slot', () => {
    expect(disagreeOnASlot([{ memory: local }, { memory: verified }])).toBe(true);
    expect(disagreeOnASlot([{ memory: local }, { memory: memory('e', { metadata: { slot: 'employer' } }) }])).toBe(false);
    expect(disagreeOnASlot([{ memory: local }, { memory: memory('o', { subject: { kind: 'user', externalId: 'u2' } }) }])).toBe(false);
    expect(disagreeOnASlot([{ memory: local }, { memory: memory('s', { status: 'superseded' }) }])).toBe(false);
  });

  it('refuses a policy that names a tier twice or misses one, or overrides a category twice', () => {
    expect(policyProblems(DEFAULT_PRECEDENCE)).toEqual([]);
    expect(policyProblems({ ...DEFAULT_PRECEDENCE, defaultOrder: ['local', 'local', 'base', 'human_verified'] })).toHaveLength(1);
    expect(policyProblems({ ...DEFAULT_PRECEDENCE, overrides: [{ category: 'a', winningTier: 'local' }, { category: 'A ', winningTier: 'base' }] })).toHaveLength(1);
  });
});

describe('GET, PUT /admin/memory/precedence', () => {
  let h: Harness;
  let p: { projectId: string; apiKey: string };
  const subject = { kind: 'user', externalId: 'rosa' };
  beforeAll(async () => {
    h = await createHarness();
    p = await h.project();
  });
  afterAll(() => h?.close());

  const save = async (body: Record<string, unknown>) => {
    const res = await h.call('POST', p.projectId, '/admin/memory', { body: { type: 'fact', subject, category: 'address', ...body } });
    expect(res.statusCode, res.body).toBe(201);
    return res.json().id as string;
  };
  const order = async () =>
    (await h.call('POST', p.projectId, '/memory/search', { body: { query: 'where does Rosa live', subject, limit: 5 } })).json().map((hit: { id: string }) => hit.id);

  it('answers the default, and search keeps a verified value above a newer unverified one', async () => {
    expect((await h.call('GET', p.projectId, '/admin/memory/precedence')).json()).toEqual({ defaultOrder: ['human_verified', 'local', 'licensed_brain', 'base'], scopeNearestWins: true, overrides: [] });
    const lisbon = await save({ content: 'Rosa lives in Lisbon.', status: 'pending', metadata: { slot: 'residence' }, validFrom: '2026-01-01T00:00:00.000Z' });
    expect((await h.call('POST', p.projectId, `/admin/memory/${lisbon}/confirm`, { body: { status: 'confirmed' } })).statusCode).toBe(200);
    const porto = await save({ content: 'Rosa lives in Porto.', metadata: { slot: 'residence' }, validFrom: '2026-06-01T00:00:00.000Z' });
    const ranked = await order();
    expect(ranked.indexOf(lisbon)).toBeLessThan(ranked.indexOf(porto));
    const hit = (await h.call('POST', p.projectId, '/memory/search', { body: { query: 'where does Rosa live', subject, limit: 5 } })).json().find((x: { id: string }) => x.id === porto);
    expect(hit.scoreParts.stale).toBeGreaterThan(0);
    expect(hit.explanation).toContain('precedence policy');

    // The local tier first: the newer value leads; an override for the category puts the verified one back.
    const put = await h.call('PUT', p.projectId, '/admin/memory/precedence', { body: { defaultOrder: ['local', 'human_verified', 'licensed_brain', 'base'], scopeNearestWins: true, overrides: [] } });
    expect(put.statusCode, put.body).toBe(200);
    let now = await order();
    expect(now.indexOf(porto)).toBeLessThan(now.indexOf(lisbon));
    await h.call('PUT', p.projectId, '/admin/memory/precedence', {
      body: { defaultOrder: ['local', 'human_verified', 'licensed_brain', 'base'], scopeNearestWins: true, overrides: [{ category: 'Address', winningTier: 'human_verified' }] },
    });
    now = await order();
    expect(now.indexOf(lisbon)).toBeLessThan(now.indexOf(porto));
    expect((await h.call('GET', p.projectId, '/admin/memory/precedence')).json().overrides).toEqual([{ category: 'Address', winningTier: 'human_verified' }]);

    // The category's override comes before the scope: the verified value leads a nearer (session) one too.
    const madrid = await save({ content: 'Rosa lives in Madrid.', scope: 'session', metadata: { slot: 'residence' }, validFrom: '2026-03-01T00:00:00.000Z' });
    expect((await order())[0]).toBe(lisbon);
    // Without it, the nearer scope leads.
    expect((await h.call('PUT', p.projectId, '/admin/memory/precedence', { body: { defaultOrder: ['human_verified', 'local', 'licensed_brain', 'base'], scopeNearestWins: true, overrides: [] } })).statusCode).toBe(200);
    expect((await order())[0]).toBe(madrid);
  });

  it('validates the whole policy, needs WRITE_MEMORY to set it, and keeps it to its project', async () => {
    const bad = [
      {},
      { defaultOrder: ['local', 'local', 'base', 'human_verified'], scopeNearestWins: true, overrides: [] },
      { defaultOrder: ['local', 'human_verified', 'licensed_brain'], scopeNearestWins: true, overrides: [] },
      { defaultOrder: ['local', 'human_verified', 'licensed_brain', 'gold'], scopeNearestWins: true, overrides: [] },
      { defaultOrder: ['local', 'human_verified', 'licensed_brain', 'base'], scopeNearestWins: 'yes', overrides: [] },
      { defaultOrder: ['local', 'human_verified', 'licensed_brain', 'base'], scopeNearestWins: true, overrides: [{ category: 'a', winningTier: 'local' }, { category: 'A', winningTier: 'base' }] },
    ];
    for (const body of bad) {
      const res = await h.call('PUT', p.projectId, '/admin/memory/precedence', { body });
      expect(res.statusCode, JSON.stringify(body)).toBe(400);
      expect(res.json().code).toBe('VALIDATION_ERROR');
    }
    const reader = await h.key(p.projectId, ['READ_MEMORY']);
    expect((await h.call('GET', p.projectId, '/admin/memory/precedence', { apiKey: reader })).statusCode).toBe(200);
    const good = { defaultOrder: ['base', 'local', 'licensed_brain', 'human_verified'], scopeNearestWins: false, overrides: [] };
    expect((await h.call('PUT', p.projectId, '/admin/memory/precedence', { apiKey: reader, body: good })).statusCode).toBe(403);
    const other = await h.project();
    expect((await h.call('PUT', other.projectId, '/admin/memory/precedence', { body: good })).statusCode).toBe(200);
    expect((await h.call('GET', p.projectId, '/admin/memory/precedence')).json().defaultOrder[0]).not.toBe('base');
    expect((await h.call('GET', other.projectId, '/admin/memory/precedence', { apiKey: p.apiKey })).statusCode).toBe(404);
  });
});
