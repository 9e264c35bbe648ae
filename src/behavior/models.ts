// Project-wide models, fitted over every subject's activity and cached (behavior_models): the BG/NBD
// repeat-event model per activity type and lookback (Fader, Hardie and Lee 2005; fitted by maximum
// likelihood in the worker pool, workers/behavior/bgnbd.ts), and the RFM quintile cut points that
// score a subject's recency, frequency and monetary value against the project's other subjects.
//
// Fitting reads the whole project (seconds on a large one), so it is a job (`behavior.fit-model`),
// deduplicated across processes by its job id, and never on a request's path once a model exists:
// a cached model older than its freshness is answered while the job refits it. A BG/NBD fit that
// does not exist yet is not waited for either (a caller may ask for any activity type and
// lookback): the caller answers from the subject's own rate meanwhile, and says so. The RFM cut
// points, one set per project, are computed on the first profile's path, and again on a profile's
// path whenever a subject has arrived since, while they cover fewer than RFM_CACHED_FROM subjects.
import { createHash } from 'node:crypto';
import type { FastifyBaseLogger } from 'fastify';
import type { Db } from '../platform/db.js';
import type { WorkerPool } from '../platform/pool.js';
import type { DomainQueue } from '../platform/queue.js';
import type { BgnbdParams } from '../../workers/behavior/bgnbd.js';
import { quantile } from '../../workers/behavior/stats.js';
import { summariseProject } from './activity/store.js';
import { readModel, writeModel, type CachedModel } from './predict/store.js';

const DAY_MS = 86_400_000;
const HOUR_MS = 3_600_000;

/** Subjects with the activity needed before BG/NBD answers; fewer, and the subject's own rate does. */
export const BGNBD_MIN_SUBJECTS = 50;
/** A BG/NBD fit older than this is refitted in the background. */
const BGNBD_FRESH_MS = 6 * HOUR_MS;
/** RFM cut points older than this are recomputed in the background. */
const RFM_FRESH_MS = HOUR_MS;
/** A project's RFM cut points are cached once they cover this many subjects; below, a new subject refits them on read. */
export const RFM_CACHED_FROM = 200;

export type ModelKind = 'bgnbd' | 'rfm';

export type ModelJobs = {
  /** Fits one project model and caches it. */
  'behavior.fit-model': { payload: { projectId: string; model: ModelKind; key: string }; result: { subjects: number } };
};

export interface BgnbdModel {
  /** False when too few subjects had the activity, or the fit gave no finite estimate. */
  usable: boolean;
  /** Whether the optimiser met its tolerance (false on a boundary ridge, see fitBgnbd). */
  converged?: boolean;
  params: BgnbdParams | null;
  logLikelihood: number | null;
}

export interface RfmModel {
  /** The 20/40/60/80% cut points of days since the last activity, of occurrences, of summed amounts (null: no subject has amounts). */
  recency: number[];
  frequency: number[];
  monetary: number[] | null;
}

const bgnbdKey = (eventType: string | undefined, lookbackDays: number) => `${(eventType ?? '').toLowerCase()}|${lookbackDays}`;

export class ProjectModels {
  /** The first RFM fit of a project, shared by the profiles that wait for it in this process. */
  private readonly firstRfm = new Map<string, Promise<CachedModel<RfmModel>>>();

  constructor(
    private readonly db: Db,
    private readonly pool: Pick<WorkerPool, 'run'>,
    private readonly queue: DomainQueue<ModelJobs>,
    private readonly log: FastifyBaseLogger,
  ) {}

  /** The cached BG/NBD fit, or undefined while its first fit runs (enqueued here). */
  async bgnbd(projectId: string, eventType: string | undefined, lookbackDays: number, now: Date): Promise<CachedModel<BgnbdModel> | undefined> {
    const key = bgnbdKey(eventType, lookbackDays);
    const stored = await readModel<BgnbdModel>(this.db, projectId, 'bgnbd', key);
    if (!stored || now.getTime() - stored.fittedAt.getTime() > BGNBD_FRESH_MS) await this.enqueueFit(projectId, 'bgnbd', key, stored, now);
    return stored;
  }

  async rfm(projectId: string, lookbackDays: number, now: Date): Promise<CachedModel<RfmModel>> {
    const key = String(lookbackDays);
    const stored = await readModel<RfmModel>(this.db, projectId, 'rfm', key);
    if (stored && now.getTime() - stored.fittedAt.getTime() > RFM_FRESH_MS) await this.enqueueFit(projectId, 'rfm', key, stored, now);
    if (stored && stored.subjects >= RFM_CACHED_FROM) return stored;
    // Cut points over a handful of subjects say little about the next one: while the fit covers few,
    // a subject's arrival refits them at once (the first profile of a new project would otherwise
    // score every later subject against itself for an hour). Time alone refits them only as a large
    // project's are (the hourly job), so subjects who go quiet score lower against them meanwhile.
    let first = this.firstRfm.get(projectId);
    if (!first) {
      first = this.fitRfm(projectId, lookbackDays, now, stored).finally(() => this.firstRfm.delete(projectId));
      this.firstRfm.set(projectId, first);
    }
    return first;
  }

  /** The job: fits the model named by its key now and caches it. */
  async fit(projectId: string, model: ModelKind, key: string, now = new Date()): Promise<{ subjects: number }> {
    if (model === 'rfm') return this.fitRfm(projectId, Number(key), now);
    const [eventType, lookback] = key.split('|');
    return this.fitBgnbd(projectId, eventType || undefined, Number(lookback), now);
  }

  /**
   * One fit per version of a model (the fit it replaces) and hour, across processes: the job id says
   * which, so callers asking at once enqueue it once, and a failed fit is tried again the next hour.
   * A queue outage only delays it.
   */
  private async enqueueFit(projectId: string, model: ModelKind, key: string, replacing: CachedModel<unknown> | undefined, now: Date): Promise<void> {
    const digest = createHash('sha256').update(key).digest('hex').slice(0, 16);
    const version = replacing?.fittedAt.getTime() ?? 0;
    const jobId = `behavior.fit-model.${projectId}.${model}.${digest}.${version}.${Math.floor(now.getTime() / HOUR_MS)}`;
    await this.queue
      .enqueue('behavior.fit-model', { projectId, model, key }, { jobId, attempts: 2 })
      .catch((error: unknown) => this.log.warn({ err: error, projectId, model, key }, 'could not enqueue a model fit'));
  }

  private async fitBgnbd(projectId: string, eventType: string | undefined, lookbackDays: number, now: Date): Promise<CachedModel<BgnbdModel>> {
    const summaries = await summariseProject(this.db, projectId, eventType, new Date(now.getTime() - lookbackDays * DAY_MS), now);
    let params: BgnbdModel = { usable: false, params: null, logLikelihood: null };
    if (summaries.length >= BGNBD_MIN_SUBJECTS) {
      const x = Float64Array.from(summaries, (s) => s.count - 1);
      const tx = Float64Array.from(summaries, (s) => (s.last - s.first) / DAY_MS);
      const T = Float64Array.from(summaries, (s) => (now.getTime() - s.first) / DAY_MS);
      const fit = await this.pool.run('behavior.fit-bgnbd', { x, tx, T });
      const values = [fit.r, fit.alpha, fit.a, fit.b];
      // A maximum on the boundary (a and b, or r and alpha, growing together: no heterogeneity in
      // dropout, or in rate) leaves the simplex walking a ridge where the likelihood no longer
      // changes; every point on it predicts alike, so a finite point there is usable.
      const usable = values.every((v) => Number.isFinite(v) && v > 0) && Number.isFinite(fit.logLikelihood);
      params = { usable, converged: fit.converged, params: { r: fit.r, alpha: fit.alpha, a: fit.a, b: fit.b }, logLikelihood: fit.logLikelihood };
    }
    await writeModel(this.db, projectId, 'bgnbd', bgnbdKey(eventType, lookbackDays), params, summaries.length, now);
    return { params, subjects: summaries.length, fittedAt: now };
  }

  /** Fits the cut points now; with `unless`, keeps that fit when it covers as many subjects as there are. */
  private async fitRfm(projectId: string, lookbackDays: number, now: Date, unless?: CachedModel<RfmModel>): Promise<CachedModel<RfmModel>> {
    const summaries = await summariseProject(this.db, projectId, undefined, new Date(now.getTime() - lookbackDays * DAY_MS), now);
    if (unless && unless.subjects === summaries.length) return unless;
    const cuts = (values: number[]) => {
      const sorted = values.sort((a, b) => a - b);
      return sorted.length === 0 ? [] : [0.2, 0.4, 0.6, 0.8].map((q) => quantile(sorted, q));
    };
    const amounts = summaries.flatMap((s) => (s.monetary === null ? [] : [s.monetary]));
    const params: RfmModel = {
      recency: cuts(summaries.map((s) => (now.getTime() - s.last) / DAY_MS)),
      frequency: cuts(summaries.map((s) => s.count)),
      monetary: amounts.length === 0 ? null : cuts(amounts),
    };
    await writeModel(this.db, projectId, 'rfm', String(lookbackDays), params, summaries.length, now);
    return { params, subjects: summaries.length, fittedAt: now };
  }
}

/** A score of 1 to 5 against quintile cut points: higher values score higher (reverse for recency). */
export function quintileScore(value: number, cuts: readonly number[], higherIsBetter = true): number {
  const above = cuts.filter((c) => value > c).length;
  return higherIsBetter ? 1 + above : 5 - above;
}
