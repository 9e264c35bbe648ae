// POST /admin/memory/merge over HTTP, with deterministic vectors so that similarities are known:
// a dry run by default, a group merged into its strongest member whose provenance lists the rest,
// abstention on a chain (single linkage through a middle member) and on a group too large;
// validation, permission and isolation.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { weakestPair } from '../../../workers/near-duplicate.js';
import { createHarness, type Harness } from '../../helpers/harness.js';
import { seed, unit } from './seed.js';

type Project = { projectId: string; apiKey: string };


// Each says one more hobby than the one before: neighbours are near duplicates at 0.8 (0.81 and
// 0.83 with the same vector), the first and the last are not (0.68).
const CHAIN = [
  'Ana likes hiking, cycling, swimming, reading, painting, chess and cooking on weekends',
  'Ana likes hiking, cycling, swimming, reading, painting, chess, cooking and gardening on weekends',
  'Ana likes hiking, cycling, swimming, reading, painting, chess, cooking, gardening and running on weekends',
];

describe('merge', () => {
  let h: Harness;
  let p: Project;
  let oat: string[];
  let chain: string[];
  let porto: string;
  const merge = (body: Record<string, unknown>, projectId = p.projectId, apiKey?: string) => h.call('POST', projectId, '/admin/memory/merge', { body, ...(apiKey ? { apiKey } : {}) });
  const memory = async (id: string) => (await h.call('GET', p.projectId, `/admin/memory/${id}`)).json();

  beforeAll(async () => {
    h = await createHarness();
    p = await h.project();
    oat = await seed(h, p.projectId, [
      { content: 'Prefers oat milk in coffee', vector: [1, 0, 0], importance: 5 },
      { content: 'Prefers oat milk in the coffee.', vector: [0.99, 0.05, 0], importance: 8 },
      { content: 'In coffee, prefers oat milk', vector: [0.98, 0.1, 0], importance: 8, confidence: 0.5, sourceMemoryIds: ['mem_the_chat_it_came_from'] },
    ]);
    chain = await seed(h, p.projectId, CHAIN.map((content) => ({ content, vector: [0, 1, 0] })));
    porto = (await seed(h, p.projectId, [{ content: 'Lives in Porto', vector: [0, 0, 1] }]))[0]!;
  });
  afterAll(() => h?.close());

  it('is a dry run by default: it reports the groups it would merge and where it abstains, and changes nothing', async () => {
    const res = await merge({ threshold: 0.8 });
    expect(res.statusCode, res.body).toBe(200);
    const body = res.json();
    expect(body).toMatchObject({ clustersFound: 2, clustersMerged: 1, clustersAbstained: 1, memoriesSuperseded: 2, scanned: 7, dryRun: true });
    // The strongest oat-milk memory is kept: importance 8 beats 5, and of the two 8s confidence 1 beats 0.5.
    const merged = body.clusters.find((c: { merged: boolean }) => c.merged);
    expect(merged).toEqual({ keptId: oat[1], mergedIds: expect.arrayContaining([oat[0], oat[2]]), merged: true, abstainedBecause: null });
    const abstained = body.clusters.find((c: { merged: boolean }) => !c.merged);
    expect([abstained.keptId, ...abstained.mergedIds].sort()).toEqual([...chain].sort());
    expect(abstained.abstainedBecause).toContain('not every pair is a near duplicate');
    for (const id of [...oat, ...chain, porto]) expect((await memory(id)).status).toBe('confirmed');
  });

  it('merges each sure group into its strongest member, whose provenance lists the rest, and supersedes them', async () => {
    const body = (await merge({ threshold: 0.8, dryRun: false })).json();
    expect(body).toMatchObject({ clustersFound: 2, clustersMerged: 1, clustersAbstained: 1, memoriesSuperseded: 2, dryRun: false });
    const kept = await memory(oat[1]!);
    expect(kept).toMatchObject({ status: 'confirmed', importance: 8, confidence: 1 });
    // The merged members and what they came from, as the clients' explain reads it too.
    expect([...kept.sourceMemoryIds].sort()).toEqual([oat[0], oat[2], 'mem_the_chat_it_came_from'].sort());
    expect(kept.metadata.sourceMemoryIds).toEqual(kept.sourceMemoryIds);
    for (const id of [oat[0]!, oat[2]!]) expect(await memory(id)).toMatchObject({ status: 'superseded', supersededById: oat[1] });
    // The chain and the lone memory are untouched; nothing was deleted.
    for (const id of [...chain, porto]) expect((await memory(id)).status).toBe('confirmed');
    expect((await h.call('GET', p.projectId, '/admin/memory/stats')).json().total).toBe(7);
    // Done once: a second run finds only the chain, and abstains again.
    expect((await merge({ threshold: 0.8, dryRun: false })).json()).toMatchObject({ clustersFound: 1, clustersMerged: 0, clustersAbstained: 1, memoriesSuperseded: 0 });
  });

  it('abstains on a group larger than maxClusterSize, and takes at most maxClusters groups', async () => {
    const q = await h.project();
    await seed(h, q.projectId, [
      { content: 'Prefers oat milk in coffee', vector: [1, 0, 0] },
      { content: 'Prefers oat milk in the coffee.', vector: [0.99, 0.05, 0] },
      { content: 'In coffee, prefers oat milk', vector: [0.98, 0.1, 0] },
      { content: 'Lives in Porto', vector: [0, 0, 1] },
      { content: 'She lives in Porto', vector: [0, 0.02, 1] },
    ]);
    const small = (await merge({ maxClusterSize: 2 }, q.projectId)).json();
    expect(small).toMatchObject({ clustersFound: 2, clustersMerged: 1, clustersAbstained: 1 });
    expect(small.clusters[0]).toMatchObject({ merged: false, abstainedBecause: expect.stringContaining('maxClusterSize 2') });
    // The largest group comes first: with maxClusters 1 only the group of three is considered.
    const one = (await merge({ maxClusters: 1 }, q.projectId)).json();
    expect(one).toMatchObject({ clustersFound: 2, clustersMerged: 1, clustersAbstained: 0, memoriesSuperseded: 2 });
    expect(one.clusters).toHaveLength(1);
  });

  it('measures a group by its least alike pair', () => {
    const member = (content: string, vector: number[]) => ({ id: content, content, vector: unit(vector), scope: 'project', subjectKey: '', status: 'confirmed', importance: 5, confidence: 1, touchedAt: 0 });
    const group = CHAIN.map((c) => member(c, [0, 1, 0]));
    expect(weakestPair(group)).toBeCloseTo(weakestPair([group[0]!, group[2]!]), 12);
    expect(weakestPair(group)).toBeLessThan(0.8);
    expect(weakestPair([group[0]!, group[1]!])).toBeGreaterThanOrEqual(0.8);
    expect(weakestPair([group[0]!])).toBe(1);
  });

  it('refuses bad input, READ keys, and other projects', async () => {
    for (const body of [{ threshold: 2 }, { threshold: 0.1 }, { maxClusters: 0 }, { maxClusters: 1001 }, { maxClusterSize: 1 }, { dryRun: 'no' }, { unknown: 1 }]) {
      const res = await merge(body);
      expect(res.statusCode, JSON.stringify(body)).toBe(400);
      expect(res.json().code).toBe('VALIDATION_ERROR');
    }
    const reader = await h.key(p.projectId, ['READ_MEMORY']);
    expect((await merge({}, p.projectId, reader)).statusCode).toBe(403);
    const other = await h.project();
    expect((await merge({}, p.projectId, other.apiKey)).statusCode).toBe(404);
    expect((await merge({ threshold: 0.8, dryRun: false }, other.projectId)).json()).toMatchObject({ clustersFound: 0, memoriesSuperseded: 0 });
    // Project A's memories are as the merge above left them.
    expect((await memory(oat[1]!)).status).toBe('confirmed');
  });
});
