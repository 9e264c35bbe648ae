// Recall through the graph: memories that share entities with seed memories (prefetch), the same
// spreading activation as a bounded bonus inside ranked search (associative recall), and the
// onboarding briefing that inherits memories along a person's member_of / part_of chain. Read-only.
import type { Memory } from '../memory/schemas.js';
import type { MemoryApi } from '../memory/index.js';
import { clamp, clampTo } from '../platform/common-schemas.js';
import type { Db } from '../platform/db.js';
import { NotFoundError } from '../platform/errors.js';
import type { WorkerPool } from '../platform/pool.js';
import { GRAPH_LIMITS } from './schemas.js';
import * as store from './store/index.js';

/** Distinct shared entities at which a search candidate's associative bonus is full. */
const FULL_BONUS_SHARED = 3;
const BRIEFING_TOKENS = { default: 2000, min: 200, max: 16_000 } as const;
const BRIEFING_MEMORIES_PER_ENTITY = 50;
/** The chain a briefing inherits along. */
const CHAIN_PREDICATES = ['member_of', 'part_of'];

/** A contact's part of the graph (GET /lattice/contacts/{contactId}/context). */
export interface SubjectGraph {
  entities: { id: string; kind: string; name: string; metadata: Record<string, unknown> }[];
  edges: { id: string; sourceEntityId: string; targetEntityId: string; kind: string; weight: number }[];
  /** Of the entities, those that stand for one of the subjects. */
  subjectEntityIds: string[];
}

/** Seed entities of a contact's graph, and entities and edges it answers, at most. */
export const SUBJECT_GRAPH_LIMITS = { seeds: 50, edges: 200 } as const;

export class GraphRecall {
  constructor(
    private readonly db: Db,
    private readonly memory: Pick<MemoryApi, 'getMany'>,
    private readonly pool: Pick<WorkerPool, 'run'>,
  ) {}

  /**
   * Other live memories that mention the seeds' entities, most distinct shared entities first
   * (ties by memory id): deterministic and read-only. Every seed must be a memory of the project.
   */
  async prefetch(projectId: string, seedMemoryIds: readonly string[], limit?: number): Promise<Memory[]> {
    const seeds = [...new Set(seedMemoryIds)];
    const known = new Set((await this.memory.getMany(projectId, seeds)).map((m) => m.id));
    const missing = seeds.find((id) => !known.has(id));
    if (missing !== undefined) throw new NotFoundError(`memory ${missing} not found`);
    const rows = await store.relatedMemories(this.db, projectId, seeds, Math.round(clampTo(limit, GRAPH_LIMITS.prefetch)));
    const byId = new Map((await this.memory.getMany(projectId, rows.map((r) => r.memory_id))).map((m) => [m.id, m]));
    return rows.flatMap((r) => (byId.has(r.memory_id) ? [byId.get(r.memory_id)!] : []));
  }

  /**
   * The associative bonus of search candidates, in [0, 1]: activation spreads from every candidate
   * to the others through the entities they mention; a candidate sharing entities with
   * FULL_BONUS_SHARED or more distinct other-candidate entities gets the whole bonus.
   */
  async bonus(projectId: string, memoryIds: readonly string[]): Promise<Map<string, number>> {
    if (memoryIds.length < 2) return new Map();
    const rows = await store.sharedEntityCounts(this.db, projectId, memoryIds);
    return new Map(rows.map((r) => [r.memoryId, Math.min(1, r.shared / FULL_BONUS_SHARED)]));
  }

  /**
   * A contact's part of the graph at `at`: the entities standing for its subjects or mentioned in
   * its memories (at most SUBJECT_GRAPH_LIMITS.seeds), and, breadth-first from them over edges
   * between entities valid at `at` (both directions, GRAPH_LIMITS.fanOut per entity and hop), what
   * lies within `hops`, at most SUBJECT_GRAPH_LIMITS.edges edges. Edges to a literal value are left
   * out (an edge here joins two entities).
   */
  async subjectGraph(
    projectId: string,
    subjects: readonly { kind: string; externalId: string }[],
    options: { at: Date; hops: number; memoryIds: readonly string[] },
  ): Promise<SubjectGraph> {
    const seeds = await store.subjectSeedEntities(this.db, projectId, subjects, options.memoryIds, options.at, SUBJECT_GRAPH_LIMITS.seeds);
    const reached = new Set(seeds);
    const edges = new Map<string, store.EdgeRow>();
    let frontier = seeds;
    for (let hop = 1; hop <= options.hops && frontier.length > 0 && edges.size < SUBJECT_GRAPH_LIMITS.edges; hop++) {
      const next: string[] = [];
      for (const e of await store.hopEdges(this.db, projectId, frontier, { at: options.at, both: true, fanOut: GRAPH_LIMITS.fanOut })) {
        if (e.object_id === null || edges.has(e.id) || edges.size >= SUBJECT_GRAPH_LIMITS.edges) continue;
        edges.set(e.id, e);
        for (const id of [e.subject_id, e.object_id]) {
          if (reached.has(id)) continue;
          reached.add(id);
          next.push(id);
        }
      }
      frontier = next;
    }
    const entities = await store.getEntities(this.db, projectId, [...reached]);
    return {
      entities: entities.map((e) => ({ id: e.id, kind: e.type, name: e.canonical_name, metadata: e.metadata ?? {} })),
      edges: [...edges.values()].map((e) => ({ id: e.id, sourceEntityId: e.subject_id, targetEntityId: e.object_id!, kind: e.predicate, weight: Number(e.weight) })),
      subjectEntityIds: entities.filter((e) => subjects.some((s) => s.kind === e.subject_kind && s.externalId === e.subject_external_id)).map((e) => e.id),
    };
  }

  /**
   * A briefing for someone joining through an entity (a person): the entity, the groups it belongs
   * to along member_of / part_of (breadth-first to `depth`, valid at `asOf`, each group once), and
   * the live memories that mention each of them, nearest first and most important first within a
   * level, kept whole until maxTokens (o200k_base) is spent.
   */
  async onboarding(projectId: string, entityId: string, options: { maxTokens?: number; depth?: number; asOf?: string }) {
    const at = options.asOf === undefined ? new Date() : new Date(options.asOf);
    const depth = Math.round(clampTo(options.depth, GRAPH_LIMITS.onboardingDepth));
    const maxTokens = Math.floor(clamp(options.maxTokens, BRIEFING_TOKENS.default, BRIEFING_TOKENS.min, BRIEFING_TOKENS.max));
    const [root] = await store.getEntities(this.db, projectId, [entityId]);
    if (!root) throw new NotFoundError(`entity ${entityId} not found`);
    const chain: { entityId: string; depth: number; via: string | null; from: string | null }[] = [{ entityId, depth: 0, via: null, from: null }];
    const reached = new Set([entityId]);
    let frontier = [entityId];
    for (let d = 1; d <= depth && frontier.length > 0; d++) {
      const edges = await store.hopEdges(this.db, projectId, frontier, { at, predicates: CHAIN_PREDICATES, both: false, fanOut: GRAPH_LIMITS.fanOut });
      const next: string[] = [];
      for (const e of edges) {
        if (e.object_id === null || reached.has(e.object_id)) continue;
        reached.add(e.object_id);
        next.push(e.object_id);
        chain.push({ entityId: e.object_id, depth: d, via: e.predicate, from: e.subject_id });
      }
      frontier = next;
    }
    const entities = new Map((await store.getEntities(this.db, projectId, [...reached])).map((r) => [r.id, store.toEntity(r)]));
    const mentions = await store.liveMentionsOf(this.db, projectId, [...reached], at, BRIEFING_MEMORIES_PER_ENTITY);
    const memories = new Map((await this.memory.getMany(projectId, [...new Set(mentions.map((m) => m.memory_id))])).map((m) => [m.id, m]));
    // Nearest level first; within a level, by importance then recency; each memory once.
    const ordered: { memory: Memory; entityId: string; depth: number }[] = [];
    const placed = new Set<string>();
    for (const link of chain) {
      const own = mentions.filter((m) => m.entity_id === link.entityId).map((m) => memories.get(m.memory_id)).filter((m): m is Memory => m !== undefined);
      for (const m of own) if (!placed.has(m.id)) (placed.add(m.id), ordered.push({ memory: m, entityId: link.entityId, depth: link.depth }));
    }
    ordered.sort((a, b) => a.depth - b.depth || b.memory.importance - a.memory.importance || Date.parse(b.memory.validFrom) - Date.parse(a.memory.validFrom) || (a.memory.id < b.memory.id ? -1 : 1));
    const chainItems = chain.map((c) => ({ entity: entities.get(c.entityId)!.canonicalName, entityId: c.entityId, type: entities.get(c.entityId)!.type, depth: c.depth, via: c.via, from: c.from }));
    const memoryItems = ordered.map((o) => ({ id: o.memory.id, content: o.memory.content, type: o.memory.type, importance: o.memory.importance, validFrom: o.memory.validFrom, entityId: o.entityId, depth: o.depth }));
    const entity = entities.get(entityId)!;
    const fixed = `"entity":${JSON.stringify({ id: entity.id, name: entity.canonicalName, type: entity.type, description: entity.description })}`;
    const budget = await this.pool.run('graph.fit-briefing', {
      maxTokens,
      fixed,
      sections: [
        { name: 'chain', items: chainItems.map((c) => JSON.stringify(c)) },
        { name: 'memories', items: memoryItems.map((m) => JSON.stringify(m)) },
      ],
    });
    const memoriesKept = memoryItems.slice(0, budget.kept[1]);
    return {
      entity,
      chain: chainItems.slice(0, budget.kept[0]),
      memories: memoriesKept,
      provenance: memoriesKept.map((m) => m.id),
      tokensEstimate: budget.tokens,
      maxTokens,
      truncated: budget.truncated,
      asOf: at.toISOString(),
    };
  }
}
