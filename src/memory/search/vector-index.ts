// The HNSW index over memories' embeddings: how it is built on each backend (search/dimension.ts
// builds it) and the order that walks it (memory/search/store.ts), which must name the same expression
// for the planner to use the index.
import type { Db } from '../../platform/db.js';

/**
 * HNSW build settings (pgvector: `m` links per node, `ef_construction` the candidate list while
 * linking, and the precision of the vectors in the index). On Postgres the graph is built with a long
 * candidate list: at 100k memories the default (16, 64) let the vector candidates hold 66% of the
 * exact top 10, 800 holds 94 to 95% (bench/memory.ts), for about 6 ms instead of 0.8 ms of database
 * time per embedded row. A larger `m` bought nothing there.
 *
 * On Postgres the index holds each vector at half precision (pgvector's halfvec) while the row keeps
 * it whole: the graph walk orders by the half-precision distance and the search re-ranks its
 * over-scan by the exact one (memory/search/store.ts). At 100k memories (bench/vector-index.ts) it
 * held as much of the exact top 10 as the full-precision index at every ef_search tried, in half the
 * index (131 against 261 MB), built in the same time; at a million memories, 0.84 to 0.90 (quiet
 * machine) against 0.81 to 0.86, in 1.3 GB against 2.6. At that size HNSW misses whole topic
 * clusters, which IVFFlat over the project does not (docs/benchmarks.md, "One project of a million memories").
 *
 * PGlite, the embedded default for small deployments, scans projects exactly up to
 * SEARCH_EXACT_SCAN_MAX_ROWS and keeps pgvector's defaults at full precision: it links every row in
 * WASM, where half precision has no hardware conversion (2,000 inserts took 7 times as long).
 */
export const HNSW_BUILD = {
  pg: { m: 16, efConstruction: 800, precision: 'half' },
  pglite: { m: 16, efConstruction: 64, precision: 'full' },
} as const;

/**
 * The HNSW index is partial: it holds the rows of the projects past SEARCH_EXACT_SCAN_MAX_ROWS, the
 * only ones that search through it (memory/search/project-index.ts marks them, migration 0016). A
 * walk of the graph must name the predicate for the planner to use the index.
 */
export const HNSW_PREDICATE = 'vector_indexed';

/** pgvector's HNSW indexes vectors of up to 2,000 dimensions, half-precision ones up to 4,000; wider ones are scanned exactly. */
export const HNSW_MAX_DIMENSIONS = { half: 4000, full: 2000 } as const;

const halfvec = (dimensions: number) => `halfvec(${Math.trunc(dimensions)})`;

/** The HNSW index's order for row alias `m` and a query vector (SQL text of a vector), as the index was built on this backend. */
export const hnswOrder = (kind: Db['kind'], dimensions: number, query: string) =>
  HNSW_BUILD[kind].precision === 'half'
    ? `m.embedding::${halfvec(dimensions)} <=> ${query}::vector::${halfvec(dimensions)}`
    : `m.embedding <=> ${query}::vector`;

/**
 * The IVFFlat index over one large project's embeddings (Postgres; memory/search/project-index.ts
 * builds it), at half precision and partial on the project. It orders by inner product: every
 * stored embedding is of unit length (both embedders normalise), so the inner product orders
 * neighbours exactly as the cosine does, and since the shared HNSW index (cosine) cannot serve that
 * order, the planner takes the project's own index rather than weighing one against the other (on
 * a few thousand rows it would pick HNSW).
 */
export const ivfColumn = (dimensions: number) => `(embedding::${halfvec(dimensions)}) halfvec_ip_ops`;

/**
 * IVFFlat lists for a project of `rows` embedded memories: pgvector's advice, rows / 1000 up to a
 * million rows and sqrt(rows) beyond.
 */
export const ivfLists = (rows: number) => Math.max(10, Math.round(rows <= 1_000_000 ? rows / 1000 : Math.sqrt(rows)));

/** The order that walks a project's IVFFlat index (negative inner product, nearest first). */
export const ivfOrder = (dimensions: number, query: string) => `m.embedding::${halfvec(dimensions)} <#> ${query}::vector::${halfvec(dimensions)}`;

/** The indexed expression and operator class, and how pg_get_indexdef prints them. */
export const hnswColumn = (kind: Db['kind'], dimensions: number) =>
  HNSW_BUILD[kind].precision === 'half'
    ? { sql: `(embedding::${halfvec(dimensions)}) halfvec_cosine_ops`, printed: `::${halfvec(dimensions)}) halfvec_cosine_ops` }
    : { sql: 'embedding vector_cosine_ops', printed: '(embedding vector_cosine_ops)' };

