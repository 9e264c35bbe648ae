// Hybrid search: vector candidates and lexical candidates (the query's rarest terms, scored by
// BM25), fused into one relevance (a fitted blend of the hubness-corrected cosine and the
// normalised BM25), blended with recency and importance (ranking.ts), filtered by scope, type,
// subject, status and category, optionally as of an instant. Every hit carries its score and the parts it is made of.
import type { FastifyBaseLogger } from 'fastify';
import { LRUCache } from 'lru-cache';
import type { EmbeddingsApi } from '../../embeddings/index.js';
import type { Subject } from '../../platform/common-schemas.js';
import type { Db } from '../../platform/db.js';
import { AppError } from '../../platform/errors.js';
import type { Memory, MemoryScope, MemoryType } from '../schemas.js';
import { countEmbedded, type MemoryFilter } from '../store.js';
import { anyOf, BM25, candidateTerms, weightTerms } from './bm25.js';
import { explainScore, fuse, scoreParts, totalScore, type ScoreParts } from './ranking.js';
import { newerFirst } from './freshness.js';
import { disagreeOnASlot, precedenceFirst, type PrecedencePolicy } from './precedence.js';
import { nameMatcher, queryNames } from './names.js';
import { timeScore, timeWindow } from './time.js';
import type { ProjectVectorIndexes } from './project-index.js';
import { collectionLexical, COLLECTION_LEXICAL_MAX, queryTerms, searchCandidates } from './store.js';

const MAX_CANDIDATES = 200;
/** Candidates taken from each list at least (deep pools: fusion over shallow ones lost to either leg alone). */
const MIN_CANDIDATES = 50;

/** How many candidates a search takes from each list (vector and lexical) for a page. */
export function candidatesPerList(limit: number, offset = 0): number {
  return Math.min(MAX_CANDIDATES, Math.max(MIN_CANDIDATES, (limit + offset) * 5));
}

export interface SearchInput {
  query: string;
  scope?: MemoryScope;
  scopes?: MemoryScope[];
  type?: MemoryType;
  status?: string;
  category?: string;
  subject?: Subject;
  /** Only memories about no subject (the project's shared knowledge); not with `subject`. */
  withoutSubject?: boolean;
  /** Leave out memories of these categories (case-insensitive). */
  excludeCategories?: readonly string[];
  agentId?: string;
  userId?: string;
  /** A point in time: the bi-temporal slice valid then, superseded memories included. */
  asOf?: Date;
  limit?: number;
  offset?: number;
  /** Hits scoring below this are dropped. */
  minScore?: number;
  /** The instant the query's words about time ("last week", "in May") are read against, and recency is measured from; default now. */
  referenceTime?: Date;
  /** Only the memories of this brain (metadata.brainId); the caller has checked that it may read it. */
  brainId?: string;
  /** Parts of retrieval to leave out (all on by default): for ablations and callers that want one leg. */
  features?: Partial<SearchFeatures>;
}

/** The parts of retrieval a search can turn off. */
export interface SearchFeatures {
  /** Candidates and scores from the embedding (the vector leg). */
  vector: boolean;
  /** Candidates and scores from the words (the lexical leg, BM25). */
  lexical: boolean;
  /** A conversation's memory is also scored by the words of the turns beside it in its session (store.ts, NEIGHBOURS). */
  neighbours: boolean;
  /** Of two live memories holding one fact with different values, the newer ranks above the older (freshness.ts). */
  newerFirst: boolean;
  /** A memory that became true within the span of time the query names scores more (time.ts). */
  time: boolean;
  /** A memory holding the names the query gives scores more (names.ts). */
  names: boolean;
  /** The lexical leg also matches related forms of the query's words ("allergic" for "allergies"; store.ts, RELATED_FORMS). */
  relatedForms: boolean;
}

const ALL_FEATURES: SearchFeatures = { vector: true, lexical: true, neighbours: true, newerFirst: true, time: true, names: true, relatedForms: true };

/**
 * Whether the vector list scans exactly rather than through an index. Past the threshold, a vector
 * index: the project's own IVFFlat one, or the HNSW graph once every row of the project is in it
 * (project-index.ts); until then exact scan, as when small. A search whose own collection is small
 * (a subject of a large project, counted by the lexical leg) scans that collection exactly as well:
 * a graph walk filtered to a tenth of the project walks ten times as far for its candidates
 * (RealMem, a conversation of 1,400 turns in a project of 14,000: 110 ms a search through the
 * graph, 49 ms with the exact scan, the same recall).
 */
export function scansExactly(p: { embeddedRows: number; collectionSize: number | undefined; exactScanMaxRows: number; indexReady: boolean }): boolean {
  return p.embeddedRows <= p.exactScanMaxRows || (p.collectionSize !== undefined && p.collectionSize <= p.exactScanMaxRows) || !p.indexReady;
}

export interface SearchHit {
  memory: Memory;
  score: number;
  parts: ScoreParts & { vectorRank: number | null; textRank: number | null };
  explanation: string;
}

/** Associative recall: a bounded bonus per memory id, in [0, 1]. Plugged in by the graph module. */
export type GraphBonus = (projectId: string, memoryIds: string[]) => Promise<Map<string, number>>;

export class MemorySearch {
  private readonly sizes = new LRUCache<string, number>({ max: 10_000, ttl: 60_000 });
  /** Collections (project and subject) found larger than COLLECTION_LEXICAL_MAX: not tried again for a minute. */
  private readonly largeCollections = new LRUCache<string, true>({ max: 10_000, ttl: 60_000 });

  constructor(
    private readonly db: Db,
    private readonly embedder: Pick<EmbeddingsApi, 'embedQuery'>,
    private readonly log: FastifyBaseLogger,
    private readonly options: {
      /** Up to this many embedded rows a project is scanned exactly; above, HNSW with iterative scan. */
      exactScanMaxRows: number;
      /** HNSW's candidate list (hnsw.ef_search) on the approximate path. */
      efSearch: number;
    },
    /** Which large projects have an IVFFlat index of their own (project-index.ts). */
    private readonly indexes?: Pick<ProjectVectorIndexes, 'pathFor'>,
    /** The project's precedence policy between memories that disagree (precedence.ts); none: no policy applied. */
    private readonly policies?: { policyFor(projectId: string): Promise<PrecedencePolicy> },
  ) {}

  /** The graph bonus comes from a higher domain, built after this one: it plugs itself in. */
  private graphBonus: GraphBonus | undefined;

  setGraphBonus(bonus: GraphBonus | undefined): void {
    this.graphBonus = bonus;
  }

  async search(projectId: string, input: SearchInput, clock = new Date()): Promise<SearchHit[]> {
    const now = input.referenceTime ?? clock;
    const limit = input.limit ?? 10;
    const offset = input.offset ?? 0;
    const filter: MemoryFilter = {
      scope: input.scope,
      scopes: input.scopes,
      type: input.type,
      status: input.status,
      category: input.category,
      subjectKind: input.subject?.kind,
      subjectExternalId: input.subject?.externalId,
      noSubject: input.withoutSubject,
      excludeCategories: input.excludeCategories,
      agentId: input.agentId,
      userId: input.userId,
      asOf: input.asOf,
      liveOnly: input.status === undefined && input.asOf === undefined,
      brainId: input.brainId,
    };
    const features = { ...ALL_FEATURES, ...input.features };
    const k = candidatesPerList(limit, offset);
    // The lexical leg is exact over the search's own collection when that is small (a subject, or a
    // small project); the project's statistics are read alongside, for when it is not.
    const collectionKey = `${projectId}\u0000${input.subject?.kind ?? ''}\u0000${input.subject?.externalId ?? ''}\u0000${input.withoutSubject ? 'none' : ''}\u0000${input.brainId ?? ''}`;
    const tryCollection =
      features.lexical && !this.largeCollections.has(collectionKey) && (input.subject !== undefined || input.brainId !== undefined || (this.sizes.get(projectId) ?? 0) <= COLLECTION_LEXICAL_MAX);
    // The project's statistics are read only when the collection's own are not to be had: at
    // once when it is known to be large, after the attempt when it turns out so (then remembered).
    const projectTerms = () => queryTerms(this.db, projectId, input.query);
    const reads = Promise.all([
      features.vector ? this.queryVector(input.query) : undefined,
      this.embeddedRows(projectId),
      this.indexes?.pathFor(projectId),
      tryCollection ? collectionLexical(this.db, projectId, filter, input.query, k, { neighbours: features.neighbours, relatedForms: features.relatedForms }) : undefined,
      features.lexical && !tryCollection ? projectTerms() : undefined,
    ]);
    // The query's time and names are read while the database and the encoder work.
    const window = features.time ? timeWindow(input.query, now) : undefined;
    const named = nameMatcher(features.names ? queryNames(input.query) : []);
    const [vector, embeddedRows, path, collection, early] = await reads;
    if (tryCollection && collection === undefined) this.largeCollections.set(collectionKey, true);
    const projectWide = features.lexical && collection === undefined ? (early ?? (await projectTerms())) : undefined;
    const ivfProbes = path?.ivfProbes;
    const exact = scansExactly({
      embeddedRows,
      collectionSize: collection?.corpus.documents,
      exactScanMaxRows: this.options.exactScanMaxRows,
      indexReady: ivfProbes !== undefined || path?.hnswReady === true,
    });
    const candidates = await searchCandidates(this.db, {
      projectId,
      filter,
      vector,
      lexical: collection
        ? { terms: weightTerms(collection.terms, collection.corpus), match: '', avgLength: collection.corpus.avgLength }
        : projectWide && {
            terms: weightTerms(projectWide.terms, projectWide.corpus),
            match: anyOf(candidateTerms(projectWide.terms, BM25.candidateBudget, vector === undefined)),
            avgLength: projectWide.corpus.avgLength,
          },
      textIds: collection?.ids,
      near: features.newerFirst,
      k,
      exact,
      efSearch: this.options.efSearch,
      ivfProbes,
    });
    const bonus = this.graphBonus && candidates.length > 0 ? await this.graphBonus(projectId, candidates.map((c) => c.memory.id)) : undefined;
    const fused = fuse(
      candidates.map((c) => {
        const scored = collection?.scores.get(c.memory.id);
        return { id: c.memory.id, cosine: c.cosine, hubness: c.hubness, bm25: scored?.own ?? c.bm25, context: scored?.context ?? 0 };
      }),
    );
    const hits = candidates.map((c): SearchHit => {
      const { relevance, hubness, lexical, context, vectorRank, textRank } = fused.get(c.memory.id)!;
      const lastTouched = Math.max(Date.parse(c.memory.validFrom), c.memory.lastAccessedAt ? Date.parse(c.memory.lastAccessedAt) : 0);
      const parts = scoreParts({
        relevance,
        cosine: c.cosine,
        hubness,
        lexical,
        context,
        ageDays: (now.getTime() - lastTouched) / 86_400_000,
        importance: c.memory.importance,
        graph: bonus?.get(c.memory.id) ?? 0,
        time: timeScore(c.memory.validFrom, window),
        names: named(c.memory.content, c.memory.metadata?.entities),
      });
      const score = totalScore(parts);
      // Explained once the page is known (below): most candidates are never shown.
      return { memory: c.memory, score, parts: { ...parts, vectorRank, textRank }, explanation: '' };
    });
    /** Why a hit was lowered under another: the one it ranks under, and the reason. */
    const lowered = new Map<string, { under: string; why?: string }>();
    // A query naming a span of time asks for what held then, not for the newest value.
    if (features.newerFirst && window === undefined) {
      const demoted = newerFirst(hits.map((hit, i) => ({ memory: hit.memory, score: hit.score, near: candidates[i]!.near })), offset + limit);
      for (const hit of hits) {
        const demotion = demoted.get(hit.memory.id);
        if (!demotion) continue;
        hit.parts.stale = hit.score - demotion.score;
        hit.score = demotion.score;
        lowered.set(hit.memory.id, { under: demotion.newerId });
      }
    }
    // Memories that disagree on a slot: the policy's choice first (read only when two such are here).
    if (this.policies && disagreeOnASlot(hits)) {
      const outranked = precedenceFirst(hits, await this.policies.policyFor(projectId));
      for (const hit of hits) {
        const moved = outranked.get(hit.memory.id);
        if (!moved) continue;
        hit.parts.stale += hit.score - moved.score;
        hit.score = moved.score;
        lowered.set(hit.memory.id, { under: moved.winnerId, why: "the value of the same fact the project's precedence policy puts first" });
      }
    }
    const page = hits
      .filter((hit) => hit.score >= (input.minScore ?? 0))
      .sort((a, b) => b.score - a.score || (a.memory.id < b.memory.id ? -1 : 1))
      .slice(offset, offset + limit);
    for (const hit of page) {
      const under = lowered.get(hit.memory.id);
      hit.explanation = explainScore(hit.parts, hit.score, hit.parts, under?.under, under?.why);
    }
    return page;
  }

  /** Forgets the cached size of a project (after bulk writes, in tests). */
  invalidate(projectId: string): void {
    this.sizes.delete(projectId);
  }

  private async embeddedRows(projectId: string): Promise<number> {
    const cached = this.sizes.get(projectId);
    if (cached !== undefined) return cached;
    const n = (await countEmbedded(this.db, projectId)).embedded;
    this.sizes.set(projectId, n);
    return n;
  }

  /** The query's embedding; when the embedder is unavailable, search goes on with full text alone. */
  private async queryVector(text: string): Promise<Float32Array | undefined> {
    try {
      return await this.embedder.embedQuery(text);
    } catch (error) {
      if (!(error instanceof AppError) || error.statusCode < 500) throw error;
      this.log.warn({ err: error }, 'query embedding unavailable; searching full text only');
      return undefined;
    }
  }
}

