// How a search hit is scored. Relevance blends the two signals, each made comparable across
// queries: the cosine to the query, corrected for hubness, and BM25 divided by the best BM25 among
// the candidates (so the best lexical match is 1, whatever the scale of its sum).
//
// Hubness: a weak encoder puts some texts (long ones that touch many topics, generic ones) close to
// nearly every query; ranked by raw cosine, these "hubs" crowd out the memory that answers. CSLS
// (cross-domain similarity local scaling; Conneau et al., "Word Translation Without Parallel Data",
// ICLR 2018) scores cos(q, d) - r(d), where r(d) is d's mean cosine to its nearest neighbours. Here
// the neighbourhood is the search's own candidates (no stored state, nothing to keep current at
// ingest): r(d) is d's mean cosine to its nearest fellow candidates (at most hubNeighbours), and it
// is centred on the candidates' mean r, so a typical candidate keeps its cosine and the scale of the
// score stays that of a cosine. On the development set (BEAM 100K, bench/retrieval.ts) this found
// 8 more of 355 questions' evidence in the top 10 (0.741 to 0.766), in each half of the
// conversations alike; a neighbourhood of 5 or 10, and weights 0.7 to 0.75, scored within one
// question of that.
//
// The blend's weights were fitted on the same set: 0.75 corrected cosine, 0.25 words; reciprocal-
// rank fusion and min-max or z-score blends scored lower there. A memory first by both is first. A
// memory that is worse than every other on both counts, in a typical neighbourhood, changes nobody
// else's order. Relevance is then blended with recency decay and importance, plus an optional
// bounded graph bonus. Pure and deterministic, so every hit can show the parts its score is made of.

export const RANKING = {
  /** Weight of the hubness-corrected cosine within relevance. */
  semanticWeight: 0.75,
  /** Weight of the normalised BM25 within relevance. */
  lexicalWeight: 0.25,
  /** How much of a candidate's hubness above the candidates' mean is taken off its cosine (CSLS: 1). */
  hubnessWeight: 1,
  /** The nearest fellow candidates whose mean cosine is a candidate's hubness. */
  hubNeighbours: 10,
  relevanceWeight: 0.85,
  /** Recency measured from the search's reference time: 0.025 scored above 0.05 and 0 on both dev sets (bench/retrieval/tune.ts). */
  recencyWeight: 0.025,
  importanceWeight: 0.1,
  /** Recency halves every this many days since the memory was last true or last recalled. */
  recencyHalfLifeDays: 30,
  /** The associative-recall bonus never adds more than this. */
  maxGraphBonus: 0.1,
  /** Added for a memory that became true within the span of time the query names (time.ts). */
  timeWeight: 0.1,
  /** Added for a memory holding the names the query gives (names.ts), in proportion: 0.02 scored above 0.05 and 0 on both dev sets. */
  nameWeight: 0.02,
} as const;

export interface FusionInput {
  id: string;
  /** Cosine similarity to the query, or null when the memory (or the query) has no embedding. */
  cosine: number | null;
  /** Mean cosine to its nearest fellow candidates; null when unknown (taken as typical). */
  hubness?: number | null;
  /** BM25 over the query's terms; 0 when none occurs in the memory. */
  bm25: number;
  /** What the memory's neighbours in its session add to its BM25 (store.ts, NEIGHBOURS); 0 when none. */
  context?: number;
}

export interface Fused {
  /** In [0, 1]: semanticWeight x (cosine - hubness) + lexicalWeight x lexical. */
  relevance: number;
  /** What is taken off the cosine: hubnessWeight x (its hubness - the candidates' mean); 0 when unknown. */
  hubness: number;
  /** Rank by cosine among the candidates (1 = nearest); null without an embedding. */
  vectorRank: number | null;
  /** Rank by BM25 among the candidates (1 = best); null when no query term occurs in it. */
  textRank: number | null;
  /** BM25 (with its neighbours' part) divided by the best among the candidates, in [0, 1]. */
  lexical: number;
  /** The part of `lexical` that the memory's neighbours gave. */
  context: number;
}

const byId = (a: { id: string }, b: { id: string }) => (a.id < b.id ? -1 : a.id > b.id ? 1 : 0);
const clamp01 = (x: number) => (Number.isFinite(x) ? Math.min(1, Math.max(0, x)) : 0);

/** Ranks candidates by a score, best first; those without one (null) get no rank. Ties go by id. */
function ranks<T extends { id: string }>(items: readonly T[], score: (item: T) => number | null): Map<string, number> {
  const scored = items.filter((i) => score(i) !== null).sort((a, b) => score(b)! - score(a)! || byId(a, b));
  return new Map(scored.map((item, i) => [item.id, i + 1]));
}

/** The relevance of each candidate: the normalised blend of its hubness-corrected cosine and its BM25. */
export function fuse(candidates: readonly FusionInput[]): Map<string, Fused> {
  const vector = ranks(candidates, (c) => c.cosine);
  const words = (c: FusionInput) => c.bm25 + (c.context ?? 0);
  const text = ranks(candidates, (c) => (words(c) > 0 ? words(c) : null));
  const best = Math.max(0, ...candidates.map(words));
  // A hubness counts only beside a cosine it can correct.
  const hubnessOf = (c: FusionInput) => (c.cosine !== null && c.hubness != null && Number.isFinite(c.hubness) ? c.hubness : undefined);
  const hubs = candidates.flatMap((c) => hubnessOf(c) ?? []);
  const meanHub = hubs.length === 0 ? 0 : hubs.reduce((sum, h) => sum + h, 0) / hubs.length;
  return new Map(
    candidates.map((c) => {
      const lexical = best > 0 ? words(c) / best : 0;
      const context = best > 0 ? (c.context ?? 0) / best : 0;
      const own = hubnessOf(c);
      const hubness = own === undefined ? 0 : RANKING.hubnessWeight * (own - meanHub);
      const semantic = c.cosine === null ? 0 : c.cosine - hubness;
      const relevance = clamp01(RANKING.semanticWeight * semantic + RANKING.lexicalWeight * lexical);
      return [c.id, { relevance, hubness, vectorRank: vector.get(c.id) ?? null, textRank: text.get(c.id) ?? null, lexical, context }];
    }),
  );
}

export interface RankInput {
  /** The fused relevance, in [0, 1]. */
  relevance: number;
  /** Cosine similarity to the query, or null without an embedding (shown, not scored again). */
  cosine: number | null;
  /** Normalised BM25 in [0, 1] (shown, not scored again). */
  lexical: number;
  /** The part of `lexical` from the memory's neighbours (shown, not scored again); 0 when none. */
  context?: number;
  /** What relevance took off the cosine for hubness (shown, not scored again); 0 when none. */
  hubness?: number;
  /** Days since the memory's validFrom or lastAccessedAt, whichever is later. */
  ageDays: number;
  /** 0 to 10. */
  importance: number;
  /** Associative-recall bonus in [0, 1] before weighting; 0 when the feature is off. */
  graph?: number;
  /** In [0, 1]: how near the memory's validFrom is to the span of time the query names (time.ts); 0 when it names none. */
  time?: number;
  /** In [0, 1]: the share of the query's names the memory holds (names.ts); 0 when it names none. */
  names?: number;
}

export interface ScoreParts {
  semantic: number | null;
  hubness: number;
  lexical: number;
  /** The part of lexical that the memory's neighbours in its session gave. */
  context: number;
  relevance: number;
  recency: number;
  importance: number;
  graph: number;
  /** The bonus for becoming true within the span of time the query names: timeWeight x nearness (time.ts). */
  time: number;
  /** The bonus for holding the names the query gives: nameWeight x their share (names.ts). */
  names: number;
  /** How much the score was lowered to rank under a newer value of the same fact (freshness.ts), or under the value the project's precedence policy prefers (precedence.ts); 0 when not. */
  stale: number;
}

export function scoreParts(input: RankInput): ScoreParts {
  return {
    semantic: input.cosine === null ? null : clamp01(input.cosine),
    hubness: Number.isFinite(input.hubness) ? input.hubness! : 0,
    lexical: clamp01(input.lexical),
    context: clamp01(input.context ?? 0),
    relevance: clamp01(input.relevance),
    recency: Math.pow(0.5, Math.max(0, input.ageDays) / RANKING.recencyHalfLifeDays),
    importance: clamp01(input.importance / 10),
    graph: clamp01(input.graph ?? 0) * RANKING.maxGraphBonus,
    time: clamp01(input.time ?? 0) * RANKING.timeWeight,
    names: clamp01(input.names ?? 0) * RANKING.nameWeight,
    stale: 0,
  };
}

/** The final score in [0, 1 + maxGraphBonus + timeWeight + nameWeight]. */
export function totalScore(parts: ScoreParts): number {
  return (
    RANKING.relevanceWeight * parts.relevance +
    RANKING.recencyWeight * parts.recency +
    RANKING.importanceWeight * parts.importance +
    parts.graph +
    parts.time +
    parts.names -
    parts.stale
  );
}

export function explainScore(
  parts: ScoreParts,
  score: number,
  ranks: { vectorRank: number | null; textRank: number | null },
  newerId?: string,
  why = 'a newer value of the same fact',
): string {
  const f = (x: number) => x.toFixed(3);
  const hub = parts.hubness === 0 ? '' : ` ${parts.hubness > 0 ? '-' : '+'} hubness ${f(Math.abs(parts.hubness))}`;
  const semantic = parts.semantic === null ? 'no embedding yet' : `cosine ${f(parts.semantic)} #${ranks.vectorRank ?? '-'}${hub}`;
  const context = parts.context > 0 ? `, ${f(parts.context)} of it from the turns beside it` : '';
  const lexical = ranks.textRank === null ? 'no query word' : `words ${f(parts.lexical)} #${ranks.textRank}${context}`;
  return (
    `score ${f(score)} = ${RANKING.relevanceWeight} x relevance ${f(parts.relevance)} (${RANKING.semanticWeight} x ${parts.semantic !== null && hub ? `(${semantic})` : semantic} + ${RANKING.lexicalWeight} x ${lexical})` +
    ` + ${RANKING.recencyWeight} x recency ${f(parts.recency)} + ${RANKING.importanceWeight} x importance ${f(parts.importance)}` +
    (parts.graph > 0 ? ` + graph ${f(parts.graph)}` : '') +
    (parts.time > 0 ? ` + time ${f(parts.time)}` : '') +
    (parts.names > 0 ? ` + names ${f(parts.names)}` : '') +
    (parts.stale > 0 ? ` - ${f(parts.stale)}, to rank under ${newerId ?? 'a newer value'}, ${why}` : '')
  );
}
