// BullMQ implementation of the job queue: jobs persist in Redis, any number of `lattice worker`
// processes consume them, and interactive callers await results through QueueEvents.
import { Job, Queue, QueueEvents, UnrecoverableError, Worker } from 'bullmq';
import type { EventEmitter } from 'node:events';
import type { FastifyBaseLogger } from 'fastify';
import { Redis } from 'ioredis';
import { withDeadline } from './concurrency.js';
import { isConnectionError } from './db.js';
import { failFastRedis } from './redis.js';
import { AppError, DependencyUnavailableError, JobTimeoutError, RemoteAppError } from './errors.js';
import {
  IN_FLIGHT_SCAN,
  inFlightOrder,
  isProjectPayload,
  type EnqueueOptions,
  type JobHandlers,
  type JobInFlight,
  type JobMapBase,
  type JobQueue,
  type JobsInFlight,
  type JobState,
  type RunOptions,
  type ScheduleOptions,
} from './queue.js';

const QUEUE_NAME = 'jobs';
// A handler's AppError crosses the process boundary as this marker plus JSON in failedReason.
const APP_ERROR_MARK = 'lattice-app-error:';

export interface BullQueueOptions {
  redisUrl: string;
  prefix: string;
  concurrency: number;
  defaultTimeoutMs: number;
  /**
   * How long a producer call (enqueue, ping) may wait for Redis before it fails with 503. The
   * producer never queues commands while disconnected: a request fails fast instead of hanging
   * until Redis returns. Consumers (blocking connections) wait and reconnect by themselves.
   */
  commandTimeoutMs?: number;
  log: FastifyBaseLogger;
}

const DEFAULT_COMMAND_TIMEOUT_MS = 1000;

type AnyJob = Job<unknown, unknown, string>;

/** BullMQ's lists of unfinished jobs, in the order the in-flight listing reads them, and what each is called there. */
const IN_FLIGHT_LISTS = [
  ['active', 'active'],
  ['waiting', 'waiting'],
  ['prioritized', 'waiting'],
  ['delayed', 'delayed'],
] as const satisfies readonly (readonly [string, JobState])[];

function encodeError(error: AppError): Error {
  const { code, statusCode, message, params, retryAfterSeconds } = error;
  const encoded = APP_ERROR_MARK + JSON.stringify({ code, statusCode, message, params, retryAfterSeconds });
  // Domain errors are final (retrying a 404 cannot help); a 5xx one (a dependency down) may pass on a retry.
  return statusCode < 500 ? new UnrecoverableError(encoded) : new Error(encoded);
}

function decodeError(error: unknown): unknown {
  const message = error instanceof Error ? error.message : String(error);
  const at = message.indexOf(APP_ERROR_MARK);
  if (at < 0) return error;
  try {
    const { code, statusCode, message: text, params, retryAfterSeconds } = JSON.parse(message.slice(at + APP_ERROR_MARK.length));
    const remote = new RemoteAppError(code, statusCode, text, params);
    if (typeof retryAfterSeconds === 'number') remote.retryAfterSeconds = retryAfterSeconds;
    return remote;
  } catch {
    return error;
  }
}

export class BullQueue<M extends JobMapBase> implements JobQueue<M> {
  readonly kind = 'bullmq' as const;
  private readonly connection: Redis;
  private readonly queue: Queue;
  private events: QueueEvents | undefined;
  private eventsClient: Redis | undefined;
  private eventsReady: Promise<void> | undefined;
  private worker: Worker | undefined;
  private readonly clients: Redis[] = [];
  private readonly reconnected: (() => void)[] = [];

  constructor(private readonly options: BullQueueOptions) {
    this.connection = failFastRedis(options.redisUrl, this.commandTimeoutMs);
    this.connection.setMaxListeners(0); // each request waiting on a job listens for 'close'
    this.queue = new Queue(QUEUE_NAME, {
      connection: this.connection,
      prefix: options.prefix,
      defaultJobOptions: {
        removeOnComplete: { age: 3600, count: 1000 },
        removeOnFail: { age: 7 * 24 * 3600 },
      },
    });
    this.queue.on('error', () => {});
    // ioredis says 'ready' on every connection it makes: after the first, each is a return.
    let connectedBefore = false;
    this.connection.on('ready', () => {
      if (connectedBefore) for (const listener of this.reconnected) listener();
      connectedBefore = true;
    });
  }

  onReconnect(listener: () => void): void {
    this.reconnected.push(listener);
  }

  async enqueue<N extends keyof M & string>(name: N, payload: M[N]['payload'], options: EnqueueOptions = {}): Promise<string> {
    const job = await this.add(name, payload, options);
    return job.id!;
  }

  private get commandTimeoutMs(): number {
    return this.options.commandTimeoutMs ?? DEFAULT_COMMAND_TIMEOUT_MS;
  }

  async run<N extends keyof M & string>(name: N, payload: M[N]['payload'], options: RunOptions = {}): Promise<M[N]['result']> {
    const timeoutMs = options.timeoutMs ?? this.options.defaultTimeoutMs;
    await this.within(this.ensureEvents(), `could not run job ${name}: Redis is unreachable`);
    const job = await this.add(name, payload, { attempts: 1 });
    // Redis going away while the caller waits: its answer could not arrive, so say so now rather
    // than at the job timeout (30 s by default).
    let onClose: (() => void) | undefined;
    const lost = new Promise<never>((_, reject) => {
      onClose = () => reject(new DependencyUnavailableError(`lost the queue (Redis) while job ${name} ran; it may still complete`));
      this.connection.once('close', onClose);
    });
    const finished = this.finished(job);
    try {
      const result = Promise.race([finished.result, lost]);
      return (await withDeadline(result, timeoutMs, () => new JobTimeoutError(`job ${name} did not finish within ${timeoutMs} ms; it may still complete`))) as M[N]['result'];
    } catch (error) {
      throw decodeError(error);
    } finally {
      finished.stop();
      this.connection.off('close', onClose!);
    }
  }

  async schedule<N extends keyof M & string>(scheduleId: string, name: N, payload: M[N]['payload'], options: ScheduleOptions): Promise<void> {
    await this.queue.upsertJobScheduler(
      scheduleId,
      options.everyMs !== undefined ? { every: options.everyMs } : { pattern: options.cron, tz: 'UTC' },
      { name, data: payload, opts: { attempts: 1 } },
    );
  }

  async unscheduleOthers(keep: readonly string[]): Promise<string[]> {
    const schedulers = await this.queue.getJobSchedulers(0, -1);
    const removed = schedulers.map((s) => s.id ?? s.key).filter((id) => !keep.includes(id));
    for (const id of removed) await this.queue.removeJobScheduler(id);
    return removed;
  }

  async startConsumers(handlers: JobHandlers<M>): Promise<void> {
    if (this.worker) throw new Error('consumers already started');
    const log = this.options.log;
    this.worker = new Worker(
      QUEUE_NAME,
      async (job: AnyJob) => {
        const handler = handlers[job.name as keyof M];
        if (!handler) throw new UnrecoverableError(`no handler for job ${job.name}`);
        const jobLog = log.child({ job: job.name, jobId: job.id, attempt: job.attemptsMade + 1 });
        try {
          return await handler(job.data as never, { jobId: job.id!, attempt: job.attemptsMade + 1, log: jobLog });
        } catch (error) {
          jobLog.warn({ err: error }, 'job failed');
          // AppErrors keep their code, status and retry hint for the caller (see encodeError).
          if (error instanceof AppError) throw encodeError(error);
          throw error;
        }
      },
      {
        connection: this.client(),
        prefix: this.options.prefix,
        concurrency: this.options.concurrency,
      },
    );
    this.worker.on('error', (error) => log.error({ err: error }, 'queue worker error'));
    await this.worker.waitUntilReady();
  }

  async inFlight(projectId: string, scan = IN_FLIGHT_SCAN): Promise<JobsInFlight> {
    const found: JobInFlight[] = [];
    let budget = Math.max(0, scan);
    let truncated = false;
    try {
      for (const [list, state] of IN_FLIGHT_LISTS) {
        // One more than the budget (the range is inclusive): its presence says the scan stops short.
        const jobs = (await this.queue.getJobs([list], 0, budget, true)) as AnyJob[];
        if (jobs.length > budget) {
          truncated = true;
          jobs.length = budget;
        }
        budget -= jobs.length;
        for (const job of jobs) {
          if (!isProjectPayload(job.data, projectId)) continue;
          found.push({
            id: job.id!,
            name: job.name,
            state,
            attempt: job.attemptsMade + 1,
            enqueuedAt: new Date(job.timestamp),
            startedAt: state === 'active' && job.processedOn ? new Date(job.processedOn) : null,
          });
        }
      }
    } catch (error) {
      if (!this.unreachable(error)) throw error;
      throw new DependencyUnavailableError('could not list jobs: Redis is unreachable', { cause: error });
    }
    return { jobs: found.sort(inFlightOrder), truncated };
  }

  async ping(): Promise<void> {
    try {
      await this.connection.ping();
    } catch (error) {
      throw new DependencyUnavailableError('the queue (Redis) is unreachable', { cause: error });
    }
    // A caller that waits on a job's result needs the event stream's own connection, which
    // reconnects on its own schedule after an outage: ready means that one is back too.
    if (this.eventsClient && this.eventsClient.status !== 'ready') {
      throw new DependencyUnavailableError(`the queue (Redis) is reconnecting: its event stream is ${this.eventsClient.status}`);
    }
  }

  /**
   * The job's result, or its failure. BullMQ's own `waitUntilFinished` checks whether the job has
   * already finished inside an async Promise executor, so when Redis drops at that moment the
   * rejection is unhandled and ends the process; this checks the same way with the error caught.
   * Settles only on an event or that check: the caller's race supplies the timeout, and `stop`.
   */
  private finished(job: AnyJob): { result: Promise<unknown>; stop(): void } {
    // QueueEvents also emits `completed:<id>` and `failed:<id>`, which its typings do not list.
    const events = this.events! as unknown as EventEmitter;
    const id = job.id!;
    let stop = () => {};
    const result = new Promise((resolve, reject) => {
      const settle = (fn: () => void) => {
        stop();
        fn();
      };
      const onCompleted = ({ returnvalue }: { returnvalue: unknown }) => settle(() => resolve(returnvalue));
      const onFailed = ({ failedReason }: { failedReason: string }) => settle(() => reject(new Error(failedReason)));
      // Also when the caller stops waiting (its timeout): the listeners must not outlive the wait.
      stop = () => {
        events.off(`completed:${id}`, onCompleted);
        events.off(`failed:${id}`, onFailed);
      };
      events.on(`completed:${id}`, onCompleted);
      events.on(`failed:${id}`, onFailed);
      // It may have finished before the listeners were in place.
      (async () => {
        const state = await this.queue.getJobState(id);
        if (state !== 'completed' && state !== 'failed') return;
        const done = await Job.fromId(this.queue, id);
        if (state === 'completed') settle(() => resolve(done?.returnvalue));
        else settle(() => reject(new Error(done?.failedReason ?? `job ${id} failed`)));
      })().catch((error: unknown) => settle(() => reject(this.unreachable(error) ? new DependencyUnavailableError('the queue (Redis) is unreachable', { cause: error }) : error)));
    });
    return { result, stop: () => stop() };
  }

  /** Waits for `promise` at most the command timeout; past it, a 503 naming what failed. */
  private within<T>(promise: Promise<T>, message: string): Promise<T> {
    return withDeadline(promise, this.commandTimeoutMs, () => new DependencyUnavailableError(message));
  }

  async close(): Promise<void> {
    await this.worker?.close();
    await this.events?.close();
    await this.queue.close();
    // BullMQ never closes connections it is handed; without this the process cannot exit.
    for (const client of [this.connection, ...this.clients]) client.disconnect();
  }

  /** A connection for a Worker or QueueEvents (each needs its own blocking client). */
  private client(): Redis {
    const client = new Redis(this.options.redisUrl, { maxRetriesPerRequest: null });
    client.on('error', () => {});
    this.clients.push(client);
    return client;
  }

  private async add(name: string, payload: unknown, options: EnqueueOptions): Promise<AnyJob> {
    try {
      return await this.queue.add(name, payload, {
        jobId: options.jobId,
        delay: options.delayMs,
        attempts: options.attempts ?? 3,
        backoff: { type: 'exponential', delay: options.backoffMs ?? 1000, jitter: 0.5 },
      });
    } catch (error) {
      if (this.unreachable(error)) throw new DependencyUnavailableError(`could not enqueue job ${name}: Redis is unreachable`, { cause: error });
      // Refused for another reason (a payload JSON cannot hold, an id BullMQ rejects, a Redis error
      // reply): a fault of ours, reported with its real cause rather than as an outage.
      throw new Error(`the queue refused job ${name}: ${error instanceof Error ? error.message : String(error)}`, { cause: error });
    }
  }

  /** Whether a failed call failed for want of Redis, rather than being refused. */
  private unreachable(error: unknown): boolean {
    if (error instanceof TypeError) return false; // raised before anything was sent (serialising the payload)
    return this.connection.status !== 'ready' || isConnectionError(error);
  }

  private ensureEvents(): Promise<void> {
    if (!this.eventsReady) {
      this.eventsClient = this.client();
      this.events = new QueueEvents(QUEUE_NAME, {
        connection: this.eventsClient,
        prefix: this.options.prefix,
      });
      this.events.on('error', () => {});
      this.eventsReady = this.events.waitUntilReady().then(() => {});
    }
    return this.eventsReady;
  }
}
