// Reading a conversation for POST /memory/context: its turns (given, or parsed from one string of
// "Speaker: text" lines), who it is about, and what to search for. Pure.
//
// Who it is about, in order (the first that names someone wins; context.ts then skips one the
// project knows nothing about):
//   explicit              the caller's `subject`                                   confidence 1
//   speaker-first-person  a person's turn naming its speaker in the first person
//                         ("I'm Priya", "my name is Priya Shah", "this is Priya")  0.8
//   speaker               a person's turn whose role is a name ("priya", or a
//                         "Priya:" line), the most recent such                     0.6
//   user                  the caller's `userId`, as observe reads it               0.5
// A named speaker is the subject { kind: user, externalId: the name in lower case }, the subject
// observe gives to what user <name> says. Nothing else is guessed: no subject found is none.
import type { Subject } from '../../platform/common-schemas.js';

export interface Turn {
  role?: string;
  content: string;
}

export type SubjectOrigin = 'explicit' | 'speaker-first-person' | 'speaker' | 'user';

export interface SubjectCandidate extends Subject {
  origin: SubjectOrigin;
  confidence: number;
}

/** Roles that are not a person speaking (a model, the host, a tool). */
const MACHINE_ROLES = new Set(['assistant', 'system', 'tool', 'function', 'developer', 'model', 'ai', 'bot']);
/** Roles that are a person but name nobody. */
const ANONYMOUS_ROLES = new Set(['user', 'human', 'customer', 'client', 'patient', 'me', 'speaker', 'person', 'guest', 'visitor']);

/** A name as a speaker label: one to three words of letters (with ' . -), no digits. */
const NAME = /^\p{L}[\p{L}'.-]*(?: \p{L}[\p{L}'.-]*){0,2}$/u;
/** "Speaker: text" at the start of a line of a conversation string. */
const LINE_SPEAKER = /^([\p{L}][\p{L}'.-]*(?: [\p{L}][\p{L}'.-]*){0,2}):\s*(.*)$/u;
/** A speaker naming themself: "I'm Priya", "I am Priya Shah", "my name is Priya", "this is Priya", "call me Priya". */
const SELF_NAMING = /(?:^|[^\p{L}])(?:[Mm]y name is|[Mm]y name['’]s|I am|I['’]m|[Tt]his is|[Cc]all me)\s+(\p{Lu}[\p{Ll}'’-]+(?:\s+\p{Lu}[\p{Ll}'’-]+)?)/u;
/** Words that follow "I'm" capitalised without being a name (sentence case, titles). */
const NOT_NAMES = new Set(['Not', 'So', 'Just', 'Really', 'Very', 'Sure', 'Sorry', 'Here', 'Back', 'Fine', 'Good', 'Happy', 'Glad', 'The', 'A', 'An', 'In', 'On', 'At', 'Going', 'Looking', 'Trying']);

/** The turns of a conversation string: a "Speaker: " line starts a turn, other lines continue the one before. */
export function turnsOf(conversation: string): Turn[] {
  const turns: Turn[] = [];
  for (const raw of conversation.split(/\r?\n/)) {
    const line = raw.trim();
    if (line === '') continue;
    const labelled = LINE_SPEAKER.exec(line);
    if (labelled) turns.push({ role: labelled[1]!, content: labelled[2]! });
    else if (turns.length > 0) turns[turns.length - 1]!.content += `\n${line}`;
    else turns.push({ content: line });
  }
  return turns.filter((t) => t.content.trim() !== '');
}

const roleOf = (turn: Turn) => (turn.role ?? 'user').trim();
/** A turn a person wrote (not the model, the host or a tool). */
export const isHuman = (turn: Turn): boolean => !MACHINE_ROLES.has(roleOf(turn).toLowerCase());

/** The person a human turn's role names, if it names one. */
function speakerName(turn: Turn): string | undefined {
  const role = roleOf(turn);
  if (!NAME.test(role) || ANONYMOUS_ROLES.has(role.toLowerCase()) || MACHINE_ROLES.has(role.toLowerCase())) return undefined;
  return role;
}

/** The name a turn gives its speaker in the first person. */
function selfNamed(turn: Turn): string | undefined {
  const match = SELF_NAMING.exec(turn.content);
  if (!match) return undefined;
  const words = match[1]!.split(/\s+/);
  // "This is Alice's friend" names someone else; a second word that is no name ends the name.
  if (words.some((word) => /['’]s$/.test(word)) || NOT_NAMES.has(words[0]!)) return undefined;
  return words.filter((word, i) => i === 0 || !NOT_NAMES.has(word)).join(' ');
}

const personSubject = (name: string): Subject => ({ kind: 'user', externalId: name.toLowerCase().replace(/\s+/g, ' ') });

/** Every subject the conversation and the caller name, in the order they are trusted (header). */
export function subjectCandidates(turns: readonly Turn[], given: { subject?: Subject; userId?: string }): SubjectCandidate[] {
  const candidates: SubjectCandidate[] = [];
  const add = (subject: Subject, origin: SubjectOrigin, confidence: number) => {
    if (!candidates.some((c) => c.kind === subject.kind && c.externalId === subject.externalId)) candidates.push({ ...subject, origin, confidence });
  };
  if (given.subject) add(given.subject, 'explicit', 1);
  const human = turns.filter(isHuman).reverse();
  for (const turn of human) {
    const name = selfNamed(turn);
    if (name) add(personSubject(name), 'speaker-first-person', 0.8);
  }
  for (const turn of human) {
    const name = speakerName(turn);
    if (name) add(personSubject(name), 'speaker', 0.6);
  }
  if (given.userId) add({ kind: 'user', externalId: given.userId }, 'user', 0.5);
  return candidates;
}

/** Longest query searched, in characters (a long last turn is cut at its end: the newest words). */
export const MAX_QUERY_CHARS = 1000;

/**
 * What to search for: the intent, when given, and the last turn a person wrote (or the last turn,
 * when none is a person's), cut to MAX_QUERY_CHARS.
 */
export function queryOf(turns: readonly Turn[], intent?: string): string {
  const last = [...turns].reverse().find(isHuman) ?? turns[turns.length - 1];
  const text = [intent?.trim(), last?.content.trim()].filter((t): t is string => t !== undefined && t !== '').join('\n');
  return text.length <= MAX_QUERY_CHARS ? text : text.slice(text.length - MAX_QUERY_CHARS);
}
