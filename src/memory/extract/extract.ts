// Heuristic observe extraction (no model, no I/O, no clock): splits a raw turn into statements,
// drops filler, and classifies what is left (type, slot, importance, confidence, correction,
// entities, date). Pure and deterministic, so observing the same text twice yields the same
// candidates and the same content hashes.
import type { MemoryType as StoredMemoryType } from '../schemas.js';
import { contentHash } from '../content-hash.js';
import {
  consentSlot, isBehavior, isConsent, isCorrection, isEvent, isFirstPerson, isHealth, isHedged, isMilestone,
  isPreference, isProcedure, isRule, isSystemDirective,
} from './cues.js';
import { contentWords, cueView, isFiller, isQuestion, withoutFillerPieces } from './filler.js';
import { ASSISTANT_FACT, assistantStatement, secondToFirst } from './assistant.js';
import { analyse, startsImperative, type SpottedDate } from './nlp.js';
import { finishContent, segment, stripPleasantries, type Statement } from './segment.js';
import { detectSlot, profileView } from './slots.js';
import { firstPersonReading, impliedSubjectReading } from './third-person.js';

export { contentHash };

/** The kinds observe can produce: every stored type except the engine's estimate, decision, outcome. */
export type MemoryType = Exclude<StoredMemoryType, 'estimate' | 'decision' | 'outcome'>;

export interface Candidate {
  /** The statement as said, cleaned: trimmed, whitespace collapsed, capitalised, closed with punctuation. */
  content: string;
  type: MemoryType;
  /** 0..10, integer. */
  importance: number;
  /** 0..1. */
  confidence: number;
  /** Stable key of a single-valued fact about the subject ('residence', 'preferred_milk', 'consent_email'). */
  slot?: string;
  /** The speaker corrects something said before ("actually ...", "I moved to ...", "no longer ..."). */
  correction: boolean;
  /** People, places and organisations named. */
  entities: string[];
  /** ISO date-time of the date the statement names, read relative to `now`. */
  occurredAt?: string;
}

export interface ExtractOptions {
  role: 'user' | 'assistant' | 'system';
  now: Date;
  /**
   * The subject is someone other than the speaker (a customer an agent takes notes on): a statement
   * opening with a name or he, she, they is read as about the subject (third-person.ts).
   */
  thirdParty?: boolean;
}

export interface Extraction {
  candidates: Candidate[];
  /** Statements considered: after splitting, before filtering. */
  candidateCount: number;
}

const STATEMENT_BEFORE_QUESTION = /^(?:since|because|as|given(?: that)?|now that|i'm|i am|i have|i've|my|we're|we have)\b[^,?]*,/;
const REQUEST = /^(?:i'd like|i would like|i'd love|i'll have|i'll take|(?:can|could|may) i (?:get|have|order)|i need to|i'm trying to|i'm looking for|help me)\b/;
/** Tasks for the assistant that never describe the user's plans, dated or not ("write me a poem about autumn"). */
const TASK = /^(?:please |pls |can you |could you )?(?:write|draft|compose|summari[sz]e|translate|explain|tell|give|show|list|generate|create|describe|rewrite|fix|calculate|convert|compare|proofread|edit|format|make)\b/;

const SLOT_IMPORTANCE: Record<string, number> = {
  name: 8, preferred_name: 7, email: 8, phone: 8, address: 8, birthday: 7, birthplace: 5, age: 6, residence: 7,
  employer: 7, job_title: 6, partner: 7, diet: 8, pronouns: 8, timezone: 6, hometown: 5, native_language: 6,
};
const TYPE_IMPORTANCE: Record<MemoryType, number> = {
  consent: 9, rule: 8, correction: 8, procedure: 6, preference: 5, behavior_pattern: 5, event: 5, fact: 5,
  observation: 3, insight: 5, summary: 5,
};
const ROLE_CONFIDENCE: Record<ExtractOptions['role'], number> = { user: 0.9, assistant: 0.75, system: 0.95 };

interface Signals {
  role: ExtractOptions['role'];
  slot: string | undefined;
  consent: boolean;
  rule: boolean;
  correction: boolean;
  procedure: boolean;
  health: boolean;
  preference: boolean;
  behavior: boolean;
  event: boolean;
  milestone: boolean;
  hedged: boolean;
  question: boolean;
  firstPerson: boolean;
  date: SpottedDate;
}

function classify(s: Signals): MemoryType {
  if (s.consent) return 'consent';
  if (s.rule) return 'rule';
  if (s.correction) return 'correction';
  if (s.procedure) return 'procedure';
  if (s.slot?.startsWith('preferred_')) return 'preference';
  if (s.slot) return s.date.dayLevel && s.event ? 'event' : 'fact';
  if (s.health) return s.date.dayLevel && s.event ? 'event' : 'fact';
  if (s.preference) return 'preference';
  if (s.behavior) return 'behavior_pattern';
  if (s.date.dayLevel || s.event) return 'event';
  return s.firstPerson ? 'fact' : 'observation';
}

function importanceOf(type: MemoryType, s: Signals): number {
  let score = TYPE_IMPORTANCE[type];
  if (s.slot) score = Math.max(score, SLOT_IMPORTANCE[s.slot] ?? (s.slot.startsWith('consent_') ? 9 : 6));
  if (s.health) score = Math.max(score, 9);
  if (type === 'event') score += (s.date.dayLevel ? 1 : 0) + (s.milestone ? 1 : 0);
  if (s.hedged) score -= 1;
  if (s.question) score -= 1;
  if (s.role === 'assistant') score -= 1;
  return Math.min(10, Math.max(0, Math.round(score)));
}

function confidenceOf(type: MemoryType, s: Signals): number {
  let c = ROLE_CONFIDENCE[s.role];
  if (s.slot || s.consent || s.rule) c += 0.05;
  if (type === 'fact' && !s.slot && !s.health) c -= 0.1;
  if (type === 'observation') c -= 0.2;
  if (s.hedged) c -= 0.3;
  if (s.question) c -= 0.2;
  return Math.round(Math.min(1, Math.max(0.05, c)) * 100) / 100;
}

const UNDATED_TYPES = new Set<MemoryType>(['rule', 'procedure', 'behavior_pattern', 'consent']);

/** One statement judged: a candidate, or undefined when it is filler or says nothing about the subject. */
function judge(statement: Statement, { role, now, thirdParty = false }: ExtractOptions): Candidate | undefined {
  let core = stripPleasantries(withoutFillerPieces(stripPleasantries(statement.text)));
  // A line ending in a colon introduces what follows ("A few things about me:"); it states nothing.
  if (core.length === 0 || (!statement.procedure && /:\s*$/.test(core)) || isFiller(core)) return undefined;
  let view = profileView(cueView(core));
  if (role === 'assistant') {
    const own = assistantStatement(core);
    if (!own) return undefined;
    core = own;
    view = secondToFirst(cueView(core));
  }
  const { entities, date, ...parsed } = analyse(core, now);
  // "The customer moved to Denver", "Jane at Acme is on the Pro plan": read as the subject's own
  // words; the name the statement opens with is the subject, not a place or an employer.
  let slotEntities = entities;
  // Read as a statement about the subject (below): then its opening verb is no instruction.
  let aboutSubject = false;
  const implied = role === 'user' ? impliedSubjectReading(view) : undefined;
  if (implied) {
    // "Got promoted to senior engineer", "Just switched us over to the Team tier": the speaker's, or the noted subject's.
    view = implied;
    aboutSubject = true;
  } else if (role !== 'assistant' && !isFirstPerson(view)) {
    const reading = firstPersonReading(view, { thirdParty, entities, text: core });
    if (reading) {
      view = profileView(reading.view);
      aboutSubject = true;
      slotEntities = entities.filter((e) => e !== reading.referent && e !== reading.affiliation);
    }
  }
  const question = isQuestion(core, view, parsed.question);
  const detected = role === 'system' ? undefined : detectSlot({ view, entities: slotEntities, date });
  const consent = isConsent(view, detected === 'preferred_name');
  // "If the user asks about pricing, refer them to sales": the instruction follows the condition.
  const conditional = /^(?:if|when|whenever|unless|once|before|after)\b[^,]+,\s*(.+)$/i.exec(core);
  const imperative = !aboutSubject && (parsed.imperative || (conditional?.[1] !== undefined && startsImperative(conditional[1])));
  const rule = role === 'system' ? isSystemDirective(view, imperative) : isRule(view) && !question;
  if (role === 'system' && !rule && !consent) return undefined;
  const slot = consent ? consentSlot(view) : detected;
  const health = isHealth(view);
  const firstPerson = isFirstPerson(view);
  // A question is kept only when it opens with a statement about the subject ("Since I'm diabetic, ...").
  if (question && !((detected || consent || health) && STATEMENT_BEFORE_QUESTION.test(view))) return undefined;
  const procedure = statement.procedure || isProcedure(view);
  const correction = role !== 'system' && isCorrection(view, slot !== undefined);
  // A request to the assistant ("book me a table", "I'd like a coffee") is kept only when it carries
  // a dated plan.
  const request = (imperative && !correction) || REQUEST.test(view);
  if (role === 'user' && !thirdParty && request && !rule && !consent && !slot && !procedure && (!date.dayLevel || TASK.test(view))) return undefined;
  const milestone = isMilestone(view);
  if (contentWords(view).length === 0 && !(slot || consent || health || milestone || procedure)) return undefined;
  // Notes about a third party are about it whoever they name ("Lisinopril dose raised to 40mg").
  if (role !== 'system' && !firstPerson && !thirdParty && !(entities.length > 0 || date.dayLevel || health || consent || rule || procedure || correction)) return undefined;
  const signals: Signals = {
    role, slot, consent, rule, procedure, health, milestone, question, firstPerson, date, correction,
    preference: isPreference(view),
    behavior: isBehavior(view, date.repeating),
    event: isEvent(view),
    hedged: isHedged(view),
  };
  // From an assistant, only what it records about the user: a recognised cue or a plain fact verb.
  if (role === 'assistant' && !(slot || consent || health || correction || milestone || signals.preference || signals.behavior
    || (signals.event && date.dayLevel) || ASSISTANT_FACT.test(view))) return undefined;
  const type = classify(signals);
  const candidate: Candidate = {
    content: finishContent(core),
    type,
    importance: importanceOf(type, signals),
    confidence: confidenceOf(type, signals),
    correction: signals.correction,
    entities,
  };
  if (slot) candidate.slot = slot;
  if (date.occurredAt && !UNDATED_TYPES.has(type) && (date.dayLevel || type === 'event')) candidate.occurredAt = date.occurredAt;
  return candidate;
}

/** Candidate memories in a raw turn. Same text, role and `now` always give the same answer. */
export function extractCandidates(text: string, options: ExtractOptions): Extraction {
  if (!(options.now instanceof Date) || Number.isNaN(options.now.getTime())) {
    throw new RangeError('extractCandidates needs a valid `now` date');
  }
  const statements = segment(typeof text === 'string' ? text : '');
  const seen = new Set<string>();
  const candidates: Candidate[] = [];
  for (const statement of statements) {
    const candidate = judge(statement, options);
    if (!candidate || candidate.content.length === 0) continue;
    const hash = contentHash(candidate.content);
    if (seen.has(hash)) continue;
    seen.add(hash);
    candidates.push(candidate);
  }
  return { candidates, candidateCount: statements.length };
}
