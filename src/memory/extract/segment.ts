// Turns a raw turn into candidate statements for the observe extractor: lines, bullets and
// numbered steps first, then sentences (compromise), then clauses joined by "and I ..."; and the
// cleaning every stored statement gets (whitespace, emoji, capital letter, closing punctuation).
import { hasVerb, splitSentences, startsImperative } from './nlp.js';

export interface Statement {
  text: string;
  /** A numbered list (with its heading line, if any) kept together as one set of steps. */
  procedure: boolean;
}

const NUMBERED = /^(?:\(?\d{1,2}[.)]|step\s+\d{1,2}[:.)]?)\s+(.+)$/i;
const BULLET = /^[-*•·▪◦‣–—+>]\s+(.+)$/;

/** Emoji, pictographs, their modifiers and joiners, and the common typed emoticons. */
const EMOJI = /[\p{Extended_Pictographic}\p{Emoji_Modifier}\u{1F1E6}-\u{1F1FF}\u200d\ufe0e\ufe0f\u20e3]/gu;
const EMOTICON = /(?<![\p{L}\p{N}])(?::-?[()DPpO3|/\\]+|;-?[)D]|<3+|x[DP]\b|\^\^|\^_\^|:'\(|T_T|¯\\_\(ツ\)_\/¯)(?![\p{L}\p{N}])/gu;

export function stripEmoji(text: string): string {
  return text.replace(EMOJI, ' ').replace(EMOTICON, ' ');
}

/**
 * The text with its typography made uniform (NFC, emoji and emoticons out, curly quotes straight,
 * whitespace collapsed), so cues and hashes see one spelling. The words themselves are kept.
 */
export function tidyTypography(text: string): string {
  return stripEmoji(text.normalize('NFC'))
    .replace(/[’‘ʼ`´]/g, "'")
    .replace(/[“”„]/g, '"')
    .replace(/\s+/g, ' ')
    .trim();
}

function procedureFrom(heading: string | undefined, steps: string[]): string {
  // Steps run on after the heading, so each starts lower-case (unless it opens with an acronym).
  const body = steps
    .map((s) => tidyTypography(s).replace(/[\s.;,!]+$/, ''))
    .filter(Boolean)
    .map((s) => (/^\p{Lu}\p{Ll}/u.test(s) ? s.charAt(0).toLowerCase() + s.slice(1) : s))
    .join('; ');
  return heading ? `${tidyTypography(heading).replace(/:\s*$/, '')}: ${body}` : body;
}

const STEPS_HEADING = /\b(?:how|steps?|recipe|routine|process|instructions?|procedure|method|checklist|to [a-z]+)\b/i;

/** A numbered list is a procedure when its heading says so or most items are instructions;
 * "Things about me: 1. I live in Paris 2. I'm vegan" is a list of facts instead. */
function areSteps(heading: string | undefined, steps: string[]): boolean {
  if (heading !== undefined && STEPS_HEADING.test(heading)) return true;
  return steps.filter((s) => startsImperative(s)).length * 2 >= steps.length;
}

/** Split first-person clauses glued by "and I ...", when each side stands on its own. A bare comma
 * is left alone: "I don't work at Siemens anymore, I joined Bosch" is one correction, not two facts. */
const CLAUSE_JOIN = /\s*,?\s+(?:and|also|plus)\s+(?=(?:i|i'm|im|i've|i'd|i'll|my|we|we're|we've|our)\b)/gi;
const SUBORDINATE = /^(?:if|when|whenever|because|since|although|though|while|as|after|before|unless|until|once)\b/i;

function splitClauses(sentence: string): string[] {
  const parts: string[] = [];
  let rest = sentence;
  for (;;) {
    let cut: { at: number; next: number } | undefined;
    for (const m of rest.matchAll(CLAUSE_JOIN)) {
      const left = rest.slice(0, m.index);
      const right = rest.slice(m.index + m[0].length);
      if (SUBORDINATE.test(left.trim()) || !hasVerb(left) || !hasVerb(right)) continue;
      cut = { at: m.index, next: m.index + m[0].length };
      break;
    }
    if (!cut) break;
    parts.push(rest.slice(0, cut.at));
    rest = rest.slice(cut.next);
  }
  parts.push(rest);
  return parts.map((p) => p.trim()).filter((p) => p.length > 0);
}

/** Candidate statements of a turn, in order. */
export function segment(text: string): Statement[] {
  const out: Statement[] = [];
  const lines = text.replace(/\r\n?/g, '\n').split('\n');
  let steps: string[] = [];
  let heading: string | undefined;
  const flushSteps = () => {
    if (steps.length >= 2 && areSteps(heading, steps)) out.push({ text: procedureFrom(heading, steps), procedure: true });
    else {
      if (heading !== undefined) pushLine(heading);
      for (const s of steps) pushLine(s);
    }
    steps = [];
    heading = undefined;
  };
  const pushLine = (line: string) => {
    for (const sentence of splitSentences(line)) {
      for (const piece of sentence.split(/\s*;\s+/)) {
        for (const clause of splitClauses(piece)) out.push({ text: clause, procedure: false });
      }
    }
  };
  for (let i = 0; i < lines.length; i++) {
    const line = (lines[i] ?? '').trim();
    const numbered = NUMBERED.exec(line);
    if (numbered?.[1]) {
      if (steps.length === 0) {
        // A heading that ends with a colon right above the first step belongs to the steps.
        const prev = out.length > 0 && /:\s*$/.test((lines[i - 1] ?? '').trim()) ? out.pop() : undefined;
        heading = prev?.text;
      }
      steps.push(numbered[1]);
      continue;
    }
    if (steps.length > 0 || heading !== undefined) flushSteps();
    if (line.length === 0) continue;
    const bullet = BULLET.exec(line);
    pushLine(bullet?.[1] ?? line);
  }
  flushSteps();
  return out;
}

/** Leading discourse markers and pleasantries that carry nothing ("ok so", "hi there,", "btw"). */
const LEADING_SPACED = /^(?:no thanks|no thank you|hi there|hello there|hey there|hi|hello|hey|heya|hiya|ok(?:ay)?|okie|kk?|lol|lmao|ha(?:ha)+|he(?:he)+|yes|yeah|yep|yup|thanks(?: so much| a lot)?(?! for\b)|thank you(?: so much| very much)?(?! for\b)|thx|ty|btw|fyi|honestly|tbh|by the way|just so you know|oh and|um+|uh+|hmm+|for the record|(?:please )?(?:remember|note|keep in mind)(?: that|:)|please note|just fyi)(?=[\s,.!:;]|$)[\s,.!:;-]*/i;
/** "so", "and", "well" open a statement without adding to it when the speaker follows ("so I ..."). */
const LEADING_CONNECTIVE = /^(?:so|and|also|well|oh|anyway|anyways|plus|but yeah|now)\s+(?=(?:i|i'm|im|i've|i'd|i'll|my|we|we're|we've|our|wait|actually|sorry)\b)/i;
/** A label in front of the statement ("Quick update: I started ..."). */
const LEADING_LABEL = /^(?:quick |small |brief |little |short )?(?:intro|introduction|update|note|heads up|context|background|info|fyi)\s*:\s*/i;
const LEADING_PUNCTUATED = /^(?:great|cool|nice|awesome|perfect|sounds good|got it|alright|all right|sure|oh|ah|well|so|anyway|anyways|also|plus|and|good (?:morning|afternoon|evening))\s*[,.!:;]+\s*/i;
const TRAILING = /[\s,.!]+(?:lol|lmao|ha(?:ha)+|he(?:he)+|(?:thanks|thank you)(?: so much| a lot| for asking)?|thx|ty|please|btw|cheers)\s*[.!]*$/i;

/** The statement without the pleasantries around it; may be empty (the whole thing was filler). */
export function stripPleasantries(text: string): string {
  let s = tidyTypography(text);
  for (let guard = 0; guard < 12; guard++) {
    const before = s;
    s = s.replace(LEADING_SPACED, '').replace(LEADING_PUNCTUATED, '').replace(LEADING_CONNECTIVE, '').replace(LEADING_LABEL, '').replace(TRAILING, '').trim();
    if (s === before) break;
  }
  return s;
}

/** Final form of stored content: capitalised, lone "i" fixed, closed with punctuation. */
export function finishContent(text: string): string {
  let s = tidyTypography(text)
    .replace(/\bi(?=(?:'m|'ve|'d|'ll)?\b)(?!\.e\.)/g, 'I')
    .replace(/^[\s,;:\-–—]+|[\s,;:\-–—]+$/g, '');
  if (/^\p{Ll}/u.test(s) && !/^\p{Ll}\p{Lu}/u.test(s)) s = s.charAt(0).toUpperCase() + s.slice(1);
  if (s.length > 0 && !/[.!?…]["')\]]?$/.test(s)) s += '.';
  return s;
}
