// SQL for hybrid search: vector candidates (pgvector) and full-text candidates (tsvector), unioned,
// each returned with both its cosine similarity and its text rank so the service can fuse them.
import pgvector from 'pgvector';
import type { Db, Queryable } from '../../platform/db.js';
import { filterConditions, MEMORY_COLUMNS, toMemory, type MemoryFilter, type MemoryRow } from '../store.js';
import type { Memory } from '../schemas.js';

const ITERATIVE_SCAN = 'relaxed_order';
/** Full-text matches ranked per search, at most. */
const TEXT_SCAN_CAP = 1000;

export interface CandidateQuery {
  projectId: string;
  filter: MemoryFilter;
  vector?: Float32Array;
  text?: string;
  /** Candidates taken from each of the two lists. */
  k: number;
  /**
   * Exact scan (btree on the project, then distance) instead of HNSW. pgvector filters after the
   * HNSW scan, so a small project in a big table would get far fewer than k rows from the index:
   * exact is right while the project is small; HNSW with iterative scan beyond.
   */
  exact: boolean;
}

export interface Candidate {
  memory: Memory;
  cosine: number | null;
  lexical: number;
  vectorRank: number | null;
  textRank: number | null;
}

interface CandidateRow extends MemoryRow {
  cosine: number | null;
  lexical: number;
  vector_rank: number | null;
  text_rank: number | null;
}

export async function searchCandidates(db: Db, q: CandidateQuery): Promise<Candidate[]> {
  const where = filterConditions(q.projectId, q.filter);
  const vec = q.vector ? where.param(pgvector.toSql(Array.from(q.vector))) : undefined;
  const text = q.text ? where.param(q.text) : undefined;
  const k = where.param(q.k);
  // A small project matches any of the query's words (OR), so natural-language questions find
  // their facts, and ts_rank_cd rewards more of them. A large one needs all of them (AND): there
  // the vector list carries recall, and common words would match much of the project.
  // The lexical part of every candidate's relevance is scored with any of the words, whichever
  // list found it, so large projects (all-words candidates) still get a keyword signal.
  const anyWords = text ? `replace(plainto_tsquery('english', ${text})::text, '&', '|')::tsquery` : undefined;
  const tsquery = text
    ? q.exact
      ? `replace(plainto_tsquery('english', ${text})::text, '&', '|')::tsquery`
      : `plainto_tsquery('english', ${text})`
    : undefined;
  const parts: string[] = [];
  if (vec) {
    // `+ 0` keeps the planner off the HNSW index for the exact scan.
    const order = q.exact ? `(m.embedding <=> ${vec}::vector) + 0` : `m.embedding <=> ${vec}::vector`;
    parts.push(`vec AS (
      SELECT m.id, row_number() OVER () AS vector_rank FROM (
        SELECT m.id FROM memories m WHERE ${where.sql} AND m.embedding IS NOT NULL ORDER BY ${order} LIMIT ${k}
      ) m)`);
  }
  if (tsquery) {
    // Ranking costs a heap visit per match: rank at most TEXT_SCAN_CAP matching rows.
    parts.push(`txt AS (
      SELECT m.id, row_number() OVER (ORDER BY ts_rank_cd(m.fts, ${tsquery}, 32) DESC, m.id) AS text_rank
        FROM (SELECT m.id, m.fts FROM memories m WHERE ${where.sql} AND m.fts @@ ${tsquery} LIMIT ${TEXT_SCAN_CAP}) m
       ORDER BY ts_rank_cd(m.fts, ${tsquery}, 32) DESC, m.id LIMIT ${k})`);
  }
  if (parts.length === 0) return [];
  const ids = [vec ? 'SELECT id FROM vec' : '', tsquery ? 'SELECT id FROM txt' : ''].filter(Boolean).join(' UNION ');
  const sql = `WITH ${parts.join(', ')}, ids AS (${ids})
    SELECT ${MEMORY_COLUMNS},
           ${vec ? `CASE WHEN m.embedding IS NULL THEN NULL ELSE 1 - (m.embedding <=> ${vec}::vector) END` : 'NULL::float8'} AS cosine,
           ${anyWords ? `ts_rank_cd(m.fts, ${anyWords}, 32)` : '0::real'} AS lexical,
           ${vec ? '(SELECT vector_rank FROM vec WHERE vec.id = m.id)' : 'NULL::bigint'} AS vector_rank,
           ${tsquery ? '(SELECT text_rank FROM txt WHERE txt.id = m.id)' : 'NULL::bigint'} AS text_rank
      FROM memories m JOIN ids ON ids.id = m.id
     WHERE m.project_id = $1`;
  const run = async (tx: Queryable) => (await tx.query<CandidateRow>(sql, where.params)).rows;
  const rows = q.exact || !vec
    ? await run(db)
    : await db.transaction(async (tx) => {
        // A large project: walk the HNSW graph (enable_sort off steers the planner to the index
        // order rather than sorting the project's rows), and with pgvector 0.8's iterative scan keep
        // walking until enough rows pass the project filter.
        await tx.exec(
          `SET LOCAL enable_sort = off; SET LOCAL hnsw.iterative_scan = ${ITERATIVE_SCAN}; SET LOCAL hnsw.ef_search = ${Math.min(1000, Math.max(400, q.k * 2))}`,
        );
        return run(tx);
      });
  return rows.map((row) => ({
    memory: toMemory(row),
    cosine: row.cosine === null ? null : Number(row.cosine),
    lexical: Number(row.lexical),
    vectorRank: row.vector_rank === null ? null : Number(row.vector_rank),
    textRank: row.text_rank === null ? null : Number(row.text_rank),
  }));
}
