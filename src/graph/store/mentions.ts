// SQL for graph_mentions: which memories name which entities. It links and relinks a memory's
// entities, and answers through them the live memories related to others (most shared entities
// first), how many entities each memory of a set shares with the rest, and the live memories that
// mention an entity; it reads memories (memory's table) for their status and validity, and whether
// one exists. Plain SQL; every statement is scoped by project.
import type { Queryable } from '../../platform/db.js';

export async function replaceMentions(db: Queryable, projectId: string, memoryId: string, entityIds: readonly string[]): Promise<void> {
  await db.query(`DELETE FROM graph_mentions WHERE project_id = $1 AND memory_id = $2 AND NOT (entity_id = ANY($3::text[]))`, [projectId, memoryId, entityIds]);
  if (entityIds.length > 0) await addMentions(db, projectId, memoryId, entityIds);
}

/** Links a memory to entities (no-op for links that exist). */
export async function addMentions(db: Queryable, projectId: string, memoryId: string, entityIds: readonly string[]): Promise<void> {
  await db.query(
    `INSERT INTO graph_mentions (project_id, memory_id, entity_id) SELECT $1, $2, e FROM unnest($3::text[]) AS e ON CONFLICT DO NOTHING`,
    [projectId, memoryId, [...new Set(entityIds)]],
  );
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
       CROSS JOIN LATERAL (SELECT 1 FROM memory_read m WHERE m.project_id = $1 AND m.id = g.memory_id AND m.status IN ('pending', 'confirmed') LIMIT 1) live
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
         FROM graph_mentions g JOIN memory_read m ON m.id = g.memory_id AND m.project_id = $1
        WHERE g.project_id = $1 AND g.entity_id = ANY($2::text[]) AND m.status IN ('pending', 'confirmed')
          AND m.valid_from <= $3::timestamptz AND (m.valid_to IS NULL OR m.valid_to > $3::timestamptz)) ranked
      WHERE rank <= $4 ORDER BY entity_id, rank`,
    [projectId, entityIds, at.toISOString(), perEntity],
  );
  return rows;
}

export async function memoryExists(db: Queryable, projectId: string, memoryId: string): Promise<boolean> {
  const { rows } = await db.query(`SELECT 1 FROM memory_read WHERE project_id = $1 AND id = $2`, [projectId, memoryId]);
  return rows.length > 0;
}
