// Cohorts: the subjects most like one subject, by a blended similarity of their stored features,
// and what that cohort's habits predict for it.
//   similarity = 0.5 RFM + 0.25 entities + 0.25 pattern kinds, in [0, 1], where
//   RFM = 1 - |(r, f, m) - (r', f', m')| / (4 sqrt 3) over the 1-to-5 scores (a score either lacks
//   counts as 3, the middle), and entities and pattern kinds are Jaccard indices of the two sets
//   (two empty sets are alike: 1).
// A cohort prediction pools the members' active patterns by kind and activity type: its confidence
// is the members' confidences weighted by their similarity, times s / (s + 1) for s supporting
// members, so that a habit many similar subjects share is reinforced and one only a single member
// has is halved; expectedAt is now plus the similarity-weighted mean time until the members' next
// firing (now for patterns without one).
import type { BehaviorApi, PatternRecord } from '../behavior/index.js';
import { clampTo, type Subject } from '../platform/common-schemas.js';
import type { FeatureStore, SubjectFeatures } from './features.js';
import { COHORT, type CohortBody, type CohortMember, type CohortPredictBody, type CohortPrediction } from './schemas.js';
import { appendTo } from '../platform/collections.js';

export const COHORT_WEIGHTS = { rfm: 0.5, entities: 0.25, patternKinds: 0.25 } as const;
const DEFAULT_WINDOW_MINUTES = 24 * 60;

const jaccard = (a: readonly string[], b: readonly string[]): number => {
  if (a.length === 0 && b.length === 0) return 1;
  const set = new Set(a);
  const shared = b.filter((x) => set.has(x)).length;
  return shared / (set.size + b.length - shared);
};

type Comparable = Pick<SubjectFeatures, 'recencyScore' | 'frequencyScore' | 'monetaryScore' | 'topEntities' | 'patternKinds'>;

export function cohortSimilarity(a: Comparable, b: Comparable): number {
  const score = (s: number | null) => s ?? 3;
  const distance = Math.hypot(score(a.recencyScore) - score(b.recencyScore), score(a.frequencyScore) - score(b.frequencyScore), score(a.monetaryScore) - score(b.monetaryScore));
  const rfm = 1 - distance / (4 * Math.sqrt(3));
  return COHORT_WEIGHTS.rfm * rfm + COHORT_WEIGHTS.entities * jaccard(a.topEntities, b.topEntities) + COHORT_WEIGHTS.patternKinds * jaccard(a.patternKinds, b.patternKinds);
}


const sameSubject = (a: Subject, b: Subject) => a.kind === b.kind && a.externalId === b.externalId;

export class Cohorts {
  constructor(
    private readonly features: FeatureStore,
    private readonly behavior: Pick<BehaviorApi, 'activePatternsOf'>,
  ) {}

  /** The target's features: stored, else computed now (a subject never refreshed yet); undefined without activity. */
  private async target(projectId: string, subject: Subject): Promise<SubjectFeatures | undefined> {
    const stored = await this.features.one(projectId, subject);
    if (stored) return stored;
    await this.features.refresh(projectId, [subject]);
    const fresh = await this.features.one(projectId, subject);
    return fresh && fresh.activityCount > 0 ? fresh : undefined;
  }

  async cohort(projectId: string, body: CohortBody) {
    const started = performance.now();
    const k = Math.round(clampTo(body.k, COHORT.k));
    const minSimilarity = clampTo(body.minSimilarity, COHORT.minSimilarity);
    const { members, candidateCount } = await this.members(projectId, body.subject, k, minSimilarity);
    return { target: body.subject, members: members.map(({ member }) => member), candidateCount, generatedAt: new Date().toISOString(), durationMs: performance.now() - started };
  }

  private async members(projectId: string, subject: Subject, k: number, minSimilarity: number) {
    const target = await this.target(projectId, subject);
    if (!target) return { members: [], candidateCount: 0 };
    const candidates = (await this.features.comparable(projectId)).filter((c) => !sameSubject(c.subject, subject));
    const scored = candidates
      .map((c) => ({ c, similarity: cohortSimilarity(target, c) }))
      .filter((x) => x.similarity >= minSimilarity)
      .sort((a, b) => b.similarity - a.similarity || (a.c.subject.kind + a.c.subject.externalId < b.c.subject.kind + b.c.subject.externalId ? -1 : 1))
      .slice(0, k);
    const members = scored.map(({ c, similarity }) => ({
      member: { subject: c.subject, similarity, rfmSegment: c.rfmSegment, patternKinds: c.patternKinds } satisfies CohortMember,
      features: c,
    }));
    return { members, candidateCount: candidates.length };
  }

  async predict(projectId: string, body: CohortPredictBody, now = new Date()) {
    const started = performance.now();
    const k = Math.round(clampTo(body.cohortK, COHORT.k));
    const limit = Math.round(clampTo(body.predictionLimit, COHORT.predictionLimit));
    const minSimilarity = clampTo(body.minSimilarity, COHORT.minSimilarity);
    const { members } = await this.members(projectId, body.subject, k, minSimilarity);
    const similarity = new Map(members.map(({ member }) => [`${member.subject.kind}\0${member.subject.externalId}`, member.similarity]));
    const patterns = members.length === 0 ? [] : await this.behavior.activePatternsOf(projectId, members.map(({ member }) => member.subject));
    const groups = new Map<string, PatternRecord[]>();
    for (const p of patterns) {
      const key = `${p.metadata.patternKind}\0${(p.metadata.eventType ?? '').toLowerCase()}`;
      appendTo(groups, key, p);
    }
    const predictions: CohortPrediction[] = [...groups.values()].map((group) => {
      // One pattern per member and group: its most confident.
      const bySubject = new Map<string, PatternRecord>();
      for (const p of group) {
        const key = `${p.subject.kind}\0${p.subject.externalId}`;
        if (!bySubject.has(key)) bySubject.set(key, p);
      }
      const supporting = [...bySubject.entries()].map(([key, p]) => ({ p, w: similarity.get(key) ?? 0 }));
      const totalWeight = supporting.reduce((s, x) => s + x.w, 0);
      const weighted = (f: (p: PatternRecord) => number) => (totalWeight > 0 ? supporting.reduce((s, x) => s + x.w * f(x.p), 0) / totalWeight : 0);
      const n = supporting.length;
      const confidence = weighted((p) => p.confidence) * (n / (n + 1));
      const untilNext = weighted((p) => (p.metadata.nextExpectedAt ? Math.max(0, Date.parse(p.metadata.nextExpectedAt) - now.getTime()) : 0));
      const windows = supporting.map((x) => x.p.metadata.toleranceMinutes ?? DEFAULT_WINDOW_MINUTES).sort((a, b) => a - b);
      const exemplar = supporting.sort((a, b) => b.w - a.w)[0]!.p;
      return {
        patternKind: exemplar.metadata.patternKind,
        eventType: exemplar.metadata.eventType ?? null,
        description: `${n} of ${members.length} similar subjects: ${exemplar.summary}`,
        expectedAt: new Date(now.getTime() + untilNext).toISOString(),
        confidence,
        windowMinutes: windows[Math.floor(windows.length / 2)]!,
        supportingSubjects: supporting.map((x) => x.p.subject),
        sourceMemoryIds: supporting.map((x) => x.p.id),
      };
    });
    predictions.sort((a, b) => b.confidence - a.confidence || Date.parse(a.expectedAt) - Date.parse(b.expectedAt) || (a.description < b.description ? -1 : 1));
    return {
      target: body.subject,
      cohort: members.map(({ member }) => member),
      predictions: predictions.slice(0, limit),
      generatedAt: now.toISOString(),
      durationMs: performance.now() - started,
    };
  }
}
