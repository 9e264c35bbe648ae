// Fixes the embedding column's dimension for the deployment. Migrations create `embedding vector`
// without one, since it is a setting; the first boot types the column as vector(N) and builds the
// HNSW index, and every later boot checks that the setting still matches what is stored.
import type { Db } from '../platform/db.js';

export class EmbeddingDimensionMismatch extends Error {
  constructor(configured: number, stored: number) {
    super(
      `EMBEDDING_DIMENSIONS is ${configured} but the database stores ${stored}-dimension embeddings. ` +
        `Set EMBEDDING_DIMENSIONS=${stored} (and the matching provider), or re-embed into a new database.`,
    );
    this.name = 'EmbeddingDimensionMismatch';
  }
}

const LOCK = 0x6c61747469636532n; // "lattice2"
const HNSW_MAX_DIMENSIONS = 2000;

export async function ensureEmbeddingDimension(db: Db, dimensions: number): Promise<void> {
  await db.withAdvisoryLock(LOCK, async (session) => {
    const result = await session.query<{ typmod: number }>(
      `SELECT a.atttypmod AS typmod FROM pg_attribute a
        WHERE a.attrelid = 'memories'::regclass AND a.attname = 'embedding' AND NOT a.attisdropped`,
    );
    const typmod = result.rows[0]?.typmod ?? -1;
    if (typmod === dimensions) return;
    if (typmod > 0) throw new EmbeddingDimensionMismatch(dimensions, typmod);
    await session.transaction(async (tx) => {
      await tx.exec(`ALTER TABLE memories ALTER COLUMN embedding TYPE vector(${Math.trunc(dimensions)})`);
      // pgvector's HNSW indexes vectors of up to 2,000 dimensions; wider ones are scanned exactly.
      if (dimensions <= HNSW_MAX_DIMENSIONS) {
        await tx.exec('CREATE INDEX IF NOT EXISTS memories_embedding_hnsw ON memories USING hnsw (embedding vector_cosine_ops)');
      }
    });
  });
}
