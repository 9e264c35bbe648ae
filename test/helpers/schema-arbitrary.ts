// fast-check arbitraries derived from a JSON Schema (as the OpenAPI document or an MCP tool lists
// it): values meant to satisfy it, values meant to break it in one place, with hostile strings,
// numbers and nesting mixed into both. `satisfies` then says which a value really is (an
// independent validator, TypeBox's), so a test can expect a refusal exactly when the schema refuses.
// The generator reads a fixed set of keywords and refuses any other (`assertGeneratable`): a schema
// it cannot honour fails the suite instead of being fuzzed shallowly.
import fc from 'fast-check';
import Format from 'typebox/format';
import { Check } from 'typebox/schema';
import { isStorableTimestamp } from '../../src/platform/input-guard.js';
import { deepArray, deepObject, HOSTILE_KEYS, HOSTILE_NUMBERS, HOSTILE_STRINGS, HOSTILE_TIMESTAMPS } from './hostile-values.js';

export type JsonSchema = { readonly [keyword: string]: unknown };

// The service narrows `date-time` to what Postgres and JS both hold (src/app.ts); judge it the same way.
Format.Set('date-time', isStorableTimestamp);

const ANNOTATIONS = new Set(['description', 'title', 'default', 'examples', '$schema', '$id', 'deprecated', 'readOnly', 'writeOnly']);
const KEYWORDS = new Set([
  'type', 'enum', 'const', 'format', 'pattern', 'minLength', 'maxLength', 'minimum', 'maximum', 'exclusiveMinimum', 'exclusiveMaximum',
  'properties', 'required', 'additionalProperties', 'minProperties', 'maxProperties', 'propertyNames', 'items', 'minItems', 'maxItems', 'anyOf', 'oneOf',
]);
const TYPES = new Set(['string', 'number', 'integer', 'boolean', 'null', 'object', 'array']);
const FORMATS = new Set(['date-time']);

export class UnsupportedSchemaError extends Error {}

const isObject = (value: unknown): value is Record<string, unknown> => typeof value === 'object' && value !== null && !Array.isArray(value);
const asSchema = (value: unknown): JsonSchema => (isObject(value) ? value : {});

/** Replaces every `#/components/schemas/X` reference with the schema it names. */
export function resolveRefs(schema: unknown, components: Record<string, unknown>, seen: readonly string[] = []): JsonSchema {
  const walk = (value: unknown): unknown => {
    if (Array.isArray(value)) return value.map(walk);
    if (!isObject(value)) return value;
    const ref = value.$ref;
    if (typeof ref === 'string') {
      const name = /^#\/components\/schemas\/(.+)$/.exec(ref)?.[1];
      if (!name || !(name in components)) throw new UnsupportedSchemaError(`unresolvable $ref ${ref}`);
      if (seen.includes(name)) throw new UnsupportedSchemaError(`recursive $ref ${ref}`);
      return resolveRefs(components[name], components, [...seen, name]);
    }
    return Object.fromEntries(Object.entries(value).map(([key, item]) => [key, key === 'properties' ? mapValues(item, walk) : walk(item)]));
  };
  return asSchema(walk(schema));
}

const mapValues = (value: unknown, fn: (item: unknown) => unknown) =>
  Object.fromEntries(Object.entries(asSchema(value)).map(([key, item]) => [key, fn(item)]));

/** Throws UnsupportedSchemaError naming the first keyword, type or format the generator cannot honour. */
export function assertGeneratable(schema: unknown, path = '$'): void {
  if (!isObject(schema)) throw new UnsupportedSchemaError(`${path}: not a schema object`);
  for (const [key, value] of Object.entries(schema)) {
    if (ANNOTATIONS.has(key)) continue;
    if (!KEYWORDS.has(key)) throw new UnsupportedSchemaError(`${path}: no generator for keyword "${key}"`);
    if (key === 'type') {
      for (const type of [value].flat()) if (!TYPES.has(String(type))) throw new UnsupportedSchemaError(`${path}: no generator for type ${String(type)}`);
    }
    if (key === 'format' && !FORMATS.has(String(value))) throw new UnsupportedSchemaError(`${path}: no generator for format "${String(value)}"`);
    if (key === 'properties') for (const [name, item] of Object.entries(asSchema(value))) assertGeneratable(item, `${path}.${name}`);
    if (key === 'items') {
      if (Array.isArray(value)) throw new UnsupportedSchemaError(`${path}: no generator for tuple items`);
      assertGeneratable(value, `${path}[]`);
    }
    if (key === 'additionalProperties' && typeof value !== 'boolean') assertGeneratable(value, `${path}.*`);
    if (key === 'propertyNames' && (asSchema(value).type !== 'string' || Object.keys(asSchema(value)).some((k) => k !== 'type' && !ANNOTATIONS.has(k)))) {
      throw new UnsupportedSchemaError(`${path}: no generator for propertyNames other than { type: string }`);
    }
    if (key === 'anyOf' || key === 'oneOf') (value as unknown[]).forEach((branch, i) => assertGeneratable(branch, `${path}|${i}`));
  }
}

/** The JSON type of a value, `integer` for whole numbers. */
export function jsonType(value: unknown): string {
  if (value === null) return 'null';
  if (Array.isArray(value)) return 'array';
  if (typeof value === 'number') return Number.isInteger(value) ? 'integer' : 'number';
  return typeof value;
}

/** The JSON types a schema admits, or undefined when it does not constrain them. */
export function typesOf(schema: JsonSchema): Set<string> | undefined {
  const branches = (schema.anyOf ?? schema.oneOf) as JsonSchema[] | undefined;
  if (branches) {
    const all = new Set<string>();
    for (const branch of branches) {
      const types = typesOf(branch);
      if (!types) return undefined;
      for (const type of types) all.add(type);
    }
    return all;
  }
  if (schema.type !== undefined) return new Set([schema.type].flat().map(String));
  if (Array.isArray(schema.enum)) return new Set(schema.enum.map(jsonType));
  if ('const' in schema) return new Set([jsonType(schema.const)]);
  return undefined;
}

const admits = (types: Set<string>, value: unknown) => {
  const type = jsonType(value);
  return types.has(type) || (type === 'integer' && types.has('number'));
};

/** Length as JSON Schema counts it: code points, an unpaired surrogate counting as one. */
const codePoints = (text: string) => {
  let n = 0;
  for (let i = 0; i < text.length; i++) {
    const unit = text.charCodeAt(i);
    if (unit >= 0xd800 && unit <= 0xdbff && i + 1 < text.length) {
      const next = text.charCodeAt(i + 1);
      if (next >= 0xdc00 && next <= 0xdfff) i++;
    }
    n++;
  }
  return n;
};

/** A schema with no validation keyword: anything goes. */
const isUnconstrained = (schema: JsonSchema) => Object.keys(schema).every((key) => ANNOTATIONS.has(key));

/** Sets an own property, `__proto__` included (plain assignment would set the prototype). */
function withKey(object: unknown, key: string, value: unknown): Record<string, unknown> {
  const copy: Record<string, unknown> = {};
  for (const [k, v] of Object.entries(isObject(object) ? object : {})) Object.defineProperty(copy, k, { value: v, enumerable: true, writable: true, configurable: true });
  Object.defineProperty(copy, key, { value, enumerable: true, writable: true, configurable: true });
  return copy;
}

function without(object: unknown, key: string): unknown {
  if (!isObject(object)) return object;
  const copy: Record<string, unknown> = {};
  for (const [k, v] of Object.entries(object)) if (k !== key) Object.defineProperty(copy, k, { value: v, enumerable: true, writable: true, configurable: true });
  return copy;
}

/** A value of each JSON type, and strings that look like numbers: the wrong-type candidates. */
const WRONG_TYPES: readonly unknown[] = [null, true, 0, -1, 1.5, 'x', '5', 'NaN', '1e308', '', [], [1], {}, { a: 1 }];

export interface FuzzOptions {
  /** Values mixed into properties of these names (ids that exist, attribute keys the project defined). */
  hints?: Readonly<Record<string, readonly unknown[]>>;
}

/** The value cached for `key`, built (then kept) on the first request. */
function cached<K extends object, V>(cache: WeakMap<K, V>, key: K, build: () => V): V {
  let value = cache.get(key);
  if (value === undefined) {
    value = build();
    cache.set(key, value);
  }
  return value;
}

export class SchemaFuzzer {
  private readonly validCache = new WeakMap<object, fc.Arbitrary<unknown>>();
  private readonly brokenCache = new WeakMap<object, fc.Arbitrary<unknown>>();

  constructor(private readonly options: FuzzOptions = {}) {}

  /** Mostly values meant to satisfy the schema, some meant to break it. */
  value(schema: JsonSchema): fc.Arbitrary<unknown> {
    return fc.oneof({ weight: 3, arbitrary: this.valid(schema) }, { weight: 2, arbitrary: this.broken(schema) });
  }

  /** Values meant to satisfy the schema (hostile text mixed in wherever a string fits). */
  valid(schema: JsonSchema): fc.Arbitrary<unknown> {
    return cached(this.validCache, schema, () => this.buildValid(schema));
  }

  /** Values meant to break the schema in one place; the valid ones where nothing can break it. */
  broken(schema: JsonSchema): fc.Arbitrary<unknown> {
    return cached(this.brokenCache, schema, () => this.buildBroken(schema));
  }

  /** Any JSON, hostile values and deep nesting included. */
  anyJson(): fc.Arbitrary<unknown> {
    return fc.oneof(
      { weight: 20, arbitrary: fc.jsonValue({ maxDepth: 3 }) },
      { weight: 2, arbitrary: fc.constantFrom(...HOSTILE_STRINGS) },
      { weight: 2, arbitrary: fc.constantFrom(...HOSTILE_NUMBERS) },
      { weight: 1, arbitrary: fc.constantFrom(deepObject(200), deepArray(200), deepObject(20)) },
    );
  }

  private property(name: string, schema: JsonSchema): fc.Arbitrary<unknown> {
    // Only the hints this property takes: `subject` is a string in one query and an object in a body.
    const hints = (this.options.hints?.[name] ?? []).filter((hint) => satisfies(schema, hint));
    const generated = this.valid(schema);
    return hints.length > 0 ? fc.oneof({ weight: 3, arbitrary: fc.constantFrom(...hints) }, { weight: 1, arbitrary: generated }) : generated;
  }

  private buildValid(schema: JsonSchema): fc.Arbitrary<unknown> {
    const branches = (schema.anyOf ?? schema.oneOf) as JsonSchema[] | undefined;
    if (branches) return fc.oneof(...branches.map((branch) => this.valid(branch)));
    if ('const' in schema) return fc.constant(schema.const);
    if (Array.isArray(schema.enum)) return fc.constantFrom(...schema.enum);
    const types = schema.type === undefined ? (schema.properties ? ['object'] : undefined) : [schema.type].flat().map(String);
    if (!types) return this.anyJson();
    return fc.oneof(...types.map((type) => this.validOfType(type, schema)));
  }

  private validOfType(type: string, schema: JsonSchema): fc.Arbitrary<unknown> {
    switch (type) {
      case 'string':
        return validString(schema);
      case 'number':
      case 'integer':
        return validNumber(schema, type === 'integer');
      case 'boolean':
        return fc.boolean();
      case 'null':
        return fc.constant(null);
      case 'array': {
        const min = Number(schema.minItems ?? 0);
        const max = Math.min(Number(schema.maxItems ?? min + 4), min + 4);
        return fc.array(this.valid(asSchema(schema.items)), { minLength: min, maxLength: max });
      }
      case 'object':
        return this.validObject(schema);
      default:
        throw new UnsupportedSchemaError(`no generator for type ${type}`);
    }
  }

  private validObject(schema: JsonSchema): fc.Arbitrary<unknown> {
    const properties = asSchema(schema.properties) as Record<string, JsonSchema>;
    const required = (schema.required ?? []) as string[];
    const shape: Record<string, fc.Arbitrary<unknown>> = {};
    // An optional property the schema says nothing about (`{}`, say "cannot be changed") is an
    // escape hatch, not the common case: sent now and then, alone, rather than half the time each.
    const loose: string[] = [];
    for (const [name, item] of Object.entries(properties)) {
      if (!required.includes(name) && isUnconstrained(item)) loose.push(name);
      else shape[name] = this.property(name, item);
    }
    for (const name of required) shape[name] ??= this.anyJson();
    let object: fc.Arbitrary<Record<string, unknown>> = fc.record(shape, { requiredKeys: required });
    if (loose.length > 0) {
      const one = fc.tuple(fc.constantFrom(...loose), this.anyJson()).map(([name, value]) => [[name, value]] as [string, unknown][]);
      object = fc
        .tuple(object, fc.oneof({ weight: 5, arbitrary: fc.constant<[string, unknown][]>([]) }, { weight: 1, arbitrary: one }))
        .map(([base, pairs]) => pairs.reduce<Record<string, unknown>>((acc, [k, v]) => withKey(acc, k, v), base));
    }
    const extra = schema.additionalProperties;
    if (extra !== false) {
      const extraSchema = extra === true || extra === undefined ? {} : asSchema(extra);
      const key = fc.oneof({ weight: 4, arbitrary: fc.string({ maxLength: 12 }) }, { weight: 1, arbitrary: fc.constantFrom(...HOSTILE_KEYS) }).filter((k) => !(k in properties));
      const extras = fc.array(fc.tuple(key, this.valid(extraSchema)), { maxLength: 4 });
      const open = Object.keys(properties).length === 0;
      object = fc
        .tuple(object, open ? extras : fc.oneof({ weight: 3, arbitrary: fc.constant([]) }, { weight: 1, arbitrary: extras }))
        .map(([base, pairs]) => pairs.reduce<Record<string, unknown>>((acc, [k, v]) => withKey(acc, k, v), base));
    }
    const minProperties = Number(schema.minProperties ?? 0);
    const maxProperties = Number(schema.maxProperties ?? Infinity);
    if (minProperties > 0 || Number.isFinite(maxProperties)) {
      object = object.filter((o) => Object.keys(o).length >= minProperties && Object.keys(o).length <= maxProperties);
    }
    return object;
  }

  private buildBroken(schema: JsonSchema): fc.Arbitrary<unknown> {
    const out: fc.Arbitrary<unknown>[] = [];
    const types = typesOf(schema);
    if (types) {
      const wrong = WRONG_TYPES.filter((value) => !admits(types, value));
      if (wrong.length > 0) out.push(fc.constantFrom(...wrong));
    }
    if (Array.isArray(schema.enum)) {
      const members = schema.enum;
      const near = members.filter((m): m is string => typeof m === 'string').flatMap((m) => [m.toUpperCase(), `${m} `, `${m}\u200B`]);
      out.push(fc.oneof(fc.string({ maxLength: 12 }), fc.constantFrom(...near, 'x')).filter((value) => !members.includes(value)));
    }
    const branches = (schema.anyOf ?? schema.oneOf) as JsonSchema[] | undefined;
    if (branches) out.push(...branches.map((branch) => this.broken(branch)));
    for (const type of types ?? []) {
      if (type === 'string') out.push(...brokenStrings(schema));
      if (type === 'number' || type === 'integer') out.push(...brokenNumbers(schema, type === 'integer'));
      if (type === 'object') out.push(...this.brokenObjects(schema));
      if (type === 'array') out.push(...this.brokenArrays(schema));
    }
    return out.length > 0 ? fc.oneof(...out) : this.valid(schema);
  }

  private brokenObjects(schema: JsonSchema): fc.Arbitrary<unknown>[] {
    const out: fc.Arbitrary<unknown>[] = [];
    const properties = asSchema(schema.properties) as Record<string, JsonSchema>;
    const valid = this.valid(schema);
    for (const name of (schema.required ?? []) as string[]) out.push(valid.map((value) => without(value, name)));
    if (schema.additionalProperties === false) {
      const key = fc.oneof(fc.string({ minLength: 1, maxLength: 12 }), fc.constantFrom(...HOSTILE_KEYS)).filter((k) => !(k in properties));
      out.push(fc.tuple(valid, key, this.anyJson()).map(([value, k, v]) => withKey(value, k, v)));
    } else if (isObject(schema.additionalProperties) && Object.keys(schema.additionalProperties).length > 0) {
      const key = fc.string({ minLength: 1, maxLength: 12 }).filter((k) => !(k in properties));
      out.push(fc.tuple(valid, key, this.broken(schema.additionalProperties)).map(([value, k, v]) => withKey(value, k, v)));
    }
    if (Number(schema.minProperties ?? 0) > 0) out.push(fc.constant({}));
    for (const [name, item] of Object.entries(properties)) {
      out.push(fc.tuple(valid, this.broken(item)).map(([value, v]) => withKey(value, name, v)));
    }
    return out;
  }

  private brokenArrays(schema: JsonSchema): fc.Arbitrary<unknown>[] {
    const out: fc.Arbitrary<unknown>[] = [];
    const items = asSchema(schema.items);
    const min = Number(schema.minItems ?? 0);
    const max = Number(schema.maxItems ?? Infinity);
    if (Number.isFinite(max) && max < 20_000) out.push(this.valid(items).map((item) => Array.from({ length: max + 1 }, () => item)));
    if (min > 0) out.push(fc.array(this.valid(items), { minLength: min - 1, maxLength: min - 1 }));
    out.push(fc.tuple(this.valid(schema), this.broken(items)).map(([array, item]) => [...(Array.isArray(array) ? array : []), item]));
    return out;
  }
}

function validString(schema: JsonSchema): fc.Arbitrary<string> {
  const min = Number(schema.minLength ?? 0);
  const max = Number(schema.maxLength ?? Infinity);
  const fits = (text: string) => {
    const n = codePoints(text);
    return n >= min && n <= max;
  };
  if (schema.format === 'date-time') return timestamp();
  if (typeof schema.pattern === 'string') return fc.stringMatching(new RegExp(schema.pattern)).filter(fits);
  const upTo = Math.min(max, min + 32);
  const generic = fc
    .oneof(
      fc.string({ minLength: min, maxLength: upTo, unit: 'grapheme-ascii' }),
      fc.string({ minLength: min, maxLength: upTo, unit: 'grapheme' }),
      fc.string({ minLength: min, maxLength: upTo, unit: 'binary' }),
    )
    .filter(fits);
  const parts: fc.WeightedArbitrary<string>[] = [{ weight: 10, arbitrary: generic }];
  const hostile = HOSTILE_STRINGS.filter(fits);
  if (hostile.length > 0) parts.push({ weight: 1, arbitrary: fc.constantFrom(...hostile) });
  if (Number.isFinite(max) && max > 0 && max <= 300_000) parts.push({ weight: 1, arbitrary: fc.constantFrom('x', '\u00E9', '\u{1F600}', '\u200B').map((c) => c.repeat(max)) });
  return fc.oneof(...parts);
}

const FIRST = new Date('0001-01-01T00:00:00.000Z');
const LAST = new Date('9999-12-31T23:59:59.999Z');

/** RFC 3339 timestamps in years 0001 to 9999, with and without fractions and offsets. */
function timestamp(): fc.Arbitrary<string> {
  const offsets = ['Z', 'z', '+00:00', '+05:30', '-08:00', '+14:00', '-12:00'];
  return fc
    .tuple(fc.date({ min: FIRST, max: LAST, noInvalidDate: true }), fc.constantFrom(...offsets), fc.boolean(), fc.boolean())
    .map(([date, offset, fraction, space]) => {
      const minutes = offset.length === 1 ? 0 : (offset[0] === '-' ? -1 : 1) * (Number(offset.slice(1, 3)) * 60 + Number(offset.slice(4, 6)));
      const local = new Date(date.getTime() + minutes * 60_000).toISOString();
      const text = `${fraction ? local.slice(0, 23) : local.slice(0, 19)}${offset}`;
      return space ? text.replace('T', ' ') : text;
    });
}

function validNumber(schema: JsonSchema, integer: boolean): fc.Arbitrary<number> {
  const lo = schema.minimum as number | undefined;
  const hi = schema.maximum as number | undefined;
  const exLo = schema.exclusiveMinimum as number | undefined;
  const exHi = schema.exclusiveMaximum as number | undefined;
  const inRange = (n: number) =>
    (lo === undefined || n >= lo) && (hi === undefined || n <= hi) && (exLo === undefined || n > exLo) && (exHi === undefined || n < exHi) && (!integer || Number.isInteger(n));
  const core = integer
    ? fc.integer({ min: Math.ceil(Math.max(lo ?? -(2 ** 31), exLo === undefined ? -Infinity : exLo + 1)), max: Math.floor(Math.min(hi ?? 2 ** 31 - 1, exHi === undefined ? Infinity : exHi - 1)) })
    : fc.double({
        min: lo ?? exLo,
        max: hi ?? exHi,
        minExcluded: lo === undefined && exLo !== undefined,
        maxExcluded: hi === undefined && exHi !== undefined,
        noNaN: true,
        noDefaultInfinity: true,
      });
  // What clients mostly send: whole numbers and short decimals (fast-check's doubles lean to the extremes).
  const from = lo ?? (exLo === undefined ? -1000 : exLo);
  const to = hi ?? (exHi === undefined ? 1000 : exHi);
  const plain = fc
    .integer({ min: 0, max: 1000 })
    .map((step) => (integer ? Math.round(from + ((to - from) * step) / 1000) : Number((from + ((to - from) * step) / 1000).toFixed(3))))
    .filter(inRange);
  const edges = [lo, hi, ...HOSTILE_NUMBERS].filter((n): n is number => n !== undefined && inRange(n));
  return fc.oneof(
    { weight: 4, arbitrary: plain },
    { weight: 1, arbitrary: core },
    ...(edges.length > 0 ? [{ weight: 1, arbitrary: fc.constantFrom(...edges) }] : []),
  );
}

function brokenStrings(schema: JsonSchema): fc.Arbitrary<unknown>[] {
  const out: fc.Arbitrary<unknown>[] = [];
  const min = Number(schema.minLength ?? 0);
  const max = Number(schema.maxLength ?? Infinity);
  if (Number.isFinite(max) && max < 2_000_000) out.push(fc.constantFrom('x', '\u{1F600}', '\u200B', '\u0000').map((c) => c.repeat(max + 1)));
  if (min > 0) out.push(fc.constant('x'.repeat(min - 1)));
  if (typeof schema.pattern === 'string') {
    const pattern = new RegExp(schema.pattern, 'u');
    out.push(fc.constantFrom('', ' ', '\u00FC', 'a b', '/', '\u0000', '\u{1F600}', "'; --").filter((text) => !pattern.test(text)));
  }
  if (schema.format === 'date-time') out.push(fc.constantFrom(...HOSTILE_TIMESTAMPS));
  return out;
}

function brokenNumbers(schema: JsonSchema, integer: boolean): fc.Arbitrary<unknown>[] {
  const out: fc.Arbitrary<unknown>[] = [];
  const lo = (schema.minimum ?? schema.exclusiveMinimum) as number | undefined;
  const hi = (schema.maximum ?? schema.exclusiveMaximum) as number | undefined;
  if (lo !== undefined) out.push(fc.constantFrom(lo - 1, lo - 1e-9, -1e308, -Number.MAX_VALUE).filter((n) => n < lo || (schema.exclusiveMinimum !== undefined && n <= lo)));
  if (hi !== undefined) out.push(fc.constantFrom(hi + 1, hi + 1e-9, 1e308, Number.MAX_VALUE).filter((n) => n > hi || (schema.exclusiveMaximum !== undefined && n >= hi)));
  if (integer) out.push(fc.constant((lo ?? 0) + 0.5));
  return out;
}

const effectiveCache = new WeakMap<object, JsonSchema>();

/**
 * The schema as the service applies it: with `useDefaults`, a required property that has a default
 * is filled in before `required` is checked, so it is not required of the client.
 */
function effective(schema: JsonSchema): JsonSchema {
  const cached = effectiveCache.get(schema);
  if (cached) return cached;
  const walk = (value: unknown): unknown => {
    if (Array.isArray(value)) return value.map(walk);
    if (!isObject(value)) return value;
    const copy = Object.fromEntries(Object.entries(value).map(([key, item]) => [key, key === 'properties' ? mapValues(item, walk) : walk(item)]));
    if (Array.isArray(copy.required) && isObject(copy.properties)) {
      const properties = copy.properties as Record<string, JsonSchema>;
      copy.required = (copy.required as string[]).filter((name) => !(isObject(properties[name]) && 'default' in properties[name]!));
    }
    return copy;
  };
  const result = asSchema(walk(schema));
  effectiveCache.set(schema, result);
  return result;
}

/** Whether the value satisfies the schema, as the service validates it. */
export function satisfies(schema: JsonSchema, value: unknown): boolean {
  return Check(effective(schema) as never, value);
}
