// Piscina entry point: dispatches a task by name. Only dispatch lives here; tasks are pure
// functions in their own files. Typed-array results are moved, not copied.
import { Piscina } from 'piscina';
import { dedupGroups } from './dedup.js';
import { embed } from './embed.js';
import type { TaskMap, TaskName, TaskRequest } from './tasks.js';

type Tasks = { [N in TaskName]: (input: TaskMap[N]['input']) => TaskMap[N]['output'] | Promise<TaskMap[N]['output']> };

const tasks: Tasks = {
  embed,
  dedup: dedupGroups,
  noop: (input) => input,
};

export default async function run(request: TaskRequest): Promise<unknown> {
  const task = tasks[request.name] as (input: unknown) => unknown;
  if (!task) throw new Error(`unknown pool task ${String(request.name)}`);
  const output = await task(request.input);
  // Piscina transfers only a top-level moved value; nested typed arrays would be copied.
  return ArrayBuffer.isView(output) ? Piscina.move(output) : output;
}
