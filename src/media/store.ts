// SQL for the blobs memories refer to (data-subject rights): a memory names its file in
// metadata.attachment (an attachment) or metadata.media (a memory observed from a media ingest).
import type { Queryable } from '../platform/db.js';

/** The blob a memory refers to, for the memories table under alias `t`. */
const blobUriOf = (t: string) => `coalesce(${t}.metadata->'attachment'->>'blobUri', ${t}.metadata->'media'->>'blobUri')`;

/** The blob references of these memories, one row per memory and blob. */
export async function blobRefs(db: Queryable, projectId: string, memoryIds: readonly string[]): Promise<Record<string, unknown>[]> {
  const { rows } = await db.query(
    `SELECT m.id AS memory_id, ${blobUriOf('m')} AS blob_uri, coalesce(m.metadata->'attachment', m.metadata->'media') AS file
       FROM memory_read m WHERE m.project_id = $1 AND m.id = ANY($2::text[]) AND ${blobUriOf('m')} IS NOT NULL ORDER BY m.id`,
    [projectId, memoryIds],
  );
  return rows;
}

/** Of the blobs these memories refer to, those no other memory refers to. */
export async function blobsOnlyOf(db: Queryable, projectId: string, memoryIds: readonly string[]): Promise<string[]> {
  const { rows } = await db.query<{ blob_uri: string }>(
    `SELECT DISTINCT ${blobUriOf('m')} AS blob_uri FROM memory_read m
      WHERE m.project_id = $1 AND m.id = ANY($2::text[]) AND ${blobUriOf('m')} IS NOT NULL
        AND NOT EXISTS (SELECT 1 FROM memory_read o WHERE o.project_id = $1 AND NOT (o.id = ANY($2::text[])) AND ${blobUriOf('o')} = ${blobUriOf('m')})
      ORDER BY 1`,
    [projectId, memoryIds],
  );
  return rows.map((r) => r.blob_uri);
}

/** Whether any memory still refers to the blob (checked again after the erase commits). */
export async function blobReferenced(db: Queryable, projectId: string, blobUri: string): Promise<boolean> {
  const { rows } = await db.query(`SELECT 1 FROM memory_read m WHERE m.project_id = $1 AND ${blobUriOf('m')} = $2 LIMIT 1`, [projectId, blobUri]);
  return rows.length > 0;
}
