// Mining: a subject's activity in, its behavior_pattern memories out. Activity is read in chunks of
// subjects, grouped per activity type, mined in the worker pool (workers/behavior/mining.ts), and
// reconciled with the patterns already stored: a pattern found again is refreshed in place (same
// memory id), a new one is created (and announced as a `pattern.emerged` event, which alert rules
// can trigger on), and a stored one that no longer holds is deactivated (metadata.active false,
// validTo now; it stays readable). Runs on demand, for subjects whose activity changed (the
// debounced queue the writes fill, see migrations/0007) and nightly for every subject with active
// patterns, so a habit that stopped is retired even without new activity.
import type { FastifyBaseLogger } from 'fastify';
import type { EventsApi } from '../../events/index.js';
import { ENGINE_EVENT_TYPES, type NewEvent } from '../../events/schemas.js';
import type { KeyedMemory, KeyedWrite, MemoryApi } from '../../memory/index.js';
import type { Subject } from '../../platform/common-schemas.js';
import type { Db, Queryable } from '../../platform/db.js';
import type { WorkerPool } from '../../platform/pool.js';
import type { MinedPattern, MiningInput } from '../../../workers/behavior/mining.js';
import { readActivity, type Activity, type SubjectActivity } from '../activity/store.js';
import { patternPrior, posteriorConfidence } from '../../../workers/behavior/confidence.js';
import { summarise } from './describe.js';
import type { ExtractReport, PatternMeta } from './schemas.js';
import * as store from './store.js';

const DAY_MS = 86_400_000;
/** Subjects read, mined and written together, at most. */
const CHUNK = 250;
/**
 * Activities a chunk aims at. Reading a chunk's activity parses every row on the event loop (about
 * 15 ms per 1,000), so a chunk of subjects with thousands of activities each holds every request of
 * the process for as long: in the soak, eight subjects of 8,000 activities mined at once held the
 * server for a second. The first chunk is one subject; each next one is sized from the activities
 * per subject read so far, between 1 and CHUNK subjects.
 */
const ACTIVITIES_PER_CHUNK = 5_000;

/** The subjects of the next chunk, given the activities per subject read so far. */
export function nextChunkSize(activitiesRead: number, subjectsRead: number): number {
  if (subjectsRead === 0) return 1;
  const perSubject = Math.max(1, activitiesRead / subjectsRead);
  return Math.min(CHUNK, Math.max(1, Math.floor(ACTIVITIES_PER_CHUNK / perSubject)));
}
/** A pattern keeps at most this many source ids, the most recent. */
const MAX_SOURCES = 100;

export interface MineOptions {
  windowDays: number;
  timezone: string;
  now: Date;
}

export type MiningTally = Omit<ExtractReport, 'durationMs' | 'errors'>;

/** A pattern's place: its subject and key. */
const slot = (kind: string, externalId: string, key: string) => `${kind}\0${externalId}\0${key}`;

const emptyTally = (): MiningTally => ({ contactsProcessed: 0, patternsCreated: 0, patternsRefreshed: 0, patternsDeactivated: 0 });

interface Loaded {
  subjects: readonly Subject[];
  activity: SubjectActivity[];
}

interface Group {
  /** Lower-cased activity type, '' for untyped activity. */
  key: string;
  /** The type as first written, for the pattern's metadata and summary. */
  eventType: string | undefined;
  activities: Activity[];
}

function groupsOf(activities: readonly Activity[]): Group[] {
  const groups = new Map<string, Group>();
  for (const a of activities) {
    const type = a.eventType ?? a.category ?? undefined;
    const key = type?.toLowerCase() ?? '';
    let group = groups.get(key);
    if (!group) groups.set(key, (group = { key, eventType: type, activities: [] }));
    group.activities.push(a);
  }
  return [...groups.values()];
}

/** Told which subjects were mined, once their patterns have committed (a higher domain's hook). */
export type MinedListener = (projectId: string, subjects: readonly Subject[]) => Promise<void>;

export class PatternMiner {
  private readonly listeners: MinedListener[] = [];

  constructor(
    private readonly db: Db,
    private readonly pool: Pick<WorkerPool, 'run'>,
    private readonly memory: Pick<MemoryApi, 'upsertKeyed' | 'afterKeyedCommit' | 'lockKeyed' | 'patchKeyed'>,
    private readonly events: Pick<EventsApi, 'appendInTransaction' | 'afterCommit'>,
    private readonly log: FastifyBaseLogger,
  ) {}

  /** Subscribes to mined subjects; a listener that fails is logged, never fails the mining. */
  onMined(listener: MinedListener): void {
    this.listeners.push(listener);
  }

  /**
   * Mines these subjects, a chunk at a time (sized by nextChunkSize); a chunk that fails is
   * reported in `errors` and the rest goes on. The next chunk's rows are read while the current one
   * is mined and written (the database and the pool work side by side).
   */
  async mine(projectId: string, subjects: readonly Subject[], options: MineOptions): Promise<{ tally: MiningTally; errors: NonNullable<ExtractReport['errors']>; failed: Subject[] }> {
    const tally = emptyTally();
    const errors: NonNullable<ExtractReport['errors']> = [];
    const failed: Subject[] = [];
    // Settled, so a read that fails while the previous chunk is written is reported, not unhandled.
    const load = (chunk: readonly Subject[]) => this.load(projectId, chunk, options).then((rows) => ({ rows }), (error: unknown) => ({ error }));
    let offset = 0;
    let activitiesRead = 0;
    const take = () => {
      const chunk = subjects.slice(offset, offset + nextChunkSize(activitiesRead, offset));
      offset += chunk.length;
      return chunk;
    };
    let chunk = take();
    let next = chunk.length > 0 ? load(chunk) : undefined;
    while (chunk.length > 0) {
      const loaded = await next!;
      if ('rows' in loaded) activitiesRead += loaded.rows.activity.reduce((sum, a) => sum + a.activities.length, 0);
      const following = take();
      next = following.length > 0 ? load(following) : undefined;
      try {
        if ('error' in loaded) throw loaded.error;
        const counts = await this.mineChunk(projectId, loaded.rows, options);
        tally.contactsProcessed += counts.contactsProcessed;
        tally.patternsCreated += counts.patternsCreated;
        tally.patternsRefreshed += counts.patternsRefreshed;
        tally.patternsDeactivated += counts.patternsDeactivated;
        for (const listener of this.listeners) {
          await listener(projectId, chunk).catch((error: unknown) => this.log.error({ err: error, projectId }, 'a listener of mined subjects failed'));
        }
      } catch (error) {
        this.log.error({ err: error, projectId, subjects: chunk.length }, 'pattern mining failed for a chunk of subjects');
        const message = error instanceof Error ? error.message : String(error);
        for (const s of chunk) errors.push({ contactId: s.externalId, eventType: null, error: message });
        failed.push(...chunk);
      }
      chunk = following;
    }
    return { tally, errors, failed };
  }

  private async load(projectId: string, subjects: readonly Subject[], { windowDays, now }: MineOptions): Promise<Loaded> {
    const since = new Date(now.getTime() - windowDays * DAY_MS);
    return { subjects, activity: await readActivity(this.db, projectId, subjects, since, now) };
  }

  private async mineChunk(projectId: string, { subjects, activity }: Loaded, { timezone, now, windowDays }: MineOptions): Promise<MiningTally> {
    const jobs: { subject: Subject; group: Group }[] = [];
    for (const { subject, activities } of activity) for (const group of groupsOf(activities)) jobs.push({ subject, group });
    const inputs: MiningInput[] = jobs.map(({ group }) => ({
      times: Float64Array.from(group.activities, (a) => a.at),
      entities: group.activities.map((a) => a.entity),
      now: now.getTime(),
      timezone,
    }));
    const mined = inputs.length === 0 ? [] : await this.pool.run('behavior.mine', inputs);

    // The patterns and the announcement of the new ones commit together: a crash between them
    // would leave a pattern that is never announced (mined again, it is not new). The subjects are
    // locked before their stored patterns are read: two minings of a subject at once (the queue's
    // after a write and an explicit extract) would otherwise each reconcile against what the other
    // had not written yet, and the later would count the earlier's new patterns as neither created
    // nor refreshed.
    const { created, receipt, refreshed, deactivated, written } = await this.db.transaction(async (tx) => {
      await store.lockSubjects(tx, projectId, subjects);
      const stored = new Map((await store.patternsOf(tx, projectId, subjects)).map((p) => [slot(p.record.subject.kind, p.record.subject.externalId, p.key), p]));
      const { rows, refreshed, deactivated } = this.reconcile(jobs, mined, stored, windowDays, now);
      const keyed = (await this.memory.upsertKeyed(projectId, await carryEvidence(this.memory, tx, projectId, rows, stored), tx)).filter((w) => w.created);
      const events = announcements(keyed, rows);
      const receipt = events.length > 0 ? await this.events.appendInTransaction(tx, projectId, events) : undefined;
      return { created: keyed, receipt, refreshed, deactivated, written: rows.length };
    });
    if (written > 0) await this.memory.afterKeyedCommit(projectId);
    if (receipt) await this.events.afterCommit(receipt);
    return { contactsProcessed: subjects.length, patternsCreated: created.length, patternsRefreshed: refreshed, patternsDeactivated: deactivated };
  }

  /** The rows to write: every pattern found (new or refreshed), and the stored ones no longer found, deactivated. */
  private reconcile(
    jobs: readonly { subject: Subject; group: Group }[],
    mined: readonly (readonly MinedPattern[] | undefined)[],
    stored: ReadonlyMap<string, store.StoredPattern>,
    windowDays: number,
    now: Date,
  ): { rows: KeyedMemory[]; refreshed: number; deactivated: number } {
    const rows: KeyedMemory[] = [];
    const seen = new Set<string>();
    let refreshed = 0;
    jobs.forEach(({ subject, group }, i) => {
      for (const pattern of mined[i] ?? []) {
        const key = `${pattern.patternKind}:${group.key || '*'}`;
        const id = slot(subject.kind, subject.externalId, key);
        seen.add(id);
        if (stored.has(id)) refreshed++;
        rows.push(this.patternRow(subject, key, group, pattern));
      }
    });
    let deactivated = 0;
    for (const [id, p] of stored) {
      if (seen.has(id) || !p.record.active) continue;
      // A narrower look does not retire what a wider one found (a monthly habit needs months to
      // show): only a window at least as long as the pattern's own can say it no longer holds.
      if (p.record.metadata.observationWindowDays > windowDays) continue;
      deactivated++;
      rows.push({
        key: p.key,
        subjectKind: p.record.subject.kind,
        subjectExternalId: p.record.subject.externalId,
        type: 'behavior_pattern',
        content: p.record.summary,
        confidence: p.record.confidence,
        metadata: { ...p.record.metadata, active: false },
        source: 'mining',
        sourceMemoryIds: p.record.sourceMemoryIds,
        validFrom: p.validFrom,
        validTo: new Date(Math.max(now.getTime(), p.validFrom.getTime())),
      });
    }
    return { rows, refreshed, deactivated };
  }

  private patternRow(subject: Subject, key: string, group: Group, p: MinedPattern): KeyedMemory {
    const meta: PatternMeta = {
      patternKind: p.patternKind,
      contactId: subject.externalId,
      subjectKind: subject.kind,
      ...(group.eventType === undefined ? {} : { eventType: group.eventType }),
      ...(p.entity === undefined ? {} : { entityExternalIds: [p.entity] }),
      cadence: p.cadence,
      confidence: p.confidence,
      hits: p.hits,
      misses: p.misses,
      ...(p.unseen > 0 ? { unseen: p.unseen } : {}),
      observationCount: p.observationCount,
      observationWindowDays: p.observationWindowDays,
      lastObservedAt: new Date(p.lastObservedAt).toISOString(),
      ...(p.nextExpectedAt === undefined ? {} : { nextExpectedAt: new Date(p.nextExpectedAt).toISOString() }),
      toleranceMinutes: p.toleranceMinutes,
      ...(p.rateRatio === undefined ? {} : { rateRatio: p.rateRatio }),
      active: true,
    };
    const sources = group.activities.slice(-MAX_SOURCES).reverse().map((a) => a.id);
    return {
      key,
      subjectKind: subject.kind,
      subjectExternalId: subject.externalId,
      type: 'behavior_pattern',
      content: summarise(meta),
      confidence: p.confidence,
      metadata: meta,
      source: 'mining',
      sourceMemoryIds: sources,
      validFrom: new Date(group.activities[0]!.at),
      validTo: null,
    };
  }
}

/**
 * Outcome evidence (learning's updates) carries over a refresh, including evidence committed since
 * the patterns were read: the stored rows are locked first (in id order, as the outcome writer
 * locks them), then each refreshed pattern's confidence is its new mined prior updated by it.
 */
async function carryEvidence(memory: store.PatternRows, tx: Queryable, projectId: string, rows: readonly KeyedMemory[], stored: ReadonlyMap<string, store.StoredPattern>): Promise<KeyedMemory[]> {
  const idOf = (r: KeyedMemory) => stored.get(slot(r.subjectKind, r.subjectExternalId, r.key))?.record.id;
  const locked = await store.lockPatterns(memory, tx, projectId, rows.flatMap((r) => idOf(r) ?? []));
  return rows.map((row) => {
    const found = locked.get(idOf(row) ?? '');
    if (!found || found.evidence.hits + found.evidence.misses === 0) return row;
    const meta = row.metadata as PatternMeta;
    const prior = patternPrior(meta.hits, meta.misses);
    const confidence = posteriorConfidence(prior, found.evidence.hits, found.evidence.misses);
    return {
      ...row,
      confidence,
      metadata: { ...meta, confidence, minedConfidence: prior.confidence, outcomeHits: found.evidence.hits, outcomeMisses: found.evidence.misses },
    };
  });
}

/** One `pattern.emerged` event per new pattern; alert rules on it fire through the queue. */
function announcements(created: readonly KeyedWrite[], rows: readonly KeyedMemory[]): NewEvent[] {
  const bySlot = new Map(rows.map((r) => [slot(r.subjectKind, r.subjectExternalId, r.key), r]));
  return created.flatMap((c) => {
    const row = bySlot.get(slot(c.subjectKind, c.subjectExternalId, c.key));
    if (!row) return [];
    const meta = row.metadata as PatternMeta;
    return [
      {
        eventType: ENGINE_EVENT_TYPES.patternEmerged,
        subject: { kind: c.subjectKind, externalId: c.subjectExternalId },
        severity: 'info' as const,
        payload: { patternId: c.id, patternKind: meta.patternKind, eventType: meta.eventType ?? null, summary: row.content, confidence: meta.confidence },
        sourceMemoryIds: [c.id],
        sourcePatternId: c.id,
        emittedByPack: null,
        dedupeKey: `pattern.emerged:${c.id}`,
      },
    ];
  });
}
