// The knowledge graph: entities resolved by name (one entity per normalised name or alias, even
// under concurrent writers), edges with valid time, functional predicates that retire the previous
// current edge, merges that re-point a duplicate's edges, reads at any instant, and traversal.
// Nothing is deleted: retiring closes validTo; a merge supersedes.
import type { Subject } from '../platform/common-schemas.js';
import { clampTo } from '../platform/common-schemas.js';
import type { Db, Queryable } from '../platform/db.js';
import { ConflictError, NotFoundError, ValidationError } from '../platform/errors.js';
import { newId } from '../platform/ids.js';
import { displayName, nameKey, snakePredicate, subjectKey } from './names.js';
import {
  FUNCTIONAL_PREDICATES,
  GRAPH_LIMITS,
  type CreateEdgeBody,
  type CreateEntityBody,
  type Edge,
  type Entity,
  type EntityScope,
  type EntityType,
  type GraphQueryBody,
  type ListEntitiesQuery,
  type RetireBody,
  type TraversalEdge,
  type TraverseBody,
} from './schemas.js';
import * as store from './store/index.js';

const FUNCTIONAL = new Set<string>(FUNCTIONAL_PREDICATES);
const isCurrent = (r: store.EntityRow) => r.valid_to === null && r.superseded_by_id === null;
const time = (value: string | undefined, fallback: Date) => (value === undefined ? fallback : new Date(value));

/** What resolution needs to find or create an entity. */
export interface EntitySpec {
  type: EntityType;
  name: string;
  aliases?: readonly string[];
  subject?: Subject;
  description?: string | null;
  metadata?: Record<string, unknown> | null;
  scope?: EntityScope;
  agentId?: string | null;
  userId?: string | null;
  validFrom?: Date;
}

/** What an edge write needs (the predicate is snake_cased here). */
export interface EdgeSpec {
  subjectId: string;
  predicate: string;
  objectId?: string | null;
  objectLiteral?: string | null;
  weight?: number;
  validFrom?: Date;
  validTo?: Date | null;
  sourceMemoryId?: string | null;
}

export class GraphService {
  constructor(
    private readonly db: Db,
    private readonly settings: { platformExtraction: boolean },
  ) {}

  // ---- entities -------------------------------------------------------------------------------

  /**
   * The live entity a name (or alias, or subject) resolves to, created when none does. Inside the
   * caller's transaction; a concurrent writer creating the same name makes this one answer theirs.
   */
  async resolve(tx: Queryable, projectId: string, spec: EntitySpec): Promise<{ row: store.EntityRow; created: boolean }> {
    const canonical = displayName(spec.name);
    const aliases = [...new Set((spec.aliases ?? []).map(displayName).filter((a) => a !== '' && a !== canonical))];
    const keys = spec.subject ? [subjectKey(spec.subject)] : [...new Set([canonical, ...aliases].map(nameKey).filter((k) => k !== ''))];
    if (keys.length === 0) throw new ValidationError(`the name ${JSON.stringify(spec.name)} has nothing to resolve by (no letters or digits)`);
    for (let attempt = 0; attempt < 3; attempt++) {
      const owned = await store.entitiesByKeys(tx, projectId, keys);
      if (owned.length > 0) {
        const id = owned[0]!.entityId;
        const missing = keys.filter((k) => !owned.some((o) => o.key === k));
        if (missing.length > 0) await store.claimNames(tx, projectId, id, missing);
        if (spec.validFrom) await store.extendBack(tx, projectId, [id], spec.validFrom);
        const [row] = await store.getEntities(tx, projectId, [id]);
        const extra = [canonical, ...aliases].filter((a) => a !== row!.canonical_name && !row!.aliases.includes(a));
        return { row: extra.length > 0 && !spec.subject ? await store.addAliases(tx, projectId, id, extra) : row!, created: false };
      }
      const id = newId('ent');
      const row = await store.insertEntity(tx, projectId, {
        id,
        type: spec.type,
        scope: spec.scope ?? 'project',
        canonicalName: canonical,
        aliases,
        description: spec.description ?? null,
        metadata: spec.metadata ?? null,
        subject: spec.subject ?? null,
        agentId: spec.agentId ?? null,
        userId: spec.userId ?? null,
        validFrom: spec.validFrom ?? new Date(),
      });
      const claimed = await store.claimNames(tx, projectId, id, keys);
      if (claimed.includes(keys[0]!)) return { row, created: true };
      // Another writer took the name between our look and our claim: theirs stands, ours goes.
      await store.deleteEntity(tx, projectId, id);
    }
    throw new ConflictError(`the name ${JSON.stringify(spec.name)} is being written concurrently; try again`);
  }

  async createEntity(projectId: string, body: CreateEntityBody): Promise<{ entity: Entity; created: boolean }> {
    const { row, created } = await this.db.transaction((tx) =>
      this.resolve(tx, projectId, {
        type: body.type,
        name: body.canonicalName,
        aliases: body.aliases,
        subject: body.subject,
        description: body.description,
        metadata: body.metadata,
        scope: body.scope,
        agentId: body.chatbotId,
        userId: body.chatIdentityId,
        validFrom: time(body.validFrom, new Date()),
      }),
    );
    return { entity: store.toEntity(row), created };
  }

  listEntities(projectId: string, query: ListEntitiesQuery): Promise<Entity[]> {
    return store.listEntities(this.db, projectId, query).then((rows) => rows.map(store.toEntity));
  }

  private async entityRow(db: Queryable, projectId: string, id: string, lock = false): Promise<store.EntityRow> {
    const [row] = await store.getEntities(db, projectId, [id], lock);
    if (!row) throw new NotFoundError(`entity ${id} not found`);
    return row;
  }

  /**
   * The entity as of `asOf` (null when it was not valid then) and its outgoing edges then; with
   * `includeRetired`, also the edges into and out of it that had ended by then.
   */
  async entityPage(projectId: string, id: string, query: { asOf?: string; includeRetired?: boolean } = {}): Promise<{ entity: Entity | null; edges: TraversalEdge[]; retiredEdges?: TraversalEdge[] }> {
    const at = time(query.asOf, new Date());
    const row = await this.entityRow(this.db, projectId, id);
    const retiredEdges = query.includeRetired
      ? await this.withEntities(projectId, (await store.endedEdgesOf(this.db, projectId, id, at, GRAPH_LIMITS.edges.max)).map((e) => ({ edge: e, hop: 1 })))
      : undefined;
    const validThen = row.valid_from <= at && (row.valid_to === null || row.valid_to > at);
    if (!validThen) return { entity: null, edges: [], retiredEdges };
    const edges = await store.edgesAt(this.db, projectId, { subjectId: id, at }, GRAPH_LIMITS.edges.max);
    return { entity: store.toEntity(row), edges: await this.withEntities(projectId, edges.map((e) => ({ edge: e, hop: 1 }))), retiredEdges };
  }

  /** Retires an entity and closes its open edges at `at` (default now). Retiring again changes nothing. */
  async retireEntity(projectId: string, id: string, body: RetireBody): Promise<Entity> {
    const at = time(body.at, new Date());
    return this.db.transaction(async (tx) => {
      const row = await this.entityRow(tx, projectId, id, true);
      if (!isCurrent(row)) return store.toEntity(row);
      if (at < row.valid_from) throw new ValidationError(`at (${at.toISOString()}) is before the entity's validFrom (${row.valid_from.toISOString()})`);
      await store.releaseNames(tx, projectId, id);
      await store.endEdgesOf(tx, projectId, id, at);
      return store.toEntity(await store.endEntity(tx, projectId, id, at, null));
    });
  }

  /**
   * Folds a duplicate into the entity that survives: the duplicate is superseded (validTo now,
   * supersededById), its names and aliases become the survivor's, its edges and mentions point at
   * the survivor (an edge the survivor already has is closed instead, its weight kept on the
   * survivor's), and a functional predicate left with two current edges keeps the newer.
   */
  async mergeEntity(projectId: string, duplicateId: string, intoId: string): Promise<Entity> {
    if (duplicateId === intoId) throw new ValidationError('an entity cannot be merged into itself');
    const now = new Date();
    return this.db.transaction(async (tx) => {
      const rows = await store.getEntities(tx, projectId, [duplicateId, intoId], true);
      const duplicate = rows.find((r) => r.id === duplicateId);
      const into = rows.find((r) => r.id === intoId);
      if (!duplicate) throw new NotFoundError(`entity ${duplicateId} not found`);
      if (!into) throw new NotFoundError(`entity ${intoId} not found`);
      if (!isCurrent(duplicate) || !isCurrent(into)) throw new ConflictError('both entities must be current to merge');
      await store.repointEntity(tx, projectId, duplicateId, intoId, now);
      await store.addAliases(tx, projectId, intoId, [duplicate.canonical_name, ...duplicate.aliases].filter((a) => a !== into.canonical_name));
      for (const predicate of FUNCTIONAL_PREDICATES) {
        const open = await store.openEdges(tx, projectId, intoId, predicate);
        const newest = open.at(-1);
        for (const e of open.slice(0, -1)) await store.endEdge(tx, projectId, e.id, newest!.valid_from);
      }
      await store.endEntity(tx, projectId, duplicateId, now, intoId);
      return store.toEntity(await this.entityRow(tx, projectId, intoId));
    });
  }

  // ---- edges ----------------------------------------------------------------------------------

  /**
   * Writes an edge inside the caller's transaction. The same current fact (subject, predicate,
   * other end) is strengthened rather than repeated. A functional predicate closes the subject's
   * current edge at the new one's validFrom; a fact older than the current one is kept as history
   * (closed where the current one begins).
   */
  async addEdge(tx: Queryable, projectId: string, spec: EdgeSpec): Promise<{ row: store.EdgeRow; created: boolean }> {
    const predicate = snakePredicate(spec.predicate);
    if (predicate === '') throw new ValidationError('predicate must contain a letter or digit');
    const objectId = spec.objectId ?? null;
    const objectLiteral = spec.objectLiteral ?? null;
    if ((objectId === null) === (objectLiteral === null)) throw new ValidationError('exactly one of objectId and objectLiteral is required');
    const subject = await this.entityRow(tx, projectId, spec.subjectId, true);
    if (!isCurrent(subject)) throw new ConflictError(`entity ${spec.subjectId} is retired`);
    if (objectId !== null) {
      if (objectId === spec.subjectId) throw new ValidationError('an edge cannot point at its own subject');
      const object = await this.entityRow(tx, projectId, objectId);
      if (!isCurrent(object)) throw new ConflictError(`entity ${objectId} is retired`);
    }
    const validFrom = spec.validFrom ?? new Date();
    const validTo = spec.validTo ?? null;
    if (validTo !== null && validTo <= validFrom) throw new ValidationError('validTo must be after validFrom');
    const edge = (to: Date | null): store.NewEdge => ({
      id: newId('edge'),
      subjectId: spec.subjectId,
      predicate,
      objectId,
      objectLiteral,
      weight: spec.weight ?? 1,
      sourceMemoryId: spec.sourceMemoryId ?? null,
      validFrom,
      validTo: to,
    });
    await store.extendBack(tx, projectId, objectId === null ? [spec.subjectId] : [spec.subjectId, objectId], validFrom);
    if (validTo !== null) return { row: await store.insertEdge(tx, projectId, edge(validTo)), created: true };
    const open = await store.openEdges(tx, projectId, spec.subjectId, predicate);
    const same = open.find((e) => e.object_id === objectId && e.object_literal === objectLiteral);
    if (same) return { row: await store.strengthenEdge(tx, projectId, same.id, spec.weight ?? 1), created: false };
    if (FUNCTIONAL.has(predicate)) {
      // A fact older than one the graph holds already is history: it ends where the next begins.
      const next = await store.nextStart(tx, projectId, spec.subjectId, predicate, validFrom);
      if (next !== undefined) return { row: await store.insertEdge(tx, projectId, edge(next)), created: true };
      for (const e of open) await store.endEdge(tx, projectId, e.id, validFrom);
    }
    return { row: await store.insertEdge(tx, projectId, edge(null)), created: true };
  }

  /** An edge from the admin route; its sourceMemoryId, when given, must be a memory of the project, and is linked to both entities. */
  async createEdge(projectId: string, body: CreateEdgeBody): Promise<{ edge: Edge; created: boolean }> {
    const { row, created } = await this.db.transaction(async (tx) => {
      if (body.sourceMemoryId !== undefined && !(await store.memoryExists(tx, projectId, body.sourceMemoryId))) throw new NotFoundError(`memory ${body.sourceMemoryId} not found`);
      const written = await this.addEdge(tx, projectId, {
        ...body,
        validFrom: body.validFrom === undefined ? undefined : new Date(body.validFrom),
        validTo: body.validTo === undefined ? undefined : new Date(body.validTo),
      });
      if (body.sourceMemoryId !== undefined) await store.addMentions(tx, projectId, body.sourceMemoryId, [written.row.subject_id, ...(written.row.object_id === null ? [] : [written.row.object_id])]);
      return written;
    });
    return { edge: store.toEdge(row), created };
  }

  /** Closes an edge at `at` (default now); an edge already closed is answered as it is. */
  async retireEdge(projectId: string, id: string, body: RetireBody): Promise<Edge> {
    const at = time(body.at, new Date());
    return this.db.transaction(async (tx) => {
      const row = await store.getEdge(tx, projectId, id, true);
      if (!row) throw new NotFoundError(`edge ${id} not found`);
      if (row.valid_to !== null) return store.toEdge(row);
      if (at < row.valid_from) throw new ValidationError(`at (${at.toISOString()}) is before the edge's validFrom (${row.valid_from.toISOString()})`);
      return store.toEdge(await store.endEdge(tx, projectId, id, at));
    });
  }

  /** Every edge valid at `asOf`, with its entities (hop 0). */
  async listEdges(projectId: string, query: { asOf?: string; limit?: number; offset?: number }): Promise<TraversalEdge[]> {
    const rows = await store.edgesAt(this.db, projectId, { at: time(query.asOf, new Date()) }, Math.round(clampTo(query.limit, GRAPH_LIMITS.edges)), query.offset ?? 0);
    return this.withEntities(projectId, rows.map((edge) => ({ edge, hop: 0 })));
  }

  async query(projectId: string, body: GraphQueryBody): Promise<{ edges: Edge[] }> {
    const rows = await store.edgesAt(
      this.db,
      projectId,
      { subjectId: body.subjectId, predicate: body.predicate === undefined ? undefined : snakePredicate(body.predicate), at: time(body.asOf, new Date()) },
      Math.round(clampTo(body.limit, GRAPH_LIMITS.query)),
    );
    return { edges: rows.map(store.toEdge) };
  }

  /**
   * Breadth-first from the seed, hop by hop, over the edges valid at `asOf`: at most
   * GRAPH_LIMITS.fanOut edges per entity and direction each hop (strongest, then newest, then id),
   * each edge answered once at the hop it is first reached, each entity expanded once (cycles end
   * there), literal objects never expanded, at most `limit` edges in all (a hop that would pass it
   * takes every entity's strongest edge before any entity's second).
   */
  async traverse(projectId: string, body: TraverseBody): Promise<TraversalEdge[]> {
    const at = time(body.asOf, new Date());
    const hops = Math.round(clampTo(body.hops, GRAPH_LIMITS.hops));
    const both = body.direction === 'both';
    const predicates = body.predicates?.map(snakePredicate);
    await this.entityRow(this.db, projectId, body.entityId);
    const expanded = new Set<string>([body.entityId]);
    const seen = new Set<string>();
    const found: { edge: store.EdgeRow; hop: number }[] = [];
    let frontier = [body.entityId];
    const cap = Math.round(clampTo(body.limit, GRAPH_LIMITS.traversal));
    for (let hop = 1; hop <= hops && frontier.length > 0 && found.length < cap; hop++) {
      // Edges already answered may come again (from the far side): ask for that many more.
      const rows = await store.hopEdges(this.db, projectId, frontier, { at, predicates, both, fanOut: GRAPH_LIMITS.fanOut, limit: cap - found.length + (both ? found.length : 0) });
      const next: string[] = [];
      for (const edge of rows) {
        if (seen.has(edge.id) || found.length >= cap) continue;
        seen.add(edge.id);
        found.push({ edge, hop });
        const far = edge.from_id === edge.subject_id ? edge.object_id : edge.subject_id;
        if (far !== null && !expanded.has(far)) {
          expanded.add(far);
          next.push(far);
        }
      }
      frontier = next;
    }
    return this.withEntities(projectId, found);
  }

  private async withEntities(projectId: string, edges: readonly { edge: store.EdgeRow; hop: number }[]): Promise<TraversalEdge[]> {
    const ids = [...new Set(edges.flatMap(({ edge }) => (edge.object_id === null ? [edge.subject_id] : [edge.subject_id, edge.object_id])))];
    const entities = new Map((await store.getEntities(this.db, projectId, ids)).map((r) => [r.id, store.toEntity(r)]));
    return edges.map(({ edge, hop }) => {
      const e = store.toEdge(edge);
      return {
        id: e.id,
        subject: entities.get(e.subjectId)!,
        predicate: e.predicate,
        object: e.objectId === null ? null : entities.get(e.objectId)!,
        objectLiteral: e.objectLiteral,
        weight: e.weight,
        validFrom: e.validFrom,
        validTo: e.validTo,
        sourceMemoryId: e.sourceMemoryId,
        hop,
      };
    });
  }

  // ---- stats and settings ---------------------------------------------------------------------

  async stats(projectId: string) {
    const [counts, projectEnabled, pendingMemories] = await Promise.all([store.stats(this.db, projectId), store.extractionEnabled(this.db, projectId), store.countPending(this.db, projectId)]);
    const { extractedMemories, ...rest } = counts;
    return { ...rest, extraction: { platformEnabled: this.settings.platformExtraction, projectEnabled, extractedMemories, pendingMemories } };
  }

  async setExtraction(projectId: string, enabled: boolean) {
    await store.setExtraction(this.db, projectId, enabled);
    return { projectEnabled: enabled, platformEnabled: this.settings.platformExtraction };
  }
}
