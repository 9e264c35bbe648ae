// Piscina entry point: dispatches a task by name. Only dispatch lives here; tasks are pure
// functions in their own files. Typed-array results are moved, not copied.
import { getPriority, setPriority } from 'node:os';
import { Piscina, workerData } from 'piscina';
import { fitBgnbd } from './behavior/bgnbd.js';
import { fitBudget } from './behavior/budget.js';
import { minePatternsBatch } from './behavior/mining.js';
import { dedupGroups } from './dedup.js';
import { clusterSubjects } from './discovery/cluster.js';
import { embed } from './embed.js';
import { fitLines } from './memory/context.js';
import type { TaskMap, TaskName, TaskRequest } from './tasks.js';

type Tasks = { [N in TaskName]: (input: TaskMap[N]['input']) => TaskMap[N]['output'] | Promise<TaskMap[N]['output']> };

// A background pool's thread lowers its own priority once, as it starts. On Linux the nice value
// belongs to the thread (setpriority with pid 0 names the caller), so the process's other threads
// keep theirs. Where the OS refuses, the thread runs at normal priority.
const niceness = Number((workerData as { niceness?: unknown } | undefined)?.niceness ?? 0);
if (niceness > 0) {
  try {
    setPriority(niceness);
  } catch {
    // Not permitted here: background work then competes at normal priority.
  }
}

const tasks: Tasks = {
  embed,
  dedup: dedupGroups,
  'behavior.mine': minePatternsBatch,
  'behavior.fit-bgnbd': fitBgnbd,
  'behavior.fit-context': fitBudget,
  'graph.fit-briefing': fitBudget,
  'memory.fit-context': fitLines,
  'discovery.cluster': clusterSubjects,
  noop: (input) => input,
  priority: () => getPriority(),
};

export default async function run(request: TaskRequest): Promise<unknown> {
  const task = tasks[request.name] as (input: unknown) => unknown;
  if (!task) throw new Error(`unknown pool task ${String(request.name)}`);
  const output = await task(request.input);
  // Piscina transfers only a top-level moved value; nested typed arrays would be copied.
  return ArrayBuffer.isView(output) ? Piscina.move(output) : output;
}
