// The memories a context bundle shows: a subject's live memories, most important first, then
// newest; mined patterns are shown as patterns, not here.
import type { Subject } from '../../platform/common-schemas.js';
import type { Queryable } from '../../platform/db.js';
import { iso } from '../../platform/sql.js';

export interface ContextMemory {
  id: string;
  type: string;
  content: string;
  importance: number;
  created: string;
  sourceMemoryIds: string[];
}

export async function subjectMemories(db: Queryable, projectId: string, subject: Subject, options: { limit: number; excludeCategories: readonly string[] }): Promise<ContextMemory[]> {
  if (options.limit <= 0) return [];
  const { rows } = await db.query<{ id: string; type: string; content: string; importance: number; created_at: Date; source_memory_ids: string[] }>(
    `SELECT id, type, content, importance, created_at, source_memory_ids FROM memory_read
      WHERE project_id = $1 AND subject_kind = $2 AND subject_external_id = $3 AND status IN ('pending', 'confirmed')
        AND type <> 'behavior_pattern' AND (valid_to IS NULL OR valid_to > now())
        AND (category IS NULL OR lower(category) <> ALL ($4::text[]))
      ORDER BY importance DESC, valid_from DESC, id DESC
      LIMIT $5`,
    [projectId, subject.kind, subject.externalId, options.excludeCategories, options.limit],
  );
  return rows.map((r) => ({ id: r.id, type: r.type, content: r.content, importance: Number(r.importance), created: iso(r.created_at), sourceMemoryIds: r.source_memory_ids }));
}
