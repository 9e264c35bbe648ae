// SQL for the graph's counts: live and retired entities and edges, memories that stated an edge,
// extracted memories, and live entities by type, read across graph_entities, graph_edges and
// graph_extractions. Plain SQL; every statement is scoped by project.
import type { Queryable } from '../../platform/db.js';

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
