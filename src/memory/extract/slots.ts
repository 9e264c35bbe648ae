// Slots for the observe extractor: a stable key for a single-valued fact about the subject
// ('residence', 'employer', 'preferred_milk', ...), so that a later statement in the same slot
// supersedes the earlier one. Read on the lower-cased first-person view of a statement.
import { isActorNoun, isPersonName, singular, type SpottedDate } from './nlp.js';

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
const OBJECT_END = /\s+(?:over|to|than|rather|instead|because|since|when|if|but|and|or|unless|in|on|for|with|without|at|from|during|by|near|next|outside|inside|under|please|now|nowadays|anymore|too|these|as|so|all|every|most|whenever)\b.*$|[,.;:!?].*$/;

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
  const how = /\bi (?:take|have|drink|like|want|order) my (tea|coffee|latte|steak|eggs|burgers?|pizza|martini|whisky|whiskey)\b/.exec(view);
  if (how?.[1]) return `preferred_${singular(how[1])}`;
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
  if (/(?:^|, |and )my (?:job|job title|title|role|position|profession|occupation) is\b|\bi work as\b|\bi'm working as\b/.test(view)) return true;
  if (/\bi(?: work|'m working)\b[^,.;]*?\bas (?:an? |the )?[a-z]/.test(view)) return true;
  const m = /\bi'm (?:an?|the) ([a-z][a-z -]*?)(?=$|[,.;!]| (?:at|for|in|with|and|but|who|from|by|since|on|of)\b)/.exec(view);
  const head = m?.[1]?.trim().split(/\s+/).pop();
  if (!head || NOT_A_JOB.has(head)) return false;
  return OCCUPATIONS.has(head) || isActorNoun(head);
}

const EMAIL_ADDRESS = /[\w.+-]+@[\w-]+(?:\.[\w-]+)+/;
const EMAIL_CUE = /\b(?:my (?:e-?mail|address)|e-?mail me|reach me|contact me|i'm at|write to me)\b/;
const PHONE_NUMBER = /\+?\d[\d\s().-]{6,}\d/;
const PHONE_CUE = /\bmy (?:new |current |work |home |mobile |cell |personal )?(?:phone|number|cell|mobile|tel|telephone|whatsapp)\b|\b(?:call|text|reach|ring) me (?:at|on)\b/;
const NAME = /\bmy name(?:'s| is)\b|\bi'm called\b|\bthe name's\b|\bi'm named\b/;
const INTRO = /^(?:so )?i'm ([a-z][\w'-]*)(?: ([a-z][\w'-]*))?(?=$|[,.!])/;
const NICKNAME = /\b(?:call me|i go by|my nickname is|i prefer to be called|i'd like to be called|address me as)\s+([a-z][\w'-]*)/;
const NOT_A_NICKNAME = /^(?:at|on|back|later|tomorrow|anytime|any|if|when|after|before|whenever|sometime|again|now|please)$/;
const BIRTHDAY = /\bmy (?:birthday|bday|birth date|date of birth|dob)\b/;
const AGE = /\bi'm \d{1,3}(?: years? old| yrs? old| yo| y\/o)?\s*(?:$|[,.;!]|and\b|but\b|now\b)|\bi'm (?:now )?\d{1,3} years? old\b|\bi (?:just )?turned \d{1,3}\b|\bmy age is\b/;
const PARTNER = /\bmy (?:wife|husband|partner|girlfriend|boyfriend|fianc[eé]e?|spouse)(?:'s name)? is [a-z]+|\bi'm (?:married to|engaged to|dating|seeing)\b/;
const ADDRESS = /\bmy (?:home |postal |mailing |street )?address is\b/;
const RESIDENCE = new RegExp([
  String.raw`\b(?:i|we) (?:currently |now |still |actually )?(?:live|reside|stay) in\b`,
  String.raw`\b(?:i'm|we're) (?:currently |now )?(?:living|based|located|settled) in\b`,
  String.raw`\b(?:i|we)(?:'ve| have)? (?:just |recently |finally |actually )?(?:moved|relocated) (?:from [\w ,]+? )?(?:to|back to)\b`,
  String.raw`\bmy (?:home|house|flat|apartment) is in\b`,
  String.raw`\b(?:i|we)(?:'ve| have) (?:lived|been living) in\b`,
  String.raw`\b(?:i'm|we're) now (?:living |based )?in\b`,
  String.raw`\b(?:i'm|we're) in [a-z]+(?: [a-z]+)? now\b`,
].join('|'));
const EMPLOYER_NAMED = /\bmy (?:employer|company) is\b/;
const EMPLOYER = new RegExp([
  String.raw`\b(?:i|we) (?:currently |now |still |actually )?work (?:at|for)\b`,
  String.raw`\bi'm (?:currently |now )?(?:employed|working) (?:at|by|for)\b`,
  String.raw`\bi (?:just |recently )?(?:joined|started (?:working )?at|(?:got|started|have|accepted) a (?:new )?job (?:at|with)|(?:got|accepted) (?:an|the|their|a job) offer from)\b`,
].join('|'));
const DIETS = '(?:vegetarian|vegan|pescatarian|pescetarian|flexitarian|keto|paleo|halal|kosher|plant-based)';
const DIET = new RegExp([
  String.raw`\bi'm (?:not |no longer )?(?:a |an )?(?:strict |mostly |now |fully |also |still )?${DIETS}\b`,
  String.raw`\bi(?:'ve| have) been (?:a |an )?(?:strict )?${DIETS}\b`,
  String.raw`\bi (?:eat|keep|follow|stick to) (?:a |an |only )?(?:strict(?:ly)? )?(?:${DIETS}|low-carb)\b`,
  String.raw`\bi'm on (?:a |an )?(?:strict )?(?:${DIETS}|low-carb) diet\b`,
  String.raw`\bi (?:don't|do not|no longer|never) eat (?:any )?(?:meat|pork|beef|fish|dairy|eggs|animal products|red meat)\b`,
  String.raw`\bmy diet is\b`,
].join('|'));
const PRONOUNS = /\bmy pronouns are\b/;
const TIMEZONE = /\bmy time ?zone is\b|\bi'm in the [\w/ ]*time ?zone\b/;
const HOMETOWN = /\bi'm (?:originally )?from\b|\bi grew up in\b|\bmy hometown is\b/;
const NATIVE_LANGUAGE = /\bmy (?:native|first|mother) (?:language|tongue) is\b/;
const PLAN_NOUN = '(?:plan|tier|subscription|package|edition|license|licence|membership)';
/** A plan, tier or subscription: which one the subject is on, a change of it, its end. */
const PLAN = new RegExp([
  String.raw`\b(?:i'm|we're|i was|we were) (?:now |currently |still |already |also )?(?:on|using|subscribed to|paying for|signed up for) (?:the |a |an |our |my )?[\w-]+(?: [\w-]+)? ${PLAN_NOUN}\b`,
  // "downgraded to Pro", "upgraded from Basic to the Team plan this month"; not "upgraded to the new phone".
  String.raw`\b(?:i|we)(?:'ve| have)? (?:just |recently |finally |now |also )?(?:upgraded|downgraded)(?: (?:my|our|the|their|its) (?:${PLAN_NOUN}|account))?(?: from (?:the )?[\w-]+(?: ${PLAN_NOUN})?)? to (?:the |a |an )?[\w-]+(?: ${PLAN_NOUN})?(?=$|[,.;!]| (?:this|last|next|on|in|at|from|after|before|because|since|and|but|as|for|today|yesterday|effective)\b)`,
  String.raw`\b(?:i|we)(?:'ve| have)? (?:just |recently |finally |now |also )?(?:switched|moved|changed|migrated|converted|renewed|subscribed|signed up)\b[^,.;]*?\b${PLAN_NOUN}\b`,
  String.raw`\bmy (?:current )?${PLAN_NOUN} is\b`,
  String.raw`\b(?:i|we)(?:'ve| have)? (?:just |recently )?(?:cancell?ed|ended|terminated|paused) (?:my |our |the |their )?${PLAN_NOUN}\b`,
].join('|'));
/** In or out of care: admitted, discharged, transferred to a ward. */
const CARE_STATUS = /\bi(?:'m| was| got| have been|'ve been)? (?:just |now |currently |finally )?(?:admitted|discharged|readmitted)\b/;
const ACCOUNT_STATUS = /^i'm (?:now |currently |still )?(?:suspended|closed|paused|on hold|past due|overdue|frozen|expired|in trial|on trial|trialing|delinquent|churned|inactive|active|cancell?ed)(?=$|[,.;!])|\bmy (?:account|membership|subscription)(?: status)? is (?:now |currently )?(?:active|inactive|suspended|closed|cancell?ed|paused|on hold|past due|overdue|frozen|expired|in trial|on trial|trialing|delinquent)\b|\bmy status is\b|\b(?:i|we)(?:'ve| have)? (?:just |recently )?churned\b/;
/** Counted things a subject holds one number of at a time ("we have 50 seats", "increased to 80 seats"). */
const COUNTED = 'seats?|licen[cs]es?|users?|employees?|staff|kids|children|cats?|dogs?|pets?|locations?|stores?|offices?|cars?|members?|subscribers?|servers?|devices?|warehouses?|vehicles?|sites?';
const NUMBER = '(?:\\d[\\d,]*|one|two|three|four|five|six|seven|eight|nine|ten|eleven|twelve|a dozen)';
const QUANTITY = new RegExp([
  String.raw`\b(?:i|we) (?:now |currently |still |also )?(?:have|own|need|use|pay for|run|manage|employ|operate|bought|purchased)(?: a total of| only| just)? (${NUMBER}) (${COUNTED})\b`,
  String.raw`\b(?:i|we)(?:'ve| have)? (?:just |recently )?(?:increased|decreased|reduced|grew|dropped|expanded|cut|went (?:up|down)|scaled (?:up|down|back)|added|removed)\b[^,.;]*?\bto (${NUMBER}) (${COUNTED})\b`,
  String.raw`\bmy (?:number of |count of )?(${COUNTED}) (?:count )?(?:is|are) (?:now )?(${NUMBER})\b`,
].join('|'));
/** A promotion or a new role ("promoted to senior manager", "now the head of sales"). */
const ROLE_CHANGE = /\b(?:i|we) (?:was|were|got|have been|'ve been) (?:just |recently |finally )?promoted\b|\bi (?:became|'m now|am now) (?:the |an? )?(?:head|lead|director|manager|vp|vice president|chief|ceo|cto|cfo|coo|president|owner|founder|partner)\b/;

function introducesName(view: string): boolean {
  const intro = INTRO.exec(view);
  if (!intro?.[1]) return false;
  return isPersonName(`I'm ${titleCase(intro[1])}${intro[2] ? ` ${titleCase(intro[2])}` : ''}`);
}

/** The slot a statement fills, or undefined when it is not a single-valued fact about the subject.
 * Checked in order; the first match wins (one slot per statement). */
export function detectSlot({ view, entities, date }: SlotContext): string | undefined {
  // Places and employers must be named, so "I live in a small flat" does not overwrite a city.
  const named = entities.length > 0;
  if (EMAIL_ADDRESS.test(view) && EMAIL_CUE.test(view)) return 'email';
  if (PHONE_NUMBER.test(view) && PHONE_CUE.test(view)) return 'phone';
  if (NAME.test(view) || introducesName(view)) return 'name';
  const nick = NICKNAME.exec(view);
  if (nick?.[1] && !NOT_A_NICKNAME.test(nick[1])) return 'preferred_name';
  if (BIRTHDAY.test(view)) return 'birthday';
  if (/\bi was born (?:on|in)\b/.test(view)) return date.occurredAt ? 'birthday' : named ? 'birthplace' : undefined;
  if (AGE.test(view)) return 'age';
  if (PARTNER.test(view) && entities.some((e) => isPersonName(e))) return 'partner';
  if (ADDRESS.test(view)) return 'address';
  if (named && RESIDENCE.test(view)) return 'residence';
  if (EMPLOYER_NAMED.test(view) || (named && EMPLOYER.test(view))) return 'employer';
  if (jobTitleSlot(view) || ROLE_CHANGE.test(view)) return 'job_title';
  if (PLAN.test(view)) return 'plan';
  if (ACCOUNT_STATUS.test(view)) return 'account_status';
  if (CARE_STATUS.test(view)) return 'care_status';
  const counted = QUANTITY.exec(view);
  const unit = counted?.slice(1).filter((g) => g !== undefined).find((g) => new RegExp(`^(?:${COUNTED})$`).test(g));
  if (unit) return `count_${slotKey(singular(unit === 'children' ? 'child' : unit === 'staff' ? 'employees' : unit))}`;
  if (DIET.test(view)) return 'diet';
  if (PRONOUNS.test(view)) return 'pronouns';
  if (TIMEZONE.test(view)) return 'timezone';
  if (named && HOMETOWN.test(view)) return 'hometown';
  if (NATIVE_LANGUAGE.test(view)) return 'native_language';
  return preferenceSlot(view);
}

/** Profile-style lines ("Favorite food: sushi", "Allergies: peanuts") read as the statement they abbreviate. */
const PROFILE_LINE = /^(?:my )?(favou?rite [a-z ]+?|preferred [a-z ]+?|allerg(?:y|ies)|birthday|date of birth|dob|name|full name|nickname|e-?mail|phone|phone number|mobile|cell|address|home address|diet|dietary (?:needs|requirements|restrictions)|pronouns|location|city|home|job|job title|occupation|role|title|employer|company|age|time ?zone|medications?|conditions?|health conditions?|status|account status|plan|tier|subscription)\s*:\s*(\S.*)$/;

export function profileView(view: string): string {
  const m = PROFILE_LINE.exec(view);
  if (!m?.[1] || !m[2]) return view;
  const label = m[1];
  const value = m[2];
  if (/^(?:favou?rite|preferred) /.test(label)) return `my ${label} is ${value}`;
  if (/^allerg/.test(label)) return `i'm allergic to ${value}`;
  if (/^(?:birthday|date of birth|dob)$/.test(label)) return `my birthday is ${value}`;
  if (/^(?:name|full name)$/.test(label)) return `my name is ${value}`;
  if (label === 'nickname') return `call me ${value}`;
  if (/^e-?mail$/.test(label)) return `my email is ${value}`;
  if (/^(?:phone|phone number|mobile|cell)$/.test(label)) return `my phone number is ${value}`;
  if (/address$/.test(label)) return `my address is ${value}`;
  if (/^(?:diet|dietary)/.test(label)) return `my diet is ${value}`;
  if (label === 'pronouns') return `my pronouns are ${value}`;
  if (/^(?:location|city|home)$/.test(label)) return `i live in ${value}`;
  if (/^(?:job|job title|occupation|role|title)$/.test(label)) return `my job title is ${value}`;
  if (/^(?:employer|company)$/.test(label)) return `my employer is ${value}`;
  if (label === 'age') return `i'm ${value}`;
  if (/^time ?zone$/.test(label)) return `my timezone is ${value}`;
  if (/status$/.test(label)) return `my status is ${value}`;
  if (/^(?:plan|tier|subscription)$/.test(label)) return `my ${label} is ${value}`;
  return `my ${label} are ${value}`;
}
