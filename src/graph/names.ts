// Entity names, normalised for resolution: two names with the same key are the same entity. The key
// ignores case, accents, punctuation and spacing, a leading honorific (Dr, Mr, Mrs, Ms, Mx, Prof,
// Sir, Dame, Miss), a leading "the", a trailing possessive ('s) and a trailing company form (Inc,
// Ltd, LLC, Corp, Co, GmbH, plc). "Dr. Sarah Chen's" and "sarah chen" share a key; so do "Acme,
// Inc." and "ACME". Pure.

const HONORIFICS = new Set(['dr', 'mr', 'mrs', 'ms', 'mx', 'prof', 'professor', 'sir', 'dame', 'miss', 'doctor']);
const COMPANY_FORMS = new Set(['inc', 'incorporated', 'ltd', 'limited', 'llc', 'corp', 'corporation', 'co', 'gmbh', 'plc', 'ag', 'sa']);

/** The words of a name: lowercased, accents and punctuation gone ("&" kept as "and"). */
function words(name: string): string[] {
  return name
    .normalize('NFKD')
    .replace(/\p{M}+/gu, '')
    .toLowerCase()
    .replace(/['’]s\b/gu, '')
    .replace(/&/g, ' and ')
    .replace(/[^\p{L}\p{N}]+/gu, ' ')
    .trim()
    .split(' ')
    .filter((w) => w !== '');
}

/** The resolution key of a name; '' when nothing is left (a bare honorific, punctuation). */
export function nameKey(name: string): string {
  const w = words(name);
  while (w.length > 1 && (HONORIFICS.has(w[0]!) || w[0] === 'the')) w.shift();
  while (w.length > 1 && COMPANY_FORMS.has(w.at(-1)!)) w.pop();
  return w.join(' ');
}

/** A name as displayed: trimmed, inner spaces collapsed, a leading honorific and a trailing possessive dropped. */
export function displayName(name: string): string {
  let out = name.trim().replace(/\s+/g, ' ').replace(/['’]s$/u, '');
  const first = out.split(' ')[0]!.replace(/\.$/, '').toLowerCase();
  if (HONORIFICS.has(first) && out.includes(' ')) out = out.slice(out.indexOf(' ') + 1);
  return out;
}

/** The key of the entity standing for a subject: never equal to a name's key (names have no '@'). */
export const subjectKey = (subject: { kind: string; externalId: string }) => `@subject ${subject.kind} ${subject.externalId}`;

/** A predicate as stored: snake_case ("Works At" and "works-at" are works_at). */
export function snakePredicate(predicate: string): string {
  return predicate
    .trim()
    .replace(/([a-z0-9])([A-Z])/g, '$1_$2')
    .toLowerCase()
    .replace(/[^a-z0-9]+/g, '_')
    .replace(/^_+|_+$/g, '');
}
