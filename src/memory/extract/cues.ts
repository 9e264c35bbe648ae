// Intent cues for the observe extractor, read on the lower-cased first-person view of a statement:
// corrections, consent, rules, steps, health, diet, preferences, habits, plans and milestones.
// Slots (single-valued facts about the subject) live in extract-slots.ts.

const CORRECTION: RegExp[] = [
  /^(?:actually|correction|wait|scratch that|my bad|my mistake|to be clear)\b/,
  /^(?:sorry|oops|whoops)[,.!]*\s+(?:typo|i meant|i mean|wrong|that's wrong|it's|it is|my|i'm|i live|i work|the)\b/,
  /^no[,.!;:]\s|^no no\b|^nope[,.!]\s/,
  /\b(?:i meant|i misspoke|i was wrong|i got (?:that|it) wrong)\b|\bi mean,/,
  /\b(?:that's|that is|that was|this is) (?:wrong|not right|incorrect|not correct|a mistake|outdated|out of date)\b/,
  /\bnot\b.*\bany ?more\b/,
  /\bno longer\b/,
  /\b(?:i|we)(?:'ve| have)? (?:just |recently |finally )?(?:moved|relocated) (?:from [\w ,]+? )?(?:to|back)\b/,
  /\b(?:i|we)(?:'ve| have)? (?:just |recently )?(?:changed|switched) (?:my|to|from|jobs|teams|companies|careers)\b/,
  /\b(?:i|we) used to\b/,
  /\b(?:i|we)(?:'ve| have)? (?:just |finally )?moved(?: house| out| in| flats| apartments)?[.!]*$/,
  /\b(?:quit|left) (?:my )?(?:job|company|position|role)\b/,
];

/** "now"/"instead" only mark a correction when the statement fills a slot ("I now live in Oslo"). */
const CORRECTION_WITH_SLOT = /\b(?:now|nowadays|these days|instead|anymore|any more|actually|new)\b/;
/** "..., not Thursday" at the end sets one value against another. */
const CONTRAST_ENDING = /, not (?:the |a |an |my |on |in |at )?[\w'-]+(?: [\w'-]+)?[.!]?$/;

export function isCorrection(view: string, hasSlot: boolean): boolean {
  if (CORRECTION.some((p) => p.test(view)) || CONTRAST_ENDING.test(view)) return true;
  return hasSlot && CORRECTION_WITH_SLOT.test(view.replace(/\b(?:from now on|right now|for now|now and then)\b/g, ''));
}

const CHANNEL = String.raw`(?:e-?mail|mail|newsletters?|text|sms|message|whatsapp|call|phone|ring|contact|reach|spam|record|notify)\w*`;
const SENDABLE = String.raw`(?:any |more |your )*(?:emails|texts|messages|marketing|newsletters?|promo\w*|offers|deals|updates|notifications|spam|ads)`;
const CONSENT: RegExp[] = [
  new RegExp(String.raw`\b(?:you (?:can|may|are allowed to|have my permission to)|feel free to|(?:it's|it is) (?:ok|okay|fine|alright) (?:to|if you)|i'm (?:happy|fine|ok|okay) (?:to|for you to|with you|if you)|please do)\s+(?:\w+\s+)?${CHANNEL}\b`),
  new RegExp(String.raw`\b(?:don't|do not|never|please stop|stop)\s+(?:ever\s+)?(?:again\s+)?${CHANNEL}\b(?:\s+\w+){0,2}?\s+(?:me|us|my|our)\b`),
  new RegExp(String.raw`\b(?:don't|do not|never|please stop|stop)\s+(?:ever\s+)?(?:send|sending) (?:me|us) ${SENDABLE}\b`),
  new RegExp(String.raw`\b(?:you (?:can|may)|feel free to|please)\s+(?:\w+\s+)?send (?:me|us) ${SENDABLE}\b`),
  /\b(?:don't|do not|never)\s+(?:ever\s+)?(?:share|sell|pass on|give out) (?:my|our) /,
  /\b(?:you (?:can|may|have my permission to)|feel free to|(?:it's|it is) (?:ok|okay|fine) to|i'm (?:happy|fine|ok|okay) for you to) (?:\w+ )?(?:share|use|store|keep) my (?:data|info|information|details|records|medical|health|personal|email|number|address)\b/,
  new RegExp(String.raw`\bstop ${CHANNEL} (?:me|us)\b|\bno more (?:emails|calls|texts|messages|marketing|newsletters|spam)\b`),
  /\b(?:unsubscribe|opt(?:ed|s)?[- ](?:me |them |the user )?(?:out|in)|sign(?:ed)? me up|subscribe me|add me to (?:the|your) (?:mailing|email) list)\b/,
  /\b(?:remove|take) me (?:from|off) (?:the|your|all) /,
  /\bi (?:agree|consent) to\b|\bi (?:don't|do not) (?:consent|agree)\b|\bi (?:withdraw|revoke|give) (?:my )?(?:consent|permission)\b/,
  /\bi (?:don't|do not) (?:want|wish) to (?:be contacted|be called|be emailed|receive|get (?:any )?(?:emails|calls|texts|marketing|newsletters))/,
  /\b(?:has|have) (?:opted|consented|agreed|unsubscribed)\b/,
  /\bi (?:don't|do not) want (?:any |to get |to receive )?(?:more )?(?:marketing|promotional|promotions|newsletters?|emails|calls|texts|spam|notifications)\b/,
];

export function isConsent(view: string, namesSomeone: boolean): boolean {
  // "call me Liz" names the speaker; it does not invite phone calls.
  if (namesSomeone && /\bcall me\b/.test(view) && !/\bcall me (?:at|on|any|after|before|back)\b/.test(view)) return false;
  return CONSENT.some((p) => p.test(view));
}

/** The consent's channel, so a later opt-out supersedes an earlier opt-in for the same channel. */
export function consentSlot(view: string): string {
  if (/\b(?:marketing|newsletters?|promo\w*|offers|deals|advert\w*|mailing list|spam)\b/.test(view)) return 'consent_marketing';
  if (/\b(?:share|sharing|sell|selling|pass on|give out) (?:my|their|the user's|our)\b|\b(?:use|using|store|storing) (?:my|their|the user's) (?:data|info|information|details|records|medical|health|personal)\b|\bdata\b/.test(view)) return 'consent_data_sharing';
  if (/\brecord(?:ing|ed)?\b/.test(view)) return 'consent_recording';
  if (/\be-?mails?\b|\bemail(?:ing|ed)\b|\bmail\b/.test(view)) return 'consent_email';
  if (/\b(?:text|texts|texting|sms|message|messages|messaging|whatsapp)\b/.test(view)) return 'consent_sms';
  if (/\b(?:call|calls|calling|phone|ring)\b/.test(view)) return 'consent_phone';
  if (/\b(?:terms|privacy policy|conditions)\b/.test(view)) return 'consent_terms';
  return 'consent_contact';
}

const RULE: RegExp[] = [
  /^(?:please |and |also )?(?:always|never)\b/,
  /\b(?:from now on|going forward|moving forward|from here on|every time you|whenever you)\b/,
  /\b(?:in (?:the )?future|next time),? (?:please |could you |can you )?(?:always|never|don't|do not|use|book|make|remember|call|send|reply|answer|write|keep|give|show|remind|ask|check|include|avoid|skip|get)\b/,
  /^(?:please )?(?:don't|do not) ever\b/,
  /^(?:please )?make sure (?:to|you|that)\b/,
  /\b(?:must|should) (?:always|never)\b|\bmust not\b|\bunder no circumstances\b/,
];

export function isRule(view: string): boolean {
  return RULE.some((p) => p.test(view));
}

/** A persona line in a system prompt ("You are a helpful assistant") is not a rule to remember. */
export function isPersona(view: string): boolean {
  return /^(?:you are|you're|your name is|as an? (?:ai|assistant|language model))\b/.test(view) && !/\b(?:must|never|always|do not|don't)\b/.test(view);
}

/** A directive in a system turn: a rule cue, a modal of obligation, or an imperative opening. */
export function isSystemDirective(view: string, imperative: boolean): boolean {
  if (isPersona(view)) return false;
  return isRule(view) || imperative || /\b(?:must|should|shall|needs? to|has to|is required to)\b/.test(view);
}

const SEQUENCE = /\b(?:first|firstly|then|next|after that|afterwards|finally|lastly|second|secondly|step \d+)\b/g;

export function isProcedure(view: string): boolean {
  const markers = new Set(view.match(SEQUENCE) ?? []);
  return (markers.has('first') || markers.has('firstly') || markers.has('step 1')) && markers.size >= 2;
}

const HEALTH = /\b(?:allerg\w*|anaphyla\w*|epipen|intoleran\w*|celiac|coeliac|gluten|lactose|diabet\w*|insulin|asthma\w*|inhaler|epilep\w*|seizures?|pregnan\w*|blood pressure|hypertension|cholesterol|medications?|meds|prescri\w*|diagnos\w*|chronic|migraines?|arthritis|adhd|autis\w*|depression|anxiety|panic attacks|pacemaker|wheelchair|hearing aid|deaf|blind|heart condition|cancer|chemo\w*|surgery|disabilit\w*|disabled|dyslexi\w*)\b/;
/** A diet said of someone ("I'm vegan", "my partner is vegetarian"), not a vegan cake. */
const DIET_OF_SOMEONE = /\b(?:i'm|is|are|we're|they're|i've been|has been|have been)(?: not| no longer)? (?:a |an |strictly |fully |mostly |strict )?(?:vegan|vegetarian|pescatarian|pescetarian|kosher|halal)\b|\b(?:eat|eats|keep|keeps) (?:kosher|halal)\b/;

export function isHealth(view: string): boolean {
  // Diets ride along here for the importance boost; the diet slot names them separately.
  return HEALTH.test(view) || DIET_OF_SOMEONE.test(view);
}

const PREFERENCE: RegExp[] = [
  /\b(?:i|we) (?:really |much |definitely |strongly |usually |generally |also |still |now |absolutely |kind of |kinda |actually )?(?:prefer|like|love|enjoy|adore|hate|dislike|detest|loathe)\b/,
  /\b(?:i|we)(?:'d| would) (?:much |really |definitely )?(?:prefer|rather)\b/,
  /\b(?:i|we) (?:really )?(?:don't|do not|can't|cannot) (?:stand|like|bear|handle|enjoy|love|care for)\b/,
  /\bi'm (?:not )?(?:a |really |very |such a )?(?:big |huge )?(?:fan of|into|keen on|crazy about)\b/,
  /\bmy (?:favou?rite|preferred|go-to)\b/,
  /\bi'm (?:a |an )?(?:big |huge |massive |lifelong |die-hard )?[\w-]+ (?:fan|supporter)\b/,
  /\bi (?:take|have|drink|like|want|order) my (?:tea|coffee|latte|steak|eggs|burgers?|pizza|martini|whisky|whiskey|drinks?)\b/,
  /\b(?:call me|i go by|my nickname is|i prefer to be called|i'd like to be called)\b/,
];

export function isPreference(view: string): boolean {
  return PREFERENCE.some((p) => p.test(view));
}

const BEHAVIOR: RegExp[] = [
  /\b(?:i|we) (?:usually|normally|typically|generally|always|often|tend to|rarely|seldom|regularly|never|mostly|sometimes|occasionally)\b/,
  /\b(?:every|each) (?:day|morning|evening|night|week|weekend|month|year|monday|tuesday|wednesday|thursday|friday|saturday|sunday|weekday|other \w+)\b/,
  /\bon (?:weekends|weekdays|mondays|tuesdays|wednesdays|thursdays|fridays|saturdays|sundays)\b/,
  /\b(?:once|twice|three times) (?:a|per) (?:day|week|month|year)\b/,
];

export function isBehavior(view: string, repeatingDate: boolean): boolean {
  return repeatingDate || BEHAVIOR.some((p) => p.test(view));
}

const MILESTONE = /\b(?:got (?:married|engaged|divorced|promoted|fired|laid off|a new job|a puppy|a dog|a cat)|(?:had|having|expecting) (?:a baby|twins|surgery)|gave birth|passed away|graduat\w*|retir\w*|broke up|new job)\b/;
const EVENT = /\bi'm (?:at|in|on) .*\b(?:right now|at the moment)\b|\b(?:surgery|operation|accident|diagnosed|going to|gonna|planning|plan to|about to|scheduled|appointment|booked|booking|reservation|flight|trip|vacation|holiday|wedding|interview|conference|meeting|visit(?:ed|ing)?|went to|travel\w*|flying|fly to|moving to|starts?|started|finished|begins?|arriv\w*|leaving|leave for|will be|'ll be|birthday party|anniversary)\b/;

export function isMilestone(view: string): boolean {
  return MILESTONE.test(view);
}

export function isEvent(view: string): boolean {
  return MILESTONE.test(view) || EVENT.test(view);
}

export function isHedged(view: string): boolean {
  return /\b(?:i think|i guess|i believe|i suppose|maybe|probably|perhaps|possibly|might|not sure|i'm not certain)\b/.test(view);
}

export function isFirstPerson(view: string): boolean {
  return /\b(?:i|i'm|i've|i'll|i'd|me|my|mine|myself|we|we're|we've|we'll|us|our|ours)\b/.test(view);
}
