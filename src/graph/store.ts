// The graph's rows: entities with their resolution names, edges, mentions, extraction marks and
// settings. A read "at" an instant sees the rows valid then: valid_from <= at < valid_to (or no
// valid_to). Plain SQL; every statement is scoped by project.
import type { Subject } from '../platform/common-schemas.js';
import type { Queryable } from '../platform/db.js';
import { Conditions, iso } from '../platform/sql.js';
import type { Edge, Entity, EntityType, ListEntitiesQuery } from './schemas.js';

export interface EntityRow {
  project_id: string;
  id: string;
  type: string;
  scope: string;
  canonical_name: string;
  aliases: string[];
  description: string | null;
  metadata: Record<string, unknown> | null;
  subject_kind: string | null;
  subject_external_id: string | null;
  agent_id: string | null;
  user_id: string | null;
  valid_from: Date;
  valid_to: Date | null;
  superseded_by_id: string | null;
  created_at: Date;
  updated_at: Date;
}

export interface EdgeRow {
  id: string;
  subject_id: string;
  predicate: string;
  object_id: string | null;
  object_literal: string | null;
  weight: number;
  source_memory_id: string | null;
  valid_from: Date;
  valid_to: Date | null;
}

const ENTITY_COLUMNS = `project_id, id, type, scope, canonical_name, aliases, description, metadata, subject_kind, subject_external_id, agent_id, user_id,
  valid_from, valid_to, superseded_by_id, created_at, updated_at`;
const EDGE_COLUMNS = `id, subject_id, predicate, object_id, object_literal, weight, source_memory_id, valid_from, valid_to`;

/** Valid at the instant given by the placeholder `at`, for table alias `t`. */
export const validAt = (t: string, at: string) => `${t}.valid_from <= ${at}::timestamptz AND (${t}.valid_to IS NULL OR ${t}.valid_to > ${at}::timestamptz)`;

export const toEntity = (r: EntityRow): Entity => ({
  id: r.id,
  created: iso(r.created_at),
  updated: iso(r.updated_at),
  platformId: r.project_id,
  projectId: r.project_id,
  brainId: null,
  locationId: null,
  chatbotId: r.agent_id,
  chatIdentityId: r.user_id,
  scope: r.scope,
  type: r.type,
  canonicalName: r.canonical_name,
  aliases: r.aliases,
  description: r.description,
  metadata: r.metadata,
  subject: r.subject_kind === null ? null : { kind: r.subject_kind, externalId: r.subject_external_id! },
  validFrom: iso(r.valid_from),
  validTo: iso(r.valid_to),
  supersededById: r.superseded_by_id,
});

export const toEdge = (r: EdgeRow): Edge => ({
  id: r.id,
  subjectId: r.subject_id,
  predicate: r.predicate,
  objectId: r.object_id,
  objectLiteral: r.object_literal,
  weight: Number(r.weight),
  validFrom: iso(r.valid_from),
  validTo: iso(r.valid_to),
  sourceMemoryId: r.source_memory_id,
});

// ---- entities -------------------------------------------------------------------------------

export interface NewEntity {
  id: string;
  type: EntityType;
  scope: string;
  canonicalName: string;
  aliases: string[];
  description: string | null;
  metadata: Record<string, unknown> | null;
  subject: Subject | null;
  agentId: string | null;
  userId: string | null;
  validFrom: Date;
}

export async function insertEntity(db: Queryable, projectId: string, e: NewEntity): Promise<EntityRow> {
  const { rows } = await db.query<EntityRow>(
    `INSERT INTO graph_entities (project_id, id, type, scope, canonical_name, aliases, description, metadata, subject_kind, subject_external_id, agent_id, user_id, valid_from)
     VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13) RETURNING ${ENTITY_COLUMNS}`,
    [projectId, e.id, e.type, e.scope, e.canonicalName, e.aliases, e.description, e.metadata, e.subject?.kind ?? null, e.subject?.externalId ?? null, e.agentId, e.userId, e.validFrom.toISOString()],
  );
  return rows[0]!;
}

export async function getEntities(db: Queryable, projectId: string, ids: readonly string[], lock = false): Promise<EntityRow[]> {
  if (ids.length === 0) return [];
  const { rows } = await db.query<EntityRow>(
    `SELECT ${ENTITY_COLUMNS} FROM graph_entities WHERE project_id = $1 AND id = ANY($2::text[]) ORDER BY id${lock ? ' FOR UPDATE' : ''}`,
    [projectId, ids],
  );
  return rows;
}

/** The live entities that own any of these name keys, in the order of the keys. */
export async function entitiesByKeys(db: Queryable, projectId: string, keys: readonly string[]): Promise<{ key: string; entityId: string }[]> {
  if (keys.length === 0) return [];
  const { rows } = await db.query<{ name_key: string; entity_id: string }>(
    `SELECT name_key, entity_id FROM graph_entity_names WHERE project_id = $1 AND name_key = ANY($2::text[])`,
    [projectId, keys],
  );
  const byKey = new Map(rows.map((r) => [r.name_key, r.entity_id]));
  return keys.flatMap((key) => (byKey.has(key) ? [{ key, entityId: byKey.get(key)! }] : []));
}

/** Claims name keys for an entity; answers the keys it got (a key another entity holds is not taken). */
export async function claimNames(db: Queryable, projectId: string, entityId: string, keys: readonly string[]): Promise<string[]> {
  if (keys.length === 0) return [];
  const { rows } = await db.query<{ name_key: string }>(
    `INSERT INTO graph_entity_names (project_id, name_key, entity_id) SELECT $1, k, $2 FROM unnest($3::text[]) AS k
     ON CONFLICT (project_id, name_key) DO NOTHING RETURNING name_key`,
    [projectId, entityId, [...new Set(keys)]],
  );
  return rows.map((r) => r.name_key);
}

export async function releaseNames(db: Queryable, projectId: string, entityId: string): Promise<void> {
  await db.query(`DELETE FROM graph_entity_names WHERE project_id = $1 AND entity_id = $2`, [projectId, entityId]);
}

export async function deleteEntity(db: Queryable, projectId: string, entityId: string): Promise<void> {
  await db.query(`DELETE FROM graph_entities WHERE project_id = $1 AND id = $2`, [projectId, entityId]);
}

export async function addAliases(db: Queryable, projectId: string, entityId: string, aliases: readonly string[]): Promise<EntityRow> {
  const { rows } = await db.query<EntityRow>(
    `UPDATE graph_entities SET aliases = ARRAY(SELECT DISTINCT unnest(aliases || $3::text[]) ORDER BY 1), updated_at = now()
      WHERE project_id = $1 AND id = $2 RETURNING ${ENTITY_COLUMNS}`,
    [projectId, entityId, aliases],
  );
  return rows[0]!;
}

export async function endEntity(db: Queryable, projectId: string, entityId: string, at: Date, supersededById: string | null): Promise<EntityRow> {
  const { rows } = await db.query<EntityRow>(
    `UPDATE graph_entities SET valid_to = greatest(valid_from, $3::timestamptz), superseded_by_id = $4, retired_at = now(), updated_at = now()
      WHERE project_id = $1 AND id = $2 RETURNING ${ENTITY_COLUMNS}`,
    [projectId, entityId, at.toISOString(), supersededById],
  );
  return rows[0]!;
}

export async function listEntities(db: Queryable, projectId: string, q: ListEntitiesQuery): Promise<EntityRow[]> {
  const where = new Conditions();
  where.add('e.project_id = ?', projectId);
  where.add('e.type = ?', q.type);
  where.add('e.scope = ?', q.scope);
  if (!q.includeRetired) where.add('e.valid_to IS NULL AND e.superseded_by_id IS NULL');
  where.add('EXISTS (SELECT 1 FROM graph_mentions m WHERE m.project_id = e.project_id AND m.entity_id = e.id AND m.memory_id = ?)', q.memoryId);
  if (q.search !== undefined && q.search.trim() !== '') {
    const pattern = where.param(`%${q.search.trim().toLowerCase().replace(/[\\%_]/g, (c) => `\\${c}`)}%`);
    where.add(`(lower(e.canonical_name) LIKE ${pattern} OR EXISTS (SELECT 1 FROM unnest(e.aliases) AS a WHERE lower(a) LIKE ${pattern}))`);
  }
  const { rows } = await db.query<EntityRow>(
    `SELECT ${ENTITY_COLUMNS} FROM graph_entities e WHERE ${where.sql}
      ORDER BY lower(e.canonical_name), e.id LIMIT ${where.param(q.limit ?? 50)} OFFSET ${where.param(q.offset ?? 0)}`,
    where.params,
  );
  return rows;
}

/** The live entity standing for a subject. */
export async function subjectEntity(db: Queryable, projectId: string, subject: Subject): Promise<EntityRow | undefined> {
  const { rows } = await db.query<EntityRow>(
    `SELECT ${ENTITY_COLUMNS} FROM graph_entities
      WHERE project_id = $1 AND subject_kind = $2 AND subject_external_id = $3 AND valid_to IS NULL AND superseded_by_id IS NULL`,
    [projectId, subject.kind, subject.externalId],
  );
  return rows[0];
}

// ---- edges ----------------------------------------------------------------------------------

export interface NewEdge {
  id: string;
  subjectId: string;
  predicate: string;
  objectId: string | null;
  objectLiteral: string | null;
  weight: number;
  sourceMemoryId: string | null;
  validFrom: Date;
  validTo: Date | null;
}

export async function insertEdge(db: Queryable, projectId: string, e: NewEdge): Promise<EdgeRow> {
  const { rows } = await db.query<EdgeRow>(
    `INSERT INTO graph_edges (project_id, id, subject_id, predicate, object_id, object_literal, weight, source_memory_id, valid_from, valid_to, retired_at)
     VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, CASE WHEN $10::timestamptz IS NULL THEN NULL ELSE now() END) RETURNING ${EDGE_COLUMNS}`,
    [projectId, e.id, e.subjectId, e.predicate, e.objectId, e.objectLiteral, e.weight, e.sourceMemoryId, e.validFrom.toISOString(), e.validTo?.toISOString() ?? null],
  );
  return rows[0]!;
}

export async function getEdge(db: Queryable, projectId: string, id: string, lock = false): Promise<EdgeRow | undefined> {
  const { rows } = await db.query<EdgeRow>(`SELECT ${EDGE_COLUMNS} FROM graph_edges WHERE project_id = $1 AND id = $2${lock ? ' FOR UPDATE' : ''}`, [projectId, id]);
  return rows[0];
}

/** The subject's open edges (valid_to unset) with this predicate. */
export async function openEdges(db: Queryable, projectId: string, subjectId: string, predicate: string): Promise<EdgeRow[]> {
  const { rows } = await db.query<EdgeRow>(
    `SELECT ${EDGE_COLUMNS} FROM graph_edges WHERE project_id = $1 AND subject_id = $2 AND predicate = $3 AND valid_to IS NULL ORDER BY valid_from, id`,
    [projectId, subjectId, predicate],
  );
  return rows;
}

/** The earliest start of the subject's edges with this predicate that begin after `after`. */
export async function nextStart(db: Queryable, projectId: string, subjectId: string, predicate: string, after: Date): Promise<Date | undefined> {
  const { rows } = await db.query<{ start: Date | null }>(
    `SELECT min(valid_from) AS start FROM graph_edges WHERE project_id = $1 AND subject_id = $2 AND predicate = $3 AND valid_from > $4::timestamptz`,
    [projectId, subjectId, predicate, after.toISOString()],
  );
  return rows[0]?.start ?? undefined;
}

/** Entities are taken to exist from the earliest fact about them: their validFrom moves back to `at` if later. */
export async function extendBack(db: Queryable, projectId: string, entityIds: readonly string[], at: Date): Promise<void> {
  await db.query(
    `UPDATE graph_entities SET valid_from = $3::timestamptz, updated_at = now()
      WHERE project_id = $1 AND id = ANY($2::text[]) AND valid_from > $3::timestamptz AND valid_to IS NULL`,
    [projectId, entityIds, at.toISOString()],
  );
}

export async function strengthenEdge(db: Queryable, projectId: string, id: string, weight: number): Promise<EdgeRow> {
  const { rows } = await db.query<EdgeRow>(
    `UPDATE graph_edges SET weight = greatest(weight, $3) WHERE project_id = $1 AND id = $2 RETURNING ${EDGE_COLUMNS}`,
    [projectId, id, weight],
  );
  return rows[0]!;
}

/** Closes an open edge at `at` (never before it began). */
export async function endEdge(db: Queryable, projectId: string, id: string, at: Date): Promise<EdgeRow> {
  const { rows } = await db.query<EdgeRow>(
    `UPDATE graph_edges SET valid_to = greatest(valid_from, $3::timestamptz), retired_at = now() WHERE project_id = $1 AND id = $2 RETURNING ${EDGE_COLUMNS}`,
    [projectId, id, at.toISOString()],
  );
  return rows[0]!;
}

/** Closes every open edge touching an entity. */
export async function endEdgesOf(db: Queryable, projectId: string, entityId: string, at: Date): Promise<number> {
  const { rowCount } = await db.query(
    `UPDATE graph_edges SET valid_to = greatest(valid_from, $3::timestamptz), retired_at = now()
      WHERE project_id = $1 AND (subject_id = $2 OR object_id = $2) AND valid_to IS NULL`,
    [projectId, entityId, at.toISOString()],
  );
  return rowCount;
}

export async function edgesAt(
  db: Queryable,
  projectId: string,
  filter: { subjectId?: string; predicate?: string; at: Date },
  limit: number,
  offset = 0,
): Promise<EdgeRow[]> {
  const where = new Conditions();
  where.add('g.project_id = ?', projectId);
  where.add('g.subject_id = ?', filter.subjectId);
  where.add('g.predicate = ?', filter.predicate);
  where.add(validAt('g', where.param(filter.at.toISOString())));
  const { rows } = await db.query<EdgeRow>(
    `SELECT ${EDGE_COLUMNS} FROM graph_edges g WHERE ${where.sql}
      ORDER BY g.valid_from DESC, g.id LIMIT ${where.param(limit)} OFFSET ${where.param(offset)}`,
    where.params,
  );
  return rows;
}

/** The edges into and out of an entity that had ended by `at` (validTo at or before it), latest ended first. */
export async function endedEdgesOf(db: Queryable, projectId: string, entityId: string, at: Date, limit: number): Promise<EdgeRow[]> {
  const { rows } = await db.query<EdgeRow>(
    `SELECT ${EDGE_COLUMNS} FROM graph_edges g
      WHERE g.project_id = $1 AND (g.subject_id = $2 OR g.object_id = $2) AND g.valid_to IS NOT NULL AND g.valid_to <= $3
      ORDER BY g.valid_to DESC, g.id LIMIT $4`,
    [projectId, entityId, at.toISOString(), limit],
  );
  return rows;
}

/**
 * One hop of a traversal: the edges valid at `at` out of (and, with `both`, into) the frontier, at
 * most `fanOut` per frontier entity and direction (strongest first, then newest, then id), and at
 * most `limit` in all, taking every entity's strongest edge before any entity's second. Each
 * entity's edges are read through its index with a LATERAL lookup, so the plan never depends on
 * statistics.
 */
export async function hopEdges(
  db: Queryable,
  projectId: string,
  frontier: readonly string[],
  options: { at: Date; predicates?: readonly string[]; both: boolean; fanOut: number; limit?: number },
): Promise<(EdgeRow & { from_id: string })[]> {
  const params: unknown[] = [projectId, frontier, options.at.toISOString(), options.fanOut, options.limit ?? null];
  const predicate = options.predicates && options.predicates.length > 0 ? `AND g.predicate = ANY($${params.push(options.predicates)}::text[])` : '';
  const side = (from: 'subject_id' | 'object_id') => `
    SELECT e.* FROM unnest($2::text[]) AS f(id) CROSS JOIN LATERAL (
      SELECT ${EDGE_COLUMNS}, f.id AS from_id, row_number() OVER (ORDER BY g.weight DESC, g.valid_from DESC, g.id) AS rank
        FROM graph_edges g
       WHERE g.project_id = $1 AND g.${from} = f.id AND ${validAt('g', '$3')} ${predicate}
       ORDER BY g.weight DESC, g.valid_from DESC, g.id LIMIT $4) e`;
  const { rows } = await db.query<EdgeRow & { from_id: string }>(
    `SELECT * FROM (${side('subject_id')}${options.both ? ` UNION ALL ${side('object_id')}` : ''}) hop ORDER BY rank, from_id, id LIMIT $5`,
    params,
  );
  return rows;
}

// ---- mentions, extraction marks, settings, stats ----------------------------------------------

export async function replaceMentions(db: Queryable, projectId: string, memoryId: string, entityIds: readonly string[]): Promise<void> {
  await db.query(`DELETE FROM graph_mentions WHERE project_id = $1 AND memory_id = $2 AND NOT (entity_id = ANY($3::text[]))`, [projectId, memoryId, entityIds]);
  if (entityIds.length > 0) await addMentions(db, projectId, memoryId, entityIds);
}

/**
 * Moves a duplicate's names, edges and mentions to the entity that survives a merge: an open edge
 * the survivor already has (same predicate, same other end) is closed at `at` instead, the stronger
 * weight kept on the survivor's.
 */
export async function repointEntity(db: Queryable, projectId: string, duplicateId: string, intoId: string, at: Date): Promise<void> {
  await db.query(`UPDATE graph_entity_names SET entity_id = $3 WHERE project_id = $1 AND entity_id = $2`, [projectId, duplicateId, intoId]);
  // Edges the survivor already has (same predicate and other end): close the duplicate's, keep the stronger weight.
  for (const side of ['subject_id', 'object_id'] as const) {
    const other = side === 'subject_id' ? 'object_id' : 'subject_id';
    await db.query(
      `WITH twin AS (
         SELECT d.id AS dup_id, s.id AS keep_id, d.weight FROM graph_edges d JOIN graph_edges s
           ON s.project_id = d.project_id AND s.${side} = $3 AND s.predicate = d.predicate AND s.valid_to IS NULL
          AND coalesce(s.${other}, '') = coalesce(d.${other}, '') AND coalesce(s.object_literal, '') = coalesce(d.object_literal, '')
        WHERE d.project_id = $1 AND d.${side} = $2 AND d.valid_to IS NULL),
       strengthened AS (UPDATE graph_edges g SET weight = greatest(g.weight, twin.weight) FROM twin WHERE g.project_id = $1 AND g.id = twin.keep_id)
       UPDATE graph_edges g SET valid_to = greatest(g.valid_from, $4::timestamptz), retired_at = now() FROM twin WHERE g.project_id = $1 AND g.id = twin.dup_id`,
      [projectId, duplicateId, intoId, at.toISOString()],
    );
    await db.query(`UPDATE graph_edges SET ${side} = $3 WHERE project_id = $1 AND ${side} = $2`, [projectId, duplicateId, intoId]);
  }
  await db.query(
    `INSERT INTO graph_mentions (project_id, memory_id, entity_id) SELECT project_id, memory_id, $3 FROM graph_mentions WHERE project_id = $1 AND entity_id = $2 ON CONFLICT DO NOTHING`,
    [projectId, duplicateId, intoId],
  );
  await db.query(`DELETE FROM graph_mentions WHERE project_id = $1 AND entity_id = $2`, [projectId, duplicateId]);
}

/**
 * Other live memories that mention the seeds' entities, most distinct shared entities first (ties
 * by id). Each candidate is looked up by key (LATERAL), so that no plan, with or without
 * statistics, scans the project's memories.
 */
export async function relatedMemories(db: Queryable, projectId: string, seeds: readonly string[], limit: number): Promise<{ memory_id: string }[]> {
  const { rows } = await db.query<{ memory_id: string }>(
    `WITH seed_entities AS (SELECT DISTINCT entity_id FROM graph_mentions WHERE project_id = $1 AND memory_id = ANY($2::text[]))
     SELECT g.memory_id, count(DISTINCT g.entity_id) AS shared
       FROM graph_mentions g JOIN seed_entities s ON s.entity_id = g.entity_id
       CROSS JOIN LATERAL (SELECT 1 FROM memories m WHERE m.project_id = $1 AND m.id = g.memory_id AND m.status IN ('pending', 'confirmed') LIMIT 1) live
      WHERE g.project_id = $1 AND NOT (g.memory_id = ANY($2::text[]))
      GROUP BY g.memory_id ORDER BY shared DESC, g.memory_id LIMIT $3`,
    [projectId, seeds, limit],
  );
  return rows;
}

/** Per memory of the set, how many distinct entities it shares with the others of the set. */
export async function sharedEntityCounts(db: Queryable, projectId: string, memoryIds: readonly string[]): Promise<{ memoryId: string; shared: number }[]> {
  const { rows } = await db.query<{ memory_id: string; shared: string }>(
    `WITH m AS (SELECT memory_id, entity_id FROM graph_mentions WHERE project_id = $1 AND memory_id = ANY($2::text[]))
     SELECT a.memory_id, count(DISTINCT a.entity_id) AS shared
       FROM m a WHERE EXISTS (SELECT 1 FROM m b WHERE b.entity_id = a.entity_id AND b.memory_id <> a.memory_id)
      GROUP BY a.memory_id`,
    [projectId, memoryIds],
  );
  return rows.map((r) => ({ memoryId: r.memory_id, shared: Number(r.shared) }));
}

/** The live memories valid at `at` that mention each entity: at most `perEntity` each, most important, then newest, first. */
export async function liveMentionsOf(db: Queryable, projectId: string, entityIds: readonly string[], at: Date, perEntity: number): Promise<{ entity_id: string; memory_id: string }[]> {
  const { rows } = await db.query<{ entity_id: string; memory_id: string }>(
    `SELECT entity_id, memory_id FROM (
       SELECT g.entity_id, g.memory_id, row_number() OVER (PARTITION BY g.entity_id ORDER BY m.importance DESC, m.valid_from DESC, m.id) AS rank
         FROM graph_mentions g JOIN memories m ON m.id = g.memory_id AND m.project_id = $1
        WHERE g.project_id = $1 AND g.entity_id = ANY($2::text[]) AND m.status IN ('pending', 'confirmed')
          AND m.valid_from <= $3::timestamptz AND (m.valid_to IS NULL OR m.valid_to > $3::timestamptz)) ranked
      WHERE rank <= $4 ORDER BY entity_id, rank`,
    [projectId, entityIds, at.toISOString(), perEntity],
  );
  return rows;
}

/** Closes the open edges a memory stated that are not among `kept` (it no longer states them). */
export async function endEdgesOfMemoryExcept(db: Queryable, projectId: string, memoryId: string, kept: readonly string[]): Promise<void> {
  await db.query(
    `UPDATE graph_edges SET valid_to = greatest(valid_from, now()), retired_at = now()
      WHERE project_id = $1 AND source_memory_id = $2 AND valid_to IS NULL AND NOT (id = ANY($3::text[]))`,
    [projectId, memoryId, kept],
  );
}

/** Links a memory to entities (no-op for links that exist). */
export async function addMentions(db: Queryable, projectId: string, memoryId: string, entityIds: readonly string[]): Promise<void> {
  await db.query(
    `INSERT INTO graph_mentions (project_id, memory_id, entity_id) SELECT $1, $2, e FROM unnest($3::text[]) AS e ON CONFLICT DO NOTHING`,
    [projectId, memoryId, [...new Set(entityIds)]],
  );
}

export async function memoryExists(db: Queryable, projectId: string, memoryId: string): Promise<boolean> {
  const { rows } = await db.query(`SELECT 1 FROM memories WHERE project_id = $1 AND id = $2`, [projectId, memoryId]);
  return rows.length > 0;
}

export async function markExtracted(db: Queryable, projectId: string, memoryId: string, mark: { contentHash: string; method: 'heuristic' | 'caller'; entities: number; edges: number }): Promise<void> {
  await db.query(
    `INSERT INTO graph_extractions (project_id, memory_id, content_hash, method, entity_count, edge_count) VALUES ($1, $2, $3, $4, $5, $6)
     ON CONFLICT (project_id, memory_id) DO UPDATE SET content_hash = excluded.content_hash, method = excluded.method,
       entity_count = excluded.entity_count, edge_count = excluded.edge_count, extracted_at = now()`,
    [projectId, memoryId, mark.contentHash, mark.method, mark.entities, mark.edges],
  );
}

export async function extractionMark(db: Queryable, projectId: string, memoryId: string): Promise<{ content_hash: string; method: string } | undefined> {
  const { rows } = await db.query<{ content_hash: string; method: string }>(
    `SELECT content_hash, method FROM graph_extractions WHERE project_id = $1 AND memory_id = $2`,
    [projectId, memoryId],
  );
  return rows[0];
}

export interface PendingMemory {
  id: string;
  content: string;
  type: string;
  scope: string;
  subject_kind: string | null;
  subject_external_id: string | null;
  valid_from: Date;
  content_hash: string;
}

/** Memories the engine writes itself (mined patterns, estimates, decisions, outcomes, consent) name nothing worth extracting. */
const NOT_EXTRACTED = `'behavior_pattern', 'estimate', 'decision', 'outcome', 'consent'`;
/** Live memories extraction covers, and among them those not extracted, or changed since (x: their graph_extractions row). */
const EXTRACTABLE = `m.status IN ('pending', 'confirmed') AND m.type NOT IN (${NOT_EXTRACTED})`;
const NOT_CURRENT = `(x.memory_id IS NULL OR x.content_hash <> md5(m.content))`;
const UNEXTRACTED = `${EXTRACTABLE} AND ${NOT_CURRENT}`;
const WITH_MARKS = `FROM memories m LEFT JOIN graph_extractions x ON x.project_id = m.project_id AND x.memory_id = m.id`;
const PENDING = `${WITH_MARKS}
  WHERE m.project_id = $1 AND ${UNEXTRACTED}`;

/** Live memories not yet extracted, or changed since: oldest first. */
export async function pendingMemories(db: Queryable, projectId: string, limit: number, minLength = 0): Promise<PendingMemory[]> {
  const { rows } = await db.query<PendingMemory>(
    `SELECT m.id, m.content, m.type, m.scope, m.subject_kind, m.subject_external_id, m.valid_from, md5(m.content) AS content_hash
       ${PENDING} AND char_length(m.content) >= $3 ORDER BY m.created_at, m.id LIMIT $2`,
    [projectId, limit, minLength],
  );
  return rows;
}

export async function countPending(db: Queryable, projectId: string): Promise<number> {
  const { rows } = await db.query<{ n: string }>(`SELECT count(*) AS n ${PENDING}`, [projectId]);
  return Number(rows[0]!.n);
}

export async function memoryForExtraction(db: Queryable, projectId: string, memoryId: string): Promise<PendingMemory | undefined> {
  const { rows } = await db.query<PendingMemory>(
    `SELECT id, content, type, scope, subject_kind, subject_external_id, valid_from, md5(content) AS content_hash FROM memories WHERE project_id = $1 AND id = $2`,
    [projectId, memoryId],
  );
  return rows[0];
}

export async function extractionEnabled(db: Queryable, projectId: string): Promise<boolean> {
  const { rows } = await db.query<{ extraction_enabled: boolean }>(`SELECT extraction_enabled FROM graph_settings WHERE project_id = $1`, [projectId]);
  return rows[0]?.extraction_enabled ?? false;
}

export async function setExtraction(db: Queryable, projectId: string, enabled: boolean): Promise<void> {
  await db.query(
    `INSERT INTO graph_settings (project_id, extraction_enabled) VALUES ($1, $2)
     ON CONFLICT (project_id) DO UPDATE SET extraction_enabled = excluded.extraction_enabled, updated_at = now()`,
    [projectId, enabled],
  );
}

/** Projects that opted in and have memories waiting. */
export async function projectsWithPending(db: Queryable): Promise<string[]> {
  const { rows } = await db.query<{ project_id: string }>(
    `SELECT s.project_id FROM graph_settings s
      WHERE s.extraction_enabled AND EXISTS (
        SELECT 1 FROM memories m LEFT JOIN graph_extractions x ON x.project_id = m.project_id AND x.memory_id = m.id
         WHERE m.project_id = s.project_id AND ${UNEXTRACTED})
      ORDER BY s.project_id`,
  );
  return rows.map((r) => r.project_id);
}

/**
 * The extraction backlog of a project that opted in (undefined for one that did not): the live
 * memories extraction covers, those pending as the backfill counts its `remaining`, and the last
 * change of the oldest pending one.
 */
export async function extractionBacklog(db: Queryable, projectId: string): Promise<{ total: number; pending: number; oldestPendingAt: Date | null } | undefined> {
  if (!(await extractionEnabled(db, projectId))) return undefined;
  const { rows } = await db.query<{ total: string; pending: string; oldest: Date | null }>(
    `SELECT count(*) AS total, count(*) FILTER (WHERE ${NOT_CURRENT}) AS pending, min(m.updated_at) FILTER (WHERE ${NOT_CURRENT}) AS oldest
       ${WITH_MARKS} WHERE m.project_id = $1 AND ${EXTRACTABLE}`,
    [projectId],
  );
  const r = rows[0]!;
  return { total: Number(r.total), pending: Number(r.pending), oldestPendingAt: r.oldest };
}

export async function stats(db: Queryable, projectId: string) {
  const { rows } = await db.query<{ entities: string; retired_entities: string; edges: string; retired_edges: string; memories_with_edges: string; extracted: string }>(
    `SELECT
       (SELECT count(*) FROM graph_entities WHERE project_id = $1 AND valid_to IS NULL AND superseded_by_id IS NULL) AS entities,
       (SELECT count(*) FROM graph_entities WHERE project_id = $1 AND (valid_to IS NOT NULL OR superseded_by_id IS NOT NULL)) AS retired_entities,
       (SELECT count(*) FROM graph_edges WHERE project_id = $1 AND valid_to IS NULL) AS edges,
       (SELECT count(*) FROM graph_edges WHERE project_id = $1 AND valid_to IS NOT NULL) AS retired_edges,
       (SELECT count(DISTINCT source_memory_id) FROM graph_edges WHERE project_id = $1 AND source_memory_id IS NOT NULL) AS memories_with_edges,
       (SELECT count(*) FROM graph_extractions WHERE project_id = $1) AS extracted`,
    [projectId],
  );
  const { rows: byType } = await db.query<{ type: string; n: string }>(
    `SELECT type, count(*) AS n FROM graph_entities WHERE project_id = $1 AND valid_to IS NULL AND superseded_by_id IS NULL GROUP BY type ORDER BY type`,
    [projectId],
  );
  const r = rows[0]!;
  return {
    entityCount: Number(r.entities),
    retiredEntities: Number(r.retired_entities),
    edgeCount: Number(r.edges),
    retiredEdges: Number(r.retired_edges),
    memoriesWithEdges: Number(r.memories_with_edges),
    extractedMemories: Number(r.extracted),
    entitiesByType: Object.fromEntries(byType.map((t) => [t.type, Number(t.n)])),
  };
}

// ---- one subject (data-subject rights) ---------------------------------------------------------
// $1 project, $2 subject kind, $3 subject id, $4 the subject's memory ids.

/** The subject's own entities: the one standing for it, and duplicates merged into it. */
const OWN_ENTITIES = `WITH RECURSIVE own(id) AS (
    SELECT id FROM graph_entities WHERE project_id = $1 AND subject_kind = $2 AND subject_external_id = $3
    UNION
    SELECT e.id FROM graph_entities e JOIN own o ON e.project_id = $1 AND e.superseded_by_id = o.id
  )`;
/** The subject's edges: stated by its memories, or from or to its own entities. */
const SUBJECT_EDGE = `project_id = $1 AND (source_memory_id = ANY($4::text[]) OR subject_id IN (SELECT id FROM own) OR object_id IN (SELECT id FROM own))`;

export async function subjectEdgeRows(db: Queryable, projectId: string, subject: Subject, memoryIds: readonly string[], after: string | null, limit: number): Promise<Record<string, unknown>[]> {
  const { rows } = await db.query(
    `${OWN_ENTITIES}
     SELECT ${EDGE_COLUMNS}, created_at, retired_at FROM graph_edges WHERE ${SUBJECT_EDGE} AND ($5::text IS NULL OR id > $5) ORDER BY id LIMIT $6`,
    [projectId, subject.kind, subject.externalId, memoryIds, after, limit],
  );
  return rows;
}

/** Entities that name the subject: its own, those its memories mention, and the ends of its edges. */
export async function subjectEntityRows(db: Queryable, projectId: string, subject: Subject, memoryIds: readonly string[], after: string | null, limit: number): Promise<Record<string, unknown>[]> {
  const { rows } = await db.query(
    `${OWN_ENTITIES}, edges AS (SELECT subject_id, object_id FROM graph_edges WHERE ${SUBJECT_EDGE})
     SELECT ${ENTITY_COLUMNS}, retired_at FROM graph_entities
      WHERE project_id = $1 AND ($5::text IS NULL OR id > $5)
        AND (id IN (SELECT id FROM own)
          OR id IN (SELECT entity_id FROM graph_mentions WHERE project_id = $1 AND memory_id = ANY($4::text[]))
          OR id IN (SELECT subject_id FROM edges) OR id IN (SELECT object_id FROM edges))
      ORDER BY id LIMIT $6`,
    [projectId, subject.kind, subject.externalId, memoryIds, after, limit],
  );
  return rows;
}

export async function subjectMentionRows(db: Queryable, projectId: string, memoryIds: readonly string[]): Promise<Record<string, unknown>[]> {
  const { rows } = await db.query(
    'SELECT memory_id, entity_id, created_at FROM graph_mentions WHERE project_id = $1 AND memory_id = ANY($2::text[]) ORDER BY memory_id, entity_id',
    [projectId, memoryIds],
  );
  return rows;
}

/**
 * Erases the subject from the graph: its edges, the mentions in its memories, their extraction
 * marks, its own entities, and every entity it touched that is left with no edge and no mention
 * (one that existed only for the subject). An entity still mentioned or linked elsewhere stays.
 */
export async function eraseSubjectGraph(tx: Queryable, projectId: string, subject: Subject, memoryIds: readonly string[]) {
  const params = [projectId, subject.kind, subject.externalId, memoryIds];
  const { rows: owned } = await tx.query<{ id: string }>(`${OWN_ENTITIES} SELECT id FROM own`, params.slice(0, 3));
  const { rows: touched } = await tx.query<{ id: string }>(
    `${OWN_ENTITIES}
     SELECT entity_id AS id FROM graph_mentions WHERE project_id = $1 AND memory_id = ANY($4::text[])
     UNION SELECT subject_id FROM graph_edges WHERE ${SUBJECT_EDGE}
     UNION SELECT object_id FROM graph_edges WHERE ${SUBJECT_EDGE} AND object_id IS NOT NULL`,
    params,
  );
  const own = owned.map((r) => r.id);
  const edges = (await tx.query(`${OWN_ENTITIES} DELETE FROM graph_edges WHERE ${SUBJECT_EDGE}`, params)).rowCount;
  const mentions = (
    await tx.query('DELETE FROM graph_mentions WHERE project_id = $1 AND (memory_id = ANY($2::text[]) OR entity_id = ANY($3::text[]))', [projectId, memoryIds, own])
  ).rowCount;
  await tx.query('DELETE FROM graph_extractions WHERE project_id = $1 AND memory_id = ANY($2::text[])', [projectId, memoryIds]);
  const entities = (
    await tx.query(
      `DELETE FROM graph_entities e WHERE e.project_id = $1 AND (e.id = ANY($2::text[]) OR (e.id = ANY($3::text[]) AND e.subject_kind IS NULL
         AND NOT EXISTS (SELECT 1 FROM graph_edges g WHERE g.project_id = $1 AND (g.subject_id = e.id OR g.object_id = e.id))
         AND NOT EXISTS (SELECT 1 FROM graph_mentions m WHERE m.project_id = $1 AND m.entity_id = e.id)))`,
      [projectId, own, touched.map((r) => r.id)],
    )
  ).rowCount;
  return { graph_entities: entities, graph_edges: edges, graph_mentions: mentions };
}

/**
 * The entities valid at `at` that stand for one of these subjects or are mentioned in one of these
 * memories (a contact's own part of the graph), those standing for a subject first, at most `limit`.
 */
export async function subjectSeedEntities(
  db: Queryable,
  projectId: string,
  subjects: readonly { kind: string; externalId: string }[],
  memoryIds: readonly string[],
  at: Date,
  limit: number,
): Promise<string[]> {
  const { rows } = await db.query<{ id: string }>(
    `SELECT e.id FROM graph_entities e
      WHERE e.project_id = $1 AND ${validAt('e', '$5')} AND e.superseded_by_id IS NULL
        AND ((e.subject_kind, e.subject_external_id) IN (SELECT * FROM unnest($2::text[], $3::text[]))
             OR e.id IN (SELECT g.entity_id FROM graph_mentions g WHERE g.project_id = $1 AND g.memory_id = ANY($4::text[])))
      ORDER BY (e.subject_kind IS NULL), e.id LIMIT $6`,
    [projectId, subjects.map((s) => s.kind), subjects.map((s) => s.externalId), memoryIds, at.toISOString(), limit],
  );
  return rows.map((r) => r.id);
}
