// The in-memory baselines of bench/retrieval.ts: textbook Okapi BM25 per conversation, over the
// same "<role>: <text>" turns the service holds, with and without Porter stemming.
import { stemmer } from 'stemmer';

// Lucene's (and Elasticsearch's) classic English stop set.
export const STOPWORDS = new Set(
  'a an and are as at be but by for if in into is it no not of on or such that the their then there these they this to was will with'.split(' '),
);
export const K1 = 1.2;
export const B = 0.75;

export type Tokenizer = (text: string) => string[];

/** Unicode letter and digit runs, lowercased, stopwords dropped. */
export const plainTokens: Tokenizer = (text) => (text.toLowerCase().match(/[\p{L}\p{N}]+/gu) ?? []).filter((t) => !STOPWORDS.has(t));

const stems = new Map<string, string>();
/** The same, each token then Porter-stemmed (the `stemmer` package), as Lucene's EnglishAnalyzer orders it. */
export const porterTokens: Tokenizer = (text) =>
  plainTokens(text).map((token) => {
    let stem = stems.get(token);
    if (stem === undefined) stems.set(token, (stem = stemmer(token)));
    return stem;
  });

/**
 * Okapi BM25 over documents given as tokens. `top` can score a prefix of them (the first `visible`
 * documents) with that prefix's own statistics (document count, document frequencies, average
 * length): the same ranking as an index built over the prefix alone.
 */
export class Bm25 {
  /** term -> (document index, term frequency), by ascending document index */
  private readonly postings = new Map<string, { doc: number; tf: number }[]>();
  private readonly lengths: number[];
  /** prefixLength[n] is the total length of the first n documents. */
  private readonly prefixLength: Float64Array;

  constructor(private readonly documents: readonly (readonly string[])[]) {
    this.lengths = documents.map((terms, doc) => {
      const counts = new Map<string, number>();
      for (const term of terms) counts.set(term, (counts.get(term) ?? 0) + 1);
      for (const [term, tf] of counts) {
        const list = this.postings.get(term);
        if (list) list.push({ doc, tf });
        else this.postings.set(term, [{ doc, tf }]);
      }
      return terms.length;
    });
    this.prefixLength = new Float64Array(documents.length + 1);
    this.lengths.forEach((n, i) => (this.prefixLength[i + 1] = this.prefixLength[i]! + n));
  }

  get size(): number {
    return this.lengths.length;
  }

  /** Indexes of the best `k` of the first `visible` documents that share a term with the query; ties go to the earlier one. */
  top(query: readonly string[], k: number, visible = this.lengths.length): number[] {
    return this.scored(new Map([...new Set(query)].map((term) => [term, 1])), k, visible).map((hit) => hit.doc);
  }

  /** The same with a weight per query term (a term's BM25 is multiplied by it), with the scores. */
  scored(query: ReadonlyMap<string, number>, k: number, visible = this.lengths.length): { doc: number; score: number }[] {
    const n = Math.min(visible, this.lengths.length);
    const avgLength = this.prefixLength[n]! / Math.max(1, n);
    const scores = new Map<number, number>();
    for (const [term, weight] of query) {
      const list = this.postings.get(term);
      if (!list) continue;
      const df = countBelow(list, n);
      if (df === 0) continue;
      const idf = Math.log(1 + (n - df + 0.5) / (df + 0.5));
      for (let i = 0; i < df; i++) {
        const { doc, tf } = list[i]!;
        const score = (weight * idf * tf * (K1 + 1)) / (tf + K1 * (1 - B + (B * this.lengths[doc]!) / avgLength));
        scores.set(doc, (scores.get(doc) ?? 0) + score);
      }
    }
    return [...scores.entries()]
      .filter(([, score]) => score > 0)
      .sort(([x, sx], [y, sy]) => sy - sx || x - y)
      .slice(0, k)
      .map(([doc, score]) => ({ doc, score }));
  }

  /** A document's tokens. */
  tokens(doc: number): readonly string[] {
    return this.documents[doc]!;
  }
}

/** How many postings are of documents below `n` (the list is by ascending document). */
function countBelow(list: readonly { doc: number }[], n: number): number {
  let lo = 0;
  let hi = list.length;
  while (lo < hi) {
    const mid = (lo + hi) >>> 1;
    if (list[mid]!.doc < n) lo = mid + 1;
    else hi = mid;
  }
  return lo;
}
