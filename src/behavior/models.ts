// Project-wide models, fitted over every subject's activity and cached (behavior_models): the BG/NBD
// repeat-event model per activity type and lookback (Fader, Hardie and Lee 2005; fitted by maximum
// likelihood in the worker pool, workers/behavior/bgnbd.ts), and the RFM quintile cut points that
// score a subject's recency, frequency and monetary value against the project's other subjects.
// A cached model older than its freshness is still answered while a refit runs in the background,
// so the project's growth reaches the model without any caller waiting for it; only the first call
// for a model waits for its fit (and concurrent first calls share one fit).
import type { FastifyBaseLogger } from 'fastify';
import type { Db } from '../platform/db.js';
import type { WorkerPool } from '../platform/pool.js';
import type { BgnbdParams } from '../../workers/behavior/bgnbd.js';
import { quantile } from '../../workers/behavior/stats.js';
import { summariseProject } from './activity/store.js';
import { readModel, writeModel, type CachedModel } from './predict/store.js';

const DAY_MS = 86_400_000;

/** Subjects with the activity needed before BG/NBD answers; fewer, and the subject's own rate does. */
export const BGNBD_MIN_SUBJECTS = 50;
/** A BG/NBD fit older than this is refitted in the background. */
const BGNBD_FRESH_MS = 6 * 3_600_000;
/** RFM cut points older than this are recomputed in the background. */
const RFM_FRESH_MS = 3_600_000;

export interface BgnbdModel {
  /** False when too few subjects had the activity, or the fit gave no finite estimate. */
  usable: boolean;
  /** Whether the optimiser met its tolerance (false on a boundary ridge, see fitBgnbd). */
  converged?: boolean;
  params: BgnbdParams | null;
  /** Subjects with at least one event of the type in the lookback. */
  subjects: number;
  logLikelihood: number | null;
}

export interface RfmModel {
  subjects: number;
  /** The 20/40/60/80% cut points of days since the last activity, of occurrences, of summed amounts (null: no subject has amounts). */
  recency: number[];
  frequency: number[];
  monetary: number[] | null;
}

export class ProjectModels {
  private readonly fits = new Map<string, Promise<CachedModel<unknown>>>();

  constructor(
    private readonly db: Db,
    private readonly pool: Pick<WorkerPool, 'run'>,
    private readonly log: FastifyBaseLogger,
  ) {}

  bgnbd(projectId: string, eventType: string | undefined, lookbackDays: number, now: Date): Promise<CachedModel<BgnbdModel>> {
    const key = `${(eventType ?? '').toLowerCase()}|${lookbackDays}`;
    return this.cached(projectId, 'bgnbd', key, BGNBD_FRESH_MS, now, () => this.fitBgnbd(projectId, eventType, lookbackDays, now));
  }

  rfm(projectId: string, lookbackDays: number, now: Date): Promise<CachedModel<RfmModel>> {
    return this.cached(projectId, 'rfm', String(lookbackDays), RFM_FRESH_MS, now, () => this.fitRfm(projectId, lookbackDays, now));
  }

  /** Refits now (the schedule's path, and tests'). */
  refit(projectId: string, model: 'bgnbd' | 'rfm', key: string, now = new Date()): Promise<unknown> {
    if (model === 'rfm') return this.share(projectId, model, key, () => this.fitRfm(projectId, Number(key), now));
    const [eventType, lookback] = key.split('|');
    return this.share(projectId, model, key, () => this.fitBgnbd(projectId, eventType || undefined, Number(lookback), now));
  }

  private async cached<P>(projectId: string, model: string, key: string, freshMs: number, now: Date, fit: () => Promise<CachedModel<P>>): Promise<CachedModel<P>> {
    const stored = await readModel<P>(this.db, projectId, model, key);
    if (!stored) return this.share(projectId, model, key, fit);
    if (now.getTime() - stored.fittedAt.getTime() > freshMs) {
      this.share(projectId, model, key, fit).catch((error: unknown) => this.log.warn({ err: error, projectId, model, key }, 'background model refit failed'));
    }
    return stored;
  }

  private share<P>(projectId: string, model: string, key: string, fit: () => Promise<CachedModel<P>>): Promise<CachedModel<P>> {
    const id = `${projectId}\0${model}\0${key}`;
    let running = this.fits.get(id) as Promise<CachedModel<P>> | undefined;
    if (!running) {
      running = fit().finally(() => this.fits.delete(id));
      this.fits.set(id, running as Promise<CachedModel<unknown>>);
    }
    return running;
  }

  private async fitBgnbd(projectId: string, eventType: string | undefined, lookbackDays: number, now: Date): Promise<CachedModel<BgnbdModel>> {
    const key = `${(eventType ?? '').toLowerCase()}|${lookbackDays}`;
    const summaries = await summariseProject(this.db, projectId, eventType, new Date(now.getTime() - lookbackDays * DAY_MS), now);
    let params: BgnbdModel = { usable: false, params: null, subjects: summaries.length, logLikelihood: null };
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
      params = { usable, converged: fit.converged, params: { r: fit.r, alpha: fit.alpha, a: fit.a, b: fit.b }, subjects: summaries.length, logLikelihood: fit.logLikelihood };
    }
    await writeModel(this.db, projectId, 'bgnbd', key, params, summaries.length, now);
    return { params, subjects: summaries.length, fittedAt: now };
  }

  private async fitRfm(projectId: string, lookbackDays: number, now: Date): Promise<CachedModel<RfmModel>> {
    const summaries = await summariseProject(this.db, projectId, undefined, new Date(now.getTime() - lookbackDays * DAY_MS), now);
    const cuts = (values: number[]) => {
      const sorted = values.sort((a, b) => a - b);
      return sorted.length === 0 ? [] : [0.2, 0.4, 0.6, 0.8].map((q) => quantile(sorted, q));
    };
    const amounts = summaries.flatMap((s) => (s.monetary === null ? [] : [s.monetary]));
    const params: RfmModel = {
      subjects: summaries.length,
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
