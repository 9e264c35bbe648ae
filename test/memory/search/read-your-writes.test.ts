// Read-your-writes: once a save (REST, MCP-style service call, observe) has answered, a search in
// the same project finds it by meaning (no shared word), in a project of 5,000 memories; with the
// worker pool saturated, the memory is still found by its words and embedded behind.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { insertMemories, writeEmbeddings } from '../../../src/memory/store.js';
import { newId } from '../../../src/platform/ids.js';
import { createHarness, type Harness } from '../../helpers/harness.js';

const BACKGROUND = 5000;

/** Everyday agent memories on other topics: varied sentences, reused with a case number. */
function backgroundTexts(count: number): string[] {
  const people = ['Alice', 'Bob', 'Priya', 'Marco', 'Yuki', 'Fatima', 'Jonas', 'Chen', 'Olga', 'Samuel'];
  const tasks = ['the quarterly report', 'the invoice batch', 'the release notes', 'the onboarding checklist', 'the budget review', 'the vendor contract'];
  const services = ['billing', 'search', 'auth', 'payments', 'notifications', 'reporting'];
  const days = ['Monday', 'Tuesday', 'Wednesday', 'Thursday', 'Friday'];
  const templates = [
    (i: number) => `${people[i % 10]} asked to be reminded about ${tasks[i % 6]} on ${days[i % 5]}`,
    (i: number) => `The ${services[i % 6]} deploy on ${days[(i >> 1) % 5]} failed because of a missing migration`,
    (i: number) => `${people[(i >> 2) % 10]} and ${people[(i + 3) % 10]} agreed to review ${tasks[(i >> 1) % 6]} together`,
    (i: number) => `Meeting with the ${services[(i >> 3) % 6]} team moved to ${days[(i >> 2) % 5]} afternoon`,
  ];
  return Array.from({ length: count }, (_, i) => `${templates[i % templates.length]!(i)} (case ${1000 + i})`);
}

describe('read-your-writes', () => {
  let h: Harness;
  let projectId: string;
  beforeAll(async () => {
    h = await createHarness();
    ({ projectId } = await h.project());
    const texts = backgroundTexts(BACKGROUND);
    // Embedding 5,000 texts would take a minute: texts that differ only by their case number share the vector of the first.
    const distinct = [...new Set(texts.map((t) => t.replace(/ \(case \d+\)$/, '')))];
    const vectors = new Map((await h.apis.embeddings.embed(distinct)).map((v, i) => [distinct[i]!, v]));
    const rows = texts.map((content) => ({ id: newId('mem'), projectId, content, subjectKind: 'user', subjectExternalId: 'u1' }));
    for (let i = 0; i < rows.length; i += 1000) {
      const batch = rows.slice(i, i + 1000);
      await insertMemories(h.db, batch);
      await writeEmbeddings(h.db, projectId, h.apis.embeddings.model, batch.map((r) => ({ id: r.id, vector: vectors.get(r.content.replace(/ \(case \d+\)$/, ''))! })));
    }
  });
  afterAll(() => h?.close());

  const topContents = async (query: string, limit = 5) =>
    ((await h.call('POST', projectId, '/memory/search', { body: { query, limit } })).json() as { content: string }[]).map((hit) => hit.content);

  it('finds a saved memory by a paraphrase as soon as the save answers', async () => {
    const saved = await h.call('POST', projectId, '/admin/memory', { body: { content: 'Favourite colour is teal', subject: { kind: 'user', externalId: 'u1' } } });
    expect(saved.statusCode).toBe(201);
    expect(saved.json().hasEmbedding).toBe(true);
    // No word in common with the memory: only its meaning can find it.
    expect(await topContents('what shade do they like best')).toContain('Favourite colour is teal');
  });

  it('does the same for a memory saved through the service, as the MCP memory_save tool does', async () => {
    const { memory } = await h.apis.memory.save(projectId, { content: 'Is allergic to shellfish', type: 'fact', scope: 'user', userId: 'u1', source: 'mcp' });
    expect(memory.hasEmbedding).toBe(true);
    const hits = await h.apis.memory.search(projectId, { query: 'which seafood must they avoid', limit: 5 });
    expect(hits.map((hit) => hit.memory.content)).toContain('Is allergic to shellfish');
  });

  it('does the same for what observe extracts', async () => {
    const observed = await h.call('POST', projectId, '/memory/observe', { body: { text: 'I moved to Berlin in March.', userId: 'u1' } });
    expect(observed.statusCode).toBe(200);
    expect(observed.json().saved.map((m: { hasEmbedding: boolean }) => m.hasEmbedding)).toEqual([true]);
    const content = observed.json().saved[0].content as string;
    expect(await topContents('which city is home these days')).toContain(content);
  });
});

describe('read-your-writes with the worker pool saturated', () => {
  let h: Harness;
  afterAll(() => h?.close());

  it('answers without waiting, finds the memory by its words, and embeds it behind', async () => {
    h = await createHarness({ env: { POOL_MAX_THREADS: '1' } });
    const { projectId } = await h.project();
    // Keep the only pool thread busy, and the background pool's (where the embedding job runs) busy
    // for longer, so that the search (whose query embedding waits for the first) still meets the
    // memory without its vector.
    const texts = (n: number, what: string) => Array.from({ length: n }, (_, i) => `a sentence that keeps the ${what} busy number ${i}`);
    const busy = h.lattice.runtime.pool.run('embed', { texts: texts(400, 'pool') });
    const backlog = h.lattice.runtime.backgroundPool.run('embed', { texts: texts(1200, 'background pool') });
    await expect.poll(() => h.lattice.runtime.pool.hasFreeThread, { timeout: 60_000 }).toBe(false);
    await expect.poll(() => h.lattice.runtime.backgroundPool.hasFreeThread, { timeout: 60_000 }).toBe(false);
    const saved = (await h.call('POST', projectId, '/admin/memory', { body: { content: 'Favourite colour is teal' } })).json();
    expect(saved.hasEmbedding).toBe(false);
    const [top] = (await h.call('POST', projectId, '/memory/search', { body: { query: 'teal colour' } })).json();
    expect(top).toMatchObject({ content: 'Favourite colour is teal', scoreParts: { semantic: null, textRank: 1 } });
    await Promise.all([busy, backlog]);
    await expect
      .poll(async () => (await h.call('GET', projectId, `/admin/memory/${saved.id}`)).json().hasEmbedding, { timeout: 30_000, interval: 250 })
      .toBe(true);
  });
});
