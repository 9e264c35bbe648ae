// The behaviour domain's use cases: mining on demand, after new activity and nightly; projection
// of patterns; declared-target predictions and their scoring; profiles. Routes call these; the
// jobs below run the deferred work.
import type { Config } from '../config.js';
import type { EventsApi } from '../events/index.js';
import { ENGINE_EVENT_TYPES } from '../events/schemas.js';
import type { Subject } from '../platform/common-schemas.js';
import type { Db } from '../platform/db.js';
import { NotFoundError, ValidationError } from '../platform/errors.js';
import type { DomainQueue, JobHandlers } from '../platform/queue.js';
import { matchesType, occurrenceStarts, readActivity, subjectsWithActivity } from './activity/store.js';
import type { PatternMiner } from './patterns/miner.js';
import type { ExtractBody, ExtractReport, PatternRecord } from './patterns/schemas.js';
import * as patterns from './patterns/store.js';
import { project } from './predict/projection.js';
import { clamp, HORIZON, type ProjectBody, type PredictedEvent } from './predict/schemas.js';
import * as predictions from './predict/store.js';
import type { ContextBuilder } from './context/context.js';
import type { ModelJobs, ProjectModels } from './models.js';
import type { Bundle, ContextOptions } from './context/schemas.js';
import type { PatternMonitor } from './monitor/monitor.js';

const DAY_MS = 86_400_000;
const HOUR_MS = 3_600_000;
/** Subjects taken off the mining queue per run of the job. */
const DUE_BATCH = 2000;
/** The window of the mining Lattice does by itself (after new activity, nightly): long enough for monthly habits. */
export const AUTO_MINING_WINDOW_DAYS = 365;

export type BehaviorJobs = ModelJobs & {
  /** Mines the given subjects, or every subject with activity in the window. */
  'behavior.extract': { payload: { projectId: string; subjects?: Subject[]; windowDays: number; timezone: string }; result: ExtractReport };
  /** Mines the subjects whose activity changed and then went quiet (the debounce). */
  'behavior.mine-due': { payload: Record<string, never>; result: { mined: number } };
  /** Re-mines every subject with active patterns, so patterns age without new activity. */
  'behavior.mine-nightly': { payload: Record<string, never>; result: { mined: number } };
  /** Settles recorded predictions whose horizon has passed. */
  'behavior.score-predictions': { payload: Record<string, never>; result: { scored: number } };
  /** The pattern monitor's scheduled tick: every project with an overdue pattern. */
  'behavior.monitor-tick': { payload: Record<string, never>; result: { broken: number } };
  /** Context bundles for up to 500 subjects, in request order. */
  'behavior.context-batch': { payload: { projectId: string; subjects: Subject[]; options: ContextOptions }; result: { bundles: Bundle[] } };
};

export interface ProjectionResult {
  subject: Subject;
  predictions: PredictedEvent[];
  activePatternCount: number;
  eventsEmitted: number;
  abstained: boolean;
  abstentionReason: string | null;
  generatedAt: string;
  durationMs: number;
}

export class BehaviorService {
  constructor(
    private readonly db: Db,
    private readonly queue: DomainQueue<BehaviorJobs>,
    private readonly miner: PatternMiner,
    private readonly events: Pick<EventsApi, 'emit'>,
    private readonly config: Pick<Config, 'miningDebounceMs' | 'miningMaxWaitMs' | 'requestTimeoutMs'>,
  ) {}

  // ---- mining ---------------------------------------------------------------------------------

  /** POST /lattice/patterns/extract: one subject inline; the whole project as a job, awaited. */
  async extract(projectId: string, body: ExtractBody, now = new Date()): Promise<ExtractReport> {
    const started = performance.now();
    const windowDays = body.windowDays ?? 90;
    const timezone = body.timezone ?? 'UTC';
    validTimezone(timezone);
    let subjects: Subject[] | undefined;
    if (body.subject) subjects = [body.subject];
    else if (body.contactId !== undefined) subjects = await patterns.subjectsByExternalId(this.db, projectId, body.contactId);
    let report: ExtractReport;
    if (subjects !== undefined && subjects.length <= 10) {
      const { tally, errors } = await this.miner.mine(projectId, subjects, { windowDays, timezone, now });
      report = { ...tally, durationMs: 0, ...(errors.length ? { errors } : {}) };
    } else {
      // Leave the request a little time to answer once the job is done.
      const timeoutMs = Math.max(1000, this.config.requestTimeoutMs - 2000);
      report = await this.queue.run('behavior.extract', { projectId, ...(subjects ? { subjects } : {}), windowDays, timezone }, { timeoutMs });
    }
    return { ...report, durationMs: performance.now() - started };
  }

  async runExtract(payload: BehaviorJobs['behavior.extract']['payload']): Promise<ExtractReport> {
    const started = performance.now();
    const now = new Date();
    const subjects = payload.subjects ?? (await subjectsWithActivity(this.db, payload.projectId, new Date(now.getTime() - payload.windowDays * DAY_MS)));
    const { tally, errors } = await this.miner.mine(payload.projectId, subjects, { windowDays: payload.windowDays, timezone: payload.timezone, now });
    return { ...tally, durationMs: performance.now() - started, ...(errors.length ? { errors } : {}) };
  }

  /** The active patterns of these subjects, most confident first. */
  async activePatternsOf(projectId: string, subjects: readonly Subject[]): Promise<PatternRecord[]> {
    return (await patterns.patternsOf(this.db, projectId, subjects))
      .filter((p) => p.record.active)
      .map((p) => p.record)
      .sort((a, b) => b.confidence - a.confidence || (a.id < b.id ? -1 : 1));
  }

  /** Subjects of the project with activity in the last `windowDays` days. */
  activeSubjects(projectId: string, windowDays: number, now = new Date()): Promise<Subject[]> {
    return subjectsWithActivity(this.db, projectId, new Date(now.getTime() - windowDays * DAY_MS));
  }

  /**
   * The project's subjects on the mining queue (activity since they were last mined), with when
   * their first and latest queued activity arrived: a higher domain's view of what mining owes.
   */
  async queuedSubjects(projectId: string): Promise<{ subject: Subject; firstAt: Date; lastAt: Date }[]> {
    return patterns.queuedSubjects(this.db, projectId);
  }

  /** Mines the subjects the writes queued, once quiet; answers how many. Failed chunks go back on the queue. */
  async mineDue(now = new Date()): Promise<number> {
    await patterns.compactMiningQueue(this.db);
    const due = await patterns.claimDueSubjects(this.db, new Date(now.getTime() - this.config.miningDebounceMs), new Date(now.getTime() - this.config.miningMaxWaitMs), DUE_BATCH);
    let mined = 0;
    for (const [projectId, subjects] of due) {
      const { failed } = await this.miner.mine(projectId, subjects, { windowDays: AUTO_MINING_WINDOW_DAYS, timezone: 'UTC', now });
      if (failed.length > 0) await patterns.requeueSubjects(this.db, projectId, failed);
      mined += subjects.length - failed.length;
    }
    return mined;
  }

  async mineNightly(now = new Date()): Promise<number> {
    let mined = 0;
    for (const projectId of await patterns.projectsWithPatterns(this.db)) {
      const subjects = await patterns.subjectsWithActivePatterns(this.db, projectId);
      await this.miner.mine(projectId, subjects, { windowDays: AUTO_MINING_WINDOW_DAYS, timezone: 'UTC', now });
      mined += subjects.length;
    }
    return mined;
  }

  async getPattern(projectId: string, id: string): Promise<PatternRecord> {
    const found = await patterns.getPattern(this.db, projectId, id);
    if (!found) throw new NotFoundError(`pattern ${id} not found`);
    return found;
  }

  async contactPatterns(projectId: string, contactId: string, query: { activeOnly?: boolean; limit?: number; cursor?: string; subjectKind?: string }) {
    const limit = query.limit ?? 50;
    const data = await patterns.contactPatterns(this.db, projectId, contactId, {
      activeOnly: query.activeOnly ?? true,
      limit: limit + 1,
      ...(query.cursor ? { afterId: query.cursor } : {}),
      ...(query.subjectKind ? { subjectKind: query.subjectKind } : {}),
    });
    const page = data.slice(0, limit);
    return { data: page, nextCursor: data.length > limit ? page.at(-1)!.id : null };
  }

  // ---- projection -----------------------------------------------------------------------------

  /** POST /lattice/predict: the subject's active patterns extended by their cadence. */
  async projectPatterns(projectId: string, body: ProjectBody, now = new Date()): Promise<ProjectionResult> {
    const started = performance.now();
    const horizonDays = clamp(body.horizonDays, HORIZON.default, HORIZON.min, HORIZON.max);
    const minConfidence = body.minConfidence ?? 0.5;
    const imminentHours = clamp(body.imminentWithinHours, 48, 1, 720);
    const active = await patterns.activePatterns(this.db, projectId, body.subject);
    const projected = project(active, { now: now.getTime(), horizonDays, minConfidence, occurrencesPerPattern: body.occurrencesPerPattern ?? 1, limit: body.limit ?? 20 });
    let eventsEmitted = 0;
    if (body.emitEvents) {
      for (const p of projected) {
        const at = Date.parse(p.expectedAt);
        if (at - now.getTime() > imminentHours * HOUR_MS) continue;
        const result = await this.events.emit(projectId, {
          eventType: ENGINE_EVENT_TYPES.predictionImminent,
          subject: body.subject,
          severity: 'info',
          payload: { patternId: p.patternId, patternKind: p.patternKind, eventType: p.eventType, description: p.description, expectedAt: p.expectedAt, confidence: p.confidence, windowMinutes: p.windowMinutes },
          sourceMemoryIds: p.sourceMemoryIds.slice(0, 100),
          sourcePatternId: p.patternId,
          // Once per subject, pattern and (UTC) day of the expected firing.
          dedupeKey: `prediction.imminent:${body.subject.kind}:${body.subject.externalId}:${p.patternId}:${p.expectedAt.slice(0, 10)}`,
        });
        if (result.emitted) eventsEmitted++;
      }
    }
    const abstentionReason =
      active.length === 0
        ? 'insufficient_signal: the subject has no active patterns'
        : projected.length === 0
          ? `insufficient_confidence: no projected event within ${horizonDays} days at or above confidence ${minConfidence}`
          : null;
    return {
      subject: body.subject,
      predictions: projected,
      activePatternCount: active.length,
      eventsEmitted,
      abstained: abstentionReason !== null,
      abstentionReason,
      generatedAt: now.toISOString(),
      durationMs: performance.now() - started,
    };
  }

  /** GET /lattice/predictions/upcoming: active patterns' next firings project-wide, overdue first. */
  async upcoming(projectId: string, query: { horizonDays?: number; minConfidence?: number; patternKind?: string; limit?: number; offset?: number }, now = new Date()) {
    const rows = await patterns.upcomingPatterns(this.db, projectId, {
      horizon: new Date(now.getTime() + (query.horizonDays ?? 7) * DAY_MS),
      ...(query.patternKind === undefined ? {} : { patternKind: query.patternKind }),
      minConfidence: query.minConfidence ?? 0,
      limit: query.limit ?? 50,
      offset: query.offset ?? 0,
    });
    return {
      predictions: rows.map((p) => {
        const expectedAt = Date.parse(p.metadata.nextExpectedAt!);
        const windowMinutes = p.metadata.toleranceMinutes ?? 0;
        const late = now.getTime() - expectedAt - windowMinutes * 60_000;
        return {
          subject: p.subject,
          patternId: p.id,
          patternKind: p.metadata.patternKind,
          eventType: p.metadata.eventType ?? null,
          description: `Next: ${p.summary}`,
          expectedAt: new Date(expectedAt).toISOString(),
          overdue: late > 0,
          hoursOverdue: late > 0 ? late / HOUR_MS : 0,
          confidence: p.confidence,
          windowMinutes,
          sourceMemoryIds: p.sourceMemoryIds,
        };
      }),
      generatedAt: now.toISOString(),
    };
  }

  // ---- context --------------------------------------------------------------------------------

  /** POST /lattice/context/batch: a job (the queue and the pool), awaited. */
  async contextBatch(projectId: string, subjects: Subject[], options: ContextOptions): Promise<Bundle[]> {
    const timeoutMs = Math.max(1000, this.config.requestTimeoutMs - 2000);
    return (await this.queue.run('behavior.context-batch', { projectId, subjects, options }, { timeoutMs })).bundles;
  }

  // ---- scoring --------------------------------------------------------------------------------

  /** Settles predictions whose horizon has passed against the activity that followed them. */
  async scoreDue(now = new Date(), limit = 500): Promise<number> {
    const due = await predictions.duePredictions(this.db, now, limit);
    for (const p of due) {
      const activities = (await readActivity(this.db, p.projectId, [p.subject], p.madeAt, new Date(p.dueAt.getTime() + 1)))[0]!.activities;
      let hit: boolean | null = null;
      let realized: number | null = null;
      if (p.targetKind === 'event_occurrence') {
        // Counted as the prediction counted them: activities within an hour are one occurrence.
        const happened = occurrenceStarts(activities.filter((a) => a.at > p.madeAt.getTime() && matchesType(a, p.eventType ?? undefined)));
        hit = happened.length > 0;
        realized = happened.length;
      } else if (p.targetKind === 'event_time') {
        const next = activities.find((a) => a.at > p.madeAt.getTime() && matchesType(a, p.eventType ?? undefined));
        hit = next !== undefined && p.expectedAtLower !== null && p.expectedAtUpper !== null && next.at >= p.expectedAtLower.getTime() && next.at <= p.expectedAtUpper.getTime();
        realized = next === undefined ? null : next.at;
      } else if (p.targetKind === 'numeric') {
        const next = activities.find((a) => a.source === 'observation' && a.eventType === p.attributeKey && a.value !== null && a.at > p.madeAt.getTime());
        if (next) {
          realized = next.value;
          hit = p.valueLower !== null && p.valueUpper !== null && next.value! >= p.valueLower && next.value! <= p.valueUpper;
        }
      }
      await predictions.scorePrediction(this.db, p.projectId, p.id, hit, realized, now);
    }
    return due.length;
  }
}

/** Refuses a time zone the runtime does not know, naming it. */
function validTimezone(timezone: string): void {
  try {
    new Intl.DateTimeFormat('en-US', { timeZone: timezone });
  } catch {
    throw new ValidationError(`timezone ${JSON.stringify(timezone)} is not a known IANA time zone`);
  }
}

export function behaviorJobs(service: BehaviorService, context: ContextBuilder, models: ProjectModels, monitor: PatternMonitor): JobHandlers<BehaviorJobs> {
  return {
    'behavior.fit-model': ({ projectId, model, key }) => models.fit(projectId, model, key),
    'behavior.context-batch': async ({ projectId, subjects, options }) => ({ bundles: await context.buildMany(projectId, subjects, options) }),
    'behavior.extract': (payload) => service.runExtract(payload),
    'behavior.mine-due': async () => ({ mined: await service.mineDue() }),
    'behavior.mine-nightly': async () => ({ mined: await service.mineNightly() }),
    'behavior.score-predictions': async () => ({ scored: await service.scoreDue() }),
    'behavior.monitor-tick': async () => ({ broken: await monitor.tickAll() }),
  };
}
