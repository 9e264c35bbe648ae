// Values that have broken services before: characters Postgres or UTF-8 refuse, text that looks
// like SQL, templates or paths, timestamps at and past the edges of what Postgres and JS hold, and
// numbers at the edges of a double. The fuzz suite mixes them into schema-generated requests.

/** An object nested `depth` deep, built without recursion. */
export function deepObject(depth: number): Record<string, unknown> {
  let value: Record<string, unknown> = { leaf: true };
  for (let i = 0; i < depth; i++) value = { a: value };
  return value;
}

/** An array nested `depth` deep. */
export function deepArray(depth: number): unknown[] {
  let value: unknown[] = [1];
  for (let i = 0; i < depth; i++) value = [value];
  return value;
}

/** Strings that are not timestamps either service layer holds, or not timestamps at all. */
export const HOSTILE_TIMESTAMPS: readonly string[] = [
  '2016-12-31T23:59:60Z', // leap second: Postgres takes it, JS does not
  '0000-01-01T00:00:00Z', // year 0: JS takes it, Postgres has none
  '+275760-09-13T00:00:00Z', // the last instant JS holds
  '+275760-09-13T00:00:00.001Z', // one past it
  '-271821-04-20T00:00:00Z', // the first instant JS holds
  '9999-12-31T23:59:59.999999999Z',
  '10000-01-01T00:00:00Z',
  '0001-01-01T00:00:00+01:00', // year 0 in UTC
  '2024-02-30T00:00:00Z',
  '2023-02-29T12:00:00Z',
  '2024-01-01T24:00:00Z',
  '2024-01-01T00:00:00+24:00',
  '2024-01-01T00:00:00-23:59',
  '2024-01-01T00:00:00.1234567890Z',
  '2024-01-01',
  '2024-01-01T00:00:00',
  '1970-01-01T00:00:00Z',
  'infinity',
  '-infinity',
  'epoch',
  'now',
  'today',
  'allballs',
  'J2451187',
  '2024-01-01 00:00:00 America/New_York',
  '1e308',
];

/** Numbers at the edges of a double, of integer column types and of JSON's text form. */
export const HOSTILE_NUMBERS: readonly number[] = [
  0,
  -0,
  1,
  -1,
  0.1 + 0.2,
  1e308,
  -1e308,
  Number.MAX_VALUE,
  Number.MIN_VALUE,
  -Number.MIN_VALUE,
  Number.EPSILON,
  2 ** 31,
  -(2 ** 31) - 1,
  2 ** 53,
  Number.MAX_SAFE_INTEGER,
  -Number.MAX_SAFE_INTEGER,
  2 ** 63,
  1e21, // JSON.stringify writes 1e+21
];

/** Text as a client may send it: ordinary-looking, or built to break a parser, a query or a template. */
export const HOSTILE_STRINGS: readonly string[] = [
  '',
  ' ',
  '\t\r\n',
  '\u0000',
  'nul\u0000inside',
  '\uD800',
  'lone low \uDFFF',
  '\uDBFF\uDBFF',
  '\u202Eevil\u202C',
  '\u200B\u200C\u200D\u2060\uFEFF',
  '\u2028\u2029',
  '\u00A0',
  '\u0301\u0301combining',
  'Z\u0324\u0354\u0367\u0311\u0313a\u0356\u032d\u0308\u0307',
  '\u{1F44D}\u{1F3FD}\u{1F468}\u200D\u{1F469}\u200D\u{1F467}',
  '\u0130\u0131\uFB00\u00DF',
  '\uFF21\uFF22\uFF23',
  "'; DROP TABLE memories; --",
  '" OR 1=1 --',
  "E'\\\\x00'",
  '$1',
  '%00',
  '%',
  '%%s%n',
  '\\',
  '\\u0000',
  '{{event.payload.__proto__}}',
  '{{',
  '}}{{rule.name}}',
  '*',
  '**/*',
  '..',
  '../../etc/passwd',
  '/',
  '?a=1&b=2#c',
  '<script>alert(1)</script>',
  'null',
  'undefined',
  'NaN',
  'Infinity',
  '-0',
  '1e308',
  '0x10',
  '__proto__',
  'constructor',
  ...HOSTILE_TIMESTAMPS.slice(0, 4),
  'a'.repeat(10_000),
  '\u{1F600}'.repeat(5_000),
  'x'.repeat(100_000),
];

/** Property names to mix into objects that take any keys. */
export const HOSTILE_KEYS: readonly string[] = ['__proto__', 'constructor', 'prototype', '', ' ', 'a.b.c', '$where', '{{x}}', 'k\u0000', '\uD800', '\u202E', 'x'.repeat(300)];
