// How a search hit is scored: relevance (semantic similarity fused with full-text match), blended
// with recency decay and importance, plus an optional bounded graph bonus. Pure and deterministic,
// so every hit can show the parts its score is made of.

export const RANKING = {
  /** Weight of semantic similarity within relevance when the memory has an embedding. */
  semanticShare: 0.8,
  relevanceWeight: 0.75,
  recencyWeight: 0.1,
  importanceWeight: 0.15,
  /** Recency halves every this many days since the memory was last true or last recalled. */
  recencyHalfLifeDays: 30,
  /** The associative-recall bonus never adds more than this. */
  maxGraphBonus: 0.1,
} as const;

export interface RankInput {
  /** Cosine similarity to the query, or null when the memory (or the query) has no embedding. */
  cosine: number | null;
  /** ts_rank_cd with normalisation 32, in [0, 1); 0 when the text does not match. */
  lexical: number;
  /** Days since the memory's validFrom or lastAccessedAt, whichever is later. */
  ageDays: number;
  /** 0 to 10. */
  importance: number;
  /** Associative-recall bonus in [0, 1] before weighting; 0 when the feature is off. */
  graph?: number;
}

export interface ScoreParts {
  semantic: number | null;
  lexical: number;
  relevance: number;
  recency: number;
  importance: number;
  graph: number;
}

const clamp01 = (x: number) => (Number.isFinite(x) ? Math.min(1, Math.max(0, x)) : 0);

export function scoreParts(input: RankInput): ScoreParts {
  const semantic = input.cosine === null ? null : clamp01(input.cosine);
  const lexical = clamp01(input.lexical);
  const relevance = semantic === null ? lexical : RANKING.semanticShare * semantic + (1 - RANKING.semanticShare) * lexical;
  const recency = Math.pow(0.5, Math.max(0, input.ageDays) / RANKING.recencyHalfLifeDays);
  return {
    semantic,
    lexical,
    relevance,
    recency,
    importance: clamp01(input.importance / 10),
    graph: clamp01(input.graph ?? 0) * RANKING.maxGraphBonus,
  };
}

/** The final score in [0, 1 + maxGraphBonus]. */
export function totalScore(parts: ScoreParts): number {
  return (
    RANKING.relevanceWeight * parts.relevance +
    RANKING.recencyWeight * parts.recency +
    RANKING.importanceWeight * parts.importance +
    parts.graph
  );
}

export function explainScore(parts: ScoreParts, score: number): string {
  const pct = (x: number) => x.toFixed(3);
  const semantic = parts.semantic === null ? 'no embedding yet (full text only)' : `semantic ${pct(parts.semantic)}`;
  return (
    `score ${pct(score)} = ${RANKING.relevanceWeight} x relevance ${pct(parts.relevance)} (${semantic}, full text ${pct(parts.lexical)})` +
    ` + ${RANKING.recencyWeight} x recency ${pct(parts.recency)} + ${RANKING.importanceWeight} x importance ${pct(parts.importance)}` +
    (parts.graph > 0 ? ` + graph ${pct(parts.graph)}` : '')
  );
}
