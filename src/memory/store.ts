// SQL for memories. (The memory core extends this; for now it holds what the embedding path needs.)
import pgvector from 'pgvector';
import type { Queryable } from '../platform/db.js';

export interface NewMemory {
  id: string;
  projectId: string;
  content: string;
  kind?: string;
  scope?: string;
  importance?: number;
}

/** Multi-row insert through unnest: one statement for the whole batch. */
export async function insertMemories(db: Queryable, rows: readonly NewMemory[]): Promise<number> {
  if (rows.length === 0) return 0;
  const result = await db.query(
    `INSERT INTO memories (id, project_id, content, kind, scope, importance)
     SELECT * FROM unnest($1::text[], $2::text[], $3::text[], $4::text[], $5::text[], $6::real[])`,
    [
      rows.map((r) => r.id),
      rows.map((r) => r.projectId),
      rows.map((r) => r.content),
      rows.map((r) => r.kind ?? 'fact'),
      rows.map((r) => r.scope ?? 'project'),
      rows.map((r) => r.importance ?? 5),
    ],
  );
  return result.rowCount;
}

export async function selectUnembedded(db: Queryable, projectId: string, limit: number): Promise<{ id: string; content: string }[]> {
  const result = await db.query<{ id: string; content: string }>(
    `SELECT id, content FROM memories WHERE project_id = $1 AND embedding IS NULL ORDER BY id LIMIT $2`,
    [projectId, limit],
  );
  return result.rows;
}

/**
 * Writes vectors for rows that still have none; answers how many it wrote. A row embedded
 * meanwhile by a concurrent backfill is left alone and not counted twice.
 */
export async function writeEmbeddings(
  db: Queryable,
  projectId: string,
  model: string,
  rows: readonly { id: string; vector: Float32Array }[],
): Promise<number> {
  if (rows.length === 0) return 0;
  const result = await db.query(
    `UPDATE memories m SET embedding = v.embedding::vector, embedding_model = $3, updated_at = now()
       FROM unnest($1::text[], $2::text[]) AS v(id, embedding)
      WHERE m.id = v.id AND m.project_id = $4 AND m.embedding IS NULL`,
    [rows.map((r) => r.id), rows.map((r) => pgvector.toSql(Array.from(r.vector))), model, projectId],
  );
  return result.rowCount;
}

export async function countEmbedded(db: Queryable, projectId: string): Promise<{ total: number; embedded: number }> {
  const result = await db.query<{ total: number; embedded: number }>(
    `SELECT count(*)::int AS total, count(embedding)::int AS embedded FROM memories WHERE project_id = $1`,
    [projectId],
  );
  return result.rows[0]!;
}

export async function readEmbedding(db: Queryable, projectId: string, id: string): Promise<number[] | null> {
  const result = await db.query<{ embedding: string | null }>(
    `SELECT embedding::text AS embedding FROM memories WHERE project_id = $1 AND id = $2`,
    [projectId, id],
  );
  const value = result.rows[0]?.embedding ?? null;
  return value === null ? null : (pgvector.fromSql(value) as number[]);
}
