// Curation passes over a project's memories: dedup (near-duplicates grouped in the worker pool, the
// strongest of each group kept, the rest superseded, nothing deleted) and consolidation (dedup plus
// importance decay of memories idle for a long time). Interactive routes run them as jobs and wait;
// a nightly schedule consolidates every project.
import type { Subject } from '../../platform/common-schemas.js';
import type { Db } from '../../platform/db.js';
import type { WorkerPool } from '../../platform/pool.js';
import type { DomainQueue, JobHandlers } from '../../platform/queue.js';
import type { ConsolidateResult, DedupResult } from './schemas.js';
import { decayIdle, listProjectIds, loadDedupCandidates, markDuplicates, type DedupCandidate } from './store.js';

export const DEDUP_DEFAULTS = { threshold: 0.92, scanLimit: 1000, maxScanLimit: 10_000 } as const;
export const CONSOLIDATE_DEFAULTS = { windowDays: 30, decayFactor: 0.9, importanceFloor: 1 } as const;
const DETAIL_LIMIT = 100;

export interface DedupOptions {
  threshold?: number;
  scanLimit?: number;
  subject?: Subject;
  dryRun?: boolean;
}

export interface ConsolidateOptions {
  subject?: Subject;
  windowDays?: number;
  threshold?: number;
  dryRun?: boolean;
}

/** The jobs the curation passes run as: interactive ones awaited by the routes, and the nightly pass. */
export type CurationJobs = {
  'memory.dedup': { payload: { projectId: string } & DedupOptions; result: DedupResult };
  'memory.consolidate': { payload: { projectId: string } & ConsolidateOptions; result: ConsolidateResult };
  'memory.consolidate-all': { payload: Record<string, never>; result: { projects: number } };
};

/** Which memory of a group survives: confirmed over pending, then importance, confidence, recency, age. */
export function strongestFirst(a: DedupCandidate, b: DedupCandidate): number {
  return (
    Number(b.status === 'confirmed') - Number(a.status === 'confirmed') ||
    b.importance - a.importance ||
    b.confidence - a.confidence ||
    b.touchedAt - a.touchedAt ||
    (a.id < b.id ? -1 : a.id > b.id ? 1 : 0)
  );
}

export class MemoryCuration {
  constructor(
    private readonly db: Db,
    private readonly pool: WorkerPool,
    private readonly queue: DomainQueue<CurationJobs>,
  ) {}

  dedup(projectId: string, options: DedupOptions = {}): Promise<DedupResult> {
    return this.queue.run('memory.dedup', { projectId, ...options });
  }

  consolidate(projectId: string, options: ConsolidateOptions = {}): Promise<ConsolidateResult> {
    return this.queue.run('memory.consolidate', { projectId, ...options });
  }

  /** The nightly schedule's job: one consolidation job per project. */
  async consolidateAll(): Promise<{ projects: number }> {
    const ids = await listProjectIds(this.db);
    const day = new Date().toISOString().slice(0, 10);
    for (const projectId of ids) await this.queue.enqueue('memory.consolidate', { projectId }, { jobId: `memory.consolidate.${projectId}.${day}` });
    return { projects: ids.length };
  }

  async runDedup(projectId: string, options: DedupOptions = {}): Promise<DedupResult> {
    const threshold = options.threshold ?? DEDUP_DEFAULTS.threshold;
    const scanLimit = Math.min(options.scanLimit ?? DEDUP_DEFAULTS.scanLimit, DEDUP_DEFAULTS.maxScanLimit);
    const candidates = await loadDedupCandidates(this.db, projectId, scanLimit, options.subject);
    const empty: DedupResult = { scanned: candidates.length, groups: 0, superseded: 0, dryRun: options.dryRun ?? false, groupsDetail: [] };
    if (candidates.length < 2) return empty;

    const dimensions = candidates[0]!.vector.length;
    const vectors = new Float32Array(candidates.length * dimensions);
    candidates.forEach((c, i) => vectors.set(c.vector, i * dimensions));
    const partitionIds = new Map<string, number>();
    const partitions = Int32Array.from(candidates, (c) => {
      const key = `${c.scope}\u0000${c.subjectKey}`;
      if (!partitionIds.has(key)) partitionIds.set(key, partitionIds.size);
      return partitionIds.get(key)!;
    });
    const texts = candidates.map((c) => c.content);
    const roots = await this.pool.run('dedup', { dimensions, vectors, texts, partitions, threshold }, [vectors.buffer as ArrayBuffer, partitions.buffer as ArrayBuffer]);

    const groups = new Map<number, DedupCandidate[]>();
    roots.forEach((root, i) => {
      const group = groups.get(root);
      if (group) group.push(candidates[i]!);
      else groups.set(root, [candidates[i]!]);
    });
    const detail: DedupResult['groupsDetail'] = [];
    const pairs: { id: string; keptId: string }[] = [];
    for (const members of groups.values()) {
      if (members.length < 2) continue;
      const [kept, ...rest] = [...members].sort(strongestFirst);
      detail.push({ keptId: kept!.id, supersededIds: rest.map((m) => m.id) });
      for (const m of rest) pairs.push({ id: m.id, keptId: kept!.id });
    }
    const superseded = options.dryRun ? pairs.length : await markDuplicates(this.db, projectId, pairs);
    return { ...empty, groups: detail.length, superseded, groupsDetail: detail.slice(0, DETAIL_LIMIT) };
  }

  async runConsolidate(projectId: string, options: ConsolidateOptions = {}, now = new Date()): Promise<ConsolidateResult> {
    const dedup = await this.runDedup(projectId, {
      threshold: options.threshold,
      scanLimit: DEDUP_DEFAULTS.maxScanLimit,
      subject: options.subject,
      dryRun: options.dryRun,
    });
    if (options.dryRun) return { dedup, decayed: 0, flaggedStale: 0 };
    const windowDays = options.windowDays ?? CONSOLIDATE_DEFAULTS.windowDays;
    const idleSince = new Date(now.getTime() - windowDays * 86_400_000);
    const decay = await decayIdle(this.db, projectId, idleSince, CONSOLIDATE_DEFAULTS.decayFactor, CONSOLIDATE_DEFAULTS.importanceFloor, options.subject);
    return { dedup, ...decay };
  }
}

export function curationJobs(curation: MemoryCuration): JobHandlers<CurationJobs> {
  return {
    'memory.dedup': ({ projectId, ...options }) => curation.runDedup(projectId, options),
    'memory.consolidate': ({ projectId, ...options }) => curation.runConsolidate(projectId, options),
    'memory.consolidate-all': () => curation.consolidateAll(),
  };
}
