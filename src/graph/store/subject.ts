// SQL for one subject's part of the graph (data-subject rights): its own entities (the one standing
// for it and the duplicates merged into it), the edges its memories stated or that touch its own
// entities, and the mentions in its memories, read a page at a time for export; and the erasure of
// all of it with its extraction marks and every entity left with no edge and no mention. Spans
// graph_entities, graph_edges, graph_mentions and graph_extractions; scoped by project.
import type { Subject } from '../../platform/common-schemas.js';
import type { Queryable } from '../../platform/db.js';
import { EDGE_COLUMNS } from './edges.js';
import { ENTITY_COLUMNS } from './entities.js';

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
