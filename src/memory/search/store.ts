// SQL for hybrid search: vector candidates (pgvector) and lexical candidates (the query's rarest
// terms, ranked by BM25), unioned, each returned with its cosine similarity, its hubness among the
// candidates and its BM25 score so the service can fuse them.
import pgvector from 'pgvector';
import type { Db, Queryable } from '../../platform/db.js';
import { filterConditions, MEMORY_COLUMNS, toMemory, type MemoryFilter, type MemoryRow } from '../store.js';
import type { Memory } from '../schemas.js';
import { HNSW_PREDICATE, hnswOrder, ivfOrder } from './vector-index.js';
import { BM25, type CorpusStats, type TermStat, type WeightedTerm } from './bm25.js';
import { projectLiteral } from './project-index-store.js';
import { FRESHNESS } from './freshness.js';
import { RANKING } from './ranking.js';

const ITERATIVE_SCAN = 'relaxed_order';
/**
 * HNSW neighbours taken per vector candidate kept, re-ranked by exact distance. The graph walk's
 * candidate list (hnsw.ef_search) is SEARCH_HNSW_EF_SEARCH. At 100k memories (bench/memory.ts, with
 * the index's build settings in embeddings/dimension.ts), 40 candidates from 200 neighbours held of
 * the exact top 10, with the vector list's p95 alone: ef_search 600, 0.999 in 10.5 ms; 400, 0.993
 * in 9.6 ms; 300, 0.97 to 0.98 in 6 to 7 ms; 200, 0.96 to 0.97 in 4 to 6 ms. With the candidates'
 * hubness pass (about 1.5 ms more), the whole retrieval's p95: 300, 0.978 in 12.8 to 13.4 ms; 250,
 * 0.968 in 11.0 ms; 200, 0.959 in 10.5 ms. The bench suite's corpus (bench/suite/memory.ts) is
 * harder: at 250 its candidates held 0.912 to 0.930 of the exact top 10 (three index builds), at 300
 * 0.970, at 400 0.972 and 0.986, with the retrieval's p95 at 11.4 to 12.8, 12.2, and 12.1 to 13.1
 * ms. The default, 400, keeps a margin on both targets (0.95 of the exact top 10, 15 ms) there too.
 */
const VECTOR_OVERSCAN = 5;
const vectorScan = (k: number) => Math.min(1000, k * VECTOR_OVERSCAN);
/** Lexical matches scored per search, at most (the candidate terms stay within it). */
const TEXT_SCAN_CAP = BM25.candidateBudget;

/** The query's distinct lexemes with their document frequency in the project, and the corpus size (each summed over its slots, migration 0018). */
export async function queryTerms(db: Queryable, projectId: string, text: string): Promise<{ terms: TermStat[]; corpus: CorpusStats }> {
  const { rows } = await db.query<{ terms: TermStat[]; documents: string | null; bytes: string | null }>(
    `SELECT (SELECT coalesce(json_agg(json_build_object('lexeme', q.lexeme, 'df', q.df) ORDER BY q.lexeme), '[]')
               FROM (SELECT q.lexeme, (SELECT coalesce(sum(s.df), 0) FROM memory_terms s WHERE s.project_id = $1 AND s.lexeme = q.lexeme)::int AS df
                       FROM unnest(tsvector_to_array(to_tsvector('english', $2))) q(lexeme)) q) AS terms,
            c.documents, c.bytes
       FROM (SELECT sum(documents) AS documents, sum(bytes) AS bytes FROM memory_corpus WHERE project_id = $1) c`,
    [projectId, text],
  );
  const row = rows[0]!;
  const documents = Number(row.documents ?? 0);
  return { terms: row.terms, corpus: { documents, avgLength: documents === 0 ? 0 : Number(row.bytes ?? 0) / documents } };
}

/**
 * The most memories a search's own collection (its project under its filters: a subject, a scope,
 * an instant) may hold for the lexical leg to be exact over it: BM25 with the collection's own
 * statistics (df, the number of memories and their mean length), every memory holding a query word
 * scored. A conversation searched within its subject is scored as a keyword index over that
 * conversation alone would score it, not with the words of the project's other subjects. Larger
 * collections take the project's statistics and the rarest words' matches (textList).
 */
export const COLLECTION_LEXICAL_MAX = 5_000;

export interface CollectionLexical {
  /** The k best memories by BM25 over the collection (their own and their neighbours'), best first. */
  ids: string[];
  /**
   * The best memories' scores (more than k of them): `own`, BM25 of the memory's text; `context`,
   * what its neighbours in its session add (NEIGHBOURS). Memories not listed score their own BM25
   * alone (it is lower than every listed one's).
   */
  scores: Map<string, { own: number; context: number }>;
  terms: TermStat[];
  corpus: CorpusStats;
}

/**
 * A conversation's memories (those with a session key) are also scored by the words of the turns
 * beside them in their session, as a weaker field: an answer often needs the question before it
 * ("yes, every Saturday" answers "do you still play the violin?"), and a question the answer after
 * it. A memory's context score is `before` x the BM25 of the turn before it plus `after` x the BM25
 * of the turn after it, in the session's order (valid from, then id).
 */
export const NEIGHBOURS = { before: 0.3, after: 0.3 } as const;

/**
 * Related forms: the stemmer keeps "allergies" (allergi) apart from "allergic" (allergic). A query
 * word (stemmed) of at least `minLength` letters also matches the project's words that begin as it
 * does but for its last letter (allergi and allergic share "allerg"), each as a term of its own,
 * its weight (IDF) times `weight`, below the query's own words. Shorter prefixes matched too much:
 * all but the last two letters, from 6-letter words ("exper" for experi: expert, experiment), cost
 * BEAM 100K 0.017 of turn recall@10.
 */
export const RELATED_FORMS = { minLength: 7, weight: 0.5 } as const;

/** Scores kept beyond k, so that a vector candidate that is also a good lexical match shows its context part. */
const COLLECTION_SCORES_KEPT = 200;

/**
 * Exact BM25 over the memories the filter selects, when they are at most `cap`: the query's
 * lexemes' document frequencies and the collection's size and mean length, and the k best memories,
 * in one statement. With `neighbours`, a memory's score adds its neighbours' (NEIGHBOURS). Answers
 * undefined when the collection holds more than `cap` memories.
 */
export async function collectionLexical(
  db: Queryable,
  projectId: string,
  filter: MemoryFilter,
  text: string,
  k: number,
  options: { neighbours?: boolean; relatedForms?: boolean; cap?: number } = {},
): Promise<CollectionLexical | undefined> {
  const cap = options.cap ?? COLLECTION_LEXICAL_MAX;
  const where = filterConditions(projectId, filter);
  const query = where.param(text);
  const [before, after] = options.neighbours ? [NEIGHBOURS.before, NEIGHBOURS.after] : [0, 0];
  const { minLength, weight } = RELATED_FORMS;
  // Related forms come from the project's vocabulary (memory_terms, a range of its primary key per
  // prefix; lexemes of letters a to z and digits only, so that the range holds every one of them
  // under any collation), then count as query words of their own (the weight in tf below).
  const related = options.relatedForms
    ? `r AS MATERIALIZED (
         SELECT coalesce(array_agg(DISTINCT t.lexeme), '{}') AS lexemes
           FROM q0, unnest(q0.lexemes) l
           CROSS JOIN LATERAL (SELECT left(l, length(l) - 1) AS p) p
           JOIN memory_terms t ON t.project_id = ${where.param(projectId)} AND t.lexeme >= p.p AND t.lexeme < p.p || 'zzzzzzzzzzzz' AND starts_with(t.lexeme, p.p)
          WHERE length(l) >= ${minLength} AND l ~ '^[a-z0-9]+$' AND t.lexeme <> ALL (q0.lexemes)),`
    : `r AS MATERIALIZED (SELECT '{}'::text[] AS lexemes),`;
  // Each memory's text is cut to the query's lexemes first (setweight marks them, ts_filter keeps
  // them), so a long memory is not unnested whole.
  const { rows } = await db.query<{ documents: string; avg_length: number; terms: TermStat[]; best: [string, number, number][] }>(
    `WITH q0 AS MATERIALIZED (SELECT coalesce(array_agg(DISTINCT l), '{}') AS lexemes FROM unnest(tsvector_to_array(to_tsvector('english', ${query}))) l),
     ${related}
     q AS MATERIALIZED (SELECT q0.lexemes || r.lexemes AS lexemes, r.lexemes AS related FROM q0, r),
     c AS MATERIALIZED (
       SELECT m.id, m.session_key, m.valid_from, octet_length(m.content) AS len, ts_filter(setweight(m.fts, 'A', q.lexemes), '{a}') AS fts
         FROM memories m, q WHERE ${where.sql} LIMIT ${where.param(cap + 1)}),
     n AS MATERIALIZED (SELECT count(*) AS documents, coalesce(avg(len), 0)::float8 AS avg_length FROM c),
     tf AS MATERIALIZED (
       SELECT c.id, c.len, t.lexeme, coalesce(array_length(t.positions, 1), 1)::float8 AS tf,
              CASE WHEN t.lexeme = ANY (q.related) THEN ${weight} ELSE 1 END::float8 AS w
         FROM c, unnest(c.fts) t, q),
     df AS MATERIALIZED (SELECT lexeme, count(*) AS df FROM tf GROUP BY lexeme),
     s AS MATERIALIZED (
       SELECT tf.id, sum(tf.w * ${termScoreSql('ln(1 + (n.documents - df.df + 0.5) / (df.df + 0.5))', 'tf.tf', 'tf.len', 'n.avg_length')}) AS score
         FROM tf JOIN df USING (lexeme), n GROUP BY tf.id),
     o AS (
       ${
         before + after > 0
           ? `SELECT c.id, coalesce(s.score, 0) AS own,
                     CASE WHEN c.session_key IS NULL THEN 0
                          ELSE ${before} * coalesce(lag(s.score) OVER w, 0) + ${after} * coalesce(lead(s.score) OVER w, 0) END AS context
                FROM c LEFT JOIN s ON s.id = c.id
              WINDOW w AS (PARTITION BY c.session_key ORDER BY c.valid_from, c.id)`
           : 'SELECT s.id, s.score AS own, 0::float8 AS context FROM s'
       }),
     best AS (SELECT o.id, o.own, o.context FROM o WHERE o.own + o.context > 0 ORDER BY o.own + o.context DESC, o.id LIMIT ${where.param(Math.max(k, COLLECTION_SCORES_KEPT))})
     SELECT n.documents, n.avg_length,
            (SELECT coalesce(json_agg(json_build_object('lexeme', l, 'df', coalesce(df.df, 0)) ORDER BY l), '[]')
               FROM q0, unnest(q0.lexemes) l LEFT JOIN df ON df.lexeme = l) AS terms,
            (SELECT coalesce(json_agg(json_build_array(best.id, best.own, best.context) ORDER BY best.own + best.context DESC, best.id), '[]') FROM best) AS best
       FROM n`,
    where.params,
  );
  const row = rows[0]!;
  const documents = Number(row.documents);
  if (documents > cap) return undefined;
  return {
    ids: row.best.slice(0, k).map(([id]) => id),
    scores: new Map(row.best.map(([id, own, context]) => [id, { own: Number(own), context: Number(context) }])),
    terms: row.terms.map((t) => ({ lexeme: t.lexeme, df: Number(t.df) })),
    corpus: { documents, avgLength: Number(row.avg_length) },
  };
}

export interface LexicalQuery {
  /** Every query term with its IDF: what BM25 sums over. */
  terms: readonly WeightedTerm[];
  /** The terms whose matches become candidates (a tsquery text, any of them); empty: none. */
  match: string;
  avgLength: number;
}

/**
 * Exact scan (btree on the project, then distance) instead of HNSW. pgvector filters after the HNSW
 * scan, so a small project in a big table would get far fewer than k rows from the index: exact is
 * right while the project is small; HNSW with iterative scan beyond, which needs its candidate list
 * (hnsw.ef_search, SEARCH_HNSW_EF_SEARCH; raised to the over-scan when that is larger).
 */
export type VectorPath = { exact: true; efSearch?: number } | { exact: false; efSearch: number; ivfProbes?: number };

export type CandidateQuery = VectorPath & {
  projectId: string;
  filter: MemoryFilter;
  vector?: Float32Array;
  lexical?: LexicalQuery;
  /** Candidates taken from each of the two lists. */
  k: number;
  /** The lexical list, when the caller has it already (collectionLexical); otherwise read from `lexical.match`. */
  textIds?: string[];
  /** Answer each candidate's close fellow candidates (Candidate.near), for newer first. */
  near?: boolean;
};

export interface Candidate {
  memory: Memory;
  cosine: number | null;
  /**
   * Mean cosine to its nearest fellow candidates (at most RANKING.hubNeighbours); null without an
   * embedding, or when no other candidate has one.
   */
  hubness: number | null;
  /**
   * Its nearest fellow candidates (of the same RANKING.hubNeighbours) whose cosine to it is at least
   * FRESHNESS.changeCosine, with that cosine, when both are short (FRESHNESS.restatementMaxChars):
   * the candidates that may say the same thing. Empty unless the query asked for them (`near`).
   */
  near: Map<string, number>;
  /** BM25 over every query term; 0 when none occurs in the memory. */
  bm25: number;
  /** Rank in the vector list (1 = nearest), when the memory came from it. */
  vectorRank: number | null;
  /** Rank in the lexical list (1 = best BM25), when the memory came from it. */
  textRank: number | null;
}

interface CandidateRow extends MemoryRow {
  cosine: number | null;
  hubness: number | null;
  near: [string, number][] | null;
  bm25: number;
}

/**
 * The two lists are read at once, each on its own connection (on Postgres; PGlite has one and runs
 * them in turn), then both scores of every memory on either list in one read by id: a search costs
 * the slower list, not the sum (at 100k memories, about 6 ms each at p95).
 */
export async function searchCandidates(db: Db, q: CandidateQuery): Promise<Candidate[]> {
  const lexical = q.lexical && q.lexical.terms.length > 0 ? q.lexical : undefined;
  // The query vector as pgvector's text (512 numbers), made once for both statements that use it.
  const vectorText = q.vector ? pgvector.toSql(Array.from(q.vector)) : undefined;
  const [nearest, matching] = await Promise.all([
    vectorText ? vectorList(db, q, vectorText) : [],
    q.textIds ?? (lexical && lexical.match !== '' ? textList(db, q, lexical) : []),
  ]);
  const ids = [...new Set([...nearest, ...matching])];
  if (ids.length === 0) return [];
  const vectorRank = new Map(nearest.map((id, i) => [id, i + 1]));
  const textRank = new Map(matching.map((id, i) => [id, i + 1]));
  const params: unknown[] = [q.projectId, ids];
  const param = (value: unknown) => `$${params.push(value)}`;
  const vec = vectorText ? param(vectorText) : undefined;
  const bm25 = lexical ? bm25Sql(param(lexical.terms.map((t) => t.lexeme)), param(lexical.terms.map((t) => t.idf)), param(lexical.avgLength)) : undefined;
  // The candidates are read once; a candidate's hubness is its mean cosine to its nearest fellow
  // candidates (ranking.ts says why): for unit vectors (every embedder's output is), the inner
  // product, which pgvector computes in a third of the cosine's work (<#> is its negative). The
  // pass reads the candidates' vectors alone (e), not their whole rows, and every CTE is
  // materialised: inlined, the pairwise pass would run again for every row of the join. At 80
  // candidates it costs about 1.5 ms. The candidates are looked up one by one on the primary key
  // (the lateral subquery, kept apart by OFFSET 0, can be planned no other way): written as
  // `id = ANY(...)` beside the project, or as a join, a table with no statistics yet (a Postgres
  // without autovacuum, before maintenance.analyze) was read as the whole project, 80 to 170 ms at
  // 8,000 memories against 2 to 5 ms.
  // With `near`, the same pass also answers, for each short candidate, its short neighbours close
  // enough to restate it (freshness.ts); long ones never do, so their pairs are not sent back.
  // Only pairs newer first can use: two short memories of one subject and scope (freshness.ts
  // compares no others), so a project-wide search over many subjects sends back next to nothing.
  const near =
    vec && q.near ? `json_agg(json_build_array(n.id, -n.distance)) FILTER (WHERE a.short AND n.short AND n.holder = a.holder AND -n.distance >= ${FRESHNESS.changeCosine})` : 'NULL::json';
  const hub = vec
    ? `, e AS MATERIALIZED (
         SELECT m.id, m.embedding, m.subject_kind IS NOT NULL AND octet_length(m.content) <= ${FRESHNESS.restatementMaxChars} AS short,
                ${q.near ? "m.scope || chr(31) || coalesce(m.subject_kind, '') || chr(31) || coalesce(m.subject_external_id, '')" : "''"} AS holder
           FROM m WHERE m.embedding IS NOT NULL),
       h AS MATERIALIZED (
         SELECT a.id, -avg(n.distance) AS hubness, ${near} AS near
           FROM e a CROSS JOIN LATERAL (SELECT b.id, b.short, b.holder, a.embedding <#> b.embedding AS distance FROM e b
                                         WHERE b.id <> a.id ORDER BY distance LIMIT ${RANKING.hubNeighbours}) n
          GROUP BY a.id)`
    : '';
  const { rows } = await db.query<CandidateRow>(
    `WITH m AS MATERIALIZED (
       SELECT r.* FROM unnest($2::text[]) k(id)
        CROSS JOIN LATERAL (SELECT * FROM memories m WHERE m.project_id = $1 AND m.id = k.id OFFSET 0) r)${hub}
     SELECT ${MEMORY_COLUMNS},
            ${vec ? `CASE WHEN m.embedding IS NULL THEN NULL ELSE 1 - (m.embedding <=> ${vec}::vector) END` : 'NULL::float8'} AS cosine,
            ${vec ? 'h.hubness' : 'NULL::float8'} AS hubness, ${vec ? 'h.near' : 'NULL::json'} AS near,
            ${bm25 ? bm25('m') : '0::float8'} AS bm25
       FROM m ${vec ? 'LEFT JOIN h ON h.id = m.id' : ''}`,
    params,
  );
  return rows.map((row) => ({
    memory: toMemory(row),
    cosine: row.cosine === null ? null : Number(row.cosine),
    hubness: row.hubness === null ? null : Number(row.hubness),
    near: new Map((row.near ?? []).map(([id, cosine]) => [id, Number(cosine)])),
    bm25: Number(row.bm25),
    vectorRank: vectorRank.get(row.id) ?? null,
    textRank: textRank.get(row.id) ?? null,
  }));
}

/** The ids of the k memories nearest the query vector, nearest first. */
async function vectorList(db: Db, q: CandidateQuery, vectorText: string): Promise<string[]> {
  const where = filterConditions(q.projectId, q.filter);
  const vec = where.param(vectorText);
  const k = where.param(q.k);
  // Exact: `+ 0` keeps the planner off the HNSW index. HNSW: the graph walk is approximate (and on
  // Postgres at half precision, platform/vector-index.ts), so take VECTOR_OVERSCAN times more
  // neighbours than needed and keep the k truly nearest of them. A project with an IVFFlat index of
  // its own (project-index.ts) is read the same way through that index; its predicate is proved
  // from the project id as a constant, so the id is written into the statement as well. The HNSW
  // index is partial too (HNSW_PREDICATE): the statement names its predicate.
  const ivf = !q.exact && q.ivfProbes !== undefined;
  const dimensions = q.vector?.length ?? 0;
  const order = q.exact ? `(m.embedding <=> ${vec}::vector) + 0` : ivf ? ivfOrder(dimensions, vec) : hnswOrder(db.kind, dimensions, vec);
  const scan = q.exact ? k : where.param(vectorScan(q.k));
  const own = ivf ? ` AND m.project_id = ${projectLiteral(q.projectId)}` : q.exact ? '' : ` AND m.${HNSW_PREDICATE}`;
  const sql = `SELECT m.id FROM (
      SELECT m.id, m.embedding <=> ${vec}::vector AS distance FROM memories m
       WHERE ${where.sql}${own} AND m.embedding IS NOT NULL ORDER BY ${order} LIMIT ${scan}
    ) m ORDER BY m.distance, m.id LIMIT ${k}`;
  const run = async (tx: Queryable) => (await tx.query<{ id: string }>(sql, where.params)).rows.map((r) => r.id);
  if (q.exact) return run(db);
  // A large project: walk the index (enable_sort off steers the planner to the index order rather
  // than sorting the project's rows), and with pgvector 0.8's iterative scan keep walking until
  // enough rows pass the filters.
  const settings = ivf
    ? `SET LOCAL ivfflat.iterative_scan = ${ITERATIVE_SCAN}; SET LOCAL ivfflat.probes = ${Math.trunc(q.ivfProbes!)}`
    : `SET LOCAL hnsw.iterative_scan = ${ITERATIVE_SCAN}; SET LOCAL hnsw.ef_search = ${Math.min(1000, Math.max(q.efSearch, vectorScan(q.k)))}`;
  // On Citus the statement runs on the project's shard, on a worker: the first setting sends the
  // others there with it (elsewhere it is an unused placeholder, set and gone with the transaction).
  return db.transaction(run, { readOnly: true, settings: `SET LOCAL citus.propagate_set_commands = 'local'; SET LOCAL enable_sort = off; ${settings}` });
}

/** The ids of the k best BM25 matches of the query's candidate terms (the GIN index finds them), best first; at most TEXT_SCAN_CAP scored. */
async function textList(db: Db, q: CandidateQuery, lexical: LexicalQuery): Promise<string[]> {
  const where = filterConditions(q.projectId, q.filter);
  const bm25 = bm25Sql(where.param(lexical.terms.map((t) => t.lexeme)), where.param(lexical.terms.map((t) => t.idf)), where.param(lexical.avgLength));
  const match = where.param(lexical.match);
  const { rows } = await db.query<{ id: string }>(
    `SELECT c.id FROM (
       SELECT m.id, ${bm25('m')} AS bm25
         FROM (SELECT m.id, m.fts, m.content FROM memories m WHERE ${where.sql} AND m.fts @@ ${match}::tsquery LIMIT ${TEXT_SCAN_CAP}) m
     ) c ORDER BY c.bm25 DESC, c.id LIMIT ${where.param(q.k)}`,
    where.params,
  );
  return rows.map((r) => r.id);
}

/**
 * One query term's BM25 in SQL, from SQL expressions for its IDF, its frequency in the memory, the
 * memory's length and the mean length: bm25.ts's bm25Score, term by term (both SQL scorers use it).
 */
function termScoreSql(idf: string, tf: string, length: string, avgLength: string): string {
  const { k1, b } = BM25;
  return `${idf} * ${tf} * ${k1 + 1} / (${tf} + ${k1} * (${1 - b} + ${b} * ${length} / greatest(${avgLength}, 1e-9)))`;
}

/**
 * BM25 of row alias `m` over the query terms (parameters: lexemes, their IDFs, the mean length in
 * bytes). setweight marks the query's lexemes and ts_filter keeps only them, so a long memory
 * is not unnested whole; a lexeme's term frequency is its number of positions.
 */
function bm25Sql(lexemes: string, idfs: string, avgLength: string): (alias: string) => string {
  return (alias) => `(SELECT coalesce(sum(${termScoreSql('w.idf', 'u.tf', `octet_length(${alias}.content)`, `${avgLength}::float8`)}), 0)::float8
      FROM (SELECT t.lexeme, coalesce(array_length(t.positions, 1), 1)::float8 AS tf
              FROM unnest(ts_filter(setweight(${alias}.fts, 'A', ${lexemes}::text[]), '{a}')) t) u
      JOIN unnest(${lexemes}::text[], ${idfs}::float8[]) w(lexeme, idf) ON w.lexeme = u.lexeme)`;
}
