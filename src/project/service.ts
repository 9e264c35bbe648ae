// The project overview: the plan and this month's use of it, the work every module holds for the
// project, and the queue's jobs of the project, in one read for the console's Project page. It owns
// no data: each part is asked of the domain that keeps it.
import type { AnyModule } from '../platform/module.js';
import type { JobMapBase, JobQueue } from '../platform/queue.js';
import type { Ceiling, PlanUsage, TenancyApi } from '../tenancy/index.js';
import type { ProjectOverview, WireBacklog } from './schemas.js';

/** Counts the resources a ceiling limits, one counter per ceiling (the type makes a new ceiling need one). */
export type CeilingCounters = Record<Ceiling, (projectId: string) => Promise<number>>;

/** Infinity (unlimited) travels as null. */
const quota = (limit: number): number | null => (Number.isFinite(limit) ? limit : null);

export class ProjectOverviewService {
  constructor(
    private readonly tenancy: Pick<TenancyApi, 'planUsage'>,
    private readonly ceilings: CeilingCounters,
    private readonly queue: Pick<JobQueue<JobMapBase>, 'inFlight'>,
    /** The modules composed before this one: their backlog hooks. */
    private readonly modules: readonly AnyModule[],
  ) {}

  async overview(projectId: string, now = new Date()): Promise<ProjectOverview> {
    const [plan, ceilings, work, jobs] = await Promise.all([
      this.tenancy.planUsage(projectId, now),
      this.ceilingUsage(projectId),
      this.work(projectId),
      this.queue.inFlight(projectId),
    ]);
    return {
      project: plan.project,
      entitlements: entitlementsOnWire(plan.entitlements),
      usage: {
        meters: plan.meters.map((m) => ({ meter: m.meter, used: m.used, limit: quota(m.limit), period: m.period.toISOString(), resetsAt: m.resetsAt.toISOString() })),
        ceilings: ceilings.map(({ ceiling, used }) => ({ ceiling, used, limit: quota(plan.entitlements[ceiling]) })),
      },
      work,
      jobs: {
        items: jobs.jobs.map((j) => ({ ...j, enqueuedAt: j.enqueuedAt.toISOString(), startedAt: j.startedAt?.toISOString() ?? null })),
        truncated: jobs.truncated,
      },
    };
  }

  private ceilingUsage(projectId: string): Promise<{ ceiling: Ceiling; used: number }[]> {
    return Promise.all((Object.entries(this.ceilings) as [Ceiling, CeilingCounters[Ceiling]][]).map(async ([ceiling, count]) => ({ ceiling, used: await count(projectId) })));
  }

  /** Every module's backlogs, in composition (dependency) order. */
  private async work(projectId: string): Promise<WireBacklog[]> {
    const perModule = await Promise.all(
      this.modules.map(async (module) =>
        ((await module.backlog?.(projectId)) ?? []).map((b) => ({ module: module.name, ...b, oldestPendingAt: b.oldestPendingAt?.toISOString() ?? null })),
      ),
    );
    return perModule.flat();
  }
}

/** Features stay booleans; quotas of Infinity become null. */
function entitlementsOnWire(entitlements: PlanUsage['entitlements']): ProjectOverview['entitlements'] {
  const features: Record<string, boolean> = {};
  const quotas: Record<string, number | null> = {};
  for (const [name, value] of Object.entries(entitlements)) {
    if (typeof value === 'boolean') features[name] = value;
    else quotas[name] = quota(value);
  }
  return { features, quotas };
}
