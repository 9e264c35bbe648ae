// Embedding providers behind one interface: `local` (USE Lite in the worker pool) and `gateway`
// (an OpenAI-compatible /embeddings endpoint). One dimension per deployment. Query embeddings go
// through an LRU cache, since agents repeat their questions.
import { LRUCache } from 'lru-cache';
import type { Config } from '../config.js';
import { Semaphore } from '../platform/concurrency.js';
import { DependencyUnavailableError, NotConfiguredError } from '../platform/errors.js';
import type { ModelGateway } from '../platform/gateway.js';
import type { WorkerPool } from '../platform/pool.js';

export interface EmbedOptions {
  /** Nobody waits on it (embedding behind writes): run it where it yields to the work requests wait on. */
  background?: boolean;
}

export interface Embedder {
  readonly model: string;
  readonly dimensions: number;
  /** One unit-length vector per text, in order. */
  embed(texts: readonly string[], options?: EmbedOptions): Promise<Float32Array[]>;
  /** Whether an embedding asked for now would start at once (for the local embedder: a pool thread is free). */
  readonly ready: boolean;
}

/** Texts per pool task: large enough to amortise the hop, small enough to spread over threads. */
const LOCAL_CHUNK = 32;

export class LocalEmbedder implements Embedder {
  readonly model = 'use-lite-512';
  readonly dimensions = 512;

  get ready(): boolean {
    return this.pool.hasFreeThread;
  }

  /** Chunks in each pool at once across every caller: its feed limit, so that every thread is busy and its queue never overflows. */
  private readonly slots = new Map<WorkerPool, Semaphore>();

  /**
   * Queries and inline writes use `pool`; embedding behind writes uses `backgroundPool` (lower OS
   * priority), so it neither holds up a query's embedding behind its chunks nor takes the CPU from
   * requests. One pool may serve both.
   */
  constructor(
    private readonly pool: WorkerPool,
    private readonly backgroundPool: WorkerPool = pool,
  ) {
    for (const p of [pool, backgroundPool]) if (!this.slots.has(p)) this.slots.set(p, new Semaphore(p.feedLimit));
  }

  async embed(texts: readonly string[], options: EmbedOptions = {}): Promise<Float32Array[]> {
    const pool = options.background ? this.backgroundPool : this.pool;
    const slots = this.slots.get(pool)!;
    const chunks: string[][] = [];
    for (let i = 0; i < texts.length; i += LOCAL_CHUNK) chunks.push(texts.slice(i, i + LOCAL_CHUNK));
    const outputs = await Promise.all(chunks.map((chunk) => slots.use(() => pool.run('embed', { texts: chunk }))));
    const result: Float32Array[] = [];
    outputs.forEach((vectors, i) => {
      if (!(vectors instanceof Float32Array) || vectors.length !== chunks[i]!.length * this.dimensions) {
        throw new Error(`the embed task returned ${vectors?.length ?? 'no'} values for ${chunks[i]!.length} texts of ${this.dimensions} dimensions`);
      }
      for (let offset = 0; offset < vectors.length; offset += this.dimensions) result.push(vectors.subarray(offset, offset + this.dimensions));
    });
    return result;
  }
}

/** Embeddings from the model gateway (its time limit and retries), unit length, in input order. */
export class GatewayEmbedder implements Embedder {
  /** A remote endpoint: whether it answers in time is for the caller's timeout to find out. */
  readonly ready = true;

  constructor(
    private readonly gateway: Pick<ModelGateway, 'embeddings'>,
    readonly model: string,
    readonly dimensions: number,
  ) {}

  async embed(texts: readonly string[]): Promise<Float32Array[]> {
    if (texts.length === 0) return [];
    const rows = await this.gateway.embeddings(texts, this.model);
    if (rows.length !== texts.length) {
      throw new DependencyUnavailableError(`the model gateway returned ${rows.length} embeddings for ${texts.length} texts`);
    }
    const ordered = [...rows].sort((a, b) => (a.index ?? 0) - (b.index ?? 0));
    return ordered.map((row) => {
      const values = row.embedding;
      if (!Array.isArray(values) || values.length !== this.dimensions || !values.every((v) => typeof v === 'number')) {
        throw new DependencyUnavailableError(`the model gateway returned an embedding that is not ${this.dimensions} numbers (EMBEDDING_DIMENSIONS)`);
      }
      return normalise(Float32Array.from(values as number[]));
    });
  }
}

export function normalise(vector: Float32Array): Float32Array {
  let sum = 0;
  for (const v of vector) sum += v * v;
  const norm = Math.sqrt(sum);
  if (norm > 0) for (let i = 0; i < vector.length; i++) vector[i]! /= norm;
  return vector;
}

/** Caches single-query embeddings by text. */
export class QueryEmbedder {
  private readonly cache: LRUCache<string, Float32Array>;

  constructor(
    readonly embedder: Embedder,
    maxEntries = 2000,
  ) {
    this.cache = new LRUCache({ max: maxEntries });
  }

  async embedQuery(text: string): Promise<Float32Array> {
    const hit = this.cache.get(text);
    if (hit) return hit;
    const [vector] = await this.embedder.embed([text]);
    this.cache.set(text, vector!);
    return vector!;
  }
}

export function createEmbedder(config: Config, pool: WorkerPool, backgroundPool: WorkerPool, gateway: ModelGateway): Embedder {
  if (config.embeddingProvider === 'local') {
    return new LocalEmbedder(pool, backgroundPool);
  }
  if (config.modelGatewayUrl === undefined) throw new NotConfiguredError('EMBEDDING_PROVIDER=gateway needs MODEL_GATEWAY_URL');
  return new GatewayEmbedder(gateway, config.embeddingModel, config.embeddingDimensions);
}

/**
 * Vectors within `budgetMs`, or undefined: when the embedder has no capacity free now, when it
 * does not answer in time (the work may still finish, unused), or when it fails.
 */
export async function embedWithin(embedder: Embedder, texts: readonly string[], budgetMs: number): Promise<Float32Array[] | undefined> {
  if (texts.length === 0 || !embedder.ready) return undefined;
  let timer: NodeJS.Timeout | undefined;
  const late = new Promise<undefined>((resolve) => {
    timer = setTimeout(() => resolve(undefined), budgetMs);
  });
  try {
    return await Promise.race([embedder.embed(texts).catch(() => undefined), late]);
  } finally {
    clearTimeout(timer);
  }
}
