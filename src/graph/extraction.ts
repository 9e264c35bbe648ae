// Extraction: memories linked to the entities they mention and the relations they state. Two ways
// in. The heuristic extractor (extract.ts) runs as a job over the memories of projects that opted
// in (a sweep every EXTRACT_SWEEP_MS picks up new and changed memories) and on demand (backfill).
// MCP clients with their own model take memories from memory_extract_pending, with a ready prompt
// and the content's md5, and hand back entities and edges to memory_commit_extraction, which is
// idempotent by that hash and refuses a stale one. Either way each memory's edges carry it as
// sourceMemoryId, and re-extracting a changed memory closes the edges it no longer states.
import type { Subject } from '../platform/common-schemas.js';
import { clampTo } from '../platform/common-schemas.js';
import type { Db, Queryable } from '../platform/db.js';
import { ConflictError, NotFoundError } from '../platform/errors.js';
import type { JobHandlers } from '../platform/queue.js';
import { extractGraph, SUBJECT, type ExtractedType } from './extract.js';
import { nameKey } from './names.js';
import { ENTITY_TYPES, GRAPH_LIMITS, type EntityType } from './schemas.js';
import type { GraphService } from './service.js';
import * as store from './store/index.js';

export type GraphJobs = {
  'graph.extract-sweep': { payload: Record<string, never>; result: { projects: number; extracted: number } };
};

/** How often the sweep looks for memories to extract in opted-in projects. */
export const EXTRACT_SWEEP_MS = 15_000;
/** Memories one project gives one sweep; the next sweep takes the rest. */
const SWEEP_BATCH = 500;
/** Weights of extracted edges: the heuristic's guess, and a caller's model (SDK-WIRE.md 8). */
const HEURISTIC_WEIGHT = 0.7;
const CALLER_WEIGHT = 0.9;
const PENDING_LIMIT = { default: 10, min: 1, max: 50 } as const;
/** memory_extract_pending skips texts shorter than this (SDK-WIRE.md 8). */
const MIN_EXTRACT_LENGTH = 12;

const TYPE_OF: Record<ExtractedType, EntityType> = { person: 'person', org: 'org', location: 'location', product: 'product', date: 'other' };

export const EXTRACTION_SYSTEM_PROMPT =
  'You extract a knowledge graph from one memory an AI agent stored about a person it serves. Answer JSON only: ' +
  '{"entities":[{"name":string,"type":"person"|"org"|"product"|"location"|"concept"|"event"|"document"|"other"}],' +
  '"edges":[{"subject":string,"predicate":string,"object":string,"object_is_entity":boolean}]}. ' +
  'Entities: the people, organisations, places, products and calendar dates the text names, each once, without honorifics. ' +
  'Edges: facts the text states, with snake_case predicates such as works_at, lives_in, prefers, member_of, part_of; ' +
  'use "@subject" for the person the memory is about ("I", "my", an unnamed "she"). Skip negated and hypothetical statements.';

export interface CommitInput {
  memoryId: string;
  contentHash: string;
  entities: readonly { name: string; type: string }[];
  edges: readonly { subject: string; predicate: string; object: string; object_is_entity?: boolean }[];
}

const subjectOf = (m: store.PendingMemory): Subject | null => (m.subject_kind === null ? null : { kind: m.subject_kind, externalId: m.subject_external_id! });

export class GraphExtraction {
  constructor(
    private readonly db: Db,
    private readonly graph: Pick<GraphService, 'resolve' | 'addEdge'>,
    private readonly settings: { platformExtraction: boolean },
  ) {}

  /** Writes one memory's entities, mentions and edges, and marks it extracted, in the caller's transaction. */
  private async write(
    tx: Queryable,
    projectId: string,
    m: store.PendingMemory,
    found: { entities: { name: string; type: EntityType; aliases?: string[]; metadata?: Record<string, unknown> }[]; edges: { subject: string; predicate: string; object: string; objectIsEntity: boolean }[] },
    method: 'heuristic' | 'caller',
  ): Promise<{ entities: number; edges: number }> {
    const ids = new Map<string, string>();
    const resolve = async (name: string, type: EntityType, extra: { aliases?: string[]; metadata?: Record<string, unknown> } = {}): Promise<string | undefined> => {
      const subject = subjectOf(m);
      if (name === SUBJECT) {
        if (!subject) return undefined;
        if (!ids.has(SUBJECT)) ids.set(SUBJECT, (await this.graph.resolve(tx, projectId, { type: 'person', name: subject.externalId, subject, validFrom: m.valid_from })).row.id);
        return ids.get(SUBJECT);
      }
      if (!ids.has(name)) ids.set(name, (await this.graph.resolve(tx, projectId, { type, name, ...extra, validFrom: m.valid_from })).row.id);
      return ids.get(name);
    };
    for (const e of found.entities) await resolve(e.name, e.type, e);
    const mentioned = [...new Set(found.entities.map((e) => ids.get(e.name)!))];
    const kept: string[] = [];
    for (const e of found.edges) {
      const subjectId = await resolve(e.subject, 'other');
      const objectId = e.objectIsEntity ? await resolve(e.object, 'other') : null;
      if (subjectId === undefined || (e.objectIsEntity && objectId === undefined) || subjectId === objectId) continue;
      const { row } = await this.graph.addEdge(tx, projectId, {
        subjectId,
        predicate: e.predicate,
        objectId,
        objectLiteral: e.objectIsEntity ? null : e.object,
        weight: method === 'caller' ? CALLER_WEIGHT : HEURISTIC_WEIGHT,
        validFrom: m.valid_from,
        sourceMemoryId: m.id,
      });
      kept.push(row.id);
    }
    // What the memory stated before and no longer does is closed now.
    await store.endEdgesOfMemoryExcept(tx, projectId, m.id, kept);
    await store.replaceMentions(tx, projectId, m.id, mentioned);
    await store.markExtracted(tx, projectId, m.id, { contentHash: m.content_hash, method, entities: mentioned.length, edges: kept.length });
    return { entities: mentioned.length, edges: kept.length };
  }

  /** The heuristic extraction of one memory; a sentence-initial word is linked when the project knows it as an entity. */
  private extractOne(projectId: string, m: store.PendingMemory) {
    const { entities, relations, uncertain } = extractGraph(m.content);
    return this.db.transaction(async (tx) => {
      const known = await store.entitiesByKeys(tx, projectId, uncertain.map(nameKey));
      const knownRows = await store.getEntities(tx, projectId, known.map((k) => k.entityId));
      return this.write(
        tx,
        projectId,
        m,
        {
          entities: [
            ...entities.map((e) =>
              e.type === 'date' ? { name: e.iso!, type: TYPE_OF.date, aliases: [e.name], metadata: { kind: 'date', date: e.iso } } : { name: e.name, type: TYPE_OF[e.type] },
            ),
            ...knownRows.map((r) => ({ name: r.canonical_name, type: r.type })),
          ],
          edges: relations.map((r) => ({ subject: r.subject, predicate: r.predicate, object: entities.find((e) => e.name === r.object && e.type === 'date')?.iso ?? r.object, objectIsEntity: true })),
        },
        'heuristic',
      );
    });
  }

  /** Extracts up to `limit` pending memories of the project, oldest first. */
  private async extractPending(projectId: string, limit: number) {
    const pending = await store.pendingMemories(this.db, projectId, limit);
    let entitiesLinked = 0;
    let edgesCreated = 0;
    for (const m of pending) {
      const { entities, edges } = await this.extractOne(projectId, m);
      entitiesLinked += entities;
      edgesCreated += edges;
    }
    return { processed: pending.length, entitiesLinked, edgesCreated };
  }

  /** On demand: extracts a batch of the project's pending memories and says how many are left. */
  async backfill(projectId: string, limit?: number) {
    if (!this.settings.platformExtraction) throw new ConflictError('graph extraction is turned off for this deployment (GRAPH_EXTRACTION_ENABLED=false)');
    if (!(await store.extractionEnabled(this.db, projectId))) throw new ConflictError('graph extraction is off for this project: POST /admin/memory/graph/extraction/toggle {"enabled": true} first');
    const started = performance.now();
    const done = await this.extractPending(projectId, Math.round(clampTo(limit, GRAPH_LIMITS.backfill)));
    return { ...done, remaining: await store.countPending(this.db, projectId), durationMs: performance.now() - started };
  }

  /** The job: every opted-in project's pending memories, a batch each. */
  async sweep(): Promise<{ projects: number; extracted: number }> {
    if (!this.settings.platformExtraction) return { projects: 0, extracted: 0 };
    let extracted = 0;
    const projects = await store.projectsWithPending(this.db);
    for (const projectId of projects) extracted += (await this.extractPending(projectId, SWEEP_BATCH)).processed;
    return { projects: projects.length, extracted };
  }

  /** memory_extract_pending: memories not yet extracted (or changed since), each with a ready prompt. */
  async pending(projectId: string, limit?: number) {
    const rows = await store.pendingMemories(this.db, projectId, Math.round(clampTo(limit, PENDING_LIMIT)), MIN_EXTRACT_LENGTH);
    return rows.map((m) => ({
      memoryId: m.id,
      contentHash: m.content_hash,
      type: m.type,
      scope: m.scope,
      content: m.content,
      systemPrompt: EXTRACTION_SYSTEM_PROMPT,
      userPrompt: `Memory (${m.type}${m.subject_kind === null ? '' : `, about ${m.subject_kind} ${m.subject_external_id}`}):\n${m.content}`,
    }));
  }

  /**
   * memory_commit_extraction: the caller's entities and edges for one memory. A hash that is not
   * the memory's current content's is refused (status rejected); the same hash committed again
   * changes nothing (status unchanged). Unknown entity types become other; predicates are snake_cased.
   */
  async commit(projectId: string, input: CommitInput) {
    return this.db.transaction(async (tx) => {
      const m = await store.memoryForExtraction(tx, projectId, input.memoryId);
      if (!m) throw new NotFoundError(`memory ${input.memoryId} not found`);
      if (m.content_hash !== input.contentHash) {
        return { status: 'rejected' as const, memoryId: m.id, reason: 'stale contentHash: the memory changed since memory_extract_pending handed it out; take it again', entities: 0, edges: 0 };
      }
      const mark = await store.extractionMark(tx, projectId, m.id);
      if (mark?.content_hash === input.contentHash && mark.method === 'caller') return { status: 'unchanged' as const, memoryId: m.id, reason: null, entities: 0, edges: 0 };
      const typeOf = (t: string): EntityType => ((ENTITY_TYPES as readonly string[]).includes(t.toLowerCase()) ? (t.toLowerCase() as EntityType) : 'other');
      const written = await this.write(
        tx,
        projectId,
        m,
        {
          entities: input.entities.filter((e) => e.name.trim() !== '' && e.name !== SUBJECT).map((e) => ({ name: e.name, type: typeOf(e.type) })),
          edges: input.edges.map((e) => ({ subject: e.subject, predicate: e.predicate, object: e.object, objectIsEntity: e.object_is_entity === true })),
        },
        'caller',
      );
      return { status: 'committed' as const, memoryId: m.id, reason: null, ...written };
    });
  }
}

export function graphJobs(extraction: GraphExtraction): JobHandlers<GraphJobs> {
  return { 'graph.extract-sweep': () => extraction.sweep() };
}
