// Newer first: of two live memories of one subject (and scope) that hold one fact with different
// values, the newer (the one stated later) ranks above the older. Observe supersedes an old value
// when it can tell that the two fill one slot (extract/slots.ts); when it could not (both saved as
// they were, or a slot it does not know), two memories still hold one fact when
// - both carry the same slot (metadata.slot); or, when not both carry one, both are short (at most
//   restatementMaxWords content words, no question in either) and
// - they share at least half their words (stemmed, function words out), at least two of them, and
//   not all: "Customer plan: Enterprise" and "Customer plan: Pro" share 2 of 4; or
// - they are close in meaning (cosine, among each other's nearest fellow candidates) and the newer
//   answers the query nearly as well (its score at least minScoreShare of the older's): cosine at
//   least restatementCosine, or changeCosine when the newer says something changed (CHANGE). On
//   the update pairs of bench/retrieval/updates.ts most old and new statements lie at 0.45 to
//   0.75 ("I'm on the basic plan", later "Just switched us over to the Team tier": 0.34, with a
//   change word), an unrelated statement of the same subject at 0.41 at the 95th centile.
// Two events are never one fact (two hikes are two hikes), except on one slot. The newer must be on
// the page (search.ts passes limit + offset), so an older memory moves down the page but never off
// it: on BEAM and RealMem, whose turns are long or questions, this changes no recall at all. A
// query that names a span of time ("what plan was I on in March") asks for the value then, not the
// newest: the search leaves newer first out for it. The older one's score is lowered to just under
// the newer's; a memory already below keeps its score.
import { comparableWords, wordOverlap } from '../../../workers/near-duplicate.js';
import type { Memory } from '../schemas.js';
import { appendTo } from '../../platform/collections.js';

export const FRESHNESS = {
  /** Words two unslotted memories share, as a share of all their words, to be one fact restated. */
  restatementOverlap: 0.5,
  /** ... and at least this many shared words. */
  restatementSharedWords: 2,
  /** Only short memories are compared (content words, function words out): a long text is never one fact. */
  restatementMaxWords: 15,
  /** ... nor a memory longer than this many characters (not read for its words at all; search/store.ts reports no close candidates for it). */
  restatementMaxChars: 180,
  /** Two short memories this close in meaning (cosine) may hold one fact ... */
  restatementCosine: 0.45,
  /** ... or this close, when the newer says that something changed (CHANGE). */
  changeCosine: 0.3,
  /** ... when the newer scores at least this share of the older's. */
  minScoreShare: 0.4,
  /** The newer memory must rank within the page (limit + offset), and within at least this many. */
  minPage: 5,
  /** How far under the newer memory's score the older one is put. */
  margin: 1e-4,
} as const;

export interface Scored {
  memory: Memory;
  score: number;
  /** Fellow candidates close in meaning, with their cosine (search/store.ts, Candidate.near). */
  near?: ReadonlyMap<string, number>;
}

export interface Demotion {
  /** The newer memory the older now ranks under. */
  newerId: string;
  /** Its score now, just under that one's. */
  score: number;
}

const LIVE = new Set(['pending', 'confirmed']);

/** Words that say a value changed ("switched to", "moved to", "no longer", "now at", "back on"). */
const CHANGE =
  /\b(?:now|any ?more|no longer|switch(?:ed|ing)|mov(?:ed|ing)|chang(?:ed|ing)|upgrad(?:ed|ing)|downgrad(?:ed|ing)|left|quit|join(?:ed|ing)|start(?:ed|ing)|accept(?:ed|ing)|transferr(?:ed|ing)|relocat(?:ed|ing)|emigrat(?:ed|ing)|promot(?:ed|ion)|became|replac(?:ed|ing)|instead|back (?:on|to|at|in|with)|new|since|as of|from now on|these days|ended up|took over|stepped down|retir(?:ed|ing)|resign(?:ed|ing)|cancell?(?:ed|ing)|renew(?:ed|ing)|increas(?:ed|ing)|decreas(?:ed|ing)|rais(?:ed|ing)|lower(?:ed|ing)|reduc(?:ed|ing)|bump(?:ed|ing)|dropp(?:ed|ing)|went (?:up|down)|divorc(?:ed|ing)|married|engaged|broke up|separated|discharg(?:ed|ing)|admitt(?:ed|ing)|updat(?:ed|ing)|actually|pushed|postponed|moved up)\b/i;

/** A question, or a statement with one in it, is no value stated. */
const QUESTION = /\?/;

/**
 * When the memory was stated: observe's `observedAt` (when the turn was said; an event's validFrom is
 * when the event happens, "renewal pushed to June 30" said in February), else validFrom.
 */
function statedAt(m: Memory): number {
  const observed = m.metadata?.observedAt;
  const at = typeof observed === 'string' ? Date.parse(observed) : Number.NaN;
  return Number.isFinite(at) ? at : Date.parse(m.validFrom);
}

function holder(m: Memory): string {
  return `${m.scope}\u0000${m.subject?.kind ?? ''}\u0000${m.subject?.externalId ?? ''}`;
}

function slotOf(m: Memory): string | undefined {
  const slot = m.metadata?.slot;
  return typeof slot === 'string' && slot.length > 0 ? slot : undefined;
}

/**
 * The live memories among the best `window` that a newer live memory of the same subject and scope,
 * also among the best `window` (at least minPage), restates with another value, each with the score
 * that puts it just under that one's. A memory that drops out of the window lets the next one in,
 * which is checked in turn. Memories of no subject are not compared (nothing says two of them are
 * about the same thing). Pure: the hits are not changed.
 */
export function newerFirst(hits: readonly Scored[], window: number): Map<string, Demotion> {
  const scores = new Map(hits.map((h) => [h.memory.id, h.score]));
  const scoreOf = (h: Scored) => scores.get(h.memory.id)!;
  const words = new Map<string, string[] | null>();
  const wordsOf = (m: Memory) => {
    let w = words.get(m.id);
    if (w === undefined) {
      const all = m.content.length > FRESHNESS.restatementMaxChars ? [] : comparableWords(m.content).words;
      w = all.length > 0 && all.length <= FRESHNESS.restatementMaxWords ? all : null;
      words.set(m.id, w);
    }
    return w;
  };
  const sameFact = (older: Scored, newer: Scored) => {
    const [a, b] = [older.memory, newer.memory];
    const [sa, sb] = [slotOf(a), slotOf(b)];
    if (sa !== undefined && sb !== undefined) return sa === sb;
    // Two events are two things that happened, not one value changing (two hikes, two meetings);
    // an event after a fact may change it ("emigrated to Buenos Aires last year").
    if (a.type === 'event' && b.type === 'event') return false;
    const [wa, wb] = [wordsOf(a), wordsOf(b)];
    if (!wa || !wb || QUESTION.test(a.content) || QUESTION.test(b.content)) return false;
    const overlap = wordOverlap(wa, wb);
    if (overlap === 1) return false;
    const inB = new Set(wb);
    if (overlap >= FRESHNESS.restatementOverlap && new Set(wa.filter((w) => inB.has(w))).size >= FRESHNESS.restatementSharedWords) return true;
    const cosine = older.near?.get(b.id) ?? newer.near?.get(a.id);
    if (cosine === undefined || scoreOf(newer) < FRESHNESS.minScoreShare * scoreOf(older)) return false;
    return cosine >= FRESHNESS.restatementCosine || (cosine >= FRESHNESS.changeCosine && CHANGE.test(b.content));
  };
  const groups = new Map<string, Scored[]>();
  for (const hit of hits) {
    if (!hit.memory.subject || !LIVE.has(hit.memory.status)) continue;
    const key = holder(hit.memory);
    appendTo(groups, key, hit);
  }
  const demoted = new Map<string, Demotion>();
  const checked = new Set<string>();
  const byScore = (a: Scored, b: Scored) => scoreOf(b) - scoreOf(a) || (a.memory.id < b.memory.id ? -1 : 1);
  const page = Math.max(window, FRESHNESS.minPage);
  for (;;) {
    const ranked = [...hits].sort(byScore);
    // The newer must be on the page itself: an older memory moves down the page, never off it (but
    // for the one place under the page's last), so what a search finds stays what it finds.
    const onPage = new Set(ranked.slice(0, page).map((h) => h.memory.id));
    const unchecked = ranked.slice(0, window).filter((h) => !checked.has(h.memory.id));
    if (unchecked.length === 0) return demoted;
    for (const older of unchecked) {
      checked.add(older.memory.id);
      const group = older.memory.subject && LIVE.has(older.memory.status) ? groups.get(holder(older.memory)) : undefined;
      if (!group) continue;
      const since = statedAt(older.memory);
      // Under the lowest of the newer restatements scored no higher, so under every one of them.
      const newer = group
        .filter((n) => onPage.has(n.memory.id) && statedAt(n.memory) > since && scoreOf(n) <= scoreOf(older) && sameFact(older, n))
        .sort((a, b) => scoreOf(a) - scoreOf(b))[0];
      if (!newer) continue;
      const score = scoreOf(newer) - FRESHNESS.margin;
      demoted.set(older.memory.id, { newerId: newer.memory.id, score });
      scores.set(older.memory.id, score);
      // What is older than this one is looked at again (a chain of three values).
      for (const h of group) if (statedAt(h.memory) < since) checked.delete(h.memory.id);
    }
  }
}
