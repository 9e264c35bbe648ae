// Context bundles: what an agent should know about a subject before it answers, in one
// token-budgeted answer. Five sections (profile, patterns, predictions, memories, observations)
// are gathered, then the pool's budget task (workers/behavior/budget.ts, a real tokenizer) keeps
// whole items in a fixed order until maxTokens is spent: profile first, then patterns (most
// confident first), predictions (as ranked), memories (most important, then newest; with a query,
// those that best answer it, by the memory search) and
// observations (newest) last, so what is cut first is the least distilled. Every item carries
// the ids it rests on, gathered again in `provenance`.
import type { Subject } from '../../platform/common-schemas.js';
import type { Db } from '../../platform/db.js';
import type { WorkerPool } from '../../platform/pool.js';
import { activePatterns } from '../patterns/store.js';
import { project } from '../predict/projection.js';
import { clamp } from '../predict/schemas.js';
import type { Profiler } from '../profile/profile.js';
import { CONTEXT_LIMITS, SECTIONS, type Bundle, type ContextOptions, type Section } from './schemas.js';
import { subjectMemories, type ContextMemory } from './store.js';
import type { SearchHit, SearchInput } from '../../memory/index.js';

const PREDICTION_HORIZON_DAYS = 30;
/** Source ids shown on a pattern or prediction (the most recent): ids are token-expensive; the pattern's own record has them all. */
const IDS_PER_ITEM = 3;

type Items = { [S in Exclude<Section, 'profile'>]: Bundle[S] } & { profile: NonNullable<Bundle['profile']>[] };

const clampTokens = (maxTokens: number | undefined) => Math.floor(clamp(maxTokens, CONTEXT_LIMITS.defaultTokens, CONTEXT_LIMITS.minTokens, CONTEXT_LIMITS.maxTokens));

function guidanceFor(subject: Subject, items: Items): string {
  const known = SECTIONS.filter((s) => items[s].length > 0);
  return (
    `Context about ${subject.kind} ${subject.externalId} from Lattice memory. ` +
    (known.length === 0
      ? 'Nothing is known about this subject yet: do not assume anything about them, and do not treat missing information as a "no". '
      : `Sections present: ${known.join(', ')}. Memories are what was recorded; patterns and predictions are inferred from behaviour and carry a confidence from 0 to 1: state them as likely, never as certain. ` +
        'A missing fact or an empty section means unknown, not "no". ') +
    'Cite the ids in provenance when you rely on an item.'
  );
}

/** The memory search (memory/search/search.ts), for a bundle built around a query. */
export type ContextSearch = (projectId: string, input: SearchInput) => Promise<SearchHit[]>;

/** Hits asked of the search beyond the memories shown, for those a bundle leaves out (observations, excluded categories). */
const SEARCH_SLACK = 10;

export class ContextBuilder {
  constructor(
    private readonly db: Db,
    private readonly pool: Pick<WorkerPool, 'run'>,
    private readonly profiler: Profiler,
    private readonly search: ContextSearch,
  ) {}

  /** The subject's memories that best answer the query, by the memory search, as a bundle shows them. */
  private async answering(projectId: string, subject: Subject, options: ContextOptions & { query: string }, excluded: ReadonlySet<string>): Promise<ContextMemory[]> {
    const limit = options.memoryLimit ?? 10;
    if (limit <= 0) return [];
    const hits = await this.search(projectId, {
      query: options.query,
      subject,
      limit: Math.min(50, limit + SEARCH_SLACK),
      referenceTime: options.referenceTime === undefined ? undefined : new Date(options.referenceTime),
    });
    return hits
      .map((h) => h.memory)
      .filter((m) => m.type !== 'observation' && m.type !== 'behavior_pattern' && (m.category == null || !excluded.has(m.category.toLowerCase())))
      .slice(0, limit)
      .map((m) => ({ id: m.id, type: m.type, content: m.content, importance: m.importance, created: m.created, sourceMemoryIds: m.sourceMemoryIds ?? [] }));
  }

  async build(projectId: string, subject: Subject, options: ContextOptions, now = new Date()): Promise<Bundle> {
    const started = performance.now();
    const include = new Set<Section>(options.include ?? SECTIONS);
    const excluded = new Set((options.excludeCategories ?? []).map((c) => c.toLowerCase()));
    const keep = (type: string | null | undefined) => type == null || !excluded.has(type.toLowerCase());
    const wantPatterns = include.has('patterns') || include.has('predictions') || include.has('profile');
    // One read of each kind serves every section (the profile's lookback is the observations' too).
    const { query } = options;
    // With a query the memories section comes from the search; the subject's newest memories are
    // then read only for the observations.
    const [patterns, memories, activities, answering] = await Promise.all([
      wantPatterns ? activePatterns(this.db, projectId, subject) : [],
      (include.has('memories') && query === undefined) || include.has('observations')
        ? subjectMemories(this.db, projectId, subject, { limit: Math.max(options.memoryLimit ?? 10, include.has('observations') ? 20 : 0), excludeCategories: [...excluded] })
        : [],
      include.has('observations') || include.has('profile') ? this.profiler.activity(projectId, subject, now) : [],
      include.has('memories') && query !== undefined ? this.answering(projectId, subject, { ...options, query }, excluded) : undefined,
    ]);
    const profile = include.has('profile') ? await this.profiler.profileOf(projectId, subject, patterns, activities, now) : undefined;
    // Tentative patterns (seen fewer times than a full one needs) can be cited, but are too weak to hand an agent.
    const kept = patterns.filter((p) => keep(p.metadata.eventType) && !p.metadata.unseen);
    const items: Items = { profile: [], patterns: [], predictions: [], memories: [], observations: [] };
    if (profile && (profile.activityCount > 0 || profile.contributingPatternIds.length > 0)) {
      const { rfmSegment, recencyScore, frequencyScore, monetaryScore, topEntity, cadenceSummary, risks, contributingPatternIds } = profile;
      items.profile = [{ rfmSegment, recencyScore, frequencyScore, monetaryScore, topEntity, cadenceSummary, risks, contributingPatternIds }];
    }
    if (include.has('patterns')) {
      items.patterns = [...kept]
        .sort((a, b) => b.confidence - a.confidence || (a.id < b.id ? -1 : 1))
        .map((p) => ({ id: p.id, patternKind: p.metadata.patternKind, summary: p.summary, confidence: p.confidence, nextExpectedAt: p.metadata.nextExpectedAt ?? null, sourceMemoryIds: p.sourceMemoryIds.slice(0, IDS_PER_ITEM) }));
    }
    if (include.has('predictions')) {
      items.predictions = project(kept, { now: now.getTime(), horizonDays: PREDICTION_HORIZON_DAYS, minConfidence: 0.5, occurrencesPerPattern: 1, limit: options.predictionLimit ?? 5 }).map((p) => ({
        patternId: p.patternId,
        patternKind: p.patternKind,
        description: p.description,
        expectedAt: p.expectedAt,
        confidence: p.confidence,
        sourceMemoryIds: p.sourceMemoryIds.slice(0, IDS_PER_ITEM),
      }));
    }
    if (include.has('memories')) {
      items.memories = (answering ?? memories.filter((m) => m.type !== 'observation'))
        .slice(0, options.memoryLimit ?? 10)
        .map((m) => ({ id: m.id, type: m.type, content: m.content, importance: m.importance, created: m.created }));
    }
    if (include.has('observations')) {
      const consolidated = memories
        .filter((m) => m.type === 'observation')
        .map((m) => ({ id: m.id, content: m.content, proofCount: Math.max(1, m.sourceMemoryIds.length), sourceMemoryIds: m.sourceMemoryIds.length ? m.sourceMemoryIds : [m.id], created: m.created }));
      // The latest reading of each typed attribute, with how many readings stand behind it.
      const readings = new Map<string, { id: string; value: number; at: number; n: number; sum: number }>();
      for (const a of activities) {
        if (a.source !== 'observation' || a.value === null || a.eventType === null || !keep(a.eventType)) continue;
        const r = readings.get(a.eventType) ?? { id: a.id, value: a.value, at: a.at, n: 0, sum: 0 };
        r.n++;
        r.sum += a.value;
        if (a.at >= r.at) Object.assign(r, { id: a.id, value: a.value, at: a.at });
        readings.set(a.eventType, r);
      }
      const typed = [...readings].map(([key, r]) => ({
        id: r.id,
        content: `${key}: latest ${r.value} on ${new Date(r.at).toISOString()} (mean ${(r.sum / r.n).toPrecision(4)} over ${r.n} reading${r.n === 1 ? '' : 's'} in the last year)`,
        proofCount: r.n,
        sourceMemoryIds: [r.id],
        created: new Date(r.at).toISOString(),
      }));
      items.observations = [...consolidated, ...typed].sort((a, b) => Date.parse(b.created) - Date.parse(a.created));
    }

    const guidance = guidanceFor(subject, items);
    const fixed = `${JSON.stringify('guidance')}:${JSON.stringify(guidance)},${JSON.stringify('subject')}:${JSON.stringify(subject)}`;
    const budget = await this.pool.run('behavior.fit-context', {
      maxTokens: clampTokens(options.maxTokens),
      fixed,
      sections: SECTIONS.map((name) => ({ name, items: (items[name] as unknown[]).map((item) => JSON.stringify(item)) })),
    });
    const take = <S extends Section>(s: S) => items[s].slice(0, budget.kept[SECTIONS.indexOf(s)]) as Items[S];
    const bundle = { profile: take('profile')[0] ?? null, patterns: take('patterns'), predictions: take('predictions'), memories: take('memories'), observations: take('observations') };
    const unique = (ids: string[]) => [...new Set(ids)];
    return {
      subject,
      guidance,
      ...bundle,
      provenance: {
        memoryIds: unique([...bundle.memories.map((m) => m.id), ...bundle.predictions.flatMap((p) => p.sourceMemoryIds), ...bundle.patterns.flatMap((p) => p.sourceMemoryIds)]),
        patternIds: unique([...bundle.patterns.map((p) => p.id), ...bundle.predictions.map((p) => p.patternId), ...(bundle.profile?.contributingPatternIds ?? [])]),
        observationIds: unique(bundle.observations.flatMap((o) => [o.id, ...o.sourceMemoryIds])),
      },
      tokensEstimate: budget.tokens,
      truncated: budget.truncated,
      generatedAt: now.toISOString(),
      durationMs: performance.now() - started,
    };
  }

  /** Bundles for many subjects, in request order, a few at a time; an unknown subject gets an empty bundle. */
  async buildMany(projectId: string, subjects: readonly Subject[], options: ContextOptions, concurrency = 4): Promise<Bundle[]> {
    const bundles = new Array<Bundle>(subjects.length);
    let next = 0;
    const worker = async () => {
      while (next < subjects.length) {
        const i = next++;
        bundles[i] = await this.build(projectId, subjects[i]!, options);
      }
    };
    await Promise.all(Array.from({ length: Math.min(concurrency, subjects.length) }, worker));
    return bundles;
  }
}
