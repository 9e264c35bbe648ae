// The behavioural profile of one subject: RFM scores 1 to 5 against the project's subjects
// (quintiles of days since the last activity, of occurrences and of summed amounts over the last
// 365 days; Hughes, "Strategic Database Marketing", 1994), the segment those scores fall in, the
// cadence its patterns describe, and the risks that are active now.
import type { Subject } from '../../platform/common-schemas.js';
import type { Db } from '../../platform/db.js';
import { occurrenceStarts, readActivity, type Activity } from '../activity/store.js';
import { quintileScore, type ProjectModels } from '../models.js';
import { cadenceSummary } from '../patterns/describe.js';
import type { PatternRecord } from '../patterns/schemas.js';
import { activePatterns, patternsOf } from '../patterns/store.js';
import type { Profile, RfmSegment } from './schemas.js';
import { appendTo } from '../../platform/collections.js';

const DAY_MS = 86_400_000;
export const RFM_LOOKBACK_DAYS = 365;

/**
 * The segment of a recency and frequency score, on the usual 5 x 5 grid (rows R, columns F):
 *   R 5: new_customers (F 1), potential_loyalists (F 2-3), champions (F 4-5)
 *   R 4: promising (F 1), potential_loyalists (F 2-3), champions (F 4-5)
 *   R 3: about_to_sleep (F 1-2), need_attention (F 3), loyal_customers (F 4-5)
 *   R 2: hibernating (F 1-2), at_risk (F 3-4), cant_lose_them (F 5)
 *   R 1: lost (F 1-2), at_risk (F 3-4), cant_lose_them (F 5)
 */
export function segmentOf(r: number, f: number): RfmSegment {
  if (r >= 4) return f >= 4 ? 'champions' : f >= 2 ? 'potential_loyalists' : r === 5 ? 'new_customers' : 'promising';
  if (r === 3) return f >= 4 ? 'loyal_customers' : f === 3 ? 'need_attention' : 'about_to_sleep';
  if (f === 5) return 'cant_lose_them';
  if (f >= 3) return 'at_risk';
  return r === 2 ? 'hibernating' : 'lost';
}


function topEntityOf(patterns: readonly PatternRecord[], activities: readonly Activity[]): string | null {
  const preferred = [...patterns].filter((p) => p.metadata.patternKind === 'entity_preference').sort((a, b) => b.confidence - a.confidence)[0];
  if (preferred?.metadata.entityExternalIds?.[0]) return preferred.metadata.entityExternalIds[0];
  const counts = new Map<string, number>();
  for (const a of activities) if (a.entity) counts.set(a.entity, (counts.get(a.entity) ?? 0) + 1);
  return [...counts].sort((a, b) => b[1] - a[1] || (a[0] < b[0] ? -1 : 1))[0]?.[0] ?? null;
}

function risksOf(patterns: readonly PatternRecord[], segment: RfmSegment | null, monetaryScore: number | null, now: number): Profile['risks'] {
  const risks: Profile['risks'] = [];
  for (const p of patterns) {
    const meta = p.metadata;
    if (meta.patternKind === 'declining_engagement') {
      risks.push({ kind: 'declining_engagement', description: p.summary, severity: Math.min(1, Math.max(0, 1 - (meta.rateRatio ?? 0))), sourcePatternId: p.id });
    }
    if (meta.patternKind === 'recurring_event' && meta.nextExpectedAt && meta.cadence?.periodDays) {
      const late = now - Date.parse(meta.nextExpectedAt) - (meta.toleranceMinutes ?? 0) * 60_000;
      if (late > 0) {
        const periods = late / (meta.cadence.periodDays * DAY_MS);
        risks.push({
          kind: 'cadence_missed',
          description: `${meta.eventType ?? 'activity'} was expected by ${meta.nextExpectedAt} and has not happened (${(late / DAY_MS).toFixed(1)} days late)`,
          severity: Math.min(1, (periods + 1) / 3),
          sourcePatternId: p.id,
        });
      }
    }
  }
  if (segment === 'at_risk' && monetaryScore !== null && monetaryScore >= 4) {
    risks.push({ kind: 'rfm_at_risk_high_value', description: 'A high-value subject who used to be frequent has not been seen for a while', severity: 0.8, sourcePatternId: null });
  }
  if (segment === 'cant_lose_them') {
    risks.push({ kind: 'rfm_cant_lose_them', description: 'One of the most frequent subjects has gone quiet', severity: 0.9, sourcePatternId: null });
  }
  return risks.sort((a, b) => b.severity - a.severity);
}

/** What a higher domain keeps about a subject (discovery's features): its profile and the raw material. */
export interface SubjectSummary {
  subject: Subject;
  profile: Profile;
  /** Active patterns. */
  patterns: PatternRecord[];
  /** Entities its activity names, most named first, with how many activities name each. */
  entities: [string, number][];
  /** Per typed attribute with numeric readings over the lookback: how many, their mean, the latest. */
  attributes: Record<string, { count: number; mean: number; last: number }>;
}

export class Profiler {
  constructor(
    private readonly db: Db,
    private readonly models: ProjectModels,
  ) {}

  async profile(projectId: string, subject: Subject, now = new Date()): Promise<Profile> {
    const started = performance.now();
    const [patterns, activities] = await Promise.all([activePatterns(this.db, projectId, subject), this.activity(projectId, subject, now)]);
    return this.profileOf(projectId, subject, patterns, activities, now, started);
  }

  /** Many subjects' summaries, reading each kind of row once for all of them. */
  async summaries(projectId: string, subjects: readonly Subject[], now = new Date()): Promise<SubjectSummary[]> {
    if (subjects.length === 0) return [];
    const since = new Date(now.getTime() - RFM_LOOKBACK_DAYS * DAY_MS);
    const [activity, stored] = await Promise.all([readActivity(this.db, projectId, subjects, since, now), patternsOf(this.db, projectId, subjects)]);
    const active = new Map<string, PatternRecord[]>();
    for (const p of stored) {
      if (!p.record.active) continue;
      const key = `${p.record.subject.kind}\0${p.record.subject.externalId}`;
      appendTo(active, key, p.record);
    }
    return Promise.all(
      activity.map(async ({ subject, activities }) => {
        const patterns = (active.get(`${subject.kind}\0${subject.externalId}`) ?? []).sort((a, b) => b.confidence - a.confidence || (a.id < b.id ? -1 : 1));
        const counts = new Map<string, number>();
        // Running sums per attribute: a subject may have tens of thousands of readings (copying a
        // list per reading made this quadratic, and held the event loop for half a second in the soak).
        const readings = new Map<string, { count: number; sum: number; last: number }>();
        for (const a of activities) {
          if (a.entity) counts.set(a.entity, (counts.get(a.entity) ?? 0) + 1);
          if (a.source !== 'observation' || !a.eventType || a.value === null) continue;
          const reading = readings.get(a.eventType);
          if (reading) {
            reading.count++;
            reading.sum += a.value;
            reading.last = a.value;
          } else readings.set(a.eventType, { count: 1, sum: a.value, last: a.value });
        }
        const attributes = Object.fromEntries([...readings].map(([key, r]) => [key, { count: r.count, mean: r.sum / r.count, last: r.last }]));
        return {
          subject,
          profile: await this.profileOf(projectId, subject, patterns, activities, now),
          patterns,
          entities: [...counts].sort((a, b) => b[1] - a[1] || (a[0] < b[0] ? -1 : 1)),
          attributes,
        };
      }),
    );
  }

  /** The subject's activity over the profile's lookback (a caller that also needs it reads it once). */
  async activity(projectId: string, subject: Subject, now: Date): Promise<Activity[]> {
    return (await readActivity(this.db, projectId, [subject], new Date(now.getTime() - RFM_LOOKBACK_DAYS * DAY_MS), now))[0]!.activities;
  }

  /** The profile from the subject's active patterns and its activity over the last 365 days. */
  async profileOf(projectId: string, subject: Subject, patterns: readonly PatternRecord[], activities: readonly Activity[], now: Date, started = performance.now()): Promise<Profile> {
    const rfm = await this.models.rfm(projectId, RFM_LOOKBACK_DAYS, now);
    const count = occurrenceStarts(activities).length;
    const last = activities.at(-1)?.at;
    const amounts = activities.flatMap((a) => (a.amount === null ? [] : [a.amount]));
    const monetary = amounts.length === 0 ? null : amounts.reduce((s, v) => s + v, 0);
    const cuts = rfm.params;
    const scored = last !== undefined && cuts.recency.length === 4;
    const recencyScore = scored ? quintileScore((now.getTime() - last) / DAY_MS, cuts.recency, false) : null;
    const frequencyScore = scored ? quintileScore(count, cuts.frequency) : null;
    const monetaryScore = scored && monetary !== null && cuts.monetary ? quintileScore(monetary, cuts.monetary) : null;
    const segment = recencyScore !== null && frequencyScore !== null ? segmentOf(recencyScore, frequencyScore) : null;
    return {
      subject,
      rfmSegment: segment,
      recencyScore,
      frequencyScore,
      monetaryScore,
      topEntity: topEntityOf(patterns, activities),
      cadenceSummary: cadenceSummary(patterns.map((p) => p.metadata)),
      risks: risksOf(patterns, segment, monetaryScore, now.getTime()),
      contributingPatternIds: patterns.map((p) => p.id),
      activityCount: count,
      lastActivityAt: last === undefined ? null : new Date(last).toISOString(),
      generatedAt: now.toISOString(),
      durationMs: performance.now() - started,
    };
  }
}
