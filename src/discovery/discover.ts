// Behavior discovery: clusters of subjects who behave alike, from their stored features, with a
// rule-based label (no model call). The clustering runs in the worker pool (workers/discovery/
// cluster.ts): every two members of a behavior are at least simThreshold similar. A project with
// more than DISCOVERY.sample subjects is clustered on a deterministic sample of that many (by a
// hash of each subject, so the same project gives the same sample); every other subject then joins
// the first behavior all of whose sampled members it is similar enough to, so `size` and
// `prevalence` count the whole project and the guarantee holds against the sampled members.
import { createHash } from 'node:crypto';
import type { MemoryApi } from '../memory/index.js';
import { clampTo } from '../platform/common-schemas.js';
import type { WorkerPool } from '../platform/pool.js';
import { DISCOVERY, type Behavior, type DiscoverBody, type DiscoverResponse } from './schemas.js';
import { FEATURE_WEIGHTS, TOP_PROJECT_ENTITIES, type FeatureStore, type SubjectFeatures } from './features.js';


/** The options as clamped (SPEC.md "Limits"). */
export function discoveryOptions(body: DiscoverBody) {
  return {
    simThreshold: clampTo(body.simThreshold, DISCOVERY.simThreshold),
    minClusterSize: Math.round(clampTo(body.minClusterSize, DISCOVERY.minClusterSize)),
    minStability: clampTo(body.minStability, DISCOVERY.minStability),
    maxMembers: Math.round(clampTo(body.maxMembers, DISCOVERY.maxMembers)),
  };
}

/** The project's most named entities (by how many subjects name them), for the vector's last group. */
function projectEntities(features: readonly SubjectFeatures[]): string[] {
  const counts = new Map<string, number>();
  for (const f of features) for (const e of f.topEntities) counts.set(e, (counts.get(e) ?? 0) + 1);
  return [...counts]
    .filter(([, n]) => n >= 2)
    .sort((a, b) => b[1] - a[1] || (a[0] < b[0] ? -1 : 1))
    .slice(0, TOP_PROJECT_ENTITIES)
    .map(([name]) => name);
}

const share = (n: number, of: number) => `${n} of ${of}`;

function cadenceWords(days: number): string {
  if (days <= 1.5) return 'daily';
  if (days <= 8.5) return 'weekly';
  if (days <= 16) return 'every two weeks';
  if (days <= 35) return 'monthly';
  return `every ~${Math.round(days)} days`;
}

const KIND_WORDS: Record<string, string> = {
  day_of_week: 'a day-of-week habit',
  time_of_day: 'a time-of-day habit',
  entity_preference: 'a preferred entity',
  declining_engagement: 'declining engagement',
};

/** The label and its evidence: what at least half of the members share. */
export function describeBehavior(members: readonly SubjectFeatures[]): { label: string; evidence: string[] } {
  const n = members.length;
  const parts: string[] = [];
  const evidence: string[] = [];
  const mode = (values: readonly (string | null)[]) => {
    const counts = new Map<string, number>();
    for (const v of values) if (v !== null) counts.set(v, (counts.get(v) ?? 0) + 1);
    return [...counts].sort((a, b) => b[1] - a[1] || (a[0] < b[0] ? -1 : 1))[0];
  };
  const segment = mode(members.map((m) => m.rfmSegment));
  if (segment && segment[1] * 2 >= n) {
    parts.push(segment[0].replace(/_/g, ' '));
    evidence.push(`rfm segment ${segment[0]} in ${share(segment[1], n)}`);
  }
  const cadences = members.flatMap((m) => (m.cadenceDays === null ? [] : [m.cadenceDays])).sort((a, b) => a - b);
  if (cadences.length * 2 >= n && cadences.length > 0) {
    const median = cadences[Math.floor(cadences.length / 2)]!;
    parts.push(cadenceWords(median));
    evidence.push(`recurring every ${median.toFixed(1)} days (median) in ${share(cadences.length, n)}`);
  } else {
    evidence.push(`a recurring pattern in ${share(cadences.length, n)}`);
  }
  const kinds = new Map<string, number>();
  for (const m of members) for (const k of m.patternKinds) if (k !== 'recurring_event') kinds.set(k, (kinds.get(k) ?? 0) + 1);
  for (const [kind, count] of [...kinds].sort((a, b) => b[1] - a[1] || (a[0] < b[0] ? -1 : 1))) {
    if (count * 2 < n) continue;
    parts.push(KIND_WORDS[kind] ?? kind.replace(/_/g, ' '));
    evidence.push(`${kind} pattern in ${share(count, n)}`);
  }
  const entity = mode(members.map((m) => m.topEntities[0] ?? null));
  if (entity && entity[1] * 2 >= n) {
    parts.push(`mostly ${entity[0]}`);
    evidence.push(`top entity "${entity[0]}" in ${share(entity[1], n)}`);
  }
  const mean = (f: (m: SubjectFeatures) => number | null) => {
    const xs = members.flatMap((m) => (f(m) === null ? [] : [f(m)!]));
    return xs.length === 0 ? '–' : (xs.reduce((a, b) => a + b, 0) / xs.length).toFixed(1);
  };
  evidence.push(`mean RFM scores ${mean((m) => m.recencyScore)} / ${mean((m) => m.frequencyScore)} / ${mean((m) => m.monetaryScore)}`);
  return { label: parts.length > 0 ? parts.join(', ') : 'irregular activity', evidence };
}

/** A stable order for sampling: a hash of the project and the subject. */
const sampleKey = (projectId: string, f: SubjectFeatures) => createHash('sha1').update(`${projectId}\0${f.subject.kind}\0${f.subject.externalId}`).digest('hex');

export class Discovery {
  constructor(
    private readonly features: FeatureStore,
    private readonly pool: Pick<WorkerPool, 'run'>,
    private readonly memory: Pick<MemoryApi, 'saveMany'>,
  ) {}

  async discover(projectId: string, body: DiscoverBody, now = new Date()): Promise<DiscoverResponse> {
    const started = performance.now();
    const options = discoveryOptions(body);
    let all = await this.features.all(projectId);
    // A project whose features were never computed (nothing mined since discovery came) gets them now.
    if (all.length === 0 && (await this.features.refresh(projectId, undefined, now)).refreshed > 0) all = await this.features.all(projectId);
    const sampled = all.length > DISCOVERY.sample;
    const ordered = sampled
      ? all
          .map((f) => ({ f, key: sampleKey(projectId, f) }))
          .sort((a, b) => (a.key < b.key ? -1 : 1))
          .map(({ f }) => f)
      : all;
    const entities = projectEntities(all);
    const entityWeight = entities.length === 0 ? 0 : Math.sqrt(FEATURE_WEIGHTS.entities / Math.min(entities.length, TOP_PROJECT_ENTITIES));
    const fixed = ordered[0]?.vector.length ?? 0;
    const d = fixed + entities.length;
    const vectors = new Float64Array(ordered.length * d);
    ordered.forEach((f, i) => {
      vectors.set(f.vector, i * d);
      entities.forEach((e, j) => {
        if (f.topEntities.includes(e)) vectors[i * d + fixed + j] = entityWeight;
      });
    });
    const clusters =
      ordered.length === 0
        ? []
        : await this.pool.run('discovery.cluster', {
            vectors,
            n: ordered.length,
            d,
            sample: DISCOVERY.sample,
            simThreshold: options.simThreshold,
            minClusterSize: options.minClusterSize,
            minStability: options.minStability,
          });

    const behaviors: Behavior[] = clusters
      .map((c) => {
        const members = c.members.map((i) => ordered[i]!);
        const { label, evidence } = describeBehavior(members);
        return {
          label,
          prevalence: members.length / all.length,
          stability: c.stability,
          size: members.length,
          memberSubjects: members.slice(0, options.maxMembers).map((m) => m.subject),
          exemplarEvidence: evidence,
        };
      })
      .sort((a, b) => b.prevalence - a.prevalence || b.stability - a.stability || (a.label < b.label ? -1 : 1));

    let promotedCount = 0;
    if (body.promote && behaviors.length > 0) {
      const saved = await this.memory.saveMany(
        projectId,
        behaviors.map((b) => ({
          type: 'insight' as const,
          content: `Behavior: ${b.label} (${b.size} of ${all.length} subjects, ${(b.prevalence * 100).toFixed(1)}%). ${b.exemplarEvidence.join('; ')}.`,
          source: 'discovery',
          importance: 6,
          // No subject is named: a project-wide insight outlives any one member (a member's hard
          // delete leaves it, and it must not keep the member's id).
          metadata: { discovery: { label: b.label, prevalence: b.prevalence, stability: b.stability, size: b.size, exemplarEvidence: b.exemplarEvidence } },
        })),
      );
      promotedCount = saved.filter((s) => s.created).length;
    }
    return { behaviors, subjectsAnalyzed: all.length, sampled, promotedCount, generatedAt: now.toISOString(), durationMs: performance.now() - started };
  }
}
