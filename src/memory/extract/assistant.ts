// Assistant turns in the observe extractor: an assistant's words are kept only where they record
// something about the user ("Noted: you prefer window seats"), stripped of the acknowledgement,
// and read in the first person so the same cues serve user and assistant turns.

/** Acknowledgements an assistant wraps around what it records ("Noted:", "I'll remember that"). */
const ASSISTANT_ACK = /^(?:ok(?:ay)?|sure|great|got it|noted|understood|perfect|thanks for (?:letting me know|sharing(?: that)?|telling me)|thank you(?: for (?:letting me know|sharing|telling me))?|good to know|i see|absolutely|of course|certainly|done|saved|remembered|all set)(?=[\s,.!:;-]|$)[\s,.!:;-]*/i;
const ASSISTANT_LEAD = /^(?:(?:based on|from) what you(?:'ve)? (?:told me|said|shared|mentioned)|as you (?:mentioned|said)|i(?:'ll| will) (?:remember|note|keep in mind|make a note)|i(?:'ve| have) (?:noted|saved|recorded|remembered|made a note)|i(?:'ve| have) updated (?:my notes|your profile|your preferences)(?: to (?:say|show|reflect))?|(?:so )?you (?:mentioned|said|told me|noted|indicated)|noting|(?:just )?to confirm|i understand)(?: that)?(?=[\s,.!:;-]|$)[\s,:;-]*/i;
/** The assistant's promise after the fact ("..., I'll keep that in mind"). */
const ASSISTANT_TAIL = /[\s,;-]*(?:and |so )?i(?:'ll| will) (?:keep (?:that|it|this) in mind|remember (?:that|it|this)|make a note(?: of (?:that|it))?|note (?:that|it))[.!]*$/i;
/** A plain fact about the user, read after "you" became "i": "you have two kids", "your daughter is ...". */
export const ASSISTANT_FACT = /^i (?:have|own|live|work|was|used to|speak|drive|grew up|eat|drink|play|study|studied|teach|run|volunteer)\b|^i'm (?:an? |from |based |originally |married|allergic|expecting|pregnant)|^my (?:\w+ ){1,2}(?:is|are|was|were|has|have)\b/;
const ASSISTANT_NOT_ABOUT_USER = /^you(?:'re| are) (?:welcome|right|correct|very welcome|all set|good to go|absolutely right)\b|^you (?:can|could|should|might|may|will|'ll|would|'d|need to|have to|must|want to|got it|too|bet)\b|^you(?:'ll|'d)\b/i;

/** The part of an assistant sentence that states something about the user ("you prefer window
 * seats" from "Noted: you prefer window seats."), or undefined when it says nothing about them. */
export function assistantStatement(core: string): string | undefined {
  let s = core;
  for (let guard = 0; guard < 6; guard++) {
    const next = s.replace(ASSISTANT_ACK, '').replace(ASSISTANT_LEAD, '').trim();
    if (next === s) break;
    s = next;
  }
  if (!/^(?:you(?:'re|'ve)?|your)\b/i.test(s) || ASSISTANT_NOT_ABOUT_USER.test(s)) return undefined;
  return s.replace(ASSISTANT_TAIL, '');
}

/** An assistant's "you prefer ..." read as the subject's "i prefer ..." so one set of cues serves both. */
export function secondToFirst(view: string): string {
  return view
    .replace(/\byou're\b|\byou are\b/g, "i'm")
    .replace(/\byou've\b/g, "i've")
    .replace(/\byou'll\b/g, "i'll")
    .replace(/\byou'd\b/g, "i'd")
    .replace(/\byourself\b/g, 'myself')
    .replace(/\byours\b/g, 'mine')
    .replace(/\byour\b/g, 'my')
    .replace(/\byou\b/g, 'i');
}
