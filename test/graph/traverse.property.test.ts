// Traversal against a reference breadth-first search on generated graphs (fast-check): the same
// edges at the same hops, before and after retires, at any asOf, out and both ways, with and
// without a predicate filter.
import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createHarness, type Harness } from '../helpers/harness.js';

interface RefEdge {
  id: string;
  s: number;
  o: number;
  predicate: string;
  from: number;
  to: number | null;
}

const PREDICATES = ['knows', 'likes', 'part_of'];
const T0 = Date.UTC(2024, 0, 1);
const DAY = 86_400_000;
const at = (day: number) => new Date(T0 + day * DAY).toISOString();

/** The reference: hop h takes the valid edges out of (or touching) the entities first reached at depth h - 1. */
function referenceBfs(edges: readonly RefEdge[], seed: number, hops: number, asOf: number, both: boolean, predicates?: readonly string[]): Map<string, number> {
  const valid = edges.filter((e) => e.from <= asOf && (e.to === null || e.to > asOf) && (!predicates || predicates.includes(e.predicate)));
  const depth = new Map<number, number>([[seed, 0]]);
  const found = new Map<string, number>();
  let frontier = [seed];
  for (let h = 1; h <= hops && frontier.length > 0; h++) {
    const next: number[] = [];
    for (const node of frontier) {
      for (const e of valid) {
        const far = e.s === node ? e.o : both && e.o === node ? e.s : undefined;
        if (far === undefined || found.has(e.id)) continue;
        found.set(e.id, h);
        if (!depth.has(far)) {
          depth.set(far, h);
          next.push(far);
        }
      }
    }
    frontier = next;
  }
  return found;
}

const graphs = fc.record({
  nodes: fc.integer({ min: 2, max: 7 }),
  edges: fc.array(
    fc.record({ s: fc.nat(6), o: fc.nat(6), predicate: fc.constantFrom(...PREDICATES), from: fc.integer({ min: 0, max: 20 }), retireAfter: fc.option(fc.integer({ min: 1, max: 20 }), { nil: null }) }),
    { minLength: 1, maxLength: 16 },
  ),
  seed: fc.nat(6),
  hops: fc.integer({ min: 1, max: 3 }),
  asOf: fc.integer({ min: 0, max: 45 }),
  both: fc.boolean(),
  filter: fc.option(fc.subarray(PREDICATES, { minLength: 1 }), { nil: undefined }),
});

describe('traversal', () => {
  let h: Harness;
  beforeAll(async () => {
    h = await createHarness();
  });
  afterAll(async () => h?.close());

  it('answers the reference BFS edges at the reference hops', async () => {
    await fc.assert(
      fc.asyncProperty(graphs, async (g) => {
        const { projectId } = await h.project();
        const ids: string[] = [];
        for (let i = 0; i < g.nodes; i++) ids.push((await h.apis.graph.createEntity(projectId, { type: 'concept', canonicalName: `node ${i}`, validFrom: at(0) })).entity.id);
        const reference: RefEdge[] = [];
        for (const e of g.edges) {
          const s = e.s % g.nodes;
          const o = e.o % g.nodes;
          if (s === o) continue;
          const { edge, created } = await h.apis.graph.createEdge(projectId, { subjectId: ids[s]!, predicate: e.predicate, objectId: ids[o]!, validFrom: at(e.from) });
          if (!created) continue; // the same current fact, strengthened
          let to: number | null = null;
          if (e.retireAfter !== null) {
            to = e.from + e.retireAfter;
            await h.apis.graph.retireEdge(projectId, edge.id, { at: at(to) });
          }
          reference.push({ id: edge.id, s, o, predicate: e.predicate, from: e.from, to });
        }
        const seed = g.seed % g.nodes;
        const answer = await h.apis.graph.traverse(projectId, { entityId: ids[seed]!, hops: g.hops, asOf: at(g.asOf), direction: g.both ? 'both' : 'out', predicates: g.filter });
        const expected = referenceBfs(reference, seed, g.hops, g.asOf, g.both, g.filter);
        expect(new Map(answer.map((e) => [e.id, e.hop]))).toEqual(expected);
        expect(answer).toHaveLength(expected.size);
        for (const e of answer) {
          expect(e.validFrom <= at(g.asOf)).toBe(true);
          expect(e.validTo === null || e.validTo > at(g.asOf)).toBe(true);
        }
      }),
      { numRuns: 30, seed: 20261124 },
    );
  }, 120_000);
});
