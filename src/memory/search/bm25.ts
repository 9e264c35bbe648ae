// BM25 lexical relevance (Robertson and Zaragoza, "The Probabilistic Relevance Framework: BM25 and
// Beyond", 2009), over the lexemes Postgres's english text search makes of a memory (stemmed, stop
// words out). Term statistics are per project (migration 0006 keeps them exact). This file holds
// the pure parts: IDF, the choice of lexical candidate terms, and the query text SQL matches on;
// the per-memory sum runs in SQL next to the rows (search/store.ts).
//
//   score(d, q) = Σ_{t ∈ q} idf(t) · tf(t, d) · (k1 + 1) / (tf(t, d) + k1 · (1 − b + b · |d| / avgdl))
//   idf(t)      = ln(1 + (N − df(t) + 0.5) / (df(t) + 0.5))      (never negative)
//
// |d| is the memory's length in bytes and avgdl the project's mean of it (BM25 needs only their
// ratio, which bytes give as words would, for less: Postgres reads a long text's size without
// decompressing it).

export const BM25 = {
  /** Term-frequency saturation: the usual 1.2; a word repeated in one memory adds less each time. */
  k1: 1.2,
  /**
   * Length normalisation, stronger than the usual 0.75: memories are short statements, and a long
   * one (a pasted document, an assistant's essay) matches many words by sheer length. On the
   * development set 0.75 found 0.59 of the evidence alone and 0.90 found 0.64.
   */
  b: 0.9,
  /**
   * Lexical candidates come from the query's rarest terms: terms are taken, rarest first, while the
   * memories they match (by project-wide document frequency) stay within this budget. A term found
   * in more memories than the budget nominates none: so common a word cannot single out a memory,
   * and reading its thousands of matches costs more than the whole vector search (at 100k memories,
   * 2,000 matches took 10 to 20 ms); it still counts in the BM25 of every candidate. All-words AND
   * would miss facts phrased differently; all-words OR would drown large projects in matches of
   * common words. On the development set a budget of 500 and of 2,000 found the same.
   */
  candidateBudget: 500,
} as const;

export interface TermStat {
  lexeme: string;
  /** Memories of the project holding the lexeme. */
  df: number;
}

export interface CorpusStats {
  /** Memories of the project. */
  documents: number;
  /** Mean length of a memory, in bytes. */
  avgLength: number;
}

export interface WeightedTerm {
  lexeme: string;
  idf: number;
}

export function idf(df: number, documents: number): number {
  const n = Math.max(documents, df);
  return Math.log(1 + (n - df + 0.5) / (df + 0.5));
}

export function weightTerms(terms: readonly TermStat[], corpus: CorpusStats): WeightedTerm[] {
  return terms.map((t) => ({ lexeme: t.lexeme, idf: idf(t.df, corpus.documents) }));
}

/**
 * The query terms whose matches become lexical candidates: rarest first, within the budget, so maybe
 * none. With `atLeastOne` (a search with no vector list to lean on) the rarest term is taken anyway.
 */
export function candidateTerms(terms: readonly TermStat[], budget: number = BM25.candidateBudget, atLeastOne = false): string[] {
  const present = terms.filter((t) => t.df > 0).sort((a, b) => a.df - b.df || (a.lexeme < b.lexeme ? -1 : 1));
  const chosen: string[] = [];
  let matches = 0;
  for (const term of present) {
    if (matches + term.df > budget && !(atLeastOne && chosen.length === 0)) break;
    chosen.push(term.lexeme);
    matches += term.df;
  }
  return chosen;
}

/** A tsquery matching any of the lexemes, as they are (quoted: no parsing, no stemming again). */
export function anyOf(lexemes: readonly string[]): string {
  return lexemes.map((l) => `'${l.replace(/\\/g, '\\\\').replace(/'/g, "''")}'`).join(' | ');
}

/** BM25 of one memory, from its term frequencies: the reference the SQL follows (tests, benches). */
export function bm25Score(terms: readonly WeightedTerm[], tf: ReadonlyMap<string, number>, length: number, corpus: CorpusStats): number {
  const { k1, b } = BM25;
  const norm = k1 * (1 - b + (b * length) / Math.max(corpus.avgLength, 1e-9));
  let score = 0;
  for (const { lexeme, idf: weight } of terms) {
    const f = tf.get(lexeme) ?? 0;
    if (f > 0) score += (weight * f * (k1 + 1)) / (f + norm);
  }
  return score;
}
