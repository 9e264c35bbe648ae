// The map of pool tasks: name -> input and output. Inputs and outputs are plain data and typed
// arrays; outputs move back to the caller without copying.
import type { BgnbdFit, Histories } from './behavior/bgnbd.js';
import type { BudgetInput, BudgetOutput } from './behavior/budget.js';
import type { MinedPattern, MiningInput } from './behavior/mining.js';
import type { DedupInput } from './dedup.js';
import type { Cluster, ClusterInput } from './discovery/cluster.js';
import type { LinesInput, LinesOutput } from './memory/context.js';

export interface EmbedInput {
  texts: string[];
}

/** Row-major texts.length x dimensions, each row unit length (dimensions = length / texts.length). */
export type EmbedOutput = Float32Array;

export interface TaskMap {
  embed: { input: EmbedInput; output: EmbedOutput };
  dedup: { input: DedupInput; output: Int32Array };
  /** Many subjects' (or activity types') activity in, the mined patterns of each out, in order. */
  'behavior.mine': { input: MiningInput[]; output: MinedPattern[][] };
  /** Subjects' histories (x, tx, T) in, the BG/NBD maximum-likelihood fit out. */
  'behavior.fit-bgnbd': { input: Histories; output: BgnbdFit };
  /** A context bundle's candidate sections in, how many items of each fit the token budget out. */
  'behavior.fit-context': { input: BudgetInput; output: BudgetOutput };
  'graph.fit-briefing': { input: BudgetInput; output: BudgetOutput };
  /** A conversation context's memory lines in, how many fit the token budget out. */
  'memory.fit-context': { input: LinesInput; output: LinesOutput };
  /** Subjects' feature vectors in, their threshold clusters (row indices, medoid first) out. */
  'discovery.cluster': { input: ClusterInput; output: Cluster[] };
  /** Does nothing: measures the pool's own per-task cost. */
  noop: { input: { value: number }; output: { value: number } };
  /** The thread's nice value, as the OS reports it (tests of the background pool). */
  priority: { input: Record<string, never>; output: number };
}

export type TaskName = keyof TaskMap;

export interface TaskRequest<N extends TaskName = TaskName> {
  name: N;
  input: TaskMap[N]['input'];
}
