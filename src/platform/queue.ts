// The typed job queue: one interface, two implementations (BullMQ on Redis, and an in-process
// runner for the embedded default). Jobs are named; a map from name to payload and result types
// (src/jobs.ts) types every call. Payloads carry ids, not big data.
import type { FastifyBaseLogger } from 'fastify';

export interface JobSpec {
  payload: unknown;
  result: unknown;
}

export type JobMapBase = { [name: string]: JobSpec };

export interface JobContext {
  jobId: string;
  /** 1 on the first try. */
  attempt: number;
  log: FastifyBaseLogger;
}

export type JobHandler<M extends JobMapBase, N extends keyof M> = (
  payload: M[N]['payload'],
  context: JobContext,
) => Promise<M[N]['result']>;

/** Exactly one handler for every job name: the type enforces it, `checkHandlers` re-checks at start. */
export type JobHandlers<M extends JobMapBase> = { [N in keyof M]: JobHandler<M, N> };

export interface EnqueueOptions {
  /** Deduplicates: a job with this id that still exists is not added again. */
  jobId?: string;
  delayMs?: number;
  /** Tries in all, with exponential backoff between them; default 3. */
  attempts?: number;
  backoffMs?: number;
}

export interface RunOptions {
  /** How long the caller waits for the result; the job may still finish later. */
  timeoutMs?: number;
}

export type ScheduleOptions = { everyMs: number; cron?: undefined } | { cron: string; everyMs?: undefined };

export interface JobQueue<M extends JobMapBase> {
  readonly kind: 'bullmq' | 'in-process';
  /** Enqueue and return at once with the job id (batch work, 202 routes). */
  enqueue<N extends keyof M & string>(name: N, payload: M[N]['payload'], options?: EnqueueOptions): Promise<string>;
  /** Enqueue and await the result (interactive routes); throws JobTimeoutError past the timeout. */
  run<N extends keyof M & string>(name: N, payload: M[N]['payload'], options?: RunOptions): Promise<M[N]['result']>;
  /** A repeatable job, idempotent on `scheduleId`. */
  schedule<N extends keyof M & string>(scheduleId: string, name: N, payload: M[N]['payload'], options: ScheduleOptions): Promise<void>;
  /** Starts consuming jobs with these handlers (API process without Redis, or `lattice worker`). */
  startConsumers(handlers: JobHandlers<M>): Promise<void>;
  /** Readiness: throws when the queue's backing store is unreachable. */
  ping(): Promise<void>;
  close(): Promise<void>;
}

export function checkHandlers<M extends JobMapBase>(names: readonly (keyof M & string)[], handlers: JobHandlers<M>): void {
  const missing = names.filter((name) => typeof handlers[name] !== 'function');
  const unknown = Object.keys(handlers).filter((name) => !names.includes(name));
  if (missing.length > 0 || unknown.length > 0) {
    throw new Error(`job handlers do not match the job map: missing ${missing.join(', ') || 'none'}; unknown ${unknown.join(', ') || 'none'}`);
  }
}

/** Exponential backoff with full jitter, capped. */
export function backoffDelay(attempt: number, baseMs: number, capMs = 60_000, random: () => number = Math.random): number {
  const ceiling = Math.min(capMs, baseMs * 2 ** Math.max(0, attempt - 1));
  return Math.round(ceiling / 2 + (random() * ceiling) / 2);
}
