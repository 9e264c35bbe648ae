// Statements about the subject in the third person ("Jane at Acme is on the Enterprise plan", "The
// customer moved to Denver", "Acme downgraded to the Pro plan") read in the first person ("i'm on
// the enterprise plan", "i moved to denver", "i downgraded to the pro plan"), so that one set of
// cues (slots.ts) serves an agent's notes about a customer as it serves the customer's own words.
//
// Who the statement is about is decided by its opening words:
// - a role that names the subject ("the customer", "this client", "the account"): always;
// - a name the statement opens with ("Jane", "Jane at Acme", "Acme"), or he, she, they: only when
//   the subject is a third party (`thirdParty`: a subject of another kind than `user`). In a user's
//   own conversation "Jane moved to Denver" is about Jane, not about the user, and must not move the
//   user's residence.
import { escapeRegExp } from './filler.js';

const ROLE = String.raw`(?:the|this|our|that) (?:customer|client|user|account|member|patient|buyer|lead|prospect|contact|company|tenant|subscriber|shopper|guest|student|candidate|employee|organi[sz]ation|org|household|family|business|team|merchant|vendor|partner)`;
const PRONOUN = '(?:she|he|they)';
/** Adverbs that may stand between the subject and its verb ("Jane now lives ..."). */
const ADVERBS = String.raw`(?:(?:now|currently|still|just|recently|finally|actually|also|already|no longer|officially|apparently|again)\s+)*`;
/** Third-person forms read as the first person's ("is" is "'m": the cues read "i'm"). */
const BE: Record<string, string> = { is: "i'm", are: "i'm", was: 'i was', were: 'i was', has: 'i have', have: 'i have', does: 'i do', did: 'i did' };
/** What follows a contracted "is" ("Jane's on the Pro plan"), as against a possessive ("Jane's plan"). */
const STATE_AFTER_IS = /^(?:now |currently |still |also |already |no longer )*(?:on|in|at|a|an|the|no|not|moving|living|working|based|from|married|engaged|allergic|vegetarian|vegan|pregnant|retired|unemployed|self-employed|employed|leaving|switching|upgrading|downgrading|cancell?ing|using|paying)\b/;
const NEGATED: Record<string, string> = { "isn't": "i'm not", "doesn't": "i don't", "didn't": "i didn't", "wasn't": "i wasn't", "hasn't": "i haven't", "aren't": "i'm not", "don't": "i don't", "haven't": "i haven't" };
/** Verbs a statement about a person opens with that do not end in -s, -ed or -ies (irregular pasts, modals). */
const OTHER_VERBS = new Set(['got', 'left', 'became', 'took', 'bought', 'sold', 'quit', 'began', 'went', 'made', 'will', 'would', 'can', 'could', 'should', 'may', 'might', 'must', 'prefer', 'used']);

export interface ThirdPersonOptions {
  /** The subject is not the speaker: names and he, she, they may refer to it. */
  thirdParty: boolean;
  /** Names found in the statement (nlp.ts), as written. */
  entities: readonly string[];
  /** The statement as written: a capitalised first word compromise did not know ("Acme") may be a name too. */
  text?: string;
}

/** Capitalised words a sentence opens with that name nobody. */
const NOT_A_NAME = new Set(`
  the this that these those it its there here what who whom whose which when where why how today tomorrow yesterday now then
  also still my our their his her your each every all some many most both either neither one no nobody someone everyone
  everybody somebody anyone anybody nothing something everything i we you he she they me us them if but and or so because
  since after before while once please thanks yes not never always usually sometimes often last next
`.split(/\s+/).filter(Boolean));

export interface FirstPersonReading {
  /** The statement's lower-cased view with the subject as "i". */
  view: string;
  /** The named entity the statement opens with, when it opens with one (it names the subject, not a place or an employer). */
  referent?: string;
  /** The name after it ("Acme" in "Jane at Acme"), which places the subject rather than stating a fact. */
  affiliation?: string;
}

/** The words the statement opens with that name the subject, or undefined. */
function referentOf(view: string, { thirdParty, entities, text }: ThirdPersonOptions): { words: string; entity?: string; affiliation?: string } | undefined {
  const role = new RegExp(`^${ROLE}\\b`).exec(view);
  if (role) return { words: role[0] };
  if (!thirdParty) return undefined;
  const pronoun = new RegExp(`^${PRONOUN}\\b`).exec(view);
  if (pronoun) return { words: pronoun[0] };
  // The longest name the statement opens with, with "at/from <another name>" after it ("Jane at Acme").
  const lead = /^(\p{Lu}[\p{L}\p{N}&'.-]*(?: \p{Lu}[\p{L}\p{N}&'.-]*){0,2})\s/u.exec(text ?? '')?.[1]?.replace(/'s$/, '');
  const unknown = lead && !NOT_A_NAME.has(lead.split(' ')[0]!.toLowerCase()) && !entities.some((e) => e.toLowerCase() === lead.toLowerCase()) ? [lead] : [];
  const names = [...entities, ...unknown].sort((a, b) => b.length - a.length);
  const first = names.find((e) => new RegExp(`^${escapeRegExp(e.toLowerCase())}\\b`).test(view));
  if (!first) return undefined;
  let words = first.toLowerCase();
  const rest = view.slice(words.length);
  const affiliation = names.find((e) => e !== first && new RegExp(`^ (?:at|from|of) ${escapeRegExp(e.toLowerCase())}\\b`).test(rest));
  if (affiliation) words += rest.slice(0, rest.indexOf(affiliation.toLowerCase()) + affiliation.length);
  return { words, entity: first, affiliation };
}

/** A third-person verb in the first person ("lives" live, "moved" moved, "carries" carry), or undefined when the word is no verb form of that kind. */
function firstPersonVerb(word: string): string | undefined {
  if (OTHER_VERBS.has(word) || word.endsWith('ed')) return word;
  if (/^[a-z]{2,}ies$/.test(word)) return `${word.slice(0, -3)}y`;
  if (/^[a-z]+(?:sses|shes|ches|xes|zes|oes)$/.test(word)) return word.slice(0, -2);
  if (/^[a-z]{2,}[^s']s$/.test(word)) return word.slice(0, -1);
  return undefined;
}

/**
 * The statement read with its subject as "i" ("Jane's husband is Tom": "my husband is tom"), or
 * undefined when it does not open with words that name the subject followed by a verb.
 */
export function firstPersonReading(view: string, options: ThirdPersonOptions): FirstPersonReading | undefined {
  const referent = referentOf(view, options);
  if (!referent) return undefined;
  const after = view.slice(referent.words.length);
  const entity = referent.entity;
  const named = { referent: entity, affiliation: referent.affiliation };
  if (after.startsWith("'s ")) {
    const tail = after.slice(3);
    if (/^(?:been|got)\b/.test(tail)) return { view: `i've ${tail}`, ...named };
    // "Jane's on the Pro plan" is "is"; "Jane's plan is Pro" a possessive: "my plan is pro".
    if (STATE_AFTER_IS.test(tail)) return { view: `i'm ${tail}`, ...named };
    return { view: `my ${tail}`, ...named };
  }
  const m = new RegExp(`^\\s+(${ADVERBS})([a-z']+)(.*)$`).exec(after);
  if (!m) return undefined;
  const [, adverbs = '', verb = '', rest = ''] = m;
  const be = NEGATED[verb] ?? BE[verb];
  if (be) return { view: `${be} ${adverbs}${rest.trim()}`.replace(/\s+/g, ' ').trim(), ...named };
  // "They" takes the verb as "i" does ("they work at Globex").
  const own = referent.words === 'they' ? verb : firstPersonVerb(verb);
  if (!own) return undefined;
  return { view: `i ${adverbs}${own}${rest}`.replace(/\s+/g, ' ').trim(), ...named };
}

/** Verbs a chat line or a note opens with when its subject goes without saying ("Got promoted", "Quit keto", "Left Google, now at Stripe"). */
const IMPLIED_SUBJECT = /^(?:(?:just|recently|finally|also|then|officially|eventually|since) )?(?:(?:got|quit|left|became|took|bought|sold|began|went|made|won|lost|ended up|switched|moved|joined|accepted|signed|started|stopped|upgraded|downgraded|cancell?ed|transferred|relocated|adopted|finished|retired|resigned|graduated|married|divorced|enrolled|discharged|admitted|promoted|hired|renewed|changed|dropped|reduced|increased|raised|lowered|added|removed|gave up|picked up|took up|back (?:at|to|in|on)|now (?:at|in|on|with|a|an|the))\b)/;

/**
 * A statement with no subject of its own, read with "i" in front ("got promoted to senior engineer":
 * "i got promoted to senior engineer"), or undefined when it opens otherwise.
 */
export function impliedSubjectReading(view: string): string | undefined {
  return IMPLIED_SUBJECT.test(view) ? `i ${view}` : undefined;
}
