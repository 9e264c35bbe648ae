// The caller's surface of the public clients (SDK-WIRE.md 4.1, 4.2): GET /memory/mine, POST
// /memory/feedback (three negatives flag the memory into review) and GET /admin/memory/{id}/feedback.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createHarness, type Harness } from '../helpers/harness.js';

describe("the caller's surface", () => {
  let h: Harness;
  let p: { projectId: string; apiKey: string };
  const create = async (body: Record<string, unknown>, projectId = p.projectId) => {
    const res = await h.call('POST', projectId, '/admin/memory', { body: { type: 'fact', ...body } });
    expect(res.statusCode, res.body).toBe(201);
    return res.json().id as string;
  };
  const rate = (body: Record<string, unknown>, projectId = p.projectId, apiKey?: string) => h.call('POST', projectId, '/memory/feedback', { body, apiKey });

  beforeAll(async () => {
    h = await createHarness();
    p = await h.project();
  });
  afterAll(() => h?.close());

  it("GET /memory/mine: an end user's memories with userId, the project's own without", async () => {
    const forAnna = await create({ content: 'Anna prefers email over phone calls.', chatIdentityId: 'anna' });
    const aboutAnna = await create({ content: 'Anna renewed for two years.', subject: { kind: 'user', externalId: 'anna' } });
    const forBen = await create({ content: 'Ben asked for a quote.', chatIdentityId: 'ben' });
    const aboutAcme = await create({ content: 'Acme pays by invoice.', subject: { kind: 'customer', externalId: 'acme' } });
    const own = await create({ content: 'Support hours are 9 to 5 on weekdays.' });
    const ids = async (query: string) => {
      const res = await h.call('GET', p.projectId, `/memory/mine${query}`);
      expect(res.statusCode, res.body).toBe(200);
      return res.json().map((m: { id: string }) => m.id);
    };
    expect(await ids('?userId=anna')).toEqual([aboutAnna, forAnna]);
    expect(await ids('?userId=ben')).toEqual([forBen]);
    expect(await ids('')).toEqual([own]);
    expect(await ids('?userId=anna&limit=1&offset=1')).toEqual([forAnna]);
    expect(await ids('?userId=nobody')).toEqual([]);
    expect(await ids('')).not.toContain(aboutAcme);
    // Superseded memories are not the caller's anymore.
    expect((await h.call('DELETE', p.projectId, `/memory/${forAnna}`)).statusCode).toBe(204);
    expect(await ids('?userId=anna')).toEqual([aboutAnna]);
    expect((await h.call('GET', p.projectId, '/memory/mine?limit=501')).statusCode).toBe(400);
    expect((await h.call('GET', p.projectId, '/memory/mine?userId=')).statusCode).toBe(400);
    // Another project's end user of the same id is not this one.
    const other = await h.project();
    expect((await h.call('GET', other.projectId, '/memory/mine?userId=anna')).json()).toEqual([]);
  });

  it('POST /memory/feedback: 204; the third negative flags the memory for review; a retried response counts once', async () => {
    const id = await create({ content: 'The warehouse ships on Sundays.' });
    const first = await rate({ memoryId: id, rating: 'negative', responseId: 'resp-1', comment: 'wrong, no Sunday shipping' });
    expect(first.statusCode).toBe(204);
    expect(first.body).toBe('');
    // The client's retry of the same call: counted once.
    expect((await rate({ memoryId: id, rating: 'negative', responseId: 'resp-1', comment: 'wrong, no Sunday shipping' })).statusCode).toBe(204);
    let memory = (await h.call('GET', p.projectId, `/admin/memory/${id}`)).json();
    expect(memory).toMatchObject({ negativeRatingCount: 1, reviewReason: null });
    expect((await rate({ memoryId: id, rating: 'negative', responseId: 'resp-2' })).statusCode).toBe(204);
    expect((await rate({ memoryId: id, rating: 'positive' })).statusCode).toBe(204);
    expect((await h.call('GET', p.projectId, '/admin/memory/review')).json().map((m: { id: string }) => m.id)).not.toContain(id);
    expect((await rate({ memoryId: id, rating: 'negative' })).statusCode).toBe(204);
    memory = (await h.call('GET', p.projectId, `/admin/memory/${id}`)).json();
    expect(memory).toMatchObject({ negativeRatingCount: 3, reviewReason: 'flagged' });
    expect(memory.lastAccessedAt).not.toBeNull();
    const review = (await h.call('GET', p.projectId, '/admin/memory/review')).json();
    expect(review.find((m: { id: string }) => m.id === id)).toMatchObject({ reviewReason: 'flagged' });

    const listed = await h.call('GET', p.projectId, `/admin/memory/${id}/feedback`);
    expect(listed.statusCode).toBe(200);
    const rows = listed.json();
    expect(rows.map((r: { rating: string }) => r.rating)).toEqual(['negative', 'positive', 'negative', 'negative']);
    expect(rows.at(-1)).toMatchObject({ memoryId: id, responseId: 'resp-1', comment: 'wrong, no Sunday shipping', createdByUserId: expect.any(String), created: expect.any(String) });
  });

  it('validates, needs WRITE_MEMORY to rate, and never touches another project', async () => {
    const id = await create({ content: 'Returns need a receipt.' });
    for (const body of [{}, { memoryId: id }, { memoryId: id, rating: 'meh' }, { memoryId: id, rating: 'positive', comment: 'x'.repeat(2001) }, { memoryId: id, rating: 'positive', extra: 1 }]) {
      const res = await rate(body);
      expect(res.statusCode, JSON.stringify(body)).toBe(400);
    }
    expect((await rate({ memoryId: 'mem_missing', rating: 'negative' })).statusCode).toBe(404);
    expect((await h.call('GET', p.projectId, '/admin/memory/mem_missing/feedback')).statusCode).toBe(404);
    const reader = await h.key(p.projectId, ['READ_MEMORY']);
    expect((await rate({ memoryId: id, rating: 'negative' }, p.projectId, reader)).statusCode).toBe(403);
    expect((await h.call('GET', p.projectId, `/admin/memory/${id}/feedback`, { apiKey: reader })).statusCode).toBe(403);
    // Project B cannot rate or read A's memory, even knowing its id.
    const b = await h.project();
    expect((await rate({ memoryId: id, rating: 'negative' }, b.projectId)).statusCode).toBe(404);
    expect((await h.call('GET', b.projectId, `/admin/memory/${id}/feedback`)).statusCode).toBe(404);
    expect((await h.call('GET', p.projectId, `/admin/memory/${id}`)).json().negativeRatingCount).toBe(0);
  });
});
