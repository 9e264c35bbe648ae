// Curation passes over a project's memories: dedup (near-duplicates grouped in the worker pool, the
// strongest of each group kept, the rest superseded, nothing deleted) and consolidation (dedup plus
// importance decay of memories idle for a long time). Interactive routes run them as jobs and wait;
// a nightly schedule consolidates every project.
import type { Subject } from '../../platform/common-schemas.js';
import type { Db } from '../../platform/db.js';
import type { WorkerPool } from '../../platform/pool.js';
import type { DomainQueue, JobHandlers } from '../../platform/queue.js';
import { weakestPair } from '../../../workers/near-duplicate.js';
import type { ConsolidateResult, DedupResult, MergeResult } from './schemas.js';
import { decayIdle, loadDedupCandidates, markDuplicates, mergeCluster, type DedupCandidate } from './store.js';

export const DEDUP_DEFAULTS = { threshold: 0.92, scanLimit: 1000, maxScanLimit: 10_000 } as const;
export const CONSOLIDATE_DEFAULTS = { windowDays: 30, decayFactor: 0.9, importanceFloor: 1 } as const;
export const MERGE_DEFAULTS = { maxClusters: 100, maxClustersCap: 1000, maxClusterSize: 10, maxClusterSizeCap: 100 } as const;
const DETAIL_LIMIT = 100;

export interface DedupOptions {
  threshold?: number;
  scanLimit?: number;
  subject?: Subject;
  dryRun?: boolean;
}

export interface MergeOptions {
  threshold?: number;
  /** Default true: report what would be merged. */
  dryRun?: boolean;
  maxClusters?: number;
  maxClusterSize?: number;
  subject?: Subject;
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
  'memory.merge': { payload: { projectId: string } & MergeOptions; result: MergeResult };
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
    /** Every project's id (tenancy's). */
    private readonly projectIds: () => Promise<string[]>,
  ) {}

  dedup(projectId: string, options: DedupOptions = {}): Promise<DedupResult> {
    return this.queue.run('memory.dedup', { projectId, ...options });
  }

  merge(projectId: string, options: MergeOptions = {}): Promise<MergeResult> {
    return this.queue.run('memory.merge', { projectId, ...options });
  }

  consolidate(projectId: string, options: ConsolidateOptions = {}): Promise<ConsolidateResult> {
    return this.queue.run('memory.consolidate', { projectId, ...options });
  }

  /** The nightly schedule's job: one consolidation job per project. */
  async consolidateAll(): Promise<{ projects: number }> {
    const ids = await this.projectIds();
    const day = new Date().toISOString().slice(0, 10);
    for (const projectId of ids) await this.queue.enqueue('memory.consolidate', { projectId }, { jobId: `memory.consolidate.${projectId}.${day}` });
    return { projects: ids.length };
  }

  async runDedup(projectId: string, options: DedupOptions = {}): Promise<DedupResult> {
    const threshold = options.threshold ?? DEDUP_DEFAULTS.threshold;
    const scanLimit = Math.min(options.scanLimit ?? DEDUP_DEFAULTS.scanLimit, DEDUP_DEFAULTS.maxScanLimit);
    const candidates = await loadDedupCandidates(this.db, projectId, scanLimit, options.subject);
    const empty: DedupResult = { scanned: candidates.length, groups: 0, superseded: 0, dryRun: options.dryRun ?? false, groupsDetail: [] };
    const detail: DedupResult['groupsDetail'] = [];
    const pairs: { id: string; keptId: string }[] = [];
    for (const members of await this.groups(candidates, threshold)) {
      const [kept, ...rest] = [...members].sort(strongestFirst);
      detail.push({ keptId: kept!.id, supersededIds: rest.map((m) => m.id) });
      for (const m of rest) pairs.push({ id: m.id, keptId: kept!.id });
    }
    const superseded = options.dryRun ? pairs.length : await markDuplicates(this.db, projectId, pairs);
    return { ...empty, groups: detail.length, superseded, groupsDetail: detail.slice(0, DETAIL_LIMIT) };
  }

  /**
   * POST /admin/memory/merge: dedup's groups, each merged into its strongest member, whose
   * provenance then lists the others (they are superseded by it; its importance and confidence
   * become the group's highest). Single linkage can chain A to B to C though A and C differ: a group
   * is merged only when every pair of its members is a near duplicate at `threshold` and it has at
   * most maxClusterSize members; otherwise it abstains, with the reason. Each group is one
   * transaction. The largest groups first, at most maxClusters of them.
   */
  async runMerge(projectId: string, options: MergeOptions = {}): Promise<MergeResult> {
    const threshold = options.threshold ?? DEDUP_DEFAULTS.threshold;
    const dryRun = options.dryRun ?? true;
    const maxClusters = Math.min(options.maxClusters ?? MERGE_DEFAULTS.maxClusters, MERGE_DEFAULTS.maxClustersCap);
    const maxClusterSize = Math.min(options.maxClusterSize ?? MERGE_DEFAULTS.maxClusterSize, MERGE_DEFAULTS.maxClusterSizeCap);
    const candidates = await loadDedupCandidates(this.db, projectId, DEDUP_DEFAULTS.maxScanLimit, options.subject);
    const found = (await this.groups(candidates, threshold)).sort((a, b) => b.length - a.length || (a[0]!.id < b[0]!.id ? -1 : 1));
    const result: MergeResult = { clustersFound: found.length, clustersMerged: 0, clustersAbstained: 0, memoriesSuperseded: 0, scanned: candidates.length, dryRun, clusters: [] };
    for (const members of found.slice(0, maxClusters)) {
      const [kept, ...rest] = [...members].sort(strongestFirst);
      const weakest = members.length > maxClusterSize ? undefined : weakestPair(members);
      const why =
        weakest === undefined
          ? `${members.length} members, more than maxClusterSize ${maxClusterSize}`
          : weakest < threshold
            ? `not every pair is a near duplicate (the least alike pair scores ${weakest.toFixed(3)}, under ${threshold}): a chain, not one fact`
            : undefined;
      if (why) {
        result.clustersAbstained++;
        result.clusters.push({ keptId: kept!.id, mergedIds: rest.map((m) => m.id), merged: false, abstainedBecause: why });
        continue;
      }
      const superseded = dryRun ? rest.length : await mergeCluster(this.db, projectId, kept!.id, rest.map((m) => m.id));
      result.clustersMerged++;
      result.memoriesSuperseded += superseded;
      result.clusters.push({ keptId: kept!.id, mergedIds: rest.map((m) => m.id), merged: true, abstainedBecause: null });
    }
    result.clusters = result.clusters.slice(0, DETAIL_LIMIT);
    return result;
  }

  /** Groups of two or more near duplicates among the candidates (single linkage, in the worker pool), within one scope and subject. */
  private async groups(candidates: readonly DedupCandidate[], threshold: number): Promise<DedupCandidate[][]> {
    if (candidates.length < 2) return [];
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
    return [...groups.values()].filter((members) => members.length > 1);
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
    'memory.merge': ({ projectId, ...options }) => curation.runMerge(projectId, options),
  };
}
