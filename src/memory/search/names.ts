// Names in the question: a person, place or organisation the query names ("What did Priya say about
// the Lisbon trip?") is matched against the memories' own words and the entities observe found in
// them (metadata.entities). A memory holding every name the query gives scores 1, one holding half
// of them 0.5; the part is added to the score (ranking.ts, RANKING.nameWeight) and shown in
// scoreParts.names. Names are read from capitalisation, so a query typed in lower case names none.
import { escapeRegExp } from '../extract/filler.js';

/** Capitalised words that name nobody: question words, pronouns, the first words of a question. */
const NOT_A_NAME = new Set(`
  what when where who whom whose which why how did do does is are was were can could would should will shall may might
  must have has had am i me my mine we us our you your he him his she her they them their it its this that these those
  the a an and or but if then so for of in on at to from by with about as tell remind show list give find any some all
  please hi hello hey ok okay yes no not also again just
  monday tuesday wednesday thursday friday saturday sunday january february march april may june july august september
  october november december today tomorrow yesterday
`.split(/\s+/).filter(Boolean));

/** The names a query gives, lower-cased, each once: runs of capitalised words ("New York", "Priya"). */
export function queryNames(query: string): string[] {
  const names = new Set<string>();
  for (const run of query.matchAll(/\p{Lu}[\p{L}\p{N}'’-]*(?:\s+\p{Lu}[\p{L}\p{N}'’-]*)*/gu)) {
    const words = run[0].replace(/['’]s$/u, '').split(/\s+/).filter((w) => !NOT_A_NAME.has(w.toLowerCase()));
    // An all-capitals word of one or two letters ("I", "OK", "AM") is no name.
    const name = words.filter((w) => !(w.length <= 2 && w === w.toUpperCase())).join(' ').toLowerCase();
    if (name.length >= 2) names.add(name);
  }
  return [...names];
}

/**
 * Scores a memory by the query's names, in [0, 1]: the share of them it holds, in its words (whole
 * words, any case) or its entities; always 0 when the query names none.
 */
export function nameMatcher(names: readonly string[]): (content: string, entities: unknown) => number {
  if (names.length === 0) return () => 0;
  const patterns = names.map((name) => ({ name, pattern: new RegExp(`(?<![\\p{L}\\p{N}])${escapeRegExp(name)}(?![\\p{L}\\p{N}])`, 'iu') }));
  return (content, entities) => {
    const known = Array.isArray(entities) ? entities.filter((e): e is string => typeof e === 'string').map((e) => e.toLowerCase()) : [];
    return patterns.filter(({ name, pattern }) => known.includes(name) || pattern.test(content)).length / names.length;
  };
}
