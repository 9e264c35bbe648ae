// Feedback on memories (POST /memory/feedback, GET /admin/memory/{id}/feedback; SDK-WIRE.md 4.1,
// 4.2): a rating per answer that used a memory. Negative ratings count on the memory; the third
// (FLAG_AFTER) flags a confirmed memory into the review queue (reviewReason flagged). A positive
// rating counts as a use of the memory: lastAccessedAt moves to now, so recency keeps it up in
// search. A rating naming a response counts once per memory and response (a client's retry).
import type { Db } from '../../platform/db.js';
import { NotFoundError } from '../../platform/errors.js';
import { newId } from '../../platform/ids.js';

/** Negative ratings after which a confirmed memory is flagged for review (the SDK's documented three). */
export const FLAG_AFTER = 3;

export type Rating = 'positive' | 'negative';

export interface FeedbackInput {
  memoryId: string;
  rating: Rating;
  responseId?: string;
  comment?: string;
}

export interface FeedbackRow {
  id: string;
  memoryId: string;
  responseId: string | null;
  rating: Rating;
  comment: string | null;
  createdByUserId: string | null;
  created: string;
}

export class MemoryFeedback {
  constructor(private readonly db: Db) {}

  /** Records the rating; answers whether it counted (false: the same response was rated before). 404 for a memory the project does not hold. */
  async submit(projectId: string, input: FeedbackInput, by: string | null): Promise<boolean> {
    return this.db.transaction(async (tx) => {
      // The memory's row is locked first: two ratings at once count one after the other.
      const { rows } = await tx.query<{ id: string }>(`SELECT id FROM memories WHERE project_id = $1 AND id = $2 FOR UPDATE`, [projectId, input.memoryId]);
      if (rows.length === 0) throw new NotFoundError(`no memory ${input.memoryId} in this project`, { memoryId: input.memoryId });
      const inserted = await tx.query(
        `INSERT INTO memory_feedback (project_id, id, memory_id, rating, response_id, comment, created_by) VALUES ($1, $2, $3, $4, $5, $6, $7)
         ON CONFLICT (project_id, memory_id, response_id) WHERE response_id IS NOT NULL DO NOTHING`,
        [projectId, newId('fb'), input.memoryId, input.rating, input.responseId ?? null, input.comment ?? null, by],
      );
      if ((inserted.rowCount ?? 0) === 0) return false;
      if (input.rating === 'negative') {
        await tx.query(
          `UPDATE memories SET negative_rating_count = negative_rating_count + 1,
                  review_reason = CASE WHEN negative_rating_count + 1 >= ${FLAG_AFTER} AND status = 'confirmed' THEN 'flagged' ELSE review_reason END,
                  updated_at = now()
            WHERE project_id = $1 AND id = $2`,
          [projectId, input.memoryId],
        );
      } else {
        await tx.query(`UPDATE memories SET last_accessed_at = now() WHERE project_id = $1 AND id = $2`, [projectId, input.memoryId]);
      }
      return true;
    });
  }

  /** The memory's feedback, newest first; 404 for a memory the project does not hold. */
  async list(projectId: string, memoryId: string): Promise<FeedbackRow[]> {
    const [memory, feedback] = await Promise.all([
      this.db.query(`SELECT 1 FROM memories WHERE project_id = $1 AND id = $2`, [projectId, memoryId]),
      this.db.query<{ id: string; memory_id: string; response_id: string | null; rating: Rating; comment: string | null; created_by: string | null; created_at: Date }>(
        `SELECT id, memory_id, response_id, rating, comment, created_by, created_at FROM memory_feedback WHERE project_id = $1 AND memory_id = $2 ORDER BY created_at DESC, id DESC`,
        [projectId, memoryId],
      ),
    ]);
    if (memory.rows.length === 0) throw new NotFoundError(`no memory ${memoryId} in this project`, { memoryId });
    return feedback.rows.map((r) => ({
      id: r.id,
      memoryId: r.memory_id,
      responseId: r.response_id,
      rating: r.rating,
      comment: r.comment,
      createdByUserId: r.created_by,
      created: new Date(r.created_at).toISOString(),
    }));
  }
}
