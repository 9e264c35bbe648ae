// SQL for the blobs memories refer to (data-subject rights): a memory names its file in
// metadata.attachment (an attachment) or metadata.media (a memory observed from a media ingest).
import type { Queryable } from '../platform/db.js';

const BLOB_URI = `coalesce(metadata->'attachment'->>'blobUri', metadata->'media'->>'blobUri')`;

/** The blob references of these memories, one row per memory and blob. */
export async function blobRefs(db: Queryable, projectId: string, memoryIds: readonly string[]): Promise<Record<string, unknown>[]> {
  const { rows } = await db.query(
    `SELECT id AS memory_id, ${BLOB_URI} AS blob_uri, coalesce(metadata->'attachment', metadata->'media') AS file
       FROM memories WHERE project_id = $1 AND id = ANY($2::text[]) AND ${BLOB_URI} IS NOT NULL ORDER BY id`,
    [projectId, memoryIds],
  );
  return rows;
}

/** Of the blobs these memories refer to, those no other memory refers to. */
export async function blobsOnlyOf(db: Queryable, projectId: string, memoryIds: readonly string[]): Promise<string[]> {
  const { rows } = await db.query<{ blob_uri: string }>(
    `SELECT DISTINCT ${BLOB_URI} AS blob_uri FROM memories m
      WHERE project_id = $1 AND id = ANY($2::text[]) AND ${BLOB_URI} IS NOT NULL
        AND NOT EXISTS (SELECT 1 FROM memories o WHERE o.project_id = $1 AND NOT (o.id = ANY($2::text[]))
                          AND coalesce(o.metadata->'attachment'->>'blobUri', o.metadata->'media'->>'blobUri') = ${BLOB_URI.replaceAll('metadata', 'm.metadata')})
      ORDER BY 1`,
    [projectId, memoryIds],
  );
  return rows.map((r) => r.blob_uri);
}

/** Whether any memory still refers to the blob (checked again after the erase commits). */
export async function blobReferenced(db: Queryable, projectId: string, blobUri: string): Promise<boolean> {
  const { rows } = await db.query(`SELECT 1 FROM memories WHERE project_id = $1 AND ${BLOB_URI} = $2 LIMIT 1`, [projectId, blobUri]);
  return rows.length > 0;
}
