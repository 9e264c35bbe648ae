// Declared-target predictions for one subject (SPEC.md "Declared-target prediction"):
// - event_occurrence: P(at least one event of the type within the horizon). With enough subjects
//   in the project, BG/NBD (Fader, Hardie and Lee 2005), whose P(alive) accounts for recency: a
//   subject silent far longer than its usual gap is less likely to come back (its interval:
//   workers/behavior/bgnbd.ts forecastOccurrence).
//   Otherwise the subject's own rate with a Gamma posterior (workers/behavior/targets.ts).
// - numeric: the EWMA level of the typed attribute with an interval from the EW variance.
// - event_time: the next occurrence from the subject's inter-arrival times, within their quantiles.
// - anomaly: |z| of the latest reading against the readings before it.
// Thin signal abstains with a reason ("unknown", never "no"). Every answer that does not abstain is
// recorded with a prd_ id, for decisions to cite and for the scoring job to settle.
import type { Subject } from '../../platform/common-schemas.js';
import type { Db } from '../../platform/db.js';
import { newId } from '../../platform/ids.js';
import { forecastOccurrence } from '../../../workers/behavior/bgnbd.js';
import { anomaly, ewmaLevel, isAbstention, nextEvent, occurrenceFromRate } from '../../../workers/behavior/targets.js';
import { matchesType, occurrenceStarts, readActivity, type Activity } from '../activity/store.js';
import { BGNBD_MIN_SUBJECTS, type ProjectModels } from '../models.js';
import { clamp, HORIZON, LOOKBACK, type Target, type TargetPrediction } from './schemas.js';
import { recordPrediction } from './store.js';

const DAY_MS = 86_400_000;
/** Evidence ids answered, at most (the most recent). */
const MAX_EVIDENCE = 50;

const evidence = (activities: readonly Activity[]) => activities.slice(-MAX_EVIDENCE).reverse().map((a) => a.id);
const days = (ms: number) => (ms / DAY_MS).toFixed(1);

type Answer = Omit<TargetPrediction, 'targetKind' | 'eventType' | 'abstained' | 'abstentionReason' | 'predictionId'>;

const EMPTY: Omit<Answer, 'explanation' | 'evidenceMemoryIds' | 'model'> = {
  probability: null,
  probabilityLower: null,
  probabilityUpper: null,
  value: null,
  valueLower: null,
  valueUpper: null,
  expectedAt: null,
  expectedAtLower: null,
  expectedAtUpper: null,
  daysUntil: null,
  overdue: null,
  anomalyScore: null,
  isAnomaly: null,
};

type Outcome = { answer: Answer } | { abstain: string; evidenceMemoryIds: string[] };

export class TargetPredictor {
  constructor(
    private readonly db: Db,
    private readonly models: ProjectModels,
  ) {}

  async predict(projectId: string, subject: Subject, target: Target, horizonInput: number | undefined, now = new Date()): Promise<TargetPrediction> {
    const horizonDays = clamp(horizonInput, HORIZON.default, HORIZON.min, HORIZON.max);
    const lookbackDays = clamp(target.lookbackDays, LOOKBACK.default, 1, LOOKBACK.max);
    const since = new Date(now.getTime() - lookbackDays * DAY_MS);
    const activities = (await readActivity(this.db, projectId, [subject], since, now))[0]!.activities;
    const eventType = target.eventType === '' ? undefined : target.eventType;
    let outcome: Outcome;
    switch (target.kind) {
      case 'event_occurrence':
        outcome = await this.occurrence(projectId, activities, eventType, horizonDays, lookbackDays, now);
        break;
      case 'event_time':
        outcome = this.eventTime(activities, eventType, now);
        break;
      default:
        outcome = this.reading(target.kind, activities, target.attributeKey);
    }
    const base = { targetKind: target.kind, eventType: target.kind === 'event_occurrence' || target.kind === 'event_time' ? (eventType ?? null) : null };
    if ('abstain' in outcome) {
      return {
        ...base,
        ...EMPTY,
        abstained: true,
        abstentionReason: outcome.abstain,
        explanation: `Abstained (unknown, not "no"): ${outcome.abstain}`,
        evidenceMemoryIds: outcome.evidenceMemoryIds,
        predictionId: null,
        model: null,
      };
    }
    const predictionId = newId('prd');
    const a = outcome.answer;
    await recordPrediction(this.db, {
      id: predictionId,
      projectId,
      subject,
      targetKind: target.kind,
      eventType: base.eventType,
      attributeKey: target.kind === 'numeric' || target.kind === 'anomaly' ? (target.attributeKey ?? null) : null,
      horizonDays,
      lookbackDays,
      model: a.model!,
      probability: a.probability,
      probabilityLower: a.probabilityLower,
      probabilityUpper: a.probabilityUpper,
      value: a.value,
      valueLower: a.valueLower,
      valueUpper: a.valueUpper,
      expectedAt: a.expectedAt === null ? null : new Date(a.expectedAt),
      expectedAtLower: a.expectedAtLower === null ? null : new Date(a.expectedAtLower),
      expectedAtUpper: a.expectedAtUpper === null ? null : new Date(a.expectedAtUpper),
      explanation: a.explanation,
      evidenceMemoryIds: a.evidenceMemoryIds,
      madeAt: now,
      // event_time settles when its interval has closed; the others at the end of the horizon.
      dueAt: target.kind === 'event_time' && a.expectedAtUpper !== null ? new Date(Math.max(now.getTime(), Date.parse(a.expectedAtUpper))) : new Date(now.getTime() + horizonDays * DAY_MS),
    });
    return { ...base, ...a, abstained: false, abstentionReason: null, predictionId };
  }

  private async occurrence(projectId: string, all: readonly Activity[], eventType: string | undefined, h: number, lookbackDays: number, now: Date): Promise<Outcome> {
    if (all.length === 0) return { abstain: `insufficient_signal: no activity for this subject in the last ${lookbackDays} days`, evidenceMemoryIds: [] };
    const ofType = all.filter((a) => matchesType(a, eventType));
    const matched = occurrenceStarts(ofType);
    const ids = evidence(ofType);
    const what = eventType === undefined ? 'any activity' : `"${eventType}"`;
    const model = await this.models.bgnbd(projectId, eventType, lookbackDays, now);
    const fit = model?.params;
    if (model && fit?.usable && fit.params && matched.length > 0) {
      const first = matched[0]!.at;
      const x = matched.length - 1;
      // As the project-wide summary has it: the count of occurrences, the time of the last activity.
      const tx = (ofType.at(-1)!.at - first) / DAY_MS;
      const T = (now.getTime() - first) / DAY_MS;
      const p = fit.params;
      const f = forecastOccurrence(p, x, tx, T, h);
      return {
        answer: {
          ...EMPTY,
          probability: f.probability,
          probabilityLower: f.lower,
          probabilityUpper: f.upper,
          value: f.expected,
          valueLower: f.expectedLower,
          valueUpper: f.expectedUpper,
          explanation:
            `BG/NBD (Fader, Hardie and Lee 2005) fitted on ${model.subjects} subjects of this project with ${what} in the last ${lookbackDays} days ` +
            `(r ${p.r.toFixed(3)}, alpha ${p.alpha.toFixed(3)}, a ${p.a.toFixed(3)}, b ${p.b.toFixed(3)}): ${matched.length} occurrence(s), ` +
            `the last ${days(now.getTime() - ofType.at(-1)!.at)} days ago; P(still active) ${f.alive.toFixed(3)}; expected ${f.expected.toFixed(2)} in ${h} days.`,
          evidenceMemoryIds: ids,
          model: 'bgnbd',
        },
      };
    }
    const exposureDays = (now.getTime() - all[0]!.at) / DAY_MS;
    if (exposureDays < 1) return { abstain: `insufficient_signal: the subject's activity spans ${days(exposureDays * DAY_MS)} days, at least 1 needed`, evidenceMemoryIds: ids };
    const rate = occurrenceFromRate(matched.length, exposureDays, h);
    if (isAbstention(rate)) return { abstain: rate.reason, evidenceMemoryIds: ids };
    const why =
      model === undefined
        ? `BG/NBD is being fitted over the project's subjects with ${what} in the last ${lookbackDays} days; ask again shortly`
        : model.subjects < BGNBD_MIN_SUBJECTS
          ? `BG/NBD needs ${BGNBD_MIN_SUBJECTS} subjects with ${what}; the project has ${model.subjects}`
          : matched.length === 0
            ? `no occurrence of ${what} yet`
            : 'the BG/NBD fit was not usable';
    return {
      answer: {
        ...EMPTY,
        probability: rate.probability,
        probabilityLower: rate.lower,
        probabilityUpper: rate.upper,
        value: rate.expected,
        valueLower: null,
        valueUpper: null,
        explanation:
          `The subject's own rate with a Gamma posterior (Gamma(0.5, 1) prior; ${why}): ${matched.length} occurrence(s) of ${what} ` +
          `over ${days(exposureDays * DAY_MS)} days; expected ${rate.expected.toFixed(2)} in ${h} days.`,
        evidenceMemoryIds: ids,
        model: 'gamma_poisson',
      },
    };
  }

  private eventTime(all: readonly Activity[], eventType: string | undefined, now: Date): Outcome {
    const matched = occurrenceStarts(all.filter((a) => matchesType(a, eventType)));
    const ids = evidence(matched);
    const next = nextEvent(Float64Array.from(matched, (a) => a.at), now.getTime());
    if (isAbstention(next)) return { abstain: next.reason, evidenceMemoryIds: ids };
    return {
      answer: {
        ...EMPTY,
        expectedAt: new Date(next.expectedAt).toISOString(),
        expectedAtLower: new Date(next.lower).toISOString(),
        expectedAtUpper: new Date(next.upper).toISOString(),
        daysUntil: next.daysUntil,
        overdue: next.overdue,
        explanation:
          `The last occurrence plus the median of ${matched.length - 1} gaps (${next.medianGapDays.toFixed(1)} days), within the gaps' 5% and 95% quantiles` +
          (next.overdue ? '; overdue: already past the longest usual gap.' : next.daysUntil < 0 ? '; due: past the median gap.' : '.'),
        evidenceMemoryIds: ids,
        model: 'inter_arrival',
      },
    };
  }

  private reading(kind: 'numeric' | 'anomaly', all: readonly Activity[], attributeKey: string | undefined): Outcome {
    if (attributeKey === undefined) return { abstain: `insufficient_signal: target.attributeKey is needed for ${kind}`, evidenceMemoryIds: [] };
    const readings = all.filter((a) => a.source === 'observation' && a.eventType === attributeKey && a.value !== null);
    const ids = evidence(readings);
    const values = Float64Array.from(readings, (a) => a.value!);
    if (kind === 'numeric') {
      const level = ewmaLevel(values);
      if (isAbstention(level)) return { abstain: level.reason, evidenceMemoryIds: ids };
      return {
        answer: {
          ...EMPTY,
          value: level.value,
          valueLower: level.lower,
          valueUpper: level.upper,
          explanation: `EWMA level (alpha 0.3) of ${readings.length} readings of ${attributeKey}, with 1.96 exponentially weighted standard deviations either side; the level is the forecast for the horizon.`,
          evidenceMemoryIds: ids,
          model: 'ewma',
        },
      };
    }
    const result = anomaly(values);
    if (isAbstention(result)) return { abstain: result.reason, evidenceMemoryIds: ids };
    return {
      answer: {
        ...EMPTY,
        value: result.value,
        valueLower: result.valueLower,
        valueUpper: result.valueUpper,
        anomalyScore: result.anomalyScore,
        isAnomaly: result.anomalous,
        explanation:
          `The latest reading of ${attributeKey} (${result.value}) is ${result.anomalyScore.toFixed(2)} standard deviations from the mean of the ${readings.length - 1} before it ` +
          `(${result.baselineMean.toFixed(3)} +- ${result.baselineSd.toFixed(3)}); anomalous at 3 or more.`,
        evidenceMemoryIds: ids,
        model: 'zscore',
      },
    };
  }
}
