// The worker-thread pool for CPU work (embedding, clustering, estimators). Created on first use,
// bounded in flight, with a timeout per task; a full pool answers PoolOverloadedError (503) rather
// than queueing without limit. Runs the built JS entry (dist/workers), since worker threads do
// not get a TypeScript transform.
//
// A pool may run its threads at a lower OS priority (`niceness`): the runtime keeps one such pool
// for background work (embedding behind writes), so that the work requests wait on (handlers,
// Postgres, query embeddings) takes the CPU first, while background work still gets every cycle
// they leave idle.
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { Piscina } from 'piscina';
import type { TaskMap, TaskName } from '../../workers/tasks.js';
import { DependencyUnavailableError, PoolOverloadedError } from './errors.js';
import { projectRoot } from './project-root.js';

export interface PoolOptions {
  maxThreads: number;
  /** Tasks allowed to wait for a thread beyond those running. */
  maxQueue: number;
  taskTimeoutMs: number;
  /** The nice value of the threads (0 to 19; 0, the default, leaves them as the process is). */
  niceness?: number;
  filename?: string;
}

export class WorkerPool {
  private piscina: Piscina | undefined;
  private inFlight = 0;

  constructor(private readonly options: PoolOptions) {}

  get size(): { inFlight: number; threads: number } {
    return { inFlight: this.inFlight, threads: this.piscina?.threads.length ?? 0 };
  }

  /**
   * How many tasks a caller that feeds the pool continuously should keep in it: two per thread (one
   * running, one ready), never more than the pool admits.
   */
  get feedLimit(): number {
    return Math.min(this.options.maxThreads * 2, this.options.maxThreads + this.options.maxQueue);
  }

  /** Whether a task run now would start at once, rather than wait behind others. */
  get hasFreeThread(): boolean {
    return this.inFlight < this.options.maxThreads;
  }

  async run<N extends TaskName>(name: N, input: TaskMap[N]['input'], transferList?: ArrayBuffer[]): Promise<TaskMap[N]['output']> {
    if (this.inFlight >= this.options.maxThreads + this.options.maxQueue) {
      throw new PoolOverloadedError(`the worker pool is full (${this.inFlight} tasks in flight); retry shortly`, { retryAfterSeconds: 1 });
    }
    const pool = this.start();
    const signal = AbortSignal.timeout(this.options.taskTimeoutMs);
    this.inFlight++;
    try {
      return (await pool.run({ name, input }, { signal, transferList })) as TaskMap[N]['output'];
    } catch (error) {
      if (signal.aborted) {
        throw new DependencyUnavailableError(`pool task ${name} exceeded ${this.options.taskTimeoutMs} ms`, { cause: error });
      }
      throw error;
    } finally {
      this.inFlight--;
    }
  }

  async destroy(): Promise<void> {
    const pool = this.piscina;
    this.piscina = undefined;
    await pool?.destroy();
  }

  private start(): Piscina {
    if (this.piscina) return this.piscina;
    const filename = this.options.filename ?? join(projectRoot(), 'dist', 'workers', 'index.js');
    if (!existsSync(filename)) throw new Error(`worker entry ${filename} is missing: run npm run build`);
    this.piscina = new Piscina({
      filename,
      minThreads: 0,
      maxThreads: this.options.maxThreads,
      maxQueue: Math.max(1, this.options.maxQueue) + this.options.maxThreads,
      idleTimeout: 60_000,
      workerData: { niceness: this.options.niceness ?? 0 },
    });
    return this.piscina;
  }
}
