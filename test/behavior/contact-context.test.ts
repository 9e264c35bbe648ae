// A contact's context through the API (GET /lattice/contacts/{contactId}/context, the public
// clients' lattice.getContext): the card from typed readings, activity and the graph; patterns,
// events and memories; its part of the graph within graphHops; as it stood at asOf; validation,
// permission, a contact nobody knows, and isolation between projects.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createHarness, type Harness } from '../helpers/harness.js';

const DAY = 86_400_000;

describe("a contact's context", () => {
  let h: Harness;
  let a: { projectId: string; apiKey: string };
  let b: { projectId: string; apiKey: string };
  const customer = { kind: 'customer', externalId: 'ctx-ana' };
  const started = new Date();
  const ids: Record<string, string> = {};

  const context = (projectId: string, query = '', contactId = customer.externalId) => h.call('GET', projectId, `/lattice/contacts/${contactId}/context${query}`);
  const ok = async (projectId: string, query = '') => {
    const res = await context(projectId, query);
    expect(res.statusCode, res.body).toBe(200);
    return res.json();
  };
  const post = async (projectId: string, url: string, body: unknown, status = 201) => {
    const res = await h.call('POST', projectId, url, { body });
    expect(res.statusCode, res.body).toBe(status);
    return res.json();
  };

  beforeAll(async () => {
    h = await createHarness();
    a = await h.project();
    b = await h.project();
    // Eight weekly orders of 20, the last two days ago: activity with an amount, mined into patterns.
    const orders = Array.from({ length: 8 }, (_, i) => new Date(Date.now() - 2 * DAY - (7 - i) * 7 * DAY));
    for (const at of orders) {
      await post(a.projectId, '/admin/memory', { content: `order by ana at ${at.toISOString()}`, type: 'event', subject: customer, validFrom: at.toISOString(), metadata: { eventType: 'order', amount: 20 } });
    }
    await post(a.projectId, '/lattice/patterns/extract', { subject: customer }, 200);
    ids.prefers = (await post(a.projectId, '/admin/memory', { content: 'Ana prefers deliveries after 6 pm', type: 'preference', subject: customer, importance: 0.8 })).id;
    ids.allergy = (await post(a.projectId, '/admin/memory', { content: 'Ana is allergic to peanuts', type: 'fact', subject: customer })).id;
    // The same id as a user of the app: one contact, two subjects.
    ids.user = (await post(a.projectId, '/admin/memory', { content: 'Ana uses the mobile app', type: 'fact', subject: { kind: 'user', externalId: customer.externalId } })).id;
    const logged = await post(a.projectId, '/lattice/events/emit', { eventType: 'support.ticket', subject: customer, payload: { title: 'Late delivery', severity: 'low' } }, 200);
    ids.ticket = logged.event.id;
    for (const attribute of [
      { attributeKey: 'email', dataType: 'categorical' },
      { attributeKey: 'display_name', dataType: 'categorical' },
      { attributeKey: 'tags', dataType: 'categorical' },
    ]) {
      await post(a.projectId, '/memory-typed/attributes', attribute);
    }
    const reading = (attributeKey: string, valueText: string, daysAgo: number) => ({
      attributeKey,
      subjectKind: customer.kind,
      subjectExternalId: customer.externalId,
      valueText,
      observedAt: new Date(Date.now() - daysAgo * DAY).toISOString(),
    });
    const typed = await post(
      a.projectId,
      '/memory-typed/observations',
      { observations: [reading('email', 'old@example.com', 30), reading('email', 'ana@example.com', 1), reading('display_name', 'Ana Costa', 5), reading('tags', 'vip, early-adopter', 3)] },
      200,
    );
    expect(typed.accepted).toBe(4);
    // Ana in the graph, a member of the book club, which meets at the library (two hops away).
    const entity = async (body: Record<string, unknown>) => (await post(a.projectId, '/admin/memory/entities', body)).id as string;
    ids.anaEntity = await entity({ type: 'person', canonicalName: 'Ana (graph)', subject: customer });
    ids.club = await entity({ type: 'org', canonicalName: 'Book Club' });
    ids.library = await entity({ type: 'location', canonicalName: 'City Library' });
    ids.member = (await post(a.projectId, '/admin/memory/edges', { subjectId: ids.anaEntity, predicate: 'member_of', objectId: ids.club })).id;
    ids.meets = (await post(a.projectId, '/admin/memory/edges', { subjectId: ids.club, predicate: 'meets_at', objectId: ids.library })).id;
  });
  afterAll(async () => h?.close());

  it('answers the card, patterns, events, memories and the graph a hop away', async () => {
    const body = await ok(a.projectId);
    expect(body.contactId).toBe(customer.externalId);
    expect(body.contact).toEqual({
      id: customer.externalId,
      displayName: 'Ana Costa',
      email: 'ana@example.com',
      tags: ['vip', 'early-adopter'],
      segment: expect.any(String),
      lifetimeValue: 160,
      lastInteractionAt: expect.any(String),
    });
    // The latest activity: the email reading a day ago (observations are activity too).
    expect(Date.parse(body.contact.lastInteractionAt)).toBeGreaterThan(Date.now() - 1.5 * DAY);
    const kinds = body.activePatterns.map((p: { metadata: { patternKind: string } }) => p.metadata.patternKind);
    expect(kinds).toContain('recurring_event');
    expect(body.activePatterns.every((p: { active: boolean; contactId: string }) => p.active && p.contactId === customer.externalId)).toBe(true);
    // Events: the logged ticket (newest) and the eight orders, newest first.
    expect(body.recentEvents[0]).toMatchObject({ id: ids.ticket, eventType: 'support.ticket', title: 'Late delivery', data: { title: 'Late delivery', severity: 'low' } });
    const orders = body.recentEvents.filter((e: { eventType: string }) => e.eventType === 'order');
    expect(orders).toHaveLength(8);
    const times = body.recentEvents.map((e: { occurredAt: string }) => Date.parse(e.occurredAt));
    expect(times).toEqual([...times].sort((x, y) => y - x));
    expect(orders[0].data).toMatchObject({ eventType: 'order', amount: 20 });
    // Memories: neither activity nor patterns; both subjects with the id; newest first.
    expect(body.recentMemories.map((m: { id: string }) => m.id)).toEqual([ids.user, ids.allergy, ids.prefers]);
    expect(body.recentMemories[2]).toMatchObject({ content: 'Ana prefers deliveries after 6 pm', importance: 0.8, scope: expect.any(String), type: 'preference' });
    // One hop: Ana's entity and the club; the library is two hops away.
    expect(body.entities.map((e: { id: string }) => e.id).sort()).toEqual([ids.anaEntity, ids.club].sort());
    expect(body.entities.find((e: { id: string }) => e.id === ids.club)).toMatchObject({ kind: 'org', name: 'Book Club', metadata: {} });
    expect(body.edges).toEqual([{ id: ids.member, sourceEntityId: ids.anaEntity, targetEntityId: ids.club, kind: 'member_of', weight: 1 }]);
  });

  it('reaches further with graphHops, and cuts the lists to their limits', async () => {
    const body = await ok(a.projectId, '?graphHops=2&eventsLimit=3&memoriesLimit=1');
    expect(body.entities.map((e: { id: string }) => e.id).sort()).toEqual([ids.anaEntity, ids.club, ids.library].sort());
    expect(body.edges.map((e: { id: string }) => e.id).sort()).toEqual([ids.member, ids.meets].sort());
    expect(body.recentEvents).toHaveLength(3);
    expect(body.recentEvents[0].id).toBe(ids.ticket);
    expect(body.recentMemories.map((m: { id: string }) => m.id)).toEqual([ids.user]);
  });

  it('narrows to one kind of subject with subjectKind', async () => {
    const body = await ok(a.projectId, '?subjectKind=customer');
    expect(body.recentMemories.map((m: { id: string }) => m.id)).toEqual([ids.allergy, ids.prefers]);
    const user = await ok(a.projectId, '?subjectKind=user');
    expect(user.recentMemories.map((m: { id: string }) => m.id)).toEqual([ids.user]);
    expect(user.activePatterns).toEqual([]);
    expect(user.contact).toEqual({ id: customer.externalId });
  });

  it('answers as it stood at asOf: nothing written after it, the readings up to it', async () => {
    const before = await ok(a.projectId, `?asOf=${encodeURIComponent(new Date(started.getTime() - 1000).toISOString())}`);
    // Everything was written after that instant: no memory, event or pattern was known then.
    expect(before.recentMemories).toEqual([]);
    expect(before.activePatterns).toEqual([]);
    expect(before.recentEvents).toEqual([]);
    expect(before.contact.segment).toBeUndefined();
    // A week ago, the older email was the latest reading; the name and the tags came later, and the
    // graph entity standing for Ana (which would name her otherwise) did not exist yet.
    const weekAgo = await ok(a.projectId, `?asOf=${encodeURIComponent(new Date(Date.now() - 7 * DAY).toISOString())}`);
    // Seven of the eight orders had happened (the last was two days ago).
    expect(weekAgo.contact).toMatchObject({ email: 'old@example.com', lifetimeValue: 140 });
    expect(weekAgo.contact.tags).toBeUndefined();
    expect(weekAgo.contact.displayName).toBeUndefined();
    expect(weekAgo.entities).toEqual([]);
  });

  it('refuses bad limits and instants with 400 naming the field', async () => {
    for (const [query, field] of [
      ['?eventsLimit=0', 'eventsLimit'],
      ['?eventsLimit=201', 'eventsLimit'],
      ['?memoriesLimit=101', 'memoriesLimit'],
      ['?graphHops=4', 'graphHops'],
      ['?asOf=yesterday', 'asOf'],
      ['?colour=red', 'colour'],
    ] as const) {
      const res = await context(a.projectId, query);
      expect(res.statusCode, query).toBe(400);
      expect(res.json().code).toBe('VALIDATION_ERROR');
      expect(res.body, query).toContain(field);
    }
  });

  it('answers 404 for a contact nothing is about, and never shows another project', async () => {
    const unknown = await context(a.projectId, '', 'nobody-here');
    expect(unknown.statusCode).toBe(404);
    expect(unknown.json().code).toBe('NOT_FOUND');
    expect((await context(b.projectId)).statusCode).toBe(404);
    // B's own contact with the same id sees only B's memory.
    const own = (await post(b.projectId, '/admin/memory', { content: 'B knows Ana too', type: 'fact', subject: customer })).id;
    const mine = await ok(b.projectId);
    expect(mine.recentMemories.map((m: { id: string }) => m.id)).toEqual([own]);
    expect(mine.recentEvents).toEqual([]);
    expect(mine.entities).toEqual([]);
    expect(mine.contact).toEqual({ id: customer.externalId });
    // With no name reading, the card takes the name of the entity that stands for the contact.
    await post(b.projectId, '/admin/memory/entities', { type: 'person', canonicalName: 'Ana in B', subject: customer });
    expect((await ok(b.projectId)).contact).toEqual({ id: customer.externalId, displayName: 'Ana in B' });
  });

  it('needs READ_MEMORY', async () => {
    const writer = await h.key(a.projectId, ['WRITE_MEMORY']);
    const res = await h.call('GET', a.projectId, `/lattice/contacts/${customer.externalId}/context`, { apiKey: writer });
    expect(res.statusCode).toBe(403);
    expect(res.json().code).toBe('AUTHORIZATION_ERROR');
  });
});
