// The embeddings domain's face: the deployment's embedding provider (local USE Lite in the worker
// pool, or the model gateway), with a cache for query texts. Memory and, later, the graph use it.
import type { DomainModule } from '../platform/module.js';
import type { Runtime } from '../platform/runtime.js';
import { createEmbedder, embedWithin, QueryEmbedder, type EmbedOptions } from './embedder.js';

export type { Embedder } from './embedder.js';

export interface EmbeddingsApi {
  readonly model: string;
  readonly dimensions: number;
  /** One unit-length vector per text, in order; `background` for work nobody waits on. */
  embed(texts: readonly string[], options?: EmbedOptions): Promise<Float32Array[]>;
  /** One query's vector, cached by its text (agents repeat their questions). */
  embedQuery(text: string): Promise<Float32Array>;
  /**
   * Vectors now, for a write that wants to be found by meaning at once: undefined when the
   * embedder is busy (no free pool thread) or does not answer within `budgetMs`, or fails. Never
   * throws: the caller leaves the text to the embedding job.
   */
  embedNow(texts: readonly string[], budgetMs: number): Promise<Float32Array[] | undefined>;
  /**
   * Loads the encoder where it runs (every thread of the local pool); resolves once it has, or has
   * failed to (the failure is the answer's: searches then go on by words alone until it loads).
   */
  warm(): Promise<void>;
}

/** The deployment's embedding provider. (The column and index the vectors live in are memory's: memory/search/dimension.ts.) */
export async function createEmbeddingsModule(runtime: Pick<Runtime, 'config' | 'db' | 'pool' | 'backgroundPool' | 'gateway'>): Promise<DomainModule<EmbeddingsApi>> {
  const embedder = createEmbedder(runtime.config, runtime.pool, runtime.backgroundPool, runtime.gateway);
  const queries = new QueryEmbedder(embedder);
  return {
    name: 'embeddings',
    api: {
      model: embedder.model,
      dimensions: embedder.dimensions,
      embed: (texts, options) => embedder.embed(texts, options),
      embedQuery: (text) => queries.embedQuery(text),
      embedNow: (texts, budgetMs) => embedWithin(embedder, texts, budgetMs),
      warm: () => embedder.warm(),
    },
  };
}
