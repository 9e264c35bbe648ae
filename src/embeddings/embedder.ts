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
  /** Loads the model where it runs, so that the first write or search does not wait for it. */
  warm(): Promise<void>;
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

  /**
   * One short text per thread of the foreground pool, all at once: each thread loads the encoder
   * (seconds) before the process says it is ready, so a write's inline embedding and the first
   * search find it loaded. The background pool's threads load theirs with their first job.
   */
  async warm(): Promise<void> {
    await Promise.all(Array.from({ length: this.pool.maxThreads }, () => this.embed(['warm'])));
  }

  async embed(texts: readonly string[], options: EmbedOptions = {}): Promise<Float32Array[]> {
    const pool = options.background ? this.backgroundPool : this.pool;
    const slots = this.slots.get(pool)!;
    // The encoder pads every text of a run to the run's longest, so chunks of texts of like length
    // waste the least: by length, then each vector back to its text's place. Padding does not
    // change a vector, only the time; the worker splits a chunk into runs of like token count too
    // (workers/use-lite.ts), and sorted chunks give it fewer, larger runs.
    const order = texts.map((_, i) => i).sort((a, b) => texts[a]!.length - texts[b]!.length);
    const chunks: number[][] = [];
    for (let i = 0; i < order.length; i += LOCAL_CHUNK) chunks.push(order.slice(i, i + LOCAL_CHUNK));
    const outputs = await Promise.all(chunks.map((chunk) => slots.use(() => pool.run('embed', { texts: chunk.map((i) => texts[i]!) }))));
    const result = new Array<Float32Array>(texts.length);
    outputs.forEach((vectors, c) => {
      const chunk = chunks[c]!;
      if (!(vectors instanceof Float32Array) || vectors.length !== chunk.length * this.dimensions) {
        throw new Error(`the embed task returned ${vectors?.length ?? 'no'} values for ${chunk.length} texts of ${this.dimensions} dimensions`);
      }
      chunk.forEach((textIndex, k) => (result[textIndex] = vectors.subarray(k * this.dimensions, (k + 1) * this.dimensions)));
    });
    return result;
  }
}

/** Embeddings from the model gateway (its time limit and retries), unit length, in input order. */
export class GatewayEmbedder implements Embedder {
  /** A remote endpoint: whether it answers in time is for the caller's timeout to find out. */
  readonly ready = true;

  /** Nothing loads here: the model lives behind the gateway. */
  async warm(): Promise<void> {}

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
