// The heuristic extractor: the people, organisations, places, products and calendar dates a memory
// names, and the simple relations between them ("works at", "lives in", "prefers", "member of",
// "part of"), from one text, with no model. compromise spots the names; a type is then settled by
// cue words around and inside each name; relations are verb phrases between two names (or a
// pronoun and a name). The subject of a first-person statement, or of a pronoun whose referent is
// not named in the text, is "@subject": the person the memory is about. Negated and hypothetical
// statements ("no longer works at", "might move to") give no relation. Pure and deterministic.
import { compromise } from '../platform/compromise.js';
import { displayName, nameKey } from './names.js';

export type ExtractedType = 'person' | 'org' | 'location' | 'product' | 'date';
export interface ExtractedEntity {
  name: string;
  type: ExtractedType;
  /** For a date: YYYY-MM-DD, or YYYY-MM when no day is named, or --MM-DD when no year is. */
  iso?: string;
}
export interface ExtractedRelation {
  subject: string;
  predicate: 'works_at' | 'lives_in' | 'prefers' | 'member_of' | 'part_of';
  object: string;
}
export interface Extraction {
  entities: ExtractedEntity[];
  relations: ExtractedRelation[];
  /** Capitalised sentence-initial words that may be names: a caller that knows one as an entity may link it. */
  uncertain: string[];
}

export const SUBJECT = '@subject';

// ---- dates ----------------------------------------------------------------------------------

const MONTHS = ['january', 'february', 'march', 'april', 'may', 'june', 'july', 'august', 'september', 'october', 'november', 'december'];
const MONTH = '(jan(?:uary)?|feb(?:ruary)?|mar(?:ch)?|apr(?:il)?|may|june?|july?|aug(?:ust)?|sept?(?:ember)?|oct(?:ober)?|nov(?:ember)?|dec(?:ember)?)\\.?';
const DAY = '(\\d{1,2})(?:st|nd|rd|th)?';
const YEAR = '((?:19|20)\\d{2})';
const DATE_PATTERNS: { re: RegExp; iso: (m: RegExpExecArray) => string | undefined }[] = [
  { re: /\b((?:19|20)\d{2})-(\d{2})-(\d{2})\b/g, iso: (m) => `${m[1]}-${m[2]}-${m[3]}` },
  { re: new RegExp(`\\b${MONTH}\\s+${DAY}(?:,\\s*|\\s+)${YEAR}\\b`, 'gi'), iso: (m) => ymd(m[3], m[1], m[2]) },
  { re: new RegExp(`\\b${DAY}\\s+(?:of\\s+)?${MONTH},?\\s+${YEAR}\\b`, 'gi'), iso: (m) => ymd(m[3], m[2], m[1]) },
  { re: new RegExp(`\\b${MONTH}\\s+${YEAR}\\b`, 'gi'), iso: (m) => ymd(m[2], m[1]) },
  { re: new RegExp(`\\b${MONTH}\\s+${DAY}\\b(?!\\s*(?:am|pm|%|:))`, 'gi'), iso: (m) => ymd(undefined, m[1], m[2]) },
  { re: new RegExp(`\\b${DAY}\\s+(?:of\\s+)?${MONTH}\\b`, 'gi'), iso: (m) => ymd(undefined, m[2], m[1]) },
];

function ymd(year: string | undefined, month: string | undefined, day?: string): string | undefined {
  const index = MONTHS.findIndex((name) => name.startsWith(month!.toLowerCase().replace(/\.$/, '').slice(0, 3)));
  if (index < 0) return undefined;
  const mm = String(index + 1).padStart(2, '0');
  if (day !== undefined && (Number(day) < 1 || Number(day) > 31)) return undefined;
  const dd = day === undefined ? undefined : day.padStart(2, '0');
  if (year === undefined) return dd === undefined ? undefined : `--${mm}-${dd}`;
  return dd === undefined ? `${year}-${mm}` : `${year}-${mm}-${dd}`;
}

/** Calendar dates, longest match first; answers them and the text with their spans blanked. */
function findDates(text: string): { dates: ExtractedEntity[]; rest: string } {
  const dates: ExtractedEntity[] = [];
  let rest = text;
  for (const { re, iso } of DATE_PATTERNS) {
    rest = rest.replace(re, (...args) => {
      const match = args.slice(0, -2) as unknown as RegExpExecArray;
      const value = iso(match);
      if (value === undefined) return match[0];
      dates.push({ name: match[0].replace(/[.,]$/, ''), type: 'date', iso: value });
      return ' '.repeat(match[0].length);
    });
  }
  return { dates: dates.sort((a, b) => text.indexOf(a.name) - text.indexOf(b.name)), rest };
}

// ---- names and types ------------------------------------------------------------------------

const ORG_WORDS = /\b(?:inc|ltd|llc|plc|corp|corporation|company|co|group|gmbh|bank|club|hospital|clinic|university|college|school|academy|institute|foundation|association|society|church|council|ministry|department|unit|team|labs?|studios?|agency|partners|holdings|systems|technologies|airlines?|airways|fc|league|union|committee|center|centre|museum|library|cafe|café|restaurant|bakery|gym|store|shop|market|pharmacy|network|services|solutions|industries|motors|media|press|bureau|office|ward|division|chapter|orchestra|choir|band)\b/i;
const LOCATION_WORDS = /\b(?:street|st|road|rd|avenue|ave|lane|boulevard|blvd|square|park|city|town|village|county|province|state|district|island|islands|valley|mountains?|lake|river|beach|heights|hills|quarter|borough|kingdom|republic|emirates|states)\b/i;
const PRODUCT_CUE = /\b(?:bought|buys|buy|buying|uses|use|using|owns|own|drives|drive|drinks|drink|ordered|orders|order|wears|wear|reads on|plays on|switched to|upgraded to|prefers|prefer|likes|like|loves|love|enjoys|fan of|subscribes to|subscribed to|bought a|an?|her|his|my|their|new|old)\s*$/i;
const LOCATION_CUE = /\b(?:in|from|to|near|around|visiting|visited|visit|moved to|lives in|living in|based in|born in|trip to|flew to|travel(?:l)?ing to|located in|relocated to)\s*$/i;
/** A single name followed by what people do is a person ("Yuki lives", "Raj said he"). */
const PERSON_VERB = /^(?:'s)?\s+(?:lives|lived|works|worked|said|says|told|prefers|preferred|sings|plays|teaches|moved|joined|is a member|was born|has|had|wants|loves|likes|and (?:her|his|their))\b/i;
const ORG_CUE = /\b(?:work(?:s|ed|ing)?|employ(?:s|ed|er)?|job|intern(?:s|ing)?|teach(?:es|ing)?|volunteer(?:s|ing)?|joined|hired|member|part|started|been)\b[^.;]{0,40}?\b(?:at|for|with|of|by|is)\s*$/i;
const HONORIFIC = /^(?:dr|mr|mrs|ms|mx|prof|professor|sir|dame|miss|nurse|coach|officer|captain|judge|rev|reverend)\.?\s+/i;
const HAS_DIGIT_OR_CAMEL = /\d|[a-z][A-Z]/;

/** Words compromise tags as proper nouns at a sentence start that name nothing. */
const NOT_NAMES = new Set([
  'i', 'yesterday', 'today', 'tomorrow', 'tonight', 'monday', 'tuesday', 'wednesday', 'thursday', 'friday', 'saturday', 'sunday', 'mom', 'dad', 'mum',
  'he', 'she', 'they', 'we', 'it', 'my', 'our', 'his', 'her', 'their', 'the', 'a', 'an', 'this', 'that', 'also', 'both', 'after', 'before', 'last', 'next',
  'christmas', 'easter', 'english', 'spanish', 'french', 'german', 'italian', 'portuguese', 'chinese', 'japanese', 'covid', 'ok', 'okay',
]);

interface Found {
  name: string;
  type: ExtractedType;
}

function clean(raw: string): string | undefined {
  let name = raw
    .replace(/[’]/g, "'")
    .replace(/^[^\p{L}\p{N}]+/u, '')
    .replace(/[^\p{L}\p{N}.&)]+$/u, '')
    .trim();
  name = displayName(name.replace(HONORIFIC, (m) => (name.trim().split(/\s+/).length > 1 ? '' : m)));
  if (name.endsWith('.') && !/^(?:\p{L}\.){2,}$/u.test(name) && !/\b(?:inc|ltd|co|corp|jr|sr)\.$/i.test(name)) name = name.slice(0, -1);
  name = name.replace(/^(?:the|a|an)\s+/i, '').trim();
  // Words that name nothing at either end of a capitalised run ("Yesterday I", "Tom and I"), and
  // lowercase words before a capitalised name ("sister Julia").
  const words = name.split(/\s+/);
  if (/\p{Lu}/u.test(name)) while (words.length > 1 && !/[\p{Lu}\p{N}]/u.test(words[0]!)) words.shift();
  while (words.length > 0 && NOT_NAMES.has(words[0]!.toLowerCase())) words.shift();
  while (words.length > 0 && (NOT_NAMES.has(words.at(-1)!.toLowerCase()) || /^(?:and|or|&)$/i.test(words.at(-1)!))) words.pop();
  name = words.join(' ');
  if (name.length < 2 || NOT_NAMES.has(name.toLowerCase())) return undefined;
  return name;
}

function typeOf(name: string, text: string, hint: ExtractedType | undefined): ExtractedType {
  if (ORG_WORDS.test(name)) return 'org';
  if (LOCATION_WORDS.test(name) && hint !== 'person') return 'location';
  const at = text.indexOf(name);
  const before = at < 0 ? '' : text.slice(Math.max(0, at - 40), at);
  if (hint) return hint;
  const after = at < 0 ? '' : text.slice(at + name.length, at + name.length + 30);
  if (PERSON_VERB.test(after) && !/\d/.test(name)) return 'person';
  if (ORG_CUE.test(before)) return 'org';
  if (LOCATION_CUE.test(before)) return 'location';
  if (HAS_DIGIT_OR_CAMEL.test(name) || PRODUCT_CUE.test(before)) return 'product';
  return /\s/.test(name) ? 'person' : 'org';
}

function namesOf(sentence: string, uncertain: string[]): Found[] {
  const nlp = compromise();
  const doc = nlp(sentence);
  const tagged: [string, ExtractedType | undefined][] = [
    ...(doc.organizations().out('array') as string[]).map((n): [string, ExtractedType] => [n, 'org']),
    ...(doc.places().out('array') as string[]).map((n): [string, ExtractedType] => [n, 'location']),
    ...(doc.people().out('array') as string[]).map((n): [string, ExtractedType] => [n, 'person']),
    ...(doc.match('#ProperNoun+').not('(#Pronoun|#Demonym|#Language|#Date)').out('array') as string[]).map((n): [string, undefined] => [n, undefined]),
  ];
  // Capitalised runs compromise missed (product names with digits, names it took for verbs).
  for (const m of sentence.matchAll(/(?<![\p{L}\p{N}])(?:[A-Z][\p{L}\p{N}'’&.-]*|[a-z]+[A-Z][\p{L}\p{N}]*)(?:\s+(?:&\s+)?(?:[A-Z][\p{L}\p{N}'’&.-]*|\d+[\p{L}]*|of|de|da|do|dos|van|von|la|le|del)(?=\s|$|[,.;:!?)]))*(?:\s+\d+[\p{L}]*)?/gu)) {
    const personLike = PERSON_VERB.test(sentence.slice(m.index + m[0].length, m.index + m[0].length + 30));
    if (m.index === 0 && !personLike && !HAS_DIGIT_OR_CAMEL.test(m[0]) && !/\s/.test(m[0].trim()) && nlp(m[0]).has('(#Verb|#Adverb|#Determiner|#Preposition|#Conjunction|#Adjective|#Noun)') && !nlp(m[0]).has('#ProperNoun')) {
      // A capitalised first word may be a name or just the start of the sentence ("Globex
      // sponsors ...", "Coffee is ..."): left for the caller, who may know the name already.
      const word = clean(m[0]);
      if (word !== undefined && /^\p{Lu}/u.test(word)) uncertain.push(word);
      continue;
    }
    tagged.push([m[0].replace(/\s+(?:of|de|da|do|dos|van|von|la|le|del)$/i, ''), undefined]);
  }
  const candidates: (Found & { key: string })[] = [];
  for (const [raw, hint] of tagged) {
    for (const part of raw.split(/,\s*|\s+(?:and|or)\s+(?=[A-Z])/)) {
      const name = clean(part);
      const key = name === undefined ? '' : nameKey(name);
      if (name !== undefined && key !== '') candidates.push({ name, key, type: typeOf(name, sentence, hint) });
    }
  }
  // Longest first: a name inside a longer one found ("Chen" in "Sarah Chen", "Mary" in "St.
  // Mary's Hospital") is part of it, not a second entity. The first tagging of a name wins its type.
  const out: (Found & { key: string })[] = [];
  for (const c of [...candidates].sort((a, b) => b.key.length - a.key.length)) {
    if (out.some((f) => ` ${f.key} `.includes(` ${c.key} `))) continue;
    out.push(c);
  }
  return out
    .sort((a, b) => sentence.indexOf(a.name) - sentence.indexOf(b.name))
    .map(({ name, type }) => ({ name, type }));
}

// ---- relations ------------------------------------------------------------------------------

const NEGATION = /\b(?:not|no longer|never|n't|no more|quit|left|stopped|formerly|used to|former|ex-|might|may|could|would|should|considering|thinking about|plans? to|planning to|hopes? to|wants? to|if)\b/i;
const RELATIONS: { predicate: ExtractedRelation['predicate']; re: RegExp }[] = [
  { predicate: 'works_at', re: /\b(?:works?|working|worked|employed|started|starts|job|interning|interns?|volunteers?|volunteering|teach|teaches|teaching|consults?|been)\s+(?:[\w-]+\s+){0,4}?(?:at|for|with)\s+(?:the\s+)?$/i },
  { predicate: 'works_at', re: /\b(?:employer|workplace|company)\s+(?:is|was)\s+(?:the\s+)?$|\bhired\s+by\s+(?:the\s+)?$/i },
  { predicate: 'works_at', re: /\b(?:am|is|are|'m|'s|was|been|now)\s+(?:a|an|the)\s+(?:[\w-]+\s+){0,3}?(?:at|for)\s+$/i },
  { predicate: 'works_at', re: /\b(?:joined|joins)\s+(?:the\s+)?$/i },
  { predicate: 'lives_in', re: /\b(?:lives?|living|lived|resides?|residing|settled|moved|relocated|relocating|based|home is|house is)\s+(?:\w+\s+){0,2}?(?:in|to|near)\s+$/i },
  { predicate: 'prefers', re: /\b(?:prefers?|preferring|favou?rite(?:\s+\w+){0,3}\s+(?:is|are)|fan of|always (?:orders?|buys?|chooses?|picks?)|swears by|sticks with|go-to(?:\s+\w+){0,2}\s+is)\s+(?:the\s+|a\s+|an\s+|his\s+|her\s+|their\s+|my\s+)?$/i },
  { predicate: 'member_of', re: /\b(?:members?|member)\s+of\s+(?:the\s+)?$|\b(?:belongs?|belonging)\s+to\s+(?:the\s+)?$|\bplays?\s+(?:\w+\s+)?(?:for|in|with)\s+(?:the\s+)?$|\bsings?\s+in\s+(?:the\s+)?$|\benrolled\s+(?:at|in)\s+(?:the\s+)?$/i },
  { predicate: 'part_of', re: /\b(?:is|are|was)\s+(?:a\s+|an\s+)?(?:part|division|unit|department|subsidiary|branch|wing|section|campus|team|ward|brand)\s+(?:of|within|at)\s+(?:the\s+)?$|\bsits\s+within\s+(?:the\s+)?$|\bowned by\s+(?:the\s+)?$/i },
];
const GROUP_WORDS = /\b(?:club|society|association|choir|band|league|team|union|group|committee|chapter|orchestra|guild|circle|collective|congregation)\b/i;
const FIRST_PERSON = /\b(?:i|i'm|i've|i'd|we|we're|my|our|me)\b/i;
const THIRD_PERSON = /\b(?:he|she|they|he's|she's|they're|his|her|their)\b/i;

/** Where each found name occurs in the sentence (its first occurrence). */
function spans(sentence: string, found: readonly Found[]): { found: Found; start: number; end: number }[] {
  return found
    .map((f) => ({ found: f, start: sentence.indexOf(f.name) }))
    .filter((s) => s.start >= 0)
    .map((s) => ({ ...s, end: s.start + s.found.name.length }))
    .sort((a, b) => a.start - b.start);
}

function relationsOf(sentence: string, found: readonly Found[], lastPerson: string | undefined): ExtractedRelation[] {
  const out: ExtractedRelation[] = [];
  const located = spans(sentence, found);
  for (const object of located) {
    if (object.found.type === 'date') continue;
    const before = sentence.slice(0, object.start);
    for (const { predicate, re } of RELATIONS) {
      const m = re.exec(before);
      if (!m) continue;
      const verbAt = m.index;
      // The clause the relation lives in: from the last clause break before the verb.
      const clauseStart = Math.max(before.lastIndexOf(';', verbAt), before.lastIndexOf(' but ', verbAt), before.lastIndexOf('. ', verbAt), -1) + 1;
      const lead = sentence.slice(clauseStart, verbAt);
      if (NEGATION.test(lead) || NEGATION.test(m[0])) break;
      if (predicate === 'prefers' && object.found.type === 'person') break;
      if ((predicate === 'works_at' || predicate === 'member_of' || predicate === 'part_of') && object.found.type === 'person') break;
      if (predicate === 'lives_in' && object.found.type !== 'location') break;
      // A group joined is membership; an employer joined is work.
      const actual = predicate === 'works_at' && /\bjoin/i.test(m[0]) && GROUP_WORDS.test(object.found.name) ? 'member_of' : predicate;
      const eligible = (t: ExtractedType) => (actual === 'part_of' ? t === 'org' || t === 'location' : t === 'person' || (actual === 'member_of' && t === 'org'));
      let named = located.filter((s) => s.end <= verbAt && s.start >= clauseStart && eligible(s.found.type) && s.found.name !== object.found.name).at(-1);
      // A second verb of the same subject ("lives in Osaka and works for GitLab", "likes X but prefers Y").
      if (!named && !FIRST_PERSON.test(lead) && !THIRD_PERSON.test(lead)) named = located.filter((s) => s.end <= verbAt && eligible(s.found.type) && s.found.name !== object.found.name).at(-1);
      // A pronoun after the last name speaks of that name, or of the subject when the text names nobody.
      const pronounAfter = named ? sentence.slice(named.end, verbAt) : lead;
      const subjectName = FIRST_PERSON.test(pronounAfter)
        ? SUBJECT
        : THIRD_PERSON.test(pronounAfter) && !named
          ? (lastPerson ?? SUBJECT)
          : named
            ? named.found.name
            : actual === 'part_of'
              ? undefined
              : SUBJECT;
      if (subjectName === undefined || subjectName === object.found.name) break;
      out.push({ subject: subjectName, predicate: actual, object: object.found.name });
      // Two subjects of one verb ("Hannah and Omar live in Copenhagen").
      const partner = named && located.find((s) => s.end <= named!.start && eligible(s.found.type) && /^\s+and\s+$/.test(sentence.slice(s.end, named!.start)));
      if (partner && subjectName === named!.found.name) out.push({ subject: partner.found.name, predicate: actual, object: object.found.name });
      break;
    }
  }
  return out;
}

// ---- the extractor --------------------------------------------------------------------------

function sentencesOf(text: string): string[] {
  return (compromise().tokenize(text).json() as { text?: unknown }[]).map((s) => (typeof s.text === 'string' ? s.text.trim() : '')).filter((s) => s !== '');
}

export function extractGraph(text: string): Extraction {
  const entities: ExtractedEntity[] = [];
  const relations: ExtractedRelation[] = [];
  const seen = new Set<string>();
  let lastPerson: string | undefined;
  const uncertain: string[] = [];
  for (const sentence of sentencesOf(text.slice(0, 20_000))) {
    const { dates, rest } = findDates(sentence);
    const found = [...namesOf(rest, uncertain), ...dates];
    for (const f of found) {
      const key = f.type === 'date' ? `date ${(f as ExtractedEntity).iso}` : nameKey(f.name);
      if (seen.has(key)) continue;
      seen.add(key);
      entities.push(f);
    }
    for (const r of relationsOf(rest, found, lastPerson)) {
      if (!relations.some((x) => x.subject === r.subject && x.predicate === r.predicate && x.object === r.object)) relations.push(r);
    }
    lastPerson = spans(rest, found).filter((s) => s.found.type === 'person').at(-1)?.found.name ?? lastPerson;
  }
  return { entities, relations, uncertain: [...new Set(uncertain)].filter((u) => !seen.has(nameKey(u))) };
}
