// What the observe extractor treats as saying nothing: acknowledgements, greetings, laughter,
// emoji, pleasantries, questions without a statement, and sentences with no content words left
// once pronouns, auxiliaries and small talk are taken out.

/** Words that, on their own or only with each other, make a turn filler ("ok thanks so much lol"). */
const FILLER_WORDS = new Set(`
  ok okay okie k kk thanks thank thx ty tysm you u so much very lol lmao rofl haha hehe hi hello hey
  heya hiya there yo sounds sound good great cool nice awesome perfect got it yes yeah yea yep yup ya
  no nope nah sure bye goodbye goodnight later cheers alright all right fine wow oh ah aha hmm um uh
  that that's thats this is makes sense np problem welcome morning afternoon evening night have a day
  too again appreciate appreciated will do understood noted gotcha exactly indeed totally absolutely
  definitely please and but well anyway lovely amazing brilliant sweet neat excellent wonderful
  fantastic the ttyl brb for your help really helpful useful to meet not worries ya'll yay woohoo
  omg lmk idk same here lots of weekend plan just okey mhm uh-huh kinda pretty true why rock rocks
  see talk speak soon
`.split(/\s+/).filter(Boolean));

/** Whole-sentence pleasantries and reactions that use words outside the list above. */
const FILLER_PATTERNS: RegExp[] = [
  /^(?:i see|me too|my pleasure|never ?mind|no thanks|you too|(?:you're|you are) (?:very )?welcome|you rock|you're the best)$/,
  /^(?:good|great|nice|fair) (?:job|question|point|idea|enough|one|call)$/,
  /^(?:of course|makes sense|that makes sense|i agree|i understand|i know|i don't know|i dunno|i'm not sure|no idea)(?: (?:yet|either|about (?:that|it|this)|tbh|honestly|lol))*$/,
  /^(?:see|talk to|speak to|catch) you(?: [\w']+){0,3}$/,
  /^(?:let me|lemme) (?:think|check|see|know)\b/,
  /^(?:i'm|i am|im) (?:(?:so|very|really|pretty|doing|just|a bit|kinda|all|still|also) )*(?:fine|good|great|ok|okay|well|alright|back|here|ready|done|tired|sleepy|hungry|bored|busy|excited|happy|glad|sorry|confused|lost|browsing|looking|stressed|thinking)(?: (?:thanks|thank you|today|now|right now|too|then|lol))*$/,
  /^(?:hope (?:you're|you are|you have|all is|that helps|this helps)|have a (?:good|great|nice|lovely) )/,
  /^(?:how are you|how's it going|what's up|wassup|sup)\b/,
  /^(?:that|this|it) (?:works|worked|is fine|sounds (?:good|great|fine|perfect))(?: (?:for me|for us|great|perfect|well|fine|now|too|then))*$/,
  /^i (?:have|got|had) (?:a|another|one more|some|two|a few|a couple of) (?:quick |small |follow-up |more )?questions?\b/,
  /^i(?:'m| am| was) (?:just )?(?:wondering|curious)\b/,
  /^i need (?:some |your )?help\b/,
  /^i'm (?:\w+ )?(?:\d+|a few|a couple of|five|ten|twenty) (?:minutes?|mins?|hours?|hrs?) (?:away|late|early|out|behind)$/,
  /^(?:sorry|apologies|my apologies)(?: (?:for|about) (?:the |my |this )?(?:late |slow |delayed |long )?(?:reply|response|answer|delay|wait|confusion|typo|typos|mess))?$/,
];

/** Small talk about the weather says nothing durable unless the speaker ties it to themselves. */
const WEATHER = /\b(?:weather|raining|rainy|sunny|snowing|snowy|forecast|cloudy|windy|so hot|so cold|freezing|humid)\b/;

function collapseRepeats(word: string, keep: number): string {
  return word.replace(/(\p{L})\1{2,}/gu, (_m, c: string) => c.repeat(keep));
}

function isFillerWord(word: string): boolean {
  if (/^(?:ha){2,}h?$|^(?:he){2,}h?$|^l+o+l+$|^lmf?ao+$|^x+d+$|^a*h+a+h+a*$/.test(word)) return true;
  return FILLER_WORDS.has(word) || FILLER_WORDS.has(collapseRepeats(word, 1)) || FILLER_WORDS.has(collapseRepeats(word, 2));
}

/** The text as a regular expression that matches it literally. */
export function escapeRegExp(text: string): string {
  return text.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
}

/** Lower-cased words, apostrophes kept inside words ("don't", "i'm"). */
export function words(text: string): string[] {
  return text.toLowerCase().match(/[\p{L}\p{N}]+(?:['-][\p{L}\p{N}]+)*/gu) ?? [];
}

/** The lower-cased form the cue patterns read: straight apostrophes, chat spellings repaired. */
export function cueView(text: string): string {
  return text
    .toLowerCase()
    .replace(/\bim\b/g, "i'm")
    .replace(/\bive\b/g, "i've")
    .replace(/\b(don|doesn|didn|can|won|isn|aren|wasn|shouldn|wouldn)t\b/g, "$1't")
    .replace(/\bi\s+am\b/g, "i'm")
    .replace(/\s+/g, ' ')
    .trim();
}

/** The sentence says nothing worth keeping whatever the role (checked on the stripped statement). */
export function isFiller(core: string): boolean {
  const ws = words(core);
  if (ws.length === 0) return true;
  if (ws.every(isFillerWord)) return true;
  const view = ws.join(' ');
  if (FILLER_PATTERNS.some((p) => p.test(view))) return true;
  const firstPerson = /\b(?:i|i'm|me|my|we|our|us)\b/.test(view);
  return !firstPerson && WEATHER.test(view);
}

const QUESTION_OPENERS = /^(?:(?:please |so |and |but )?(?:can|could|would|will|do|does|did|is|are|am|was|were|should|shall|may|might|have|has|any) (?:you|i|we|it|there|they|he|she|this|that|u|ya|anyone|my|your)\b|(?:what|how|why|when|where|who|whom|which|whose)(?:'s|'re|'d| is| are| do| does| did| can| could| would| should| will| was| were| about| much| many| long| often)\b)/;

/** A question or a request to the assistant rather than a statement (`parsed`: compromise's verdict). */
export function isQuestion(core: string, view: string, parsed: boolean): boolean {
  return parsed || /\?\s*["')\]]?$/.test(core) || QUESTION_OPENERS.test(view);
}

const PIECE_BREAK = /(\s+[-–—]+\s+|[?!]+,?\s+|\s*\.{3,}\s*)/;

/**
 * The statement without pieces that are filler or bare questions, where a dash, "?" or "!" splits
 * it and compromise did not ("No worries - can you help me?, ok"). Unchanged when nothing drops.
 */
export function withoutFillerPieces(core: string): string {
  const parts = core.split(PIECE_BREAK);
  if (parts.length < 3) return core;
  const kept: string[] = [];
  let dropped = false;
  for (let i = 0; i < parts.length; i += 2) {
    const piece = (parts[i] ?? '').trim();
    const sep = parts[i + 1] ?? '';
    const view = words(piece).join(' ');
    const asked = sep.trimStart().startsWith('?') || (i === parts.length - 1 && /\?\s*$/.test(piece)) || QUESTION_OPENERS.test(view);
    if (piece.length === 0 || isFiller(piece) || (asked && !/\b(?:i|i'm|me|my|we|our)\b/.test(view))) {
      dropped = true;
      continue;
    }
    kept.push(piece + sep);
  }
  return dropped ? kept.join('').trim() : core;
}

/** Words that carry no content on their own: pronouns, auxiliaries, light verbs, stance words. */
const LIGHT_WORDS = new Set(`
  i i'm i've i'll i'd me my mine myself we we're we've we'll we'd us our ours you you're your yours it it's
  its this that that's these those them they they're he she him her his hers one ones something anything
  everything nothing thing things stuff lot lots bit
  a an the some any all both each every no not never always also too just so very really quite pretty
  kinda sorta rather still even only then there here now today tonight tomorrow yesterday later soon
  am is are was were be been being do does did doing done don't doesn't didn't have has had having
  get gets got getting go goes going gone went will would shall should can could may might must won't
  can't cannot wouldn't shouldn't isn't aren't wasn't weren't haven't hasn't hadn't gonna wanna gotta
  and or but if because as of to in on at for with from by about into over up down out off than
  like likes love loves prefer prefers enjoy enjoys hate hates dislike want wants need needs make makes
  think thought know knew mean meant guess see saw try tried check agree understand let help tell told
  say said feel felt seem seems look looks sure okay ok yes yeah no fine good great nice cool bad
  idea suggestion answer option response reply way time other another same different former latter
  right wrong
  tired hungry bored busy excited happy glad sorry confused ready back well
`.split(/\s+/).filter(Boolean));

/** Content words left once the light words are gone ("I love it" has none; "I love hiking" has one). */
export function contentWords(view: string): string[] {
  return words(view).filter((w) => !LIGHT_WORDS.has(w));
}
