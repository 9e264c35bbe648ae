// Near-duplicate similarity: would a person call two memories the same? A small sentence encoder
// says no to "Customer lives in Porto" / "The customer lives in Porto" (cosine 0.87) and yes to
// "order #4412" / "order #4421" (0.99), so the words decide and the cosine only guards:
//
//   similarity = 0.75 · lexical + 0.25 · cosine
//   lexical    = J³, halved when the shared words swap roles
//
// J is the weighted Jaccard overlap of the memories' normalised words: lower case, contractions
// expanded, punctuation, articles and other function words out, Porter-stemmed (so "peanut" and
// "peanuts", "hiking" and "hike" meet), negators ("not", "no", "never", "non") and the passive "by"
// kept. The cube makes one differing word decisive ("Porto"/"Lisbon", "2"/"3", "not"). Roles swap
// when the shared words' order needs more than one block move (adjacency breakpoints > 3, Bafna
// and Pevzner's transposition bound), counting relational words ("over", "than", "to", "of"...)
// that both memories use: "tea over coffee" / "coffee over tea" and "Sam owes Priya" / "Priya owes
// Sam" swap; "On Fridays she swims" / "She swims on Fridays" is one move. At the default threshold
// 0.92 two memories are duplicates when they use the same words, in an equivalent order, and their
// cosine is at least 0.68. Pure: no I/O.
import { stemmer } from 'stemmer';

export const NEAR_DUPLICATE = { lexicalWeight: 0.75, cosineWeight: 0.25, swappedRoles: 0.5 } as const;

/** Words that carry no fact (articles, auxiliaries, pronouns, most prepositions and conjunctions). */
const FUNCTION_WORDS = new Set(
  (
    'a an the and or but so yet also both either each this that these those it its he she they them their his her hers him ' +
    'we us our you your i me my mine is are was were be been being am do does did doing has have had having will would ' +
    'shall should can could may might must at in on into onto with within about as while when whenever where which who ' +
    'whom whose what very just only all any some such there here then'
  ).split(' '),
);
/** Words that reverse or deny a fact: always compared. */
const NEGATORS = new Set(['not', 'no', 'never', 'non', 'nor', 'neither', 'none', 'nobody', 'nothing', 'without']);
/** Words whose position tells who does what to whom: compared in order when both memories use them. */
const RELATIONAL = new Set(['over', 'than', 'to', 'from', 'of', 'for', 'instead', 'rather', 'versus', 'vs', 'before', 'after', 'toward', 'towards']);
/** Kept in the words: "was referred by X" is not "referred X". */
const SIGNIFICANT = new Set(['by']);

const CONTRACTIONS: [RegExp, string][] = [
  [/\bcan(?:['’]t|not)\b/g, 'can not'],
  [/\bwon['’]t\b/g, 'will not'],
  [/n['’]t\b/g, ' not'],
  [/['’]re\b/g, ' are'],
  [/['’]ve\b/g, ' have'],
  [/['’]ll\b/g, ' will'],
  [/['’]d\b/g, ' would'],
  [/['’]m\b/g, ' am'],
  [/['’]s\b/g, ''],
];

export interface ComparableWords {
  /** Compared as a multiset: content words, negators, "by". */
  words: string[];
  /** Content words and relational words in their order (relational ones flagged). */
  sequence: { word: string; relational: boolean }[];
}

/** The words two memories are compared by: lower-cased, contractions expanded, function words out, stemmed. */
export function comparableWords(text: string): ComparableWords {
  let lower = text.normalize('NFKC').toLowerCase();
  for (const [pattern, replacement] of CONTRACTIONS) lower = lower.replace(pattern, replacement);
  const raw = lower.split(/[^\p{L}\p{N}]+/u).filter((t) => t.length > 0);
  const words: string[] = [];
  const sequence: ComparableWords['sequence'] = [];
  for (const token of raw) {
    if (RELATIONAL.has(token)) {
      sequence.push({ word: token, relational: true });
      continue;
    }
    if (FUNCTION_WORDS.has(token)) continue;
    const word = NEGATORS.has(token) || SIGNIFICANT.has(token) || /\d/.test(token) ? token : stemmer(token);
    words.push(word);
    sequence.push({ word, relational: false });
  }
  return { words, sequence };
}

/** Weighted Jaccard overlap of two word multisets, in [0, 1]; 1 for two empty ones. */
export function wordOverlap(a: readonly string[], b: readonly string[]): number {
  if (a.length === 0 && b.length === 0) return 1;
  const counts = new Map<string, [number, number]>();
  for (const w of a) counts.set(w, [(counts.get(w)?.[0] ?? 0) + 1, counts.get(w)?.[1] ?? 0]);
  for (const w of b) counts.set(w, [counts.get(w)?.[0] ?? 0, (counts.get(w)?.[1] ?? 0) + 1]);
  let shared = 0;
  let all = 0;
  for (const [x, y] of counts.values()) {
    shared += Math.min(x, y);
    all += Math.max(x, y);
  }
  return shared / all;
}

/**
 * Adjacencies of `a` (with start and end markers) missing from `b`, over the words each memory
 * uses exactly once and both use, the relational ones included (a repeated word, "Dr." twice or
 * "service" twice, would hide a swap). One block move of a phrase breaks at most three.
 */
export function orderBreakpoints(a: ComparableWords, b: ComparableWords): number {
  const once = (s: ComparableWords) => {
    const counts = new Map<string, number>();
    for (const t of s.sequence) counts.set(t.word, (counts.get(t.word) ?? 0) + 1);
    return new Set([...counts].filter(([, n]) => n === 1).map(([w]) => w));
  };
  const [onceA, onceB] = [once(a), once(b)];
  const order = (s: ComparableWords) => ['^', ...s.sequence.map((t) => t.word).filter((w) => onceA.has(w) && onceB.has(w)), '$'];
  const sa = order(a);
  const inB = new Set<string>();
  const sb = order(b);
  for (let i = 1; i < sb.length; i++) inB.add(`${sb[i - 1]}\u0000${sb[i]}`);
  let breaks = 0;
  for (let i = 1; i < sa.length; i++) if (!inB.has(`${sa[i - 1]}\u0000${sa[i]}`)) breaks++;
  return breaks;
}

/** How alike two memories' words are: 1 for the same words in an equivalent order. */
export function lexicalSimilarity(a: ComparableWords, b: ComparableWords): number {
  const overlap = wordOverlap(a.words, b.words);
  const swapped = orderBreakpoints(a, b) > 3;
  return overlap ** 3 * (swapped ? NEAR_DUPLICATE.swappedRoles : 1);
}

/** The near-duplicate similarity that `threshold` applies to. */
export function nearDuplicateSimilarity(cosine: number, lexical: number): number {
  return NEAR_DUPLICATE.lexicalWeight * lexical + NEAR_DUPLICATE.cosineWeight * cosine;
}

/** The least cosine a pair can have and still reach `threshold` (when its words are the same). */
export function cosineFloor(threshold: number): number {
  return (threshold - NEAR_DUPLICATE.lexicalWeight) / NEAR_DUPLICATE.cosineWeight;
}

/** The near-duplicate similarity of the least alike pair of a group (1 for one member): a merge is sure of a group only when every pair is a near duplicate. */
export function weakestPair(members: readonly { vector: Float32Array; content: string }[]): number {
  const words = members.map((m) => comparableWords(m.content));
  let weakest = 1;
  for (let i = 0; i < members.length; i++) {
    for (let j = i + 1; j < members.length; j++) {
      const a = members[i]!.vector;
      const b = members[j]!.vector;
      let dot = 0;
      for (let d = 0; d < a.length; d++) dot += a[d]! * b[d]!;
      weakest = Math.min(weakest, nearDuplicateSimilarity(dot, lexicalSimilarity(words[i]!, words[j]!)));
    }
  }
  return weakest;
}
