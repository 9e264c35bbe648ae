// The typed job queue: one interface, two implementations (BullMQ on Redis, and an in-process
// runner for the embedded default). Jobs are named `<domain>.<job>`; each domain declares a map
// from its job names to payload and result types, and sees the queue only through `domainQueue`,
// which lets it enqueue its own jobs and nothing else. Payloads carry ids, not big data, and travel
// as JSON on both implementations.
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

export type JobHandler<S extends JobSpec> = (payload: S['payload'], context: JobContext) => Promise<S['result']>;

/** Exactly one handler for every job name: the type enforces it, the module registry re-checks at start. */
export type JobHandlers<M extends JobMapBase> = { [N in keyof M]: JobHandler<M[N]> };

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

/** A job not yet finished: waiting its turn, running, or delayed (a later start, or a retry's backoff). */
export type JobState = 'waiting' | 'active' | 'delayed';

export interface JobInFlight {
  id: string;
  name: string;
  state: JobState;
  /** The try it is on (active) or will be on next (waiting, delayed); 1 for the first. */
  attempt: number;
  enqueuedAt: Date;
  /** When the running try started; null unless active. */
  startedAt: Date | null;
}

export interface JobsInFlight {
  /** Active first, then waiting, then delayed; oldest first within each. */
  jobs: JobInFlight[];
  /** More jobs were in flight (of any project) than the listing scanned: some of this project's may be missing. */
  truncated: boolean;
}

/** Jobs in flight (of every project) one listing reads at most. */
export const IN_FLIGHT_SCAN = 1000;

const STATE_ORDER: Record<JobState, number> = { active: 0, waiting: 1, delayed: 2 };

/** Whether a stored payload belongs to the project: jobs of a project carry its id as `projectId`. */
export function isProjectPayload(payload: unknown, projectId: string): boolean {
  return typeof payload === 'object' && payload !== null && (payload as { projectId?: unknown }).projectId === projectId;
}

/** Sorts a listing as JobsInFlight promises: by state (active, waiting, delayed), then oldest first. */
export function inFlightOrder(a: JobInFlight, b: JobInFlight): number {
  return STATE_ORDER[a.state] - STATE_ORDER[b.state] || a.enqueuedAt.getTime() - b.enqueuedAt.getTime() || (a.id < b.id ? -1 : a.id > b.id ? 1 : 0);
}

export interface JobQueue<M extends JobMapBase> {
  readonly kind: 'bullmq' | 'in-process';
  /** Enqueue and return at once with the job id (batch work, 202 routes). */
  enqueue<N extends keyof M & string>(name: N, payload: M[N]['payload'], options?: EnqueueOptions): Promise<string>;
  /** Enqueue and await the result (interactive routes); throws JobTimeoutError past the timeout. */
  run<N extends keyof M & string>(name: N, payload: M[N]['payload'], options?: RunOptions): Promise<M[N]['result']>;
  /** A repeatable job, idempotent on `scheduleId`. */
  schedule<N extends keyof M & string>(scheduleId: string, name: N, payload: M[N]['payload'], options: ScheduleOptions): Promise<void>;
  /** Removes every schedule not in `keep` (one the code no longer declares stops firing); answers the ids removed. */
  unscheduleOthers(keep: readonly string[]): Promise<string[]>;
  /** Starts consuming jobs with these handlers (API process without Redis, or `lattice worker`). */
  startConsumers(handlers: JobHandlers<M>): Promise<void>;
  /**
   * The jobs not yet finished whose payload's `projectId` is `projectId`, found among the first
   * `scan` jobs in flight of every project (active, then waiting, then delayed), so that a long
   * queue costs a bounded read; `truncated` says the scan stopped short. Payloads are not returned.
   */
  inFlight(projectId: string, scan?: number): Promise<JobsInFlight>;
  /** Readiness: throws when the queue's backing store is unreachable. */
  ping(): Promise<void>;
  /**
   * Calls `listener` each time the queue's store is reachable again after an outage (never for
   * the first connection): the work whose jobs could not be enqueued meanwhile is swept up then,
   * not at the sweeps' next tick. The in-process queue has no store to lose and never calls it.
   */
  onReconnect(listener: () => void): void;
  close(): Promise<void>;
}

/** `<domain>.<job>`: lower-case words, one dot. */
const JOB_NAME = /^[a-z][a-z0-9-]*\.[a-z][a-z0-9-]*$/;
/** `<domain>.<job>.<key>`: dots as the only separator (BullMQ refuses most ids with a colon). */
const JOB_ID = /^[A-Za-z0-9_-]+(\.[A-Za-z0-9_-]+)+$/;

/** Refuses a job name outside `<domain>.<job>` or outside the domain. */
export function checkJobName(domain: string, name: string): void {
  if (!JOB_NAME.test(name) || !name.startsWith(`${domain}.`)) {
    throw new Error(`job ${JSON.stringify(name)} is not named ${domain}.<job> (lower-case words, one dot)`);
  }
}

/** Refuses a job id that is not `<job name>.<key>` with dots as the only separator. */
export function checkJobId(name: string, jobId: string): void {
  if (!JOB_ID.test(jobId) || !jobId.startsWith(`${name}.`)) {
    throw new Error(`job id ${JSON.stringify(jobId)} is not ${name}.<key> (letters, digits, _ and -, separated by dots)`);
  }
}

/** The queue as one domain sees it: its own jobs only, names and ids checked before they leave. */
export type DomainQueue<M extends JobMapBase> = Pick<JobQueue<M>, 'enqueue' | 'run'>;

export function domainQueue<M extends JobMapBase>(queue: JobQueue<JobMapBase>, domain: string): DomainQueue<M> {
  return {
    enqueue(name, payload, options) {
      checkJobName(domain, name);
      if (options?.jobId !== undefined) checkJobId(name, options.jobId);
      return queue.enqueue(name, payload, options);
    },
    async run(name, payload, options) {
      checkJobName(domain, name);
      return (await queue.run(name, payload, options)) as M[typeof name]['result'];
    },
  };
}

/** Exponential backoff with full jitter, capped. */
export function backoffDelay(attempt: number, baseMs: number, capMs = 60_000, random: () => number = Math.random): number {
  const ceiling = Math.min(capMs, baseMs * 2 ** Math.max(0, attempt - 1));
  return Math.round(ceiling / 2 + (random() * ceiling) / 2);
}
