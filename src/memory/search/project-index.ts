// The vector indexes a project is searched through, past the sizes where exact scan serves it.
//
// The shared HNSW graph holds only the projects past SEARCH_EXACT_SCAN_MAX_ROWS embedded memories
// (migration 0016): linking a row costs milliseconds of database time at ef_construction 800, and
// a project below the threshold never walks the graph. A project past it is admitted (its new
// embeddings are marked as written), its rows are marked in batches, and then it is ready: until
// then search scans it exactly, as it did when it was small. A project that shrinks stays admitted.
//
// Past SEARCH_IVF_MIN_ROWS a project gets an IVFFlat index of its own (Postgres): at a million
// memories in one project the shared graph misses whole topic clusters (the walk settles in a
// neighbouring cluster and stays), while IVFFlat over that project alone, at 10 of 1,000 lists
// probed, held 0.98 of the exact top 10 at a p95 of 12.5 ms (docs/benchmarks.md, "One project of a million
// memories").
//
// A job (memory.hnsw-admission, every minute) admits and marks the projects past the exact-scan
// threshold: a project that grows fast would otherwise be scanned exactly, at a cost that grows with
// it, for up to SEARCH_IVF_EVERY_MS after it passed. It counts only the projects not yet ready that
// the word statistics say may have passed. Another (memory.project-indexes, every
// SEARCH_IVF_EVERY_MS) admits as well, builds the IVFFlat index of a project that has passed its
// threshold, builds a new one beside the old when the project has doubled since (its lists grow with it) and then
// drops the old, and drops the index of a project that has fallen below half the threshold or is
// gone. The search takes a project's path once the registries list it (cached for a minute).
import { createHash } from 'node:crypto';
import { LRUCache } from 'lru-cache';
import type { Db } from '../../platform/db.js';
import { ivfLists } from './vector-index.js';
import {
  admitProject,
  buildIndex,
  dropIndex,
  embeddedCounts,
  IVF_PREFIX,
  ivfIndexNames,
  register,
  registeredIndexes,
  unadmittedCounts,
  unregister,
  vectorPathState,
} from './project-index-store.js';

const LOCK = 0x6c61747469636569n; // "latticei"
/** Admission's own lock: a long IVFFlat build under LOCK must not hold the minute's admission (and its connection) back. */
export const ADMISSION_LOCK = 0x6c61747469636861n; // "latticha"

/** How often the memory.hnsw-admission job runs. */
export const HNSW_ADMISSION_EVERY_MS = 60_000;

/** Rows marked per statement when a project is admitted to the HNSW graph (each links its embedded rows). */
const MARK_BATCH = 500;

export interface ProjectIndexOptions {
  /** SEARCH_EXACT_SCAN_MAX_ROWS: a project with more embedded memories is searched through a vector index. */
  exactScanMaxRows: number;
  /** SEARCH_IVF_MIN_ROWS: a project with this many embedded memories gets an index of its own. */
  minRows: number;
  /** SEARCH_IVF_PROBES: lists probed per search (ivfflat.probes). */
  probes: number;
  /** maintenance_work_mem of a build, in MB. */
  buildMemoryMb: number;
  /** EMBEDDING_DIMENSIONS: the embedding column's, which the boot checks (embeddings/dimension.ts). */
  dimensions: number;
}

export interface ProjectIndexChanges {
  /** Projects admitted to the HNSW graph in this run, with their embedded rows then. */
  admitted: { projectId: string; rows: number }[];
  built: { projectId: string; indexName: string; lists: number; rows: number }[];
  dropped: string[];
}

/** How search reads a project's vectors past the exact-scan threshold. */
export interface VectorPathChoice {
  /** The HNSW graph holds every row of the project. */
  hnswReady: boolean;
  /** ivfflat.probes, for a project with an IVFFlat index of its own (Postgres only). */
  ivfProbes?: number;
}

export class ProjectVectorIndexes {
  private readonly paths = new LRUCache<string, { ivf: boolean; hnsw: boolean }>({ max: 10_000, ttl: 60_000 });

  constructor(
    private readonly db: Db,
    private readonly options: ProjectIndexOptions,
  ) {}

  /** The project's path as the registries list it (cached for a minute). */
  async pathFor(projectId: string): Promise<VectorPathChoice> {
    let state = this.paths.get(projectId);
    if (state === undefined) {
      state = await vectorPathState(this.db, projectId);
      this.paths.set(projectId, state);
    }
    const ivf = state.ivf && this.db.kind === 'pg';
    return { hnswReady: state.hnsw, ...(ivf ? { ivfProbes: this.options.probes } : {}) };
  }

  /**
   * Admits and marks the projects past the exact-scan threshold, then (Postgres) builds, rebuilds
   * and drops the largest projects' IVFFlat indexes as their sizes now ask; one run at a time
   * across processes.
   */
  async maintain(): Promise<ProjectIndexChanges> {
    const changes: ProjectIndexChanges = { admitted: await this.admitDue(), built: [], dropped: [] };
    // A run still building (an IVFFlat build takes minutes at a million rows) keeps the turn: this one skips.
    if (this.db.kind === 'pg') await this.db.withAdvisoryLockIfFree(LOCK, (session) => withoutTimeout(session, () => this.reconcile(session, changes)));
    // This process sees the change at once; others when their cached answer expires.
    this.paths.clear();
    return changes;
  }

  /**
   * Admits each project past the exact-scan threshold not yet ready, marks all its rows, and makes
   * it ready (the memory.hnsw-admission job); one run at a time across processes.
   */
  async admitDue(): Promise<ProjectIndexChanges['admitted']> {
    const { exactScanMaxRows } = this.options;
    const admitted: ProjectIndexChanges['admitted'] = [];
    // A run still marking a large project's rows keeps the turn: this one skips (it once waited on
    // the lock until its statement timeout, failing every minute while a 38,000-memory project was marked).
    await this.db.withAdvisoryLockIfFree(ADMISSION_LOCK, (session) =>
      withoutTimeout(session, async () => {
        for (const [projectId, rows] of await unadmittedCounts(session, exactScanMaxRows)) {
          if (rows <= exactScanMaxRows) continue;
          await admitProject(session, projectId, MARK_BATCH);
          admitted.push({ projectId, rows });
        }
      }),
    );
    if (admitted.length > 0) this.paths.clear();
    return admitted;
  }

  private async reconcile(session: Db, changes: ProjectIndexChanges): Promise<void> {
    const { dimensions, minRows } = this.options;
    const registered = new Map((await registeredIndexes(session)).map((index) => [index.projectId, index]));
    const keepFloor = Math.ceil(minRows / 2);
    const sizes = await embeddedCounts(session, keepFloor, [...registered.keys()]);
    for (const [projectId, rows] of sizes) {
      const current = registered.get(projectId);
      const due = current ? rows >= current.rowsAtBuild * 2 : rows >= minRows;
      if (!due) continue;
      const index = { projectId, indexName: indexName(projectId), dimensions, lists: ivfLists(rows) };
      await buildIndex(session, index, this.options.buildMemoryMb);
      await register(session, { ...index, rowsAtBuild: rows });
      changes.built.push({ projectId, indexName: index.indexName, lists: index.lists, rows });
      if (current) {
        await dropIndex(session, current.indexName);
        changes.dropped.push(current.indexName);
      }
    }
    for (const [projectId, index] of registered) {
      if ((sizes.get(projectId) ?? 0) >= keepFloor) continue;
      await unregister(session, projectId);
      await dropIndex(session, index.indexName);
      changes.dropped.push(index.indexName);
    }
    // Left by a build that failed or a process that died mid-build: not listed, so not in use.
    const listed = new Set((await registeredIndexes(session)).map((index) => index.indexName));
    for (const name of await ivfIndexNames(session)) {
      if (listed.has(name)) continue;
      await dropIndex(session, name);
      changes.dropped.push(name);
    }
  }
}

/** A new name per build (the old index serves until the new one is in): the project's hash and the time. */
function indexName(projectId: string): string {
  const hash = createHash('sha256').update(projectId).digest('hex').slice(0, 12);
  return `${IVF_PREFIX}${hash}_${Date.now().toString(36)}`;
}

/** Counting a large project's rows, marking them and building its index take longer than a request may (Postgres). */
async function withoutTimeout<T>(session: Db, fn: () => Promise<T>): Promise<T> {
  if (session.kind !== 'pg') return fn();
  await session.exec('SET statement_timeout = 0');
  try {
    return await fn();
  } finally {
    await session.exec('RESET statement_timeout');
  }
}
