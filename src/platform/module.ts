// The contract every domain module fulfils, and the assembly of modules into one process. The
// platform knows this shape, never a particular domain: the composition root (src/modules.ts)
// builds the domains in dependency order, one line each, and this file checks and merges what
// they bring (jobs, schedules, start-up work) so that no shared registry has to name them.
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import type { FastifyBaseLogger } from 'fastify';
import type { TSchema } from 'typebox';
import type { z, ZodRawShape } from 'zod';
import type { Subject } from './common-schemas.js';
import type { Db, Queryable } from './db.js';
import type { AuditEventType, Permission } from './access.js';
import { checkJobName, type JobHandler, type JobHandlers, type JobMapBase, type JobSpec, type JobQueue, type ScheduleOptions } from './queue.js';

/** A domain with no jobs. */
export type NoJobs = Record<never, never>;
/** No apis yet: the start of a composition. */
type NoApis = Record<never, never>;

/** A repeatable job of the module's own, registered idempotently by every process that runs jobs. */
export type Schedule<M extends JobMapBase> = {
  [N in keyof M & string]: { id: string; job: N; payload: M[N]['payload'] } & ScheduleOptions;
}[keyof M & string];

/** Who calls an MCP tool: the MCP server has checked the key, the permission and the project. */
export interface ToolCall {
  projectId: string;
  log: FastifyBaseLogger;
}

/** An MCP tool: a thin adapter over the module's service, like a route. */
export interface ToolDefinition<S extends ZodRawShape = ZodRawShape> {
  name: string;
  description: string;
  permission: Permission;
  /** Set on a tool that reads or writes a subject's data (as on a route's config). */
  audit?: AuditEventType;
  inputSchema: S;
  run(args: z.infer<z.ZodObject<S>>, call: ToolCall): Promise<unknown>;
}

/**
 * An MCP endpoint of its own under the project prefix (besides /mcp-server, which serves every
 * module's tools), whose tools depend on the path: a brain's read-only endpoint, say. The shell
 * mounts it at `url` (POST; GET and DELETE answer 405, as on /mcp-server).
 */
export interface ScopedMcpEndpoint {
  /** Under the project prefix, with its path parameters, e.g. `/brains/:brainId/mcp-server/http`. */
  url: string;
  /** The path parameters' schema (projectId included). */
  params: TSchema;
  summary: string;
  description: string;
  /** The tools this request may call; throws (a 404, say) when the path names nothing it may read. */
  tools(projectId: string, params: Record<string, string>): Promise<readonly ToolDefinition[]>;
}

/** A tool answer of several text parts (a summary, then data), rather than one JSON text. */
export class ToolTexts {
  constructor(readonly texts: readonly string[]) {}
}

/** Keeps a tool's argument types while it is declared; the list of tools erases them. */
export function defineTool<S extends ZodRawShape>(tool: ToolDefinition<S>): ToolDefinition {
  return tool as unknown as ToolDefinition;
}

/** One page of a subject's rows of one kind (e.g. `memories`), for an export. */
export interface SubjectRows {
  /** The export key (snake_case, e.g. `alert_fires`); one kind's pages come one after another. */
  kind: string;
  rows: readonly Record<string, unknown>[];
}

/**
 * The ids of a subject's rows that other modules' rows point at, each list settled by the module
 * that owns those rows (its hook's `ids`) before any module exports or erases, so that a module
 * whose rows point at another's needs no query of that other's tables.
 */
export interface SubjectIds {
  /** The memories that name the subject: its own, and those derived from them (an insight citing one). */
  memoryIds: readonly string[];
  /** Its events (alert fires point at them). */
  eventIds: readonly string[];
  /** Its typed observations (learning's evidence may cite them). */
  observationIds: readonly string[];
  /** Its behaviour predictions (learning's evidence may cite them). */
  predictionIds: readonly string[];
}

/** The subject an export or an erase covers: its project, the subject, and the ids of its rows. */
export interface SubjectScope extends SubjectIds {
  projectId: string;
  subject: Subject;
}

/** What an erase did. */
export interface ErasedRows {
  /** Rows per kind (the export's kinds, e.g. `graph_edges`). */
  counts: Record<string, number>;
  /** Work outside the database (a blob's bytes), run once the transaction has committed. */
  afterCommit?: () => Promise<void>;
}

/**
 * How a module reaches one subject's rows, for data-subject rights: an export that pages (a large
 * subject is never held in memory whole) and an erase inside the caller's transaction. The
 * compliance domain calls every module's hook, erasing in reverse dependency order (a higher
 * domain's rows may point at a lower one's). An erase must be safe to run twice in one
 * transaction: the second pass finds what a concurrent write committed meanwhile. A dry run is a
 * real erase in a transaction that is rolled back, so its counts are the real ones by construction.
 */
export interface SubjectDataHook {
  /** The ids of the subject's rows this module owns that other modules point at (SubjectIds). */
  ids?(db: Queryable, projectId: string, subject: Subject): Promise<Partial<SubjectIds>>;
  export(scope: SubjectScope): AsyncIterable<SubjectRows>;
  /** Deletes the subject's rows through `tx`; work outside the database waits for `afterCommit`. */
  erase(tx: Queryable, scope: SubjectScope): Promise<ErasedRows>;
}

/**
 * Work a module has accepted for a project and not yet done (memories waiting for their embedding,
 * subjects waiting to be mined), for the console's Project page. Counted from the database, so it
 * holds across restarts and whichever process does the work; the queue's own jobs are listed apart.
 */
export interface Backlog {
  /** Unique within the module, e.g. `embeddings`. */
  name: string;
  /** What waits, and what works it off, for a reader of the console. */
  description: string;
  /** Units waiting (memories, subjects, observations: the description says which). */
  pending: number;
  /** Units done and units in all, when the pending ones are a share of a whole; else null. */
  done: number | null;
  total: number | null;
  /** When the longest-waiting unit began to wait; null when none waits or it is not known. */
  oldestPendingAt: Date | null;
}

/**
 * What a pack (a vertical a deployment loads with LATTICE_PACKS) says of itself: GET
 * /memory-compliance/packs lists the manifests of the loaded packs, and /memory-compliance-packs
 * turns one on or off per project (its routes carry `config.pack` with its id).
 */
export interface PackManifest {
  id: string;
  version: string;
  description: string;
  /** The classes of memory the pack claims (the categories its writers use). */
  ownsClasses: readonly string[];
  /** The regulations whose data the pack handles. */
  regulatoryTags: readonly string[];
  /** Other names a client may give it (the public clients' package names). */
  aliases?: readonly string[];
  [detail: string]: unknown;
}

export interface DomainModule<Api = unknown, Jobs extends JobMapBase = NoJobs> {
  /** The domain's folder name, and the prefix of its job names. */
  readonly name: string;
  /** What other domains, the app and the tests may call. */
  readonly api: Api;
  /** Its routes, already bound to its service; mounted under the project prefix. */
  readonly routes?: FastifyPluginAsyncTypebox;
  /** Shapes its routes share by `$ref` (each with an `$id`). */
  readonly schemas?: readonly TSchema[];
  /** One handler for every job of its job map. */
  readonly jobs?: JobHandlers<Jobs>;
  readonly schedules?: readonly Schedule<Jobs>[];
  /**
   * Work for a process that runs jobs, once its consumers run, and again each time the queue's
   * store returns after an outage: a sweep for work whose job was lost in a crash or could not be
   * enqueued while the queue was down (idempotent: deterministic job ids).
   */
  readonly onStart?: () => Promise<void>;
  readonly tools?: readonly ToolDefinition[];
  /** MCP endpoints of its own (ScopedMcpEndpoint). */
  readonly mcpEndpoints?: readonly ScopedMcpEndpoint[];
  readonly subjectData?: SubjectDataHook;
  /**
   * The project's backlogs in this module, cheap enough to read on every view of the console's
   * Project page (counts over indexed rows, no scan of the project's history). A module composed
   * after it gathers them (the project overview).
   */
  readonly backlog?: (projectId: string) => Promise<readonly Backlog[]>;
  /** The packs it brings, when loaded in this deployment (compliance lists them). */
  readonly packs?: readonly PackManifest[];
}

/** A module with its job types erased, as the assembly holds it. */
export type AnyModule = DomainModule<unknown, JobMapBase>;

/** What a factory sees besides the apis: the modules composed before it (compliance reaches their subject hooks). */
export interface CompositionContext {
  readonly modules: readonly AnyModule[];
}

type ModuleFactory<Apis, A, J extends JobMapBase> = (apis: Apis, context: CompositionContext) => DomainModule<A, J> | Promise<DomainModule<A, J>>;

interface Step {
  name: string;
  build: (apis: Record<string, unknown>, context: CompositionContext) => AnyModule | Promise<AnyModule>;
}

/**
 * Builds modules in the order given, each from the apis of those before it, so a domain can only
 * depend on a lower one. `with('memory', ...)` adds `apis.memory`, typed.
 */
export class Composition<Apis extends object = NoApis> {
  private constructor(private readonly steps: readonly Step[]) {}

  static start(): Composition {
    return new Composition([]);
  }

  with<N extends string, A, J extends JobMapBase>(name: N, factory: ModuleFactory<Apis, A, J>): Composition<Apis & { [K in N]: A }> {
    const build = factory as unknown as Step['build'];
    return new Composition<Apis & { [K in N]: A }>([...this.steps, { name, build }]);
  }

  async build(): Promise<{ apis: Apis; modules: readonly AnyModule[] }> {
    const apis: Record<string, unknown> = {};
    const modules: AnyModule[] = [];
    for (const step of this.steps) {
      if (step.name in apis) throw new Error(`module ${step.name} is composed twice`);
      const module = await step.build(apis, { modules: [...modules] });
      if (module.name !== step.name) throw new Error(`module ${module.name} was composed as ${step.name}`);
      apis[step.name] = module.api;
      modules.push(module);
    }
    return { apis: apis as Apis, modules };
  }
}

/** Every module's job handlers in one map; refuses a duplicate name or one outside its domain. */
export function mergeJobs(modules: readonly AnyModule[]): JobHandlers<JobMapBase> {
  const merged: Record<string, JobHandler<JobSpec>> = {};
  for (const module of modules) {
    for (const [name, handler] of Object.entries(module.jobs ?? {})) {
      checkJobName(module.name, name);
      if (name in merged) throw new Error(`job ${name} has two handlers`);
      if (typeof handler !== 'function') throw new Error(`job ${name} of module ${module.name} has no handler`);
      merged[name] = handler;
    }
  }
  return merged;
}

/** Every module's schedules; refuses an id used twice, outside its domain, or for another module's job. */
export function mergeSchedules(modules: readonly AnyModule[]): Schedule<JobMapBase>[] {
  const seen = new Set<string>();
  return modules.flatMap((module) =>
    (module.schedules ?? []).map((schedule) => {
      if (!schedule.id.startsWith(`${module.name}.`)) throw new Error(`schedule ${schedule.id} of module ${module.name} is not named ${module.name}.<schedule>`);
      if (!module.jobs || !(schedule.job in module.jobs)) throw new Error(`schedule ${schedule.id} runs ${schedule.job}, which module ${module.name} does not handle`);
      if (seen.has(schedule.id)) throw new Error(`schedule ${schedule.id} is declared twice`);
      seen.add(schedule.id);
      return schedule;
    }),
  );
}

/** How many times start-up sends its schedules before it gives up (waiting 0.25, 0.5, 1 and 2 s between). */
const START_SCHEDULE_ATTEMPTS = 5;

/**
 * Start-up's schedule upserts, sent again while they fail: a queue store slow to answer at boot (a
 * command past QUEUE_COMMAND_TIMEOUT_MS on a loaded machine) delays the start by seconds rather than
 * failing it. The upserts are idempotent, so a try that timed out after Redis applied it is harmless.
 */
async function persistently(what: string, log: FastifyBaseLogger, send: () => Promise<void>): Promise<void> {
  for (let attempt = 1; ; attempt++) {
    try {
      return await send();
    } catch (error) {
      if (attempt >= START_SCHEDULE_ATTEMPTS) throw error;
      log.warn({ err: error, attempt }, `${what} failed; trying again`);
      await new Promise((resolve) => setTimeout(resolve, 250 * 2 ** (attempt - 1)));
    }
  }
}

/**
 * What a process does with its modules' jobs. Checked when the process is assembled, so a bad
 * registry fails the start rather than the first job.
 */
export function jobRunner(
  queue: JobQueue<JobMapBase>,
  modules: readonly AnyModule[],
  log: FastifyBaseLogger,
  db?: Partial<Pick<Db, 'onReconnect'>>,
): { start(): Promise<void> } {
  const handlers = mergeJobs(modules);
  const schedules = mergeSchedules(modules);
  const schedule = async () => {
    for (const { id, job, payload, ...timing } of schedules) await queue.schedule(id, job, payload, timing as ScheduleOptions);
  };
  const sweep = async (when: string) => {
    for (const module of modules) {
      await module.onStart?.().catch((error: unknown) => log.warn({ err: error, module: module.name }, `${when} work failed`));
    }
  };
  let recovering: Promise<void> | undefined;
  // One recovery at a time; a return during one starts the next after it.
  const afterOutage = (what: 'the queue' | 'the database') => {
    const recover = async () => {
      log.info(`${what} is back: sweeping up the work of the outage`);
      // Idempotent upserts: a queue store that restarted empty (no persistence) has lost them.
      if (what === 'the queue') await schedule().catch((error: unknown) => log.warn({ err: error }, 'scheduling after the outage failed'));
      await sweep('recovery');
    };
    recovering = (recovering ?? Promise.resolve()).then(recover, recover);
  };
  return {
    async start() {
      await queue.startConsumers(handlers);
      await persistently('scheduling the jobs at start-up', log, async () => {
        await schedule();
        // A schedule the code no longer declares (renamed or removed) would fire a job nothing handles.
        const removed = await queue.unscheduleOthers(schedules.map((s) => s.id));
        if (removed.length > 0) log.info({ removed }, 'removed schedules no module declares');
      });
      await sweep('start-up');
      // Jobs that failed while Postgres or Redis was away, and work that could not be enqueued
      // meanwhile, are swept up as soon as the dependency returns, not at the sweeps' next tick.
      queue.onReconnect(() => afterOutage('the queue'));
      db?.onReconnect?.(() => afterOutage('the database'));
    },
  };
}

/** The named methods of a service, bound to it: a module's api without its internals. */
export function bindMethods<T extends object, K extends keyof T>(target: T, names: readonly K[]): Pick<T, K> {
  const picked = {} as Pick<T, K>;
  for (const name of names) {
    const member = target[name];
    if (typeof member !== 'function') throw new Error(`${String(name)} is not a method`);
    picked[name] = member.bind(target) as T[K];
  }
  return picked;
}
