// The in-process job runner: the same interface as BullMQ, for the embedded default. Jobs run in
// this process with bounded concurrency, retries with backoff, and timers for schedules. Jobs live
// in memory: a job not yet finished when the process stops is lost (BullMQ keeps them in Redis).
// Payloads are copied through JSON, as BullMQ stores them, so a payload that would not survive
// Redis (a Date, a BigInt, a class instance) fails or changes here too, not only in production.
import { CronExpressionParser } from 'cron-parser';
import type { FastifyBaseLogger } from 'fastify';
import { AppError, JobTimeoutError } from './errors.js';
import { newId } from './ids.js';
import {
  backoffDelay,
  IN_FLIGHT_SCAN,
  inFlightOrder,
  isProjectPayload,
  type EnqueueOptions,
  type JobHandlers,
  type JobMapBase,
  type JobQueue,
  type JobsInFlight,
  type JobState,
  type RunOptions,
  type ScheduleOptions,
} from './queue.js';

interface PendingJob {
  id: string;
  name: string;
  payload: unknown;
  attempt: number;
  attempts: number;
  backoffMs: number;
  enqueuedAt: Date;
  settle?: { resolve: (value: unknown) => void; reject: (error: unknown) => void };
}

/** A job not yet finished, as the in-flight listing shows it. */
interface TrackedJob {
  job: PendingJob;
  state: JobState;
  startedAt: Date | null;
}

export interface InProcessQueueOptions {
  concurrency: number;
  defaultTimeoutMs: number;
  log: FastifyBaseLogger;
}

export class InProcessQueue<M extends JobMapBase> implements JobQueue<M> {
  readonly kind = 'in-process' as const;
  private handlers: JobHandlers<M> | undefined;
  private readonly waiting: PendingJob[] = [];
  /** Every job not yet finished, by id: deduplicates enqueues by jobId and answers inFlight. */
  private readonly known = new Map<string, TrackedJob>();
  private readonly timers = new Set<NodeJS.Timeout>();
  /** The live schedule per scheduleId: scheduling an id again replaces it (as BullMQ upserts). */
  private readonly schedules = new Map<string, object>();
  private running = 0;
  private closed = false;
  private idle: (() => void)[] = [];

  constructor(private readonly options: InProcessQueueOptions) {}

  async enqueue<N extends keyof M & string>(name: N, payload: M[N]['payload'], options: EnqueueOptions = {}): Promise<string> {
    const id = options.jobId ?? newId('job');
    if (this.known.has(id)) return id;
    const job: PendingJob = { id, name, payload: asStored(payload), attempt: 1, attempts: options.attempts ?? 3, backoffMs: options.backoffMs ?? 1000, enqueuedAt: new Date() };
    if (options.delayMs && options.delayMs > 0) {
      this.track(job, 'delayed');
      this.later(options.delayMs, () => this.push(job));
    } else this.push(job);
    return id;
  }

  run<N extends keyof M & string>(name: N, payload: M[N]['payload'], options: RunOptions = {}): Promise<M[N]['result']> {
    const timeoutMs = options.timeoutMs ?? this.options.defaultTimeoutMs;
    return new Promise((resolve, reject) => {
      // Thrown here, a payload that cannot be stored rejects the promise.
      const stored = asStored(payload);
      const timer = setTimeout(() => reject(new JobTimeoutError(`job ${name} did not finish within ${timeoutMs} ms; it may still complete`)), timeoutMs);
      const job: PendingJob = {
        id: newId('job'),
        name,
        payload: stored,
        attempt: 1,
        attempts: 1,
        backoffMs: 0,
        enqueuedAt: new Date(),
        settle: {
          resolve: (value) => {
            clearTimeout(timer);
            resolve(value as M[N]['result']);
          },
          reject: (error) => {
            clearTimeout(timer);
            reject(error);
          },
        },
      };
      this.push(job);
    });
  }

  async schedule<N extends keyof M & string>(scheduleId: string, name: N, payload: M[N]['payload'], options: ScheduleOptions): Promise<void> {
    const next = (): number => {
      if (options.everyMs !== undefined) return options.everyMs;
      const at = CronExpressionParser.parse(options.cron, { tz: 'UTC' }).next().toDate().getTime();
      return Math.max(1000, at - Date.now());
    };
    const token = {};
    this.schedules.set(scheduleId, token);
    const tick = () => {
      if (this.closed || this.schedules.get(scheduleId) !== token) return;
      void this.enqueue(name, payload, { jobId: `${scheduleId}.${Date.now()}`, attempts: 1 });
      this.later(next(), tick);
    };
    this.later(next(), tick);
  }

  async unscheduleOthers(keep: readonly string[]): Promise<string[]> {
    const removed = [...this.schedules.keys()].filter((id) => !keep.includes(id));
    for (const id of removed) this.schedules.delete(id);
    return removed;
  }

  async startConsumers(handlers: JobHandlers<M>): Promise<void> {
    this.handlers = handlers;
    this.drain();
  }

  async inFlight(projectId: string, scan = IN_FLIGHT_SCAN): Promise<JobsInFlight> {
    const all = [...this.known.values()].map(({ job, state, startedAt }) => ({
      payload: job.payload,
      view: { id: job.id, name: job.name, state, attempt: job.attempt, enqueuedAt: job.enqueuedAt, startedAt },
    }));
    // Scanned as the BullMQ listing reads: running, then waiting, then delayed.
    const scanned = all.sort((a, b) => inFlightOrder(a.view, b.view)).slice(0, Math.max(0, scan));
    return {
      jobs: scanned.filter(({ payload }) => isProjectPayload(payload, projectId)).map(({ view }) => view),
      truncated: all.length > scanned.length,
    };
  }

  async ping(): Promise<void> {}

  /** Jobs live in this process: there is no store to lose and get back. */
  onReconnect(): void {}

  /** Resolves when no job is running or waiting (tests, graceful shutdown). */
  whenIdle(): Promise<void> {
    if (this.running === 0 && this.waiting.length === 0) return Promise.resolve();
    return new Promise((resolve) => this.idle.push(resolve));
  }

  async close(): Promise<void> {
    this.closed = true;
    for (const timer of this.timers) clearTimeout(timer);
    this.timers.clear();
    for (const job of this.waiting.splice(0)) job.settle?.reject(new JobTimeoutError('the job queue is shutting down'));
    // Waiting and delayed jobs are lost with the process (see the header); running ones finish.
    for (const [id, tracked] of this.known) if (tracked.state !== 'active') this.known.delete(id);
    if (this.running > 0) await this.whenIdle();
  }

  private later(delayMs: number, fn: () => void): void {
    const timer = setTimeout(() => {
      this.timers.delete(timer);
      fn();
    }, delayMs);
    timer.unref();
    this.timers.add(timer);
  }

  private push(job: PendingJob): void {
    if (this.closed) {
      this.known.delete(job.id);
      job.settle?.reject(new JobTimeoutError('the job queue is shutting down'));
      return;
    }
    this.track(job, 'waiting');
    this.waiting.push(job);
    this.drain();
  }

  private track(job: PendingJob, state: JobState): void {
    this.known.set(job.id, { job, state, startedAt: state === 'active' ? new Date() : null });
  }

  private drain(): void {
    while (this.handlers && this.running < this.options.concurrency && this.waiting.length > 0) {
      const job = this.waiting.shift()!;
      this.running++;
      void this.execute(job).finally(() => {
        this.running--;
        this.drain();
        if (this.running === 0 && this.waiting.length === 0) for (const resolve of this.idle.splice(0)) resolve();
      });
    }
  }

  private async execute(job: PendingJob): Promise<void> {
    const handler = this.handlers![job.name as keyof M];
    const log = this.options.log.child({ job: job.name, jobId: job.id, attempt: job.attempt });
    if (!handler) {
      log.error('no handler for job');
      this.known.delete(job.id);
      job.settle?.reject(new Error(`no handler for job ${job.name}`));
      return;
    }
    this.track(job, 'active');
    try {
      const result = await handler(job.payload as never, { jobId: job.id, attempt: job.attempt, log });
      this.known.delete(job.id);
      job.settle?.resolve(result);
    } catch (error) {
      // Domain errors are final, as on BullMQ (retrying a 404 cannot help); 5xx ones may pass on a retry.
      const final = error instanceof AppError && error.statusCode < 500;
      if (job.attempt < job.attempts && !final && !this.closed) {
        log.warn({ err: error }, 'job failed; retrying');
        const retry = { ...job, attempt: job.attempt + 1 };
        this.track(retry, 'delayed');
        this.later(backoffDelay(job.attempt, job.backoffMs), () => this.push(retry));
      } else {
        this.known.delete(job.id);
        if (!job.settle) log.error({ err: error }, 'job failed');
        job.settle?.reject(error);
      }
    }
  }
}

/** The payload as a job store holds it: JSON. */
function asStored(payload: unknown): unknown {
  const text = JSON.stringify(payload);
  return text === undefined ? undefined : JSON.parse(text);
}
