// An IVFFlat index of its own for each project past SEARCH_IVF_MIN_ROWS embedded memories
// (Postgres). The shared HNSW graph serves every project up to there; at a million memories in one
// project it misses whole topic clusters (the walk settles in a neighbouring cluster and stays),
// while IVFFlat over that project alone, at 10 of 1,000 lists probed, held 0.98 of the exact top
// 10 at a p95 of 12.5 ms (README, "One project of a million memories").
//
// A job (memory.project-indexes, every SEARCH_IVF_EVERY_MS) builds the index of a project that
// has passed the threshold, builds a new one beside the old when the project has doubled since (its
// lists grow with it) and then drops the old, and drops the index of a project that has fallen
// below half the threshold or is gone. The search takes a project's index once the registry lists
// it (cached for a minute); until then, and on PGlite, HNSW serves as before.
import { createHash } from 'node:crypto';
import { LRUCache } from 'lru-cache';
import type { Db } from '../../platform/db.js';
import { ivfLists } from '../../platform/vector-index.js';
import {
  buildIndex,
  dropIndex,
  embeddedCounts,
  IVF_PREFIX,
  ivfIndexNames,
  register,
  registeredIndexes,
  unregister,
} from './project-index-store.js';

const LOCK = 0x6c61747469636569n; // "latticei"

export interface ProjectIndexOptions {
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
  built: { projectId: string; indexName: string; lists: number; rows: number }[];
  dropped: string[];
}

export class ProjectVectorIndexes {
  private readonly indexed = new LRUCache<string, boolean>({ max: 10_000, ttl: 60_000 });

  constructor(
    private readonly db: Db,
    private readonly options: ProjectIndexOptions,
  ) {}

  /** ivfflat.probes for a project that has an index of its own; undefined for the rest (and on PGlite). */
  async probesFor(projectId: string): Promise<number | undefined> {
    if (this.db.kind !== 'pg') return undefined;
    let indexed = this.indexed.get(projectId);
    if (indexed === undefined) {
      indexed = (await registeredIndexes(this.db, projectId)).length > 0;
      this.indexed.set(projectId, indexed);
    }
    return indexed ? this.options.probes : undefined;
  }

  /** Builds, rebuilds and drops the projects' indexes as their sizes now ask; one run at a time across processes. */
  async maintain(): Promise<ProjectIndexChanges> {
    const changes: ProjectIndexChanges = { built: [], dropped: [] };
    if (this.db.kind !== 'pg') return changes;
    await this.db.withAdvisoryLock(LOCK, async (session) => {
      // Counting a large project's rows and building its index take longer than a request may.
      await session.exec('SET statement_timeout = 0');
      try {
        await this.reconcile(session, changes);
      } finally {
        await session.exec('RESET statement_timeout');
      }
    });
    // This process sees the change at once; others when their cached answer expires.
    this.indexed.clear();
    return changes;
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
