// What observation consolidation reads and writes beyond saving and superseding memories: the
// subjects with memories written in a window, a subject's memories to consolidate, its consolidated
// observations, and an observation's provenance growing.
import type { Subject } from '../../platform/common-schemas.js';
import type { Queryable } from '../../platform/db.js';
import { MEMORY_COLUMNS, toMemory, type MemoryRow } from '../store.js';
import type { Memory } from '../schemas.js';

/** The memory types consolidation reads: what was learned about the subject, not what the engine derived. */
export const SOURCE_TYPES = ['fact', 'preference', 'event', 'rule', 'correction', 'summary', 'procedure'] as const;

/** Subjects with a memory of a source type written since `since`, by kind and id, at most `limit`. */
export async function subjectsWrittenSince(db: Queryable, projectId: string, since: Date, limit: number): Promise<Subject[]> {
  const { rows } = await db.query<{ subject_kind: string; subject_external_id: string }>(
    `SELECT DISTINCT m.subject_kind, m.subject_external_id FROM memories m
      WHERE m.project_id = $1 AND m.subject_kind IS NOT NULL AND m.created_at >= $2 AND m.type = ANY($3::text[])
      ORDER BY 1, 2 LIMIT $4`,
    [projectId, since, [...SOURCE_TYPES], limit],
  );
  return rows.map((r) => ({ kind: r.subject_kind, externalId: r.subject_external_id }));
}

/** The subject's live memories of a source type written since `since`, newest first (by validFrom), at most `limit`. */
export async function sourcesOf(db: Queryable, projectId: string, subject: Subject, since: Date, limit: number): Promise<Memory[]> {
  const { rows } = await db.query<MemoryRow>(
    `SELECT ${MEMORY_COLUMNS} FROM memories m
      WHERE m.project_id = $1 AND m.subject_kind = $2 AND m.subject_external_id = $3 AND m.status IN ('pending', 'confirmed')
        AND m.created_at >= $4 AND m.type = ANY($5::text[])
      ORDER BY m.valid_from DESC, m.id DESC LIMIT $6`,
    [projectId, subject.kind, subject.externalId, since, [...SOURCE_TYPES], limit],
  );
  return rows.map(toMemory);
}

/** The subject's live consolidated observations (type observation, metadata.consolidated), by topic. */
export async function observationsOf(db: Queryable, projectId: string, subject: Subject): Promise<Map<string, Memory>> {
  const { rows } = await db.query<MemoryRow>(
    `SELECT ${MEMORY_COLUMNS} FROM memories m
      WHERE m.project_id = $1 AND m.subject_kind = $2 AND m.subject_external_id = $3 AND m.status IN ('pending', 'confirmed')
        AND m.type = 'observation' AND m.metadata->>'consolidated' = 'true'
      ORDER BY m.valid_from, m.id`,
    [projectId, subject.kind, subject.externalId],
  );
  return new Map(rows.map(toMemory).map((m) => [String(m.metadata?.topic), m]));
}

/** Adds memories to an observation's provenance. */
export async function addSources(db: Queryable, projectId: string, id: string, sources: readonly string[]): Promise<void> {
  await db.query(
    `UPDATE memories m SET source_memory_ids = (SELECT coalesce(array_agg(DISTINCT s ORDER BY s), '{}') FROM unnest(m.source_memory_ids || $3::text[]) s), updated_at = now()
      WHERE m.project_id = $1 AND m.id = $2`,
    [projectId, id, sources],
  );
}
