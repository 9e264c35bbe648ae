// SQL for graph_entities and graph_entity_names: the things the graph knows, each with its type,
// names and validity, and the name keys that resolve a name to the one live entity owning it. It
// answers which entity a name or a subject stands for, lists and pages entities, retires them, merges
// a duplicate into its survivor (moving its names, edges and mentions over), and finds the entities a
// contact's part of the graph starts from. Plain SQL; every statement is scoped by project.
import type { Subject } from '../../platform/common-schemas.js';
import type { Queryable } from '../../platform/db.js';
import { Conditions, iso } from '../../platform/sql.js';
import type { Entity, EntityScope, EntityType, ListEntitiesQuery } from '../schemas.js';
import { validAt } from './edges.js';

export interface EntityRow {
  project_id: string;
  id: string;
  type: EntityType;
  scope: EntityScope;
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

export const ENTITY_COLUMNS = `project_id, id, type, scope, canonical_name, aliases, description, metadata, subject_kind, subject_external_id, agent_id, user_id,
  valid_from, valid_to, superseded_by_id, created_at, updated_at`;

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

export interface NewEntity {
  id: string;
  type: EntityType;
  scope: EntityScope;
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

/** Entities are taken to exist from the earliest fact about them: their validFrom moves back to `at` if later. */
export async function extendBack(db: Queryable, projectId: string, entityIds: readonly string[], at: Date): Promise<void> {
  await db.query(
    `UPDATE graph_entities SET valid_from = $3::timestamptz, updated_at = now()
      WHERE project_id = $1 AND id = ANY($2::text[]) AND valid_from > $3::timestamptz AND valid_to IS NULL`,
    [projectId, entityIds, at.toISOString()],
  );
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
