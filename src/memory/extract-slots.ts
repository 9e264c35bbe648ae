// Slots for the observe extractor: a stable key for a single-valued fact about the subject
// ('residence', 'employer', 'preferred_milk', ...), so that a later statement in the same slot
// supersedes the earlier one. Read on the lower-cased first-person view of a statement.
import { isActorNoun, isPersonName, singular, type SpottedDate } from './extract-nlp.js';

export interface SlotContext {
  /** Lower-cased, first-person view ("you prefer" from an assistant already reads "i prefer"). */
  view: string;
  /** People, places and organisations named in the statement. */
  entities: string[];
  date: SpottedDate;
}

const OCCUPATIONS = new Set(`
  accountant actor actress analyst architect artist attorney baker barista bartender carpenter cashier ceo cfo chef
  cleaner clerk coach consultant cook coo cto dentist designer developer director doctor driver economist editor
  electrician engineer entrepreneur farmer firefighter founder freelancer hairdresser intern journalist judge
  lawyer lecturer librarian manager mechanic midwife musician nurse paramedic pharmacist photographer physician
  physiotherapist pilot plumber po principal producer professor programmer psychologist realtor receptionist
  researcher salesperson scientist secretary student surgeon teacher technician therapist translator tutor vet
  veterinarian waiter waitress writer
`.split(/\s+/).filter(Boolean));

/** Nouns compromise tags as actors that are relations or tastes, not jobs. */
const NOT_A_JOB = new Set(`
  fan person member customer user lover wife husband mother father mom mum dad parent son daughter friend guy
  girl boy man woman kid child beginner vegetarian vegan owner citizen resident native patient adult twin
  sister brother grandmother grandfather grandparent neighbor neighbour fiance fiancee partner boss drinker
  eater smoker runner reader fanatic nerd geek morning night
`.split(/\s+/).filter(Boolean));

/** Single-word tastes that name their category only by what they are. */
const TASTE_CATEGORY: Record<string, string> = {
  tea: 'drink', coffee: 'drink', water: 'drink', juice: 'drink', beer: 'drink', wine: 'drink', soda: 'drink',
  espresso: 'drink', latte: 'drink', cappuccino: 'drink', cocoa: 'drink',
  aisle: 'seat', window: 'seat',
  email: 'contact_channel', emails: 'contact_channel', phone: 'contact_channel', calls: 'contact_channel',
  call: 'contact_channel', text: 'contact_channel', texts: 'contact_channel', texting: 'contact_channel',
  sms: 'contact_channel', whatsapp: 'contact_channel',
  metric: 'units', imperial: 'units', celsius: 'units', fahrenheit: 'units',
  english: 'language', french: 'language', spanish: 'language', german: 'language', italian: 'language',
  portuguese: 'language', dutch: 'language', chinese: 'language', mandarin: 'language', japanese: 'language',
  arabic: 'language', hindi: 'language', russian: 'language', korean: 'language',
  mornings: 'time', evenings: 'time', afternoons: 'time', nights: 'time',
};

const LEADING_FILLER = /^(?:the|a|an|my|some|more|much|less|having|using|getting|it|to have)\s+/;
const OBJECT_END = /\s+(?:over|to|than|rather|instead|because|since|when|if|but|and|or|unless|in|on|for|with|at|from|during|please|now|nowadays|anymore|too|these|as|so|all|every|most|whenever)\b.*$|[,.;:!?].*$/;

function slotKey(word: string): string | undefined {
  const key = word.toLowerCase().replace(/[^a-z0-9]+/g, '_').replace(/^_+|_+$/g, '');
  return /^[a-z][a-z0-9_]{1,30}$/.test(key) ? key : undefined;
}

/** The category of a preferred thing: the head noun of "oat milk", or the kind of a lone "tea". */
function tasteCategory(phrase: string): string | undefined {
  let p = phrase.trim();
  for (let i = 0; i < 3; i++) p = p.replace(LEADING_FILLER, '');
  p = p.replace(OBJECT_END, '').trim();
  const ws = p.split(/\s+/).filter((w) => /^[a-z][a-z-]*$/.test(w));
  const head = ws[ws.length - 1];
  if (!head || head.length < 3) return undefined;
  const known = TASTE_CATEGORY[head];
  if (known) return known;
  return ws.length > 1 ? slotKey(singular(head)) : undefined;
}

function preferenceSlot(view: string): string | undefined {
  const channel = /\bprefer (?:to be|being) (?:contacted|reached|called|emailed|texted|messaged)(?: \w+)? (?:by|via|through|over|on) (?:a |an )?(\w+)/.exec(view);
  if (channel) return 'preferred_contact_channel';
  const fav = /\bmy (?:favou?rite|preferred|go-to) ([a-z][a-z -]*?) (?:is|are|'s|has to be|would be|at the moment is|these days is)\b/.exec(view);
  if (fav?.[1]) {
    const head = fav[1].trim().split(/\s+/).pop() ?? '';
    const key = TASTE_CATEGORY[head] ?? slotKey(singular(head));
    return key ? `preferred_${key}` : undefined;
  }
  const prefer = /\b(?:i|we)(?:'d| would)? (?:really |much |definitely |strongly |usually |generally |also |still |now |actually |always )?(?:prefer|rather have|rather drink|rather eat|rather use)\s+(.+)$/.exec(view);
  if (prefer?.[1] && !/^to\b/.test(prefer[1])) {
    const key = tasteCategory(prefer[1]);
    return key ? `preferred_${key}` : undefined;
  }
  return undefined;
}

function titleCase(word: string): string {
  return word.charAt(0).toUpperCase() + word.slice(1);
}

function jobTitleSlot(view: string): boolean {
  if (/\bmy (?:job|job title|title|role|position|profession|occupation) is\b|\bi work as\b|\bi'm working as\b/.test(view)) return true;
  const m = /\bi'm (?:an?|the) ([a-z][a-z -]*?)(?=$|[,.;!]| (?:at|for|in|with|and|but|who|from|by|since|on|of)\b)/.exec(view);
  const head = m?.[1]?.trim().split(/\s+/).pop();
  if (!head || NOT_A_JOB.has(head)) return false;
  return OCCUPATIONS.has(head) || isActorNoun(head);
}

const NAMED_BY_ENTITY = (entities: string[]) => entities.length > 0;

/** The slot a statement fills, or undefined when it is not a single-valued fact about the subject. */
export function detectSlot({ view, entities, date }: SlotContext): string | undefined {
  if (/[\w.+-]+@[\w-]+(?:\.[\w-]+)+/.test(view) && /\b(?:my (?:e-?mail|address)|e-?mail me|reach me|contact me|i'm at|write to me)\b/.test(view)) return 'email';
  if (/\+?\d[\d\s().-]{6,}\d/.test(view) && /\bmy (?:phone|number|cell|mobile|tel|telephone|whatsapp)\b|\b(?:call|text|reach|ring) me (?:at|on)\b/.test(view)) return 'phone';
  if (/\bmy name(?:'s| is)\b|\bi'm called\b|\bthe name's\b|\bi'm named\b/.test(view)) return 'name';
  const intro = /^(?:so )?i'm ([a-z][\w'-]*)(?: ([a-z][\w'-]*))?$/.exec(view.replace(/[.!]+$/, ''));
  if (intro?.[1] && isPersonName(`I'm ${titleCase(intro[1])}${intro[2] ? ` ${titleCase(intro[2])}` : ''}`)) return 'name';
  const nick = /\b(?:call me|i go by|my nickname is|i prefer to be called|i'd like to be called|address me as)\s+([a-z][\w'-]*)/.exec(view);
  if (nick?.[1] && !/^(?:at|on|back|later|tomorrow|anytime|any|if|when|after|before|whenever|sometime|again|now|please)$/.test(nick[1])) return 'preferred_name';
  if (/\bmy (?:birthday|bday|birth date|date of birth|dob)\b/.test(view)) return 'birthday';
  if (/\bi was born (?:on|in)\b/.test(view)) return date.occurredAt ? 'birthday' : NAMED_BY_ENTITY(entities) ? 'birthplace' : undefined;
  if (/\bi'm (\d{1,3})(?: years? old| yrs? old| yo| y\/o)?\s*(?:$|[,.;!]|and\b|but\b|now\b)|\bi'm (?:now )?\d{1,3} years? old\b|\bi (?:just )?turned \d{1,3}\b|\bmy age is\b/.test(view)) return 'age';
  if (/\bmy (?:wife|husband|partner|girlfriend|boyfriend|fianc[eé]e?|spouse)(?:'s name)? is ([a-z]+)/.test(view) && entities.some((e) => isPersonName(e))) return 'partner';
  if (/\bi'm (?:married to|engaged to|dating|seeing)\b/.test(view) && entities.some((e) => isPersonName(e))) return 'partner';
  if (/\bmy (?:home |postal |mailing |street )?address is\b/.test(view)) return 'address';
  const place = NAMED_BY_ENTITY(entities);
  if (place && /\b(?:i|we) (?:currently |now |still |actually )?(?:live|reside|stay) in\b|\b(?:i'm|we're) (?:currently |now )?(?:living|based|located|settled) in\b|\b(?:i|we)(?:'ve| have)? (?:just |recently |finally |actually )?(?:moved|relocated) (?:to|back to)\b|\bmy (?:home|house|flat|apartment) is in\b|\b(?:i|we)(?:'ve| have) (?:lived|been living) in\b|\b(?:i'm|we're) now (?:living |based )?in\b|\b(?:i'm|we're) in [a-z]+(?: [a-z]+)? now\b/.test(view)) return 'residence';
  if (place && /\b(?:i|we) (?:currently |now |still |actually )?work (?:at|for)\b|\bi'm (?:currently |now )?(?:employed|working) (?:at|by|for)\b|\bmy (?:employer|company) is\b|\bi (?:just |recently )?(?:joined|started (?:working )?at|(?:got|started|have|accepted) a (?:new )?job (?:at|with)|(?:got|accepted) an offer from)\b/.test(view)) return 'employer';
  if (jobTitleSlot(view)) return 'job_title';
  if (/\bi'm (?:not |no longer )?(?:a |an )?(?:strict |mostly |now |fully |also |still )?(?:vegetarian|vegan|pescatarian|pescetarian|flexitarian|keto|paleo|halal|kosher|plant-based)\b|\bi (?:eat|keep|follow|stick to) (?:a |an |only )?(?:strict(?:ly)? )?(?:halal|kosher|keto|vegan|vegetarian|paleo|low-carb|plant-based|pescatarian)\b|\bi'm on (?:a |an )?(?:strict )?(?:keto|vegan|vegetarian|paleo|low-carb|plant-based) diet\b|\bi (?:don't|do not|no longer|never) eat (?:any )?(?:meat|pork|beef|fish|dairy|eggs|animal products|red meat)\b|\bmy diet is\b/.test(view)) return 'diet';
  if (/\bmy pronouns are\b/.test(view)) return 'pronouns';
  if (/\bmy time ?zone is\b|\bi'm in the [\w/ ]*time ?zone\b/.test(view)) return 'timezone';
  if (place && /\bi'm (?:originally )?from\b|\bi grew up in\b|\bmy hometown is\b/.test(view)) return 'hometown';
  if (/\bmy (?:native|first|mother) (?:language|tongue) is\b/.test(view)) return 'native_language';
  return preferenceSlot(view);
}
