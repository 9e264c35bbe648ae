// Memories with deterministic vectors for the curation tests, written through the store, so that
// their similarities are known (near-duplicate.ts: 0.75 x words + 0.25 x cosine).
import { insertMemories, writeEmbeddings, type NewMemory } from '../../../src/memory/store.js';
import { newId } from '../../../src/platform/ids.js';
import type { Harness } from '../../helpers/harness.js';

/** A 512-dimension unit vector whose first components are `values` (scaled). */
export function unit(values: number[]): Float32Array {
  const v = new Float32Array(512);
  values.forEach((x, i) => (v[i] = x));
  const norm = Math.hypot(...v);
  return v.map((x) => x / norm);
}

/** Saves the memories with the vectors given (made unit length); answers their ids, in order. */
export async function seed(h: Harness, projectId: string, rows: (Partial<NewMemory> & { content: string; vector: number[] })[]): Promise<string[]> {
  const memories = rows.map(({ vector, ...r }) => ({ id: newId('mem'), projectId, ...r }));
  await insertMemories(h.db, memories);
  await writeEmbeddings(h.db, projectId, 'synthetic', memories.map((m, i) => ({ id: m.id, vector: unit(rows[i]!.vector) })));
  return memories.map((m) => m.id);
}
