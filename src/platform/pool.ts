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
import { GATE_BUSY, GATE_CELLS, GATE_CLOSING } from '../../workers/native-gate.js';
import type { TaskMap, TaskName } from '../../workers/tasks.js';
import { DependencyUnavailableError, PoolOverloadedError } from './errors.js';
import { projectRoot } from './project-root.js';

/**
 * A thread starts by loading the encoder (about a second, on a core), so one stopped after a short
 * idle and started again at the next burst puts that second into the burst's slowest answers (the
 * soak's 10-second p99 windows of 0.7 to 1.2 s). Ten minutes keeps the threads of a steady load.
 */
const DEFAULT_IDLE_TIMEOUT_MS = 600_000;

export interface PoolOptions {
  maxThreads: number;
  /** Tasks allowed to wait for a thread beyond those running. */
  maxQueue: number;
  taskTimeoutMs: number;
  /** A thread idle this long is stopped; the next task that needs it starts one again (loading the encoder anew). */
  idleTimeoutMs?: number;
  /** The nice value of the threads (0 to 19; 0, the default, leaves them as the process is). */
  niceness?: number;
  filename?: string;
}

/**
 * Tasks that spend their time in native code (ONNX Runtime), where a thread must not be stopped
 * (workers/native-gate.ts). Their timeout stops the caller's wait but lets the thread finish the
 * task, which stays counted in flight until it does; an embed task is bounded by its batch size.
 * Every other task is plain JS, and its timeout stops its thread.
 */
const UNINTERRUPTIBLE: ReadonlySet<TaskName> = new Set<TaskName>(['embed']);

/** Longest the process's exit waits for threads to leave native code. */
const EXIT_WAIT_MS = 10_000;

// The gates of every pool running threads. Exiting the process stops its threads, so at exit each
// gate is closed and its native calls awaited first (Atomics.wait: 'exit' listeners must be
// synchronous). One listener for all pools.
const openGates = new Set<Int32Array>();
let exitListening = false;

function closeGatesAtExit(): void {
  const deadline = Date.now() + EXIT_WAIT_MS;
  for (const gate of openGates) Atomics.store(gate, GATE_CLOSING, 1);
  for (const gate of openGates) {
    for (let busy = Atomics.load(gate, GATE_BUSY); busy !== 0 && Date.now() < deadline; busy = Atomics.load(gate, GATE_BUSY)) {
      Atomics.wait(gate, GATE_BUSY, busy, deadline - Date.now());
    }
  }
}

export class WorkerPool {
  private piscina: Piscina | undefined;
  private gate: Int32Array | undefined;
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

  /** Threads the pool may run. */
  get maxThreads(): number {
    return this.options.maxThreads;
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
    const timedOut = (cause?: unknown) =>
      new DependencyUnavailableError(`pool task ${name} exceeded ${this.options.taskTimeoutMs} ms`, { cause });
    this.inFlight++;
    if (UNINTERRUPTIBLE.has(name)) {
      const task = pool.run({ name, input }, { transferList }).finally(() => this.inFlight--);
      let timer: NodeJS.Timeout | undefined;
      const deadline = new Promise<never>((_, reject) => {
        timer = setTimeout(() => reject(timedOut()), this.options.taskTimeoutMs);
      });
      task.catch(() => undefined); // settled later than the deadline: nobody awaits it any more
      try {
        return (await Promise.race([task, deadline])) as TaskMap[N]['output'];
      } finally {
        clearTimeout(timer);
      }
    }
    const signal = AbortSignal.timeout(this.options.taskTimeoutMs);
    try {
      return (await pool.run({ name, input }, { signal, transferList })) as TaskMap[N]['output'];
    } catch (error) {
      if (signal.aborted) throw timedOut(error);
      throw error;
    } finally {
      this.inFlight--;
    }
  }

  /**
   * Stops the threads, never one inside ONNX Runtime's native code (workers/native-gate.ts): closes
   * the gate, so that no thread starts another native call (an embed in progress or queued fails
   * with "the worker pool is closing"), waits for the calls under way to return, then closes the
   * pool. Piscina's own close({ force }) is not enough: with two threads busy it counts the first
   * to finish twice and stops the other mid-task, which aborted the process (reproduced: five of
   * five runs).
   */
  async destroy(): Promise<void> {
    const pool = this.piscina;
    const gate = this.gate;
    this.piscina = undefined;
    this.gate = undefined;
    if (gate) {
      Atomics.store(gate, GATE_CLOSING, 1);
      const deadline = Date.now() + EXIT_WAIT_MS;
      while (Atomics.load(gate, GATE_BUSY) !== 0 && Date.now() < deadline) await new Promise((resolve) => setTimeout(resolve, 5));
      openGates.delete(gate);
    }
    await pool?.close({ force: true });
  }

  private start(): Piscina {
    if (this.piscina) return this.piscina;
    const filename = this.options.filename ?? join(projectRoot(), 'dist', 'workers', 'index.js');
    if (!existsSync(filename)) throw new Error(`worker entry ${filename} is missing: run npm run build`);
    if (!exitListening) {
      process.on('exit', closeGatesAtExit);
      exitListening = true;
    }
    this.gate = new Int32Array(new SharedArrayBuffer(GATE_CELLS * Int32Array.BYTES_PER_ELEMENT));
    openGates.add(this.gate);
    this.piscina = new Piscina({
      filename,
      minThreads: 0,
      maxThreads: this.options.maxThreads,
      maxQueue: Math.max(1, this.options.maxQueue) + this.options.maxThreads,
      idleTimeout: this.options.idleTimeoutMs ?? DEFAULT_IDLE_TIMEOUT_MS,
      workerData: { niceness: this.options.niceness ?? 0, nativeGate: this.gate.buffer },
    });
    return this.piscina;
  }
}
