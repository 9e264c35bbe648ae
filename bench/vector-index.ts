// Vector index choices for one large project, on Postgres (pgvector 0.8). Loads BENCH_VECTOR_ROWS
// memories (default 1,000,000) into one project beside 49 small ones (the corpus of bench/memory.ts),
// without a vector index, then for each variant: builds the index (timed; maintenance_work_mem and
// parallel workers as the service sets them), its size, how much of the exact top 10 the 40 vector
// candidates hold (the service's candidate query shape: an over-scan of the index, re-ranked by exact
// distance), and the candidate query's latency p50/p95/p99. The exact top 10 is computed once by a
// sequential scan. Prints one markdown table to stdout; progress to stderr.
//
//   npm run build && DATABASE_URL=postgres://postgres@127.0.0.1:5432/postgres npx tsx bench/vector-index.ts
// Settings: BENCH_VECTOR_ROWS (1000000), BENCH_VECTOR_VARIANTS (comma-separated names, default all),
// BENCH_VECTOR_QUERIES (200 timed; recall over the first 50). The variants: HNSW over the whole table
// at full and half precision, binary-quantised HNSW, and IVFFlat over the large project alone.
import { cpus } from 'node:os';
import { performance } from 'node:perf_hooks';
import pgvector from 'pgvector';
import type { Lattice } from '../src/modules.js';
import type { Queryable } from '../src/platform/db.js';
import { createLogger } from '../src/platform/logger.js';
import { ivfColumn, ivfLists, ivfOrder } from '../src/memory/search/vector-index.js';
import { dropVectorIndex, loadProject, topicCentroids } from './corpus.js';
import {
  check, makeTexts, markdownTable, ms, perSecond, positiveInt, progress, queryTemplates, runBench, seconds, summarise, thousands, withPostgresContext,
} from './support.js';

const ROWS = positiveInt('BENCH_VECTOR_ROWS', 1_000_000);
const QUERIES = positiveInt('BENCH_VECTOR_QUERIES', 200);
const RECALL_QUERIES = Math.min(50, QUERIES);
const OTHER_PROJECTS = 49;
const CANDIDATES = 40;
const TOP = 10;
const PROJECT = 'bench-vectors';
const IVF_LISTS = ivfLists(ROWS);
const log = createLogger('warn');

interface Variant {
  name: string;
  /** CREATE INDEX ... (the index is named vector_variant). */
  index: string;
  /** Session settings for the query. */
  settings: string;
  /** The candidate ids, nearest first: $1 project, $2 query vector (text), $3 candidates kept. */
  query: string;
}

const live = `m.project_id = $1 AND m.embedding IS NOT NULL`;
/** The service's shape: `scan` neighbours from the index's order, the `$3` nearest of them by exact cosine distance. */
const rerank = (order: string, scan: number) =>
  `SELECT m.id FROM (SELECT m.id, m.embedding <=> $2::vector AS distance FROM memories m WHERE ${live} ORDER BY ${order} LIMIT ${scan}) m
    ORDER BY m.distance, m.id LIMIT $3`;
const iterative = (efSearch: number) => `SET LOCAL enable_sort = off; SET LOCAL hnsw.iterative_scan = relaxed_order; SET LOCAL hnsw.ef_search = ${efSearch}`;

const hnswVector = (m: number, efc: number, efSearch: number, scan = 200): Variant => ({
  name: `vector HNSW m=${m} ef_construction=${efc}, ef_search ${efSearch}, ${scan} re-ranked`,
  index: `CREATE INDEX vector_variant ON memories USING hnsw (embedding vector_cosine_ops) WITH (m = ${m}, ef_construction = ${efc})`,
  settings: iterative(efSearch),
  query: rerank('m.embedding <=> $2::vector', scan),
});
const hnswHalf = (m: number, efc: number, efSearch: number, scan = 200): Variant => ({
  name: `halfvec HNSW m=${m} ef_construction=${efc}, ef_search ${efSearch}, ${scan} re-ranked`,
  index: `CREATE INDEX vector_variant ON memories USING hnsw ((embedding::halfvec(512)) halfvec_cosine_ops) WITH (m = ${m}, ef_construction = ${efc})`,
  settings: iterative(efSearch),
  query: rerank('m.embedding::halfvec(512) <=> $2::vector::halfvec(512)', scan),
});
const hnswBinary = (m: number, efc: number, efSearch: number, scan: number): Variant => ({
  name: `binary HNSW m=${m} ef_construction=${efc}, ef_search ${efSearch}, ${scan} re-ranked`,
  index: `CREATE INDEX vector_variant ON memories USING hnsw ((binary_quantize(embedding)::bit(512)) bit_hamming_ops) WITH (m = ${m}, ef_construction = ${efc})`,
  settings: iterative(efSearch),
  query: rerank('binary_quantize(m.embedding)::bit(512) <~> binary_quantize($2::vector)', scan),
});

/**
 * IVFFlat over the large project alone (a partial index), at half precision, as the service builds
 * it (memory/search/project-index.ts: the same expression, operator class and lists): `probes` lists
 * read per query. Trained by k-means when built, so it is built once the project has its rows, not
 * on an empty table.
 */
const ivfProject = (probes: number, scan = 200): Variant => ({
  name: `halfvec IVFFlat on the project, lists ${IVF_LISTS}, probes ${probes}, ${scan} re-ranked`,
  index: `CREATE INDEX vector_variant ON memories USING ivfflat (${ivfColumn(512)}) WITH (lists = ${IVF_LISTS}) WHERE project_id = '${PROJECT}'`,
  settings: `SET LOCAL enable_sort = off; SET LOCAL ivfflat.iterative_scan = relaxed_order; SET LOCAL ivfflat.probes = ${probes}`,
  query: rerank(ivfOrder(512, '$2'), scan),
});

/** Variants sharing an index are built once: the key is the index statement. */
const VARIANTS: Variant[] = [
  ivfProject(5),
  ivfProject(10),
  ivfProject(20),
  hnswHalf(16, 800, 500),
  hnswHalf(16, 800, 750),
  hnswHalf(16, 800, 1000),
  hnswVector(16, 800, 500),
  hnswVector(16, 800, 1000),
  hnswVector(16, 200, 1000),
  hnswBinary(16, 200, 1000, 1000),
];

interface Row {
  variant: string;
  build?: string;
  size?: string;
  recall?: number;
  p50?: number;
  p95?: number;
  p99?: number;
}

async function exactTop(db: Queryable, vectors: string[]): Promise<string[][]> {
  const out: string[][] = [];
  for (const [i, vector] of vectors.entries()) {
    const { rows } = await db.query<{ id: string }>(
      `SELECT m.id FROM memories m WHERE ${live} ORDER BY (m.embedding <=> $2::vector) + 0, m.id LIMIT $3`,
      [PROJECT, vector, TOP],
    );
    out.push(rows.map((r) => r.id));
    if ((i + 1) % 10 === 0) progress(`exact top ${TOP}: ${i + 1}/${vectors.length} queries`);
  }
  return out;
}

async function candidates(ctx: Lattice, variant: Variant, vector: string): Promise<string[]> {
  return ctx.runtime.db.transaction(async (tx) => {
    await tx.exec(variant.settings);
    const { rows } = await tx.query<{ id: string }>(variant.query, [PROJECT, vector, CANDIDATES]);
    return rows.map((r) => r.id);
  });
}

async function main(): Promise<void> {
  if (!process.env.DATABASE_URL) throw new Error('bench/vector-index.ts runs on Postgres: set DATABASE_URL');
  const chosen = process.env.BENCH_VECTOR_VARIANTS?.split(',').map((s) => s.trim());
  const variants = chosen ? VARIANTS.filter((v) => chosen.some((c) => v.name.startsWith(c))) : VARIANTS;
  const rows: Row[] = [];
  const notes: string[] = [];
  const started = new Date().toISOString().slice(0, 16).replace('T', ' ');
  try {
    await withPostgresContext(process.env.DATABASE_URL, undefined, log, async (ctx, setup) => {
      const db = ctx.runtime.db;
      await dropVectorIndex(ctx);
      const centroids = await topicCentroids(ctx, setup);
      for (let i = 1; i <= OTHER_PROJECTS; i++) await loadProject(ctx, `bench-small-${i}`, 1 + ((i * 7) % 12), 5000 + i, centroids);
      const start = performance.now();
      let reported = 0;
      await loadProject(ctx, PROJECT, ROWS, ROWS, centroids, {
        concurrency: 2,
        onProgress: (done, elapsed) => {
          if (done - reported < 50_000 && done < ROWS) return;
          reported = done;
          const eta = ((ROWS - done) / perSecond(done, elapsed)) * 1000;
          progress(`[${setup}] loaded ${thousands(done)}/${thousands(ROWS)} (${thousands(perSecond(done, elapsed))}/s, ETA ${seconds(eta)})`);
        },
      });
      progress(`[${setup}] loaded in ${seconds(performance.now() - start)}; VACUUM ANALYZE`);
      await db.exec('VACUUM ANALYZE memories');
      const sizes = await db.query<{ table: string }>(`SELECT pg_size_pretty(pg_table_size('memories')) AS table`);
      notes.push(`${thousands(ROWS)} memories in one project and ${OTHER_PROJECTS} small projects; table ${sizes.rows[0]!.table}.`);

      const queryTexts = makeTexts(QUERIES, 31337, queryTemplates);
      const vectors = (await ctx.apis.embeddings.embed(queryTexts)).map((v) => pgvector.toSql(Array.from(v)) as string);
      progress(`[${setup}] exact top ${TOP} of ${RECALL_QUERIES} queries (sequential scans)`);
      const truth = await exactTop(db, vectors.slice(0, RECALL_QUERIES));

      let built: string | undefined;
      for (const variant of variants) {
        if (built !== variant.index) {
          await db.exec('DROP INDEX IF EXISTS vector_variant');
          progress(`[${setup}] building: ${variant.index}`);
          const t0 = performance.now();
          await db.transaction(async (tx) => {
            await tx.exec(`SET LOCAL statement_timeout = 0; SET LOCAL maintenance_work_mem = '4GB'; SET LOCAL max_parallel_maintenance_workers = ${Math.max(0, cpus().length - 1)}`);
            await tx.exec(variant.index);
          });
          const elapsed = performance.now() - t0;
          const size = await db.query<{ size: string }>(`SELECT pg_size_pretty(pg_relation_size('vector_variant')) AS size`);
          rows.push({ variant: variant.index.replace(/^CREATE INDEX vector_variant ON memories USING /, ''), build: seconds(elapsed), size: size.rows[0]!.size });
          progress(`[${setup}] built in ${seconds(elapsed)}, ${size.rows[0]!.size}`);
          built = variant.index;
        }
        let found = 0;
        for (const [i, vector] of vectors.slice(0, RECALL_QUERIES).entries()) {
          const got = new Set(await candidates(ctx, variant, vector));
          found += truth[i]!.filter((id) => got.has(id)).length;
        }
        for (const vector of vectors.slice(0, 20)) await candidates(ctx, variant, vector); // warm-up
        const samples: number[] = [];
        for (const vector of vectors) {
          const t0 = performance.now();
          await candidates(ctx, variant, vector);
          samples.push(performance.now() - t0);
        }
        const s = summarise(samples);
        const recall = found / (RECALL_QUERIES * TOP);
        rows.push({ variant: `  ${variant.name}`, recall, p50: s.p50, p95: s.p95, p99: s.p99 });
        progress(`[${setup}] ${variant.name}: recall ${recall.toFixed(3)}, p95 ${ms(s.p95)}`);
      }
      await db.exec('DROP INDEX IF EXISTS vector_variant');
    });
  } finally {
    if (rows.length > 0) {
      const cpu = cpus()[0]?.model.trim() ?? 'unknown CPU';
      process.stdout.write(`\nVector index choices, ${started} UTC: Node ${process.version}, ${cpus().length} × ${cpu}. ${notes.join(' ')}\n`);
      process.stdout.write(`Each index's variants: its ${CANDIDATES} candidates' share of the exact top ${TOP} (${RECALL_QUERIES} queries), and the candidate query's latency (${QUERIES} queries).\n\n`);
      const header = ['Index / query', 'Build', 'Index size', `Candidates ⊇ exact top ${TOP}`, 'p50', 'p95', 'p99'];
      const cells = rows.map((r) => [
        r.variant, r.build ?? '', r.size ?? '',
        r.recall === undefined ? '' : check(r.recall >= 0.95, r.recall.toFixed(3)),
        r.p50 === undefined ? '' : ms(r.p50), r.p95 === undefined ? '' : ms(r.p95), r.p99 === undefined ? '' : ms(r.p99),
      ]);
      process.stdout.write(`${markdownTable(header, cells, (i) => i >= 1)}\n`);
    }
  }
}

runBench(main);
