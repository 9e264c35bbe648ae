// Memory rows of the suite: search against the raw pgvector candidate statement and against exact
// search, and saveMany against a raw COPY of the same rows.
import { performance } from 'node:perf_hooks';
import { Readable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import pg from 'pg';
import { from as copyFrom } from 'pg-copy-streams';
import type { Lattice } from '../../src/modules.js';
import type { Db, Queryable } from '../../src/platform/db.js';
import { pgliteOf } from '../../src/platform/db-pglite.js';
import { newId } from '../../src/platform/ids.js';
import { contentHash } from '../../src/memory/content-hash.js';
import type { SaveInput } from '../../src/memory/index.js';
import type { MemoryType } from '../../src/memory/schemas.js';
import { searchCandidates } from '../../src/memory/search/store.js';
import { candidatesPerList } from '../../src/memory/search/search.js';
import { buildVectorIndex, deleteProjectRows, dropVectorIndex, loadProject, searchWith, topicCentroids } from '../corpus.js';
import { makeTexts, memoryTemplates, ms, perSecond, progress, queryTemplates, recordingDb, seconds, sleep, summarise, thousands, type Statement } from '../support.js';
import { addRow, latencyMeasure, timeEach, type Run } from './common.js';

const SEARCH_LIMIT = 10;
/** What MemorySearch asks each list for at limit 10. */
const CANDIDATES_K = candidatesPerList(SEARCH_LIMIT);
const WARMUP = 30;
const RECALL_QUERIES = 50;
const SAVE_BATCH = 500;

// Issue 8's goals (Postgres, 100k memories), with issue 34's bound on search: whole search p95 at
// most 25 ms at 100k, with its deep candidate pools (issue 8's 15 ms for retrieval predates them).
const GOAL_SEARCH_P95_MS = 25;
const GOAL_RECALL = 0.95;
const GOAL_SAVE_PER_SECOND = 10_000;

/** A pgvector distance operator: the statement orders or filters by vector distance. */
const VECTOR_OPERATOR = /<=>|<#>|<->|<~>|<%>|<\+>/;

/**
 * The vector candidate list among the statements one search sent: those that use a distance
 * operator, but not the read of the candidates by id (which scores every candidate of both lists),
 * and the session settings (SET LOCAL ...) sent before them. Whatever the index and its settings
 * are, this is the statement the service runs for its nearest neighbours.
 */
function vectorStatements(statements: readonly Statement[]): { settings: string[]; list: Statement[] } {
  const list = statements.filter((s) => s.params !== undefined && VECTOR_OPERATOR.test(s.sql) && !/\bid\s*=\s*ANY\s*\(/i.test(s.sql) && !/MATERIALIZED/i.test(s.sql));
  const settings = statements.filter((s) => s.params === undefined && /\bSET\b/i.test(s.sql)).map((s) => s.sql);
  return { settings, list };
}

const sizeLabel = (n: number) => (n >= 1000 && n % 1000 === 0 ? `${n / 1000}k` : thousands(n));

export async function benchSearch(run: Run, size: number, searches: number): Promise<void> {
  const { ctx, setup } = run;
  const db = ctx.runtime.db;
  const projectId = 'suite-search';
  const centroids = await topicCentroids(ctx, setup);
  // Loaded without the vector index, which the service's boot path then builds over the whole table
  // (as a deployment's first boot after an import would): far faster than linking every row as it comes.
  const dropped = await dropVectorIndex(ctx);
  progress(`[${setup}] search: loading ${thousands(size)} memories (realistic texts, vectors clustered around 1,000 topic centroids; dropped ${dropped.join(', ') || 'no index'} first)`);
  let lastReport = 0;
  const loadStart = performance.now();
  await loadProject(ctx, projectId, size, size, centroids, {
    concurrency: run.postgres ? 2 : 1,
    onProgress: (done, elapsed) => {
      if (done - lastReport >= 10_000 || done === size) {
        lastReport = done;
        progress(`[${setup}] search: ${thousands(done)}/${thousands(size)} rows (${thousands(perSecond(done, elapsed))}/s, ${seconds(elapsed)})`);
      }
    },
  });
  const loadMs = performance.now() - loadStart;
  progress(`[${setup}] search: building the vector index (the service's boot path, ensureEmbeddingDimension)`);
  const index = await buildVectorIndex(ctx);
  progress(`[${setup}] search: VACUUM ANALYZE memories`);
  await db.exec('VACUUM ANALYZE memories');

  const queries = makeTexts(WARMUP + 2 * searches, 31337, queryTemplates);
  const exactPath = size <= ctx.runtime.config.searchExactScanMaxRows;
  const path = exactPath ? `exact scan (the service's path up to SEARCH_EXACT_SCAN_MAX_ROWS=${ctx.runtime.config.searchExactScanMaxRows})` : 'HNSW (the service\'s path)';
  const name = `memory search @${sizeLabel(size)}`;
  const offScale = size < 100_000 ? `measured at ${sizeLabel(size)} memories` : undefined;
  const search = (q: string) => ctx.apis.memory.search(projectId, { query: q, limit: SEARCH_LIMIT });

  progress(`[${setup}] ${name}: ${WARMUP} warm-up searches`);
  for (const q of queries.slice(0, WARMUP)) await search(q);
  const retrievalQueries = queries.slice(WARMUP, WARMUP + searches);
  const wholeQueries = queries.slice(WARMUP + searches);

  // Retrieval: the query's vector is in the cache (embedded just before, untimed).
  const retrievalSamples: number[] = [];
  for (const [i, q] of retrievalQueries.entries()) {
    await ctx.apis.embeddings.embedQuery(q);
    const t0 = performance.now();
    await search(q);
    retrievalSamples.push(performance.now() - t0);
    if ((i + 1) % 100 === 0) progress(`[${setup}] ${name}: retrieval ${i + 1}/${retrievalQueries.length}`);
  }
  // Whole: fresh queries, their embedding included, as a client sees it.
  const whole = await timeEach(`${name}: whole search`, setup, wholeQueries, 0, search);

  // The reference: the vector candidate statement as the service sent it for each query (recorded
  // through a search over a recording handle, untimed), then all replayed alone, in the same order,
  // each with its session settings (after the recording pass, so no replay follows its own query).
  const recorder = recordingDb(db);
  const probe = await searchWith(ctx, { db: recorder.db });
  const recorded: { settings: string[]; list: Statement[] }[] = [];
  for (const q of retrievalQueries) {
    recorder.statements.length = 0;
    await probe.search(projectId, { query: q, limit: SEARCH_LIMIT });
    const found = vectorStatements(recorder.statements);
    if (found.list.length === 0) throw new Error(`no vector candidate statement among the ${recorder.statements.length} a search sent`);
    recorded.push(found);
  }
  const shapes = new Set(recorded.map(({ settings, list }) => `${list.length} statement(s)${settings.length > 0 ? ` after ${settings.join('; ')}` : ''}`));
  const raw: number[] = [];
  let rawRows = 0;
  const replay = async (q: Queryable, list: readonly Statement[]) => {
    let took = 0;
    for (const s of list) {
      const t0 = performance.now();
      const result = await q.query(s.sql, s.params);
      took += performance.now() - t0;
      rawRows += result.rows.length;
    }
    return took;
  };
  for (const [i, { settings, list }] of recorded.entries()) {
    raw.push(
      settings.length === 0
        ? await replay(db, list)
        : await db.transaction(async (tx) => {
            for (const sql of settings) await tx.exec(sql);
            return replay(tx, list);
          }),
    );
    if ((i + 1) % 100 === 0) progress(`[${setup}] ${name}: raw vector statement ${i + 1}/${recorded.length}`);
  }
  const rawSummary = summarise(raw);
  const rawMeasure = latencyMeasure('raw vector candidate statement as the service sent it (session settings applied, no lexical list, no fusion)', rawSummary);
  const r = summarise(retrievalSamples);
  const w = summarise(whole);
  const common = `${path}; ${thousands(size)} memories written in ${seconds(loadMs)}, then the vector index ${index.indexes.join(', ')} built in ${seconds(index.ms)} (${index.size}); ${searches} searches after ${WARMUP} warm-up; vector statement: ${[...shapes].join(' | ')}, ${(rawRows / Math.max(1, raw.length)).toFixed(0)} ids a query`;
  addRow(run, `${name}: retrieval (query vector cached), ctx.apis.memory.search`, latencyMeasure('search with the query vector cached', r), rawMeasure, {
    text: `#34: p95 ≤ ${GOAL_SEARCH_P95_MS} ms at 100k`,
    ok: (v) => v <= GOAL_SEARCH_P95_MS,
    offScale,
  }, [common]);
  addRow(run, `${name}: whole search (query embedding included)`, latencyMeasure('search of a fresh query', w), rawMeasure, {
    text: `#34: p95 ≤ ${GOAL_SEARCH_P95_MS} ms at 100k`,
    ok: (v) => v <= GOAL_SEARCH_P95_MS,
    offScale,
  });

  // Recall: how much of the exact top 10 the HNSW vector candidates hold (vector list alone), and the exact search's own time.
  let found = 0;
  let total = 0;
  const exactSamples: number[] = [];
  for (const q of retrievalQueries.slice(0, RECALL_QUERIES)) {
    const vector = await ctx.apis.embeddings.embedQuery(q);
    const base = { projectId, filter: { liveOnly: true }, vector, k: CANDIDATES_K, efSearch: ctx.runtime.config.searchHnswEfSearch };
    const t0 = performance.now();
    const exact = await searchCandidates(db, { ...base, exact: true });
    exactSamples.push(performance.now() - t0);
    const truth = exact.sort((a, b) => a.vectorRank! - b.vectorRank!).slice(0, SEARCH_LIMIT);
    const hnsw = new Set((await searchCandidates(db, { ...base, exact: false })).map((c) => c.memory.id));
    found += truth.filter((c) => hnsw.has(c.memory.id)).length;
    total += truth.length;
  }
  const recall = found / Math.max(1, total);
  const exactSummary = summarise(exactSamples);
  addRow(
    run,
    `${name}: HNSW vector candidates (${CANDIDATES_K}) holding the exact top ${SEARCH_LIMIT}`,
    { what: `share of the exact top ${SEARCH_LIMIT} among the HNSW candidates`, value: recall, unit: 'share', text: `${recall.toFixed(3)} (${found}/${total}, ${RECALL_QUERIES} queries)` },
    { what: 'exact search (searchCandidates, exact scan)', value: 1, unit: 'share', text: `1.000 by definition; its p95 ${ms(exactSummary.p95)} (p50 ${ms(exactSummary.p50)})`, summary: exactSummary },
    { text: `#8: ≥ ${GOAL_RECALL} of the exact top 10 at 100k`, ok: (v) => v >= GOAL_RECALL, offScale },
    [exactPath ? 'the service scans this project exactly, so its answers do not depend on this recall' : undefined, run.postgres ? undefined : `PGlite runs ${thousands(size)} memories by default (it links HNSW in WASM, slowly): BENCH_SUITE_PGLITE_MEMORIES sets it`],
  );
}


const countMemories = async (ctx: Lattice, projectId: string) =>
  (await ctx.runtime.db.query<{ n: number }>('SELECT count(*)::int AS n FROM memories WHERE project_id = $1', [projectId])).rows[0]!.n;

export async function benchSave(run: Run, count: number): Promise<void> {
  const { ctx, setup } = run;
  const types: MemoryType[] = ['fact', 'preference', 'event', 'decision', 'procedure'];
  const inputs: SaveInput[] = makeTexts(count, 100, memoryTemplates).map((content, i) => ({
    content,
    type: types[i % types.length],
    importance: 1 + (i % 10),
    category: i % 3 === 0 ? 'engineering' : undefined,
    metadata: { source: 'bench', sequence: i },
  }));
  const service = 'suite-save-service';
  const rawProject = 'suite-save-raw';
  await ctx.apis.tenancy.createProject(service);
  await ctx.apis.tenancy.createProject(rawProject);

  // The raw reference: the same rows, one COPY ... FROM STDIN (CSV) per batch of the same size, into
  // the same table (its indexes and triggers, BM25 term statistics included, fire for COPY as for
  // the service's insert). Its connection is closed whatever happens, and outside the clock.
  const copy = await copyInto(ctx);
  try {
    await measureSave(run, count, inputs, service, rawProject, copy);
  } finally {
    await copy.close();
  }
}

async function measureSave(run: Run, count: number, inputs: SaveInput[], service: string, rawProject: string, copy: (csv: string) => Promise<void>): Promise<void> {
  const { ctx, setup } = run;
  const rawInsert = (rows: SaveInput[]) => copy(csvOf(rawProject, rows, new Date().toISOString()));
  // Warm-up of both paths (plans, connections), then cleared.
  const warm = makeTexts(50, 901, memoryTemplates).map((content) => ({ content }));
  await ctx.apis.memory.saveMany(service, warm);
  await rawInsert(warm);
  await deleteProjectRows(ctx, service);
  await deleteProjectRows(ctx, rawProject);

  progress(`[${setup}] saveMany: ${thousands(count)} memories in batches of ${SAVE_BATCH}`);
  const t0 = performance.now();
  for (let offset = 0; offset < count; offset += SAVE_BATCH) {
    const results = await ctx.apis.memory.saveMany(service, inputs.slice(offset, offset + SAVE_BATCH));
    if (results.some((r) => !r.created)) throw new Error('a distinct memory was answered as a replay');
  }
  const serviceMs = performance.now() - t0;
  if ((await countMemories(ctx, service)) !== count) throw new Error(`saveMany stored other than ${count} memories`);
  // The drain jobs these saves scheduled find nothing once the rows are gone, so they do not run into the reference.
  await deleteProjectRows(ctx, service);
  await sleep(2000);

  // The same rows, batched before the clock (ids, hashes and the CSV are made inside it, as a driver would).
  progress(`[${setup}] saveMany reference: the same ${thousands(count)} rows by raw COPY, batches of ${SAVE_BATCH}`);
  const batches: SaveInput[][] = [];
  for (let offset = 0; offset < count; offset += SAVE_BATCH) batches.push(inputs.slice(offset, offset + SAVE_BATCH));
  const t1 = performance.now();
  for (const batch of batches) await rawInsert(batch);
  const rawMs = performance.now() - t1;
  if ((await countMemories(ctx, rawProject)) !== count) throw new Error(`the raw insert stored other than ${count} memories`);
  await deleteProjectRows(ctx, rawProject);

  const serviceRate = perSecond(count, serviceMs);
  const rawRate = perSecond(count, rawMs);
  addRow(
    run,
    `saveMany, batches of ${SAVE_BATCH}, ${thousands(count)} memories`,
    { what: 'ctx.apis.memory.saveMany, memories/s', value: serviceRate, unit: 'rows/s', text: `${thousands(serviceRate)} memories/s (${seconds(serviceMs)})` },
    { what: 'raw COPY ... FROM STDIN (CSV) of the same rows, rows/s', value: rawRate, unit: 'rows/s', text: `${thousands(rawRate)} rows/s (${seconds(rawMs)})` },
    { text: `#8: ≥ ${thousands(GOAL_SAVE_PER_SECOND)} memories/s`, ok: (v) => v >= GOAL_SAVE_PER_SECOND },
    [
      'the reference is one COPY per batch: pg-copy-streams on its own connection to Postgres, a blob on PGlite',
      'embedding runs behind saveMany (a drain job); nothing waits for it',
    ],
  );
}

/** A COPY of CSV text into memories on this context's database, and its close. */
async function copyInto(ctx: Lattice): Promise<((csv: string) => Promise<void>) & { close(): Promise<void> }> {
  const sql = `COPY memories (id, project_id, content, content_hash, type, importance, category, metadata, valid_from) FROM STDIN WITH (FORMAT csv)`;
  const db = ctx.runtime.db;
  if (db.kind === 'pglite') {
    const pglite = pgliteOf(db);
    if (!pglite) throw new Error('no PGlite instance behind this context');
    const copy = async (csv: string) => {
      await pglite.query(sql.replace('STDIN', `'/dev/blob'`), [], { blob: new Blob([csv]) });
    };
    return Object.assign(copy, { close: async () => {} });
  }
  const client = new pg.Client({ connectionString: ctx.runtime.config.databaseUrl });
  await client.connect();
  const copy = (csv: string) => pipeline(Readable.from([csv]), client.query(copyFrom(sql)));
  return Object.assign(copy, { close: () => client.end() });
}

/** The rows as CSV in COPY's column order: every text quoted (quotes doubled), NULL as an empty unquoted field. */
function csvOf(projectId: string, rows: readonly SaveInput[], validFrom: string): string {
  const field = (value: string | number | null) => (value === null ? '' : typeof value === 'number' ? String(value) : `"${value.replaceAll('"', '""')}"`);
  return rows
    .map((r) =>
      [newId('mem'), projectId, r.content, contentHash(r.content), r.type ?? 'fact', r.importance ?? 5, r.category ?? null, JSON.stringify(r.metadata ?? null), validFrom]
        .map(field)
        .join(','),
    )
    .join('\n');
}
