// SQL for hybrid search: vector candidates (pgvector) and lexical candidates (the query's rarest
// terms, ranked by BM25), unioned, each returned with both its cosine similarity and its BM25 score
// so the service can fuse them.
import pgvector from 'pgvector';
import type { Db, Queryable } from '../../platform/db.js';
import { filterConditions, MEMORY_COLUMNS, toMemory, type MemoryFilter, type MemoryRow } from '../store.js';
import type { Memory } from '../schemas.js';
import { BM25, type CorpusStats, type TermStat, type WeightedTerm } from './bm25.js';

const ITERATIVE_SCAN = 'relaxed_order';
/**
 * HNSW neighbours taken per vector candidate kept, re-ranked by exact distance, and the graph walk's
 * candidate list (hnsw.ef_search). At 100k memories (bench/memory.ts, with the index's build settings
 * in embeddings/dimension.ts) 40 candidates from 200 neighbours with ef_search 600 hold about 0.95 of
 * the exact top 10 for about 7 ms; ef_search 400 held 0.92, and 1,000 with 400 neighbours no more.
 */
const VECTOR_OVERSCAN = 5;
const HNSW_EF_SEARCH = 600;
const vectorScan = (k: number) => Math.min(1000, k * VECTOR_OVERSCAN);
/** Lexical matches scored per search, at most (the candidate terms stay within it). */
const TEXT_SCAN_CAP = BM25.candidateBudget;

/** The query's distinct lexemes with their document frequency in the project, and the corpus size. */
export async function queryTerms(db: Queryable, projectId: string, text: string): Promise<{ terms: TermStat[]; corpus: CorpusStats }> {
  const { rows } = await db.query<{ terms: TermStat[]; documents: string | null; characters: string | null }>(
    `SELECT (SELECT coalesce(json_agg(json_build_object('lexeme', q.lexeme, 'df', coalesce(s.df, 0)) ORDER BY q.lexeme), '[]')
               FROM unnest(tsvector_to_array(to_tsvector('english', $2))) q(lexeme)
               LEFT JOIN memory_terms s ON s.project_id = $1 AND s.lexeme = q.lexeme) AS terms,
            c.documents, c.characters
       FROM (SELECT 1) one LEFT JOIN memory_corpus c ON c.project_id = $1`,
    [projectId, text],
  );
  const row = rows[0]!;
  const documents = Number(row.documents ?? 0);
  return { terms: row.terms, corpus: { documents, avgLength: documents === 0 ? 0 : Number(row.characters ?? 0) / documents } };
}

export interface LexicalQuery {
  /** Every query term with its IDF: what BM25 sums over. */
  terms: readonly WeightedTerm[];
  /** The terms whose matches become candidates (a tsquery text, any of them); empty: none. */
  match: string;
  avgLength: number;
}

export interface CandidateQuery {
  projectId: string;
  filter: MemoryFilter;
  vector?: Float32Array;
  lexical?: LexicalQuery;
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
  /** BM25 over every query term; 0 when none occurs in the memory. */
  bm25: number;
  /** Rank in the vector list (1 = nearest), when the memory came from it. */
  vectorRank: number | null;
  /** Rank in the lexical list (1 = best BM25), when the memory came from it. */
  textRank: number | null;
}

interface CandidateRow extends MemoryRow {
  cosine: number | null;
  bm25: number;
  vector_rank: number | null;
  text_rank: number | null;
}

export async function searchCandidates(db: Db, q: CandidateQuery): Promise<Candidate[]> {
  const where = filterConditions(q.projectId, q.filter);
  const vec = q.vector ? where.param(pgvector.toSql(Array.from(q.vector))) : undefined;
  const k = where.param(q.k);
  const lexical = q.lexical && q.lexical.terms.length > 0 ? q.lexical : undefined;
  const bm25 = lexical ? bm25Sql(where.param(lexical.terms.map((t) => t.lexeme)), where.param(lexical.terms.map((t) => t.idf)), where.param(lexical.avgLength)) : undefined;
  const match = lexical && lexical.match !== '' ? where.param(lexical.match) : undefined;
  const parts: string[] = [];
  if (vec) {
    // Exact: `+ 0` keeps the planner off the HNSW index. HNSW: the graph walk is approximate, so
    // take VECTOR_OVERSCAN times more neighbours than needed and keep the k truly nearest of them.
    const order = q.exact ? `(m.embedding <=> ${vec}::vector) + 0` : `m.embedding <=> ${vec}::vector`;
    const scan = q.exact ? k : where.param(vectorScan(q.k));
    parts.push(`vec AS (
      SELECT m.id, row_number() OVER (ORDER BY m.distance, m.id) AS vector_rank FROM (
        SELECT m.id, m.embedding <=> ${vec}::vector AS distance FROM memories m
         WHERE ${where.sql} AND m.embedding IS NOT NULL ORDER BY ${order} LIMIT ${scan}
      ) m ORDER BY m.distance, m.id LIMIT ${k})`);
  }
  const hasText = bm25 !== undefined && match !== undefined;
  if (hasText) {
    // Matches of the rarest terms (the GIN index finds them), scored by BM25; at most TEXT_SCAN_CAP.
    parts.push(`txt AS (
      SELECT c.id, row_number() OVER (ORDER BY c.bm25 DESC, c.id) AS text_rank FROM (
        SELECT m.id, ${bm25!('m')} AS bm25
          FROM (SELECT m.id, m.fts, m.content FROM memories m WHERE ${where.sql} AND m.fts @@ ${match}::tsquery LIMIT ${TEXT_SCAN_CAP}) m
      ) c ORDER BY c.bm25 DESC, c.id LIMIT ${k})`);
  }
  if (parts.length === 0) return [];
  const ids = [vec ? 'SELECT id FROM vec' : '', hasText ? 'SELECT id FROM txt' : ''].filter(Boolean).join(' UNION ');
  const sql = `WITH ${parts.join(', ')}, ids AS (${ids})
    SELECT ${MEMORY_COLUMNS},
           ${vec ? `CASE WHEN m.embedding IS NULL THEN NULL ELSE 1 - (m.embedding <=> ${vec}::vector) END` : 'NULL::float8'} AS cosine,
           ${bm25 ? bm25('m') : '0::float8'} AS bm25,
           ${vec ? '(SELECT vector_rank FROM vec WHERE vec.id = m.id)' : 'NULL::bigint'} AS vector_rank,
           ${hasText ? '(SELECT text_rank FROM txt WHERE txt.id = m.id)' : 'NULL::bigint'} AS text_rank
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
          `SET LOCAL enable_sort = off; SET LOCAL hnsw.iterative_scan = ${ITERATIVE_SCAN}; SET LOCAL hnsw.ef_search = ${Math.min(1000, Math.max(HNSW_EF_SEARCH, vectorScan(q.k)))}`,
        );
        return run(tx);
      });
  return rows.map((row) => ({
    memory: toMemory(row),
    cosine: row.cosine === null ? null : Number(row.cosine),
    bm25: Number(row.bm25),
    vectorRank: row.vector_rank === null ? null : Number(row.vector_rank),
    textRank: row.text_rank === null ? null : Number(row.text_rank),
  }));
}

/**
 * BM25 of row alias `m` over the query terms (parameters: lexemes, their IDFs, the mean length in
 * characters). setweight marks the query's lexemes and ts_filter keeps only them, so a long memory
 * is not unnested whole; a lexeme's term frequency is its number of positions.
 */
function bm25Sql(lexemes: string, idfs: string, avgLength: string): (alias: string) => string {
  const { k1, b } = BM25;
  return (alias) => `(SELECT coalesce(sum(w.idf * u.tf * ${k1 + 1} / (u.tf + ${k1} * (${1 - b} + ${b} * char_length(${alias}.content) / greatest(${avgLength}::float8, 1e-9)))), 0)::float8
      FROM (SELECT t.lexeme, coalesce(array_length(t.positions, 1), 1)::float8 AS tf
              FROM unnest(ts_filter(setweight(${alias}.fts, 'A', ${lexemes}::text[]), '{a}')) t) u
      JOIN unnest(${lexemes}::text[], ${idfs}::float8[]) w(lexeme, idf) ON w.lexeme = u.lexeme)`;
}
