// The synthetic memory corpus of the search benches (memory.ts, vector-index.ts): realistic texts with
// 512-d vectors clustered around real embeddings of memory sentences, deterministic per seed, written
// straight into the memories table (not through the encoder).
import { performance } from 'node:perf_hooks';
import type { Lattice } from '../src/modules.js';
import type { Db, Queryable } from '../src/platform/db.js';
import { ensureEmbeddingDimension } from '../src/memory/search/dimension.js';
import { admitProject } from '../src/memory/search/project-index-store.js';
import { createMemoryModule, type MemoryApi } from '../src/memory/index.js';
import { mapConcurrent } from '../src/platform/concurrency.js';
import { newId } from '../src/platform/ids.js';
import type { MemoryType } from '../src/memory/schemas.js';
import { insertMemories, writeEmbeddings, type NewMemory } from '../src/memory/store.js';
import { makeTexts, memoryTemplates, mulberry32, progress, seconds, sleep } from './support.js';

export const TOPICS = 1000;
/**
 * Per-dimension noise around a topic centroid, 0.3 in norm: a row is ~0.96 cosine from its centroid and
 * ~0.92 from its nearest neighbour, and a real query's 1st, 10th, 40th and 200th neighbours are about as
 * close as among real embeddings of such sentences (0.61/0.56/0.50/0.41 here against 0.66/0.58/0.51/0.42).
 */
const NOISE = 0.3 / Math.sqrt(512);
const LOAD_BATCH = 1000;
const CORPUS_TYPES: MemoryType[] = ['fact', 'fact', 'fact', 'preference', 'preference', 'event', 'decision', 'observation', 'procedure', 'rule'];

function gaussian(random: () => number): () => number {
  let spare: number | undefined;
  return () => {
    if (spare !== undefined) {
      const value = spare;
      spare = undefined;
      return value;
    }
    const u = random() || Number.MIN_VALUE;
    const v = random();
    const r = Math.sqrt(-2 * Math.log(u));
    spare = r * Math.sin(2 * Math.PI * v);
    return r * Math.cos(2 * Math.PI * v);
  };
}

function clusteredVector(centroid: Float32Array, normal: () => number): Float32Array {
  const v = new Float32Array(centroid.length);
  let sum = 0;
  for (let i = 0; i < v.length; i++) {
    v[i] = centroid[i]! + NOISE * normal();
    sum += v[i]! * v[i]!;
  }
  const norm = Math.sqrt(sum);
  for (let i = 0; i < v.length; i++) v[i]! /= norm;
  return v;
}

/** Starts the pool threads (model load) and embeds the topic centroids. */
export async function topicCentroids(ctx: Lattice, setup: string): Promise<Float32Array[]> {
  const start = performance.now();
  const texts = makeTexts(TOPICS, 4242, memoryTemplates);
  const vectors = await ctx.apis.embeddings.embed(texts);
  if (vectors.length !== TOPICS || vectors.some((v) => v.length !== 512)) {
    throw new Error(`the embedder returned ${vectors.length} vector(s) of ${vectors[0]?.length ?? '-'} dimensions; expected ${TOPICS} of 512`);
  }
  progress(`[${setup}] embedded ${TOPICS} topic centroids (and started the pool) in ${seconds(performance.now() - start)}`);
  return vectors.map((v) => Float32Array.from(v));
}

/**
 * Creates the project and writes `count` memories with their vectors, in batches of 1,000 (two at a
 * time when `concurrency` says so): insertMemories, then writeEmbeddings, as the embedding drain writes
 * them. Vectors are made per batch, so a million never sit in memory at once, each batch from its own
 * seed, so they do not depend on which of two concurrent batches runs first.
 */
export async function loadProject(
  ctx: Lattice,
  projectId: string,
  count: number,
  seed: number,
  centroids: readonly Float32Array[],
  options: { concurrency?: number; onProgress?: (done: number, elapsedMs: number) => void } = {},
): Promise<void> {
  await ctx.apis.tenancy.createProject(projectId, { name: `Memory benchmark, ${count} memories` });
  const random = mulberry32(seed ^ 0x5eed);
  const texts = makeTexts(count, seed, memoryTemplates);
  const now = Date.now();
  const batchStarts = Array.from({ length: Math.ceil(count / LOAD_BATCH) }, (_, b) => b * LOAD_BATCH);
  // The row fields are drawn in order up front (cheap), so they too do not depend on the batches' order.
  const fields = texts.map(() => ({
    type: CORPUS_TYPES[Math.floor(random() * CORPUS_TYPES.length)]!,
    importance: 1 + Math.floor(random() * 10),
    validFrom: new Date(now - random() * 365 * 86_400_000),
  }));
  const topicOf = (i: number) => centroids[Math.floor(mulberry32(seed * 7919 + i)() * centroids.length)]!;
  let done = 0;
  const start = performance.now();
  await mapConcurrent(batchStarts, options.concurrency ?? 1, async (first, b) => {
    const batch: NewMemory[] = texts.slice(first, first + LOAD_BATCH).map((content, i) => ({ id: newId('mem'), projectId, content, ...fields[first + i]! }));
    const normal = gaussian(mulberry32(seed * 131 + b));
    const vectors = batch.map((row, i) => ({ id: row.id, vector: clusteredVector(topicOf(first + i), normal) }));
    // One transaction: the service's embedding sweep must not see the rows before their vectors
    // (it would embed them with the encoder, and writeEmbeddings fills only rows without one).
    await ctx.runtime.db.transaction(async (tx) => {
      const inserted = await insertMemories(tx, batch);
      if (inserted.length !== batch.length) throw new Error(`inserted ${inserted.length} of ${batch.length} rows into ${projectId}`);
      const written = await writeEmbeddings(tx, projectId, 'synthetic-512', vectors);
      if (written !== batch.length) throw new Error(`embedded ${written} of ${batch.length} rows of ${projectId}`);
    });
    done += batch.length;
    options.onProgress?.(done, performance.now() - start);
  });
}

/**
 * Deletes a project's memories. The embedding jobs that saves scheduled may be writing these rows: a
 * deadlock (40P01) with them is expected now and then (more so while HNSW inserts make their
 * transactions longer), and a retry after a pause clears it.
 */
export async function deleteProjectRows(ctx: Lattice, projectId: string): Promise<void> {
  for (let attempt = 1; ; attempt++) {
    try {
      await ctx.runtime.db.query('DELETE FROM memories WHERE project_id = $1', [projectId]);
      return;
    } catch (error) {
      if ((error as { code?: string }).code !== '40P01' || attempt >= 20) throw error;
      await sleep(250 * attempt);
    }
  }
}

/** The HNSW indexes on memories: the service's vector index, whatever its name, expression and settings. */
async function hnswIndexes(db: Db): Promise<string[]> {
  const { rows } = await db.query<{ name: string }>(
    `SELECT c.relname AS name FROM pg_index i JOIN pg_class c ON c.oid = i.indexrelid JOIN pg_am a ON a.oid = c.relam
      WHERE i.indrelid = 'memories'::regclass AND a.amname = 'hnsw'`,
  );
  return rows.map((r) => r.name);
}

/** Drops the vector index, so that a corpus loads without linking each row into the graph; answers what it dropped. */
export async function dropVectorIndex(ctx: Lattice): Promise<string[]> {
  const dropped = await hnswIndexes(ctx.runtime.db);
  for (const index of dropped) await ctx.runtime.db.exec(`DROP INDEX ${index}`);
  return dropped;
}

/**
 * Builds the vector index over what is loaded, as a boot builds it (ensureEmbeddingDimension): its
 * time, name(s) and size. Every loaded project is admitted to the graph first (migration 0016), so
 * that the index holds every row, as the benches measure HNSW at each size, forced below the
 * exact-scan threshold too; the service admits only the projects past it.
 */
export async function buildVectorIndex(ctx: Lattice): Promise<{ ms: number; indexes: string[]; size: string }> {
  const { db, config } = ctx.runtime;
  const { rows: projects } = await db.query<{ project_id: string }>(`SELECT DISTINCT project_id FROM memories`);
  for (const { project_id: projectId } of projects) await admitProject(db, projectId, 50_000);
  const start = performance.now();
  await ensureEmbeddingDimension(db, config.embeddingDimensions, config.searchHnswBuildMemoryMb);
  const ms = performance.now() - start;
  const indexes = await hnswIndexes(db);
  if (indexes.length === 0) throw new Error('the boot path built no HNSW index on memories');
  const { rows } = await db.query<{ size: string }>(
    `SELECT pg_size_pretty(sum(pg_relation_size(c.oid))) AS size FROM pg_class c WHERE c.relname = ANY($1::text[])`,
    [indexes],
  );
  return { ms, indexes, size: rows[0]!.size };
}

/** The memory domain's search as the service builds it, over another database handle or exact-scan limit. */
export async function searchWith(ctx: Lattice, options: { db?: Db; exactScanMaxRows?: number }): Promise<Pick<MemoryApi, 'search'>> {
  const { runtime } = ctx;
  const config = { ...runtime.config, searchExactScanMaxRows: options.exactScanMaxRows ?? runtime.config.searchExactScanMaxRows };
  return (await createMemoryModule({ ...runtime, config, db: options.db ?? runtime.db }, { embeddings: ctx.apis.embeddings, tenancy: ctx.apis.tenancy })).api;
}
