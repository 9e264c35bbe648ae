// Extraction end to end: the opt-in, backfill and the sweep job (the heuristic extractor on real
// memories), re-extraction of a changed memory, the MCP pair over the real client (idempotent by
// content hash, a stale hash refused), prefetch, the onboarding briefing and associative recall.
import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createHarness, type Harness } from '../helpers/harness.js';
import { connectMcp } from '../helpers/mcp-client.js';

type Project = { projectId: string; apiKey: string };
type ToolResult = { isError?: boolean; content: { type: string; text: string }[] };

describe('graph extraction and recall', () => {
  let h: Harness;
  const clients: Client[] = [];
  const maria = { kind: 'user', externalId: 'maria' };

  const save = async (p: Project, content: string, extra: Record<string, unknown> = {}) => {
    const res = await h.call('POST', p.projectId, '/admin/memory', { body: { content, subject: maria, ...extra } });
    expect(res.statusCode, res.body).toBe(201);
    return res.json().id as string;
  };
  const backfill = async (p: Project) => h.call('POST', p.projectId, '/admin/memory/graph/backfill', { body: {} });
  const entityNamed = async (p: Project, search: string) => (await h.call('GET', p.projectId, `/admin/memory/entities?search=${encodeURIComponent(search)}`)).json()[0];

  beforeAll(async () => {
    h = await createHarness({ env: { MEMORY_ASSOCIATIVE_RECALL_ENABLED: 'true' } });
  });
  afterAll(async () => {
    await Promise.all(clients.map((c) => c.close()));
    await h?.close();
  });

  it('extracts only for an opted-in project: backfill links entities and relations, with the memory as source', async () => {
    const p = await h.project();
    const works = await save(p, 'I work at Globex as a nurse and live in Lisbon.');
    await save(p, 'Her manager, Dr. David Kim, works at Globex too.');
    // What the engine writes itself (here, a consent record) is not extracted.
    await save(p, 'Consent to contact from Initech Marketing recorded.', { type: 'consent' });
    const refused = await backfill(p);
    expect(refused.statusCode).toBe(409);
    expect(refused.json().message).toContain('extraction/toggle');
    expect((await h.call('POST', p.projectId, '/admin/memory/graph/extraction/toggle', { body: { enabled: true } })).json()).toEqual({ projectEnabled: true, platformEnabled: true });

    // The extraction sweep (graph.extract-sweep, on a timer) may take the two memories between the
    // toggle and this call: either way each is extracted once, and the stats below show it.
    const done = await backfill(p);
    expect(done.statusCode).toBe(200);
    expect(done.json()).toMatchObject({ remaining: 0 });
    expect((await backfill(p)).json()).toMatchObject({ processed: 0, remaining: 0 });

    // One Globex for both mentions; Maria's own entity stands for her subject.
    const globex = await entityNamed(p, 'globex');
    expect((await h.call('GET', p.projectId, '/admin/memory/entities?search=globex')).json()).toHaveLength(1);
    const subject = (await h.call('GET', p.projectId, '/admin/memory/entities?search=maria')).json().find((e: { subject: unknown }) => e.subject !== null);
    expect(subject).toMatchObject({ type: 'person', subject: maria });
    const edges = (await h.call('POST', p.projectId, '/lattice/graph/query', { body: { subjectId: subject.id } })).json().edges;
    expect(edges).toEqual(
      expect.arrayContaining([
        expect.objectContaining({ predicate: 'works_at', objectId: globex.id, sourceMemoryId: works, weight: 0.7 }),
        expect.objectContaining({ predicate: 'lives_in', sourceMemoryId: works }),
      ]),
    );
    const kim = await entityNamed(p, 'david kim');
    expect(kim).toMatchObject({ canonicalName: 'David Kim', type: 'person' });
    expect((await h.call('POST', p.projectId, '/lattice/graph/query', { body: { subjectId: kim.id, predicate: 'works_at' } })).json().edges).toEqual([expect.objectContaining({ objectId: globex.id })]);
    const stats = (await h.call('GET', p.projectId, '/admin/memory/graph/stats')).json();
    expect(stats).toMatchObject({ memoriesWithEdges: 2, extraction: { projectEnabled: true, platformEnabled: true, extractedMemories: 2, pendingMemories: 0 } });
    expect(stats.edgeCount).toBeGreaterThanOrEqual(3);
    expect(stats.entitiesByType).toMatchObject({ org: 1, person: 2, location: 1 });
  });

  it('re-extracts a changed memory: what it no longer states is closed, what it states now is added', async () => {
    const p = await h.project();
    await h.call('POST', p.projectId, '/admin/memory/graph/extraction/toggle', { body: { enabled: true } });
    const id = await save(p, 'I work at Initech in Austin.');
    await backfill(p);
    const patched = await h.call('PATCH', p.projectId, `/admin/memory/${id}`, { body: { content: 'I work at Hooli in Austin.' } });
    expect(patched.statusCode, patched.body).toBe(200);
    expect((await h.call('GET', p.projectId, '/admin/memory/graph/stats')).json().extraction.pendingMemories).toBe(1);
    // The sweep job picks it up (the schedule runs it every 15 s; here it is called).
    expect(await h.apis.graph.sweep()).toMatchObject({ extracted: expect.any(Number) });
    const subject = (await h.call('GET', p.projectId, '/admin/memory/entities?search=maria')).json()[0];
    const current = (await h.call('POST', p.projectId, '/lattice/graph/query', { body: { subjectId: subject.id, predicate: 'works_at' } })).json().edges;
    const hooli = await entityNamed(p, 'hooli');
    expect(current.map((e: { objectId: string }) => e.objectId)).toEqual([hooli.id]);
    expect((await h.call('GET', p.projectId, '/admin/memory/graph/stats')).json()).toMatchObject({ retiredEdges: 1, extraction: { pendingMemories: 0 } });
  });

  it('hands memories to an MCP client and takes its extraction back, idempotent by hash, refusing a stale one', async () => {
    const p = await h.project();
    const id = await save(p, 'Priya Raman is a member of the Lakeside Book Club.');
    await save(p, 'ok'); // too short to hand out
    const client = await connectMcp(h.app, p);
    clients.push(client);
    const call = async (name: string, args: Record<string, unknown>) => (await client.callTool({ name, arguments: args })) as ToolResult;

    const pending = await call('memory_extract_pending', { limit: 10 });
    expect(pending.isError).not.toBe(true);
    expect(pending.content[0]!.text).toBe('1 memory pending extraction.');
    const [item] = JSON.parse(pending.content[1]!.text);
    expect(item).toMatchObject({ memoryId: id, content: 'Priya Raman is a member of the Lakeside Book Club.', contentHash: expect.stringMatching(/^[0-9a-f]{32}$/) });
    expect(item.systemPrompt).toContain('snake_case');
    expect(item.userPrompt).toContain(item.content);

    const extraction = {
      memoryId: id,
      contentHash: item.contentHash,
      entities: [{ name: 'Priya Raman', type: 'person' }, { name: 'Lakeside Book Club', type: 'club' }],
      edges: [{ subject: 'Priya Raman', predicate: 'Member Of', object: 'Lakeside Book Club', object_is_entity: true }, { subject: 'Priya Raman', predicate: 'reads', object: 'mysteries' }],
    };
    const committed = await call('memory_commit_extraction', extraction);
    expect(committed.content[0]!.text).toBe(`committed: memory ${id}, 2 entities linked, 2 edges`);
    const club = await entityNamed(p, 'lakeside');
    expect(club.type).toBe('other');
    const priya = await entityNamed(p, 'priya');
    const edges = (await h.call('POST', p.projectId, '/lattice/graph/query', { body: { subjectId: priya.id } })).json().edges;
    expect(edges.map((e: { predicate: string; objectId: string | null; objectLiteral: string | null; weight: number }) => [e.predicate, e.objectId ?? e.objectLiteral, e.weight]).sort()).toEqual(
      [['member_of', club.id, 0.9], ['reads', 'mysteries', 0.9]].sort(),
    );
    // The same hash again changes nothing; nothing is pending any more.
    expect((await call('memory_commit_extraction', extraction)).content[0]!.text).toContain('unchanged');
    expect(JSON.parse((await call('memory_extract_pending', {})).content[1]!.text)).toEqual([]);
    // The memory changes: the old hash is stale, and the memory is pending again.
    await h.call('PATCH', p.projectId, `/admin/memory/${id}`, { body: { content: 'Priya Raman left the Lakeside Book Club in 2024.' } });
    const stale = await call('memory_commit_extraction', extraction);
    expect(stale.isError).not.toBe(true);
    expect(stale.content[0]!.text).toMatch(/^rejected: stale contentHash/);
    expect(JSON.parse((await call('memory_extract_pending', {})).content[1]!.text)).toEqual([expect.objectContaining({ memoryId: id })]);
    // Another project's memory is not there to commit.
    const other = await h.project();
    const foreign = await save(other, 'A memory of another project about Globex.');
    const refused = await call('memory_commit_extraction', { ...extraction, memoryId: foreign });
    expect(refused.isError).toBe(true);
    expect(JSON.parse(refused.content[0]!.text)).toMatchObject({ code: 'NOT_FOUND' });
  });

  it('prefetches memories by distinct shared entities, deterministically and read-only', async () => {
    const p = await h.project();
    await h.call('POST', p.projectId, '/admin/memory/graph/extraction/toggle', { body: { enabled: true } });
    const seed = await save(p, 'Maria Lopez works at Globex in Lisbon.');
    const both = await save(p, 'Globex opened a new office in Lisbon.');
    const one = await save(p, 'Globex sponsors the marathon.');
    await save(p, 'The weather in Oslo was cold.');
    await backfill(p);
    const before = (await h.call('GET', p.projectId, '/admin/memory/graph/stats')).json();
    const prefetch = async () => (await h.call('POST', p.projectId, '/admin/memory/prefetch-related', { body: { seedMemoryIds: [seed], limit: 10 } })).json();
    const first = await prefetch();
    expect(first.map((m: { id: string }) => m.id)).toEqual([both, one]);
    expect(await prefetch()).toEqual(first);
    expect((await h.call('GET', p.projectId, '/admin/memory/graph/stats')).json()).toEqual(before);
    expect((await h.call('POST', p.projectId, '/admin/memory/prefetch-related', { body: { seedMemoryIds: [seed], limit: 0 } })).json()).toHaveLength(1);
    expect((await h.call('POST', p.projectId, '/admin/memory/prefetch-related', { body: { seedMemoryIds: ['mem_nowhere'] } })).statusCode).toBe(404);
    expect((await h.call('POST', p.projectId, '/admin/memory/prefetch-related', { body: { seedMemoryIds: [] } })).statusCode).toBe(400);

    // Associative recall: a search hit linked to other hits through entities carries the bonus.
    const hits = (await h.call('POST', p.projectId, '/admin/memory/search', { body: { query: 'Globex Lisbon office' } })).json();
    const linked = hits.find((hit: { id: string }) => hit.id === both);
    expect(linked?.scoreParts?.graph ?? linked?.parts?.graph).toBeGreaterThan(0);
  });

  it('briefs a newcomer along member_of and part_of, nearest first, within the token budget', async () => {
    const p = await h.project();
    const id = async (type: string, canonicalName: string) => (await h.call('POST', p.projectId, '/admin/memory/entities', { body: { type, canonicalName } })).json().id as string;
    const [ana, team, division, company] = [await id('person', 'Ana Silva'), await id('org', 'Payments Team'), await id('org', 'Fintech Division'), await id('org', 'Bigcorp')];
    const link = (s: string, predicate: string, o: string) => h.call('POST', p.projectId, '/admin/memory/edges', { body: { subjectId: s, predicate, objectId: o } });
    await link(ana, 'member_of', team);
    await link(team, 'part_of', division);
    await link(division, 'part_of', company);
    await link(company, 'part_of', division); // a cycle
    const about = async (content: string, entityId: string, importance = 5) => {
      const memoryId = (await h.call('POST', p.projectId, '/admin/memory', { body: { content, importance } })).json().id;
      await h.call('POST', p.projectId, '/admin/memory/edges', { body: { subjectId: entityId, predicate: 'noted', objectLiteral: content.slice(0, 20), sourceMemoryId: memoryId } });
      return memoryId as string;
    };
    const teamNote = await about('The payments team deploys on Tuesdays.', team, 8);
    const divisionNote = await about('The fintech division reviews budgets quarterly.', division);
    const companyNote = await about('Bigcorp expense reports are due on the 5th.', company, 9);
    const brief = (await h.call('GET', p.projectId, `/admin/memory/entities/${ana}/onboarding-context`)).json();
    expect(brief.chain.map((c: { entityId: string; depth: number }) => [c.entityId, c.depth])).toEqual([[ana, 0], [team, 1], [division, 2], [company, 3]]);
    expect(brief.memories.map((m: { id: string }) => m.id)).toEqual([teamNote, divisionNote, companyNote]);
    expect(brief.truncated).toEqual([]);
    expect(brief.tokensEstimate).toBeLessThanOrEqual(brief.maxTokens);
    const shallow = (await h.call('GET', p.projectId, `/admin/memory/entities/${ana}/onboarding-context?depth=1`)).json();
    expect(shallow.memories.map((m: { id: string }) => m.id)).toEqual([teamNote]);
    const tight = (await h.call('GET', p.projectId, `/admin/memory/entities/${ana}/onboarding-context?maxTokens=10`)).json();
    expect(tight.maxTokens).toBe(200);
    expect(tight.tokensEstimate).toBeLessThanOrEqual(200);
  });
});
