// Requests for one OpenAPI operation, generated from its own schemas: path parameters, query
// string and body (as JSON, or as raw text that breaks the JSON itself), content type and
// credentials. Each request carries the reasons the service must refuse it, when it must: the
// schema refuses a part of it (as the service reads it: query and path values coerced from text),
// the JSON is broken, or the credentials do not open the project.
import fc from 'fast-check';
import { deepObject } from './hostile-values.js';
import { resolveRefs, satisfies, SchemaFuzzer, typesOf, type JsonSchema } from './schema-arbitrary.js';

export const PROJECT_PREFIX = '/api/v1/projects/{projectId}';

export type Method = 'GET' | 'POST' | 'PATCH' | 'PUT' | 'DELETE';

export interface Operation {
  /** `POST /admin/memory`: the method and the path under the project prefix. */
  key: string;
  method: Method;
  /** Under the project prefix, with `{name}` placeholders. */
  path: string;
  /** Path parameters other than projectId, as one object schema. */
  pathSchema: JsonSchema;
  /** Query parameters as one object schema. */
  querySchema: JsonSchema;
  /** The JSON request body's schema, when the operation takes one. */
  body?: JsonSchema;
}

interface Parameter {
  in: string;
  name: string;
  required?: boolean;
  schema?: unknown;
}

const objectOf = (params: Parameter[], components: Record<string, unknown>): JsonSchema => ({
  type: 'object',
  properties: Object.fromEntries(params.map((p) => [p.name, resolveRefs(p.schema ?? {}, components)])),
  required: params.filter((p) => p.required).map((p) => p.name),
});

/** Every operation under the project prefix, `$ref`s resolved. */
export function projectOperations(doc: { paths: Record<string, Record<string, unknown>>; components?: { schemas?: Record<string, unknown> } }): Operation[] {
  const components = doc.components?.schemas ?? {};
  const operations: Operation[] = [];
  for (const [fullPath, item] of Object.entries(doc.paths)) {
    if (!fullPath.startsWith(`${PROJECT_PREFIX}/`)) continue;
    const path = fullPath.slice(PROJECT_PREFIX.length);
    for (const [verb, raw] of Object.entries(item)) {
      const operation = raw as { parameters?: Parameter[]; requestBody?: { content?: Record<string, { schema?: unknown }> } };
      const params = operation.parameters ?? [];
      const method = verb.toUpperCase() as Method;
      const bodySchema = operation.requestBody?.content?.['application/json']?.schema;
      operations.push({
        key: `${method} ${path}`,
        method,
        path,
        pathSchema: objectOf(params.filter((p) => p.in === 'path' && p.name !== 'projectId'), components),
        querySchema: objectOf(params.filter((p) => p.in === 'query'), components),
        ...(bodySchema === undefined ? {} : { body: resolveRefs(bodySchema, components) }),
      });
    }
  }
  return operations;
}

export type Credentials = 'key' | 'read-only' | 'none' | 'malformed' | 'other-project' | 'unknown-project';

export interface BodyPart {
  payload?: string | Buffer;
  contentType?: string;
  accept?: string;
  /** Why the service must refuse this body, when it must. */
  refusal?: string;
  /** For an MCP tools/call: why the tool must refuse its arguments (a tool error, not an HTTP one). */
  toolRefusal?: string;
}

/** An MCP tool as tools/list describes it. */
export interface Tool {
  name: string;
  inputSchema: JsonSchema;
}

export interface FuzzRequest {
  credentials: Credentials;
  /** The malformed Authorization header, or the unknown project id, when credentials say so. */
  credentialText: string;
  path: Record<string, string>;
  query: [string, string][];
  /** Appended to the query string as it is: malformed escapes, repeated keys, a very long value. */
  queryTail: string;
  body: BodyPart;
}

/** How a generated value travels in a URL: as text. */
function asText(value: unknown): string {
  if (typeof value === 'string') return value;
  if (value === undefined) return '';
  if (Array.isArray(value)) return value.map(asText).join(',');
  if (typeof value === 'object' && value !== null) return JSON.stringify(value);
  return String(value);
}

const LONE_SURROGATE = /[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/;

/**
 * Percent-encodes a URL component. An unpaired surrogate (which encodeURIComponent refuses) goes as
 * the three bytes a lenient encoder would write for it, which are not UTF-8.
 */
export function encodeComponent(text: string): string {
  let out = '';
  for (const char of text) {
    const unit = char.charCodeAt(0);
    if (char.length === 1 && unit >= 0xd800 && unit <= 0xdfff) {
      out += [0xe0 | (unit >> 12), 0x80 | ((unit >> 6) & 0x3f), 0x80 | (unit & 0x3f)].map((b) => `%${b.toString(16).toUpperCase()}`).join('');
    } else {
      out += encodeURIComponent(char);
    }
  }
  return out;
}

/** The value as the service's validator sees it after coercing text (ajv, coerceTypes: 'array'). */
function coerced(schema: JsonSchema, values: string[]): unknown {
  const types = typesOf(schema);
  if (types?.has('array')) return values;
  const value: unknown = values.length === 1 ? values[0] : values;
  if (typeof value !== 'string' || !types || types.has('string')) return value;
  if ((types.has('number') || types.has('integer')) && value !== '' && Number(value) == (value as unknown as number)) {
    const number = Number(value);
    // ajv keeps ±Infinity from text; the reference validator would not: make no claim about it.
    return Number.isFinite(number) ? number : undefined;
  }
  if (types.has('boolean') && (value === 'true' || value === 'false')) return value === 'true';
  if (types.has('null') && value === '') return null;
  return value;
}

/** Why the service must refuse these name=value pairs under this object schema, if it must. */
function textRefusal(schema: JsonSchema, pairs: [string, string][], part: string): string | undefined {
  if (pairs.some(([k, v]) => LONE_SURROGATE.test(k) || LONE_SURROGATE.test(v))) return undefined; // decoded lossily
  const grouped = new Map<string, string[]>();
  for (const [k, v] of pairs) grouped.set(k, [...(grouped.get(k) ?? []), v]);
  const properties = (schema.properties ?? {}) as Record<string, JsonSchema>;
  const value: Record<string, unknown> = {};
  for (const [k, vs] of grouped) {
    const c = coerced(properties[k] ?? {}, vs);
    if (c === undefined) return undefined;
    Object.defineProperty(value, k, { value: c, enumerable: true, writable: true, configurable: true });
  }
  return satisfies(schema, value) ? undefined : `the ${part} breaks its schema`;
}

export interface RequestOptions {
  fuzzer: SchemaFuzzer;
  /** A body generator for an operation whose body schema takes anything (the MCP endpoint). */
  bodyOverride?: fc.Arbitrary<BodyPart>;
}

const JSON_TYPE = 'application/json';

/** The generated requests for one operation. */
export function requestArbitrary(operation: Operation, { fuzzer, bodyOverride }: RequestOptions): fc.Arbitrary<FuzzRequest> {
  const credentials = fc.oneof(
    { weight: 60, arbitrary: fc.constant<Credentials>('key') },
    { weight: 3, arbitrary: fc.constant<Credentials>('read-only') },
    ...(['none', 'malformed', 'other-project', 'unknown-project'] as const).map((c) => ({ weight: 1, arbitrary: fc.constant<Credentials>(c) })),
  );
  const credentialText = fc.oneof(
    fc.constantFrom('', 'Bearer', 'Bearer ', 'Basic dXNlcjpwYXNz', `Bearer lat_${'x'.repeat(40)}`, 'Bearer a b', `Bearer ${'k'.repeat(5000)}`),
    fc.stringMatching(/^[a-z0-9][a-z0-9_-]{1,62}$/),
    fc.constantFrom('P', 'p'.repeat(64), '..', '%00', 'a\u0000b', '\uD800x', "x'; DROP TABLE projects; --"),
  );
  // Path parameters name things: mostly ones that exist (the fuzzer's hints), so the body gets fuzzed behind them.
  const pathValue = fc.oneof({ weight: 4, arbitrary: fuzzer.valid(operation.pathSchema) }, { weight: 1, arbitrary: fuzzer.broken(operation.pathSchema) });
  const path = pathValue.map((value) =>
    Object.fromEntries(Object.keys((operation.pathSchema.properties ?? {}) as object).map((name) => [name, asText((value as Record<string, unknown> | null)?.[name])])),
  );
  const query = fuzzer.value(operation.querySchema).map((value) => {
    if (typeof value !== 'object' || value === null || Array.isArray(value)) return [['q', asText(value)]] as [string, string][];
    return Object.entries(value).flatMap(([k, v]) => (Array.isArray(v) ? v.map((item) => [k, asText(item)]) : [[k, asText(v)]]) as [string, string][]);
  });
  const queryTail = fc.oneof(
    { weight: 12, arbitrary: fc.constant('') },
    { weight: 1, arbitrary: fc.constantFrom('&%', '&limit=%zz', '&=x', '&&&', '&a[b]=1', '&limit=1&limit=2', '&offset=1&offset=2', `&x=${'y'.repeat(8000)}`, '&%00=%00', '&%ED%A0%80=1') },
  );
  const body = bodyOverride ?? (operation.body ? jsonBody(operation.body, fuzzer) : noBody(fuzzer));
  return fc.record({ credentials, credentialText, path, query, queryTail, body });
}

/** GET and DELETE: usually no body; sometimes one anyway. */
function noBody(fuzzer: SchemaFuzzer): fc.Arbitrary<BodyPart> {
  return fc.oneof(
    { weight: 12, arbitrary: fc.constant<BodyPart>({}) },
    { weight: 1, arbitrary: fuzzer.anyJson().map((value): BodyPart => ({ payload: JSON.stringify(value) ?? '', contentType: JSON_TYPE })) },
  );
}

const NUMBER_LITERAL = /(?<=[:[,])-?\d+(?:\.\d+)?(?:[eE][+-]?\d+)?/;

function jsonBody(schema: JsonSchema, fuzzer: SchemaFuzzer): fc.Arbitrary<BodyPart> {
  const judged = (text: string): BodyPart => {
    let parsed: unknown;
    try {
      // An empty body is no body, with a JSON content type too (WIRE.md decision 13): "all defaults".
      parsed = text.trim() === '' ? {} : JSON.parse(text);
    } catch {
      return { payload: text, contentType: JSON_TYPE, refusal: 'the body is not JSON' };
    }
    return { payload: text, contentType: JSON_TYPE, ...(satisfies(schema, parsed) ? {} : { refusal: 'the body breaks its schema' }) };
  };
  const valid = fuzzer.valid(schema);
  const text = (value: unknown) => JSON.stringify(value) ?? '';
  const raw = fc.oneof(
    // Cut short: never JSON.
    fc.tuple(valid, fc.nat()).map(([value, n]) => {
      const t = text(value);
      return judged(t.slice(0, t.length > 0 ? n % t.length : 0));
    }),
    // A number JSON.parse reads as ±Infinity, 0 or -0, or past a double's precision.
    fc.tuple(valid, fc.constantFrom('1e400', '-1e400', '1e-400', '-0', '-0.0', '123456789012345678901234567890')).map(([value, n]) => judged(text(value).replace(NUMBER_LITERAL, n))),
    // Not an object at all, or nested past any sane depth.
    fc.constantFrom('null', '[]', '"x"', '1', 'true', '[{}]', '{"a":'.repeat(5000) + '1' + '}'.repeat(5000), JSON.stringify(deepObject(200))).map(judged),
    // A repeated key: JSON.parse keeps the last.
    fc.tuple(valid, fuzzer.anyJson()).map(([value, v]) => {
      const t = text(value);
      const key = typeof value === 'object' && value !== null ? Object.keys(value)[0] : undefined;
      return key === undefined || !t.startsWith('{') ? judged(t) : judged(`${t.slice(0, -1)},${JSON.stringify(key)}:${text(v) || 'null'}}`);
    }),
    // Prototype keys, a byte-order mark, bytes that are not UTF-8: no claim, only no crash.
    fc.tuple(valid, fc.constantFrom('proto', 'constructor', 'bom', 'bytes')).map(([value, how]): BodyPart => {
      const t = text(value);
      const inner = t.startsWith('{') && t !== '{}' ? `,${t.slice(1)}` : '}';
      if (how === 'proto') return { payload: `{"__proto__":{"polluted":true}${inner}`, contentType: JSON_TYPE };
      if (how === 'constructor') return { payload: `{"constructor":{"prototype":{"polluted":true}}${inner}`, contentType: JSON_TYPE };
      if (how === 'bom') return { payload: `\uFEFF${t}`, contentType: JSON_TYPE };
      return { payload: Buffer.concat([Buffer.from('{"x":"'), Buffer.from([0xff, 0xc0, 0xed, 0xa0, 0x80]), Buffer.from(`"${inner}`)]), contentType: JSON_TYPE };
    }),
  );
  const contentType = fc.tuple(valid, fc.constantFrom('text/plain', 'application/x-www-form-urlencoded', 'multipart/form-data; boundary=x', 'application/json; charset=utf-16', 'application/json; charset=latin1', 'APPLICATION/JSON', 'application/vnd.api+json', 'application/json, text/plain')).map(
    ([value, type]): BodyPart => ({
      payload: text(value),
      contentType: type,
      ...(/^(text\/plain|application\/x-www-form-urlencoded|multipart\/)/.test(type) ? { refusal: `the body is sent as ${type}` } : {}),
    }),
  );
  return fc.oneof(
    { weight: 16, arbitrary: fuzzer.value(schema).map((value) => judged(text(value))) },
    { weight: 1, arbitrary: fc.constant<BodyPart>(satisfies(schema, {}) ? {} : { refusal: 'no body, and {} breaks the schema' }) },
    { weight: 2, arbitrary: raw },
    { weight: 1, arbitrary: contentType },
  );
}

/** The MCP endpoint takes any body (JSON-RPC): its requests come from the tools' own input schemas. */
export function jsonRpcBodies(tools: readonly Tool[], fuzzer: SchemaFuzzer): fc.Arbitrary<BodyPart> {
  const ACCEPT_BOTH = 'application/json, text/event-stream';
  const accept = fc.oneof({ weight: 14, arbitrary: fc.constant(ACCEPT_BOTH) }, { weight: 1, arbitrary: fc.constantFrom('application/json', 'text/event-stream', '*/*', 'text/html') });
  const id = fc.oneof(fc.nat(), fc.string({ maxLength: 8 }));
  const call = fc
    .tuple(fc.constantFrom(...tools), id)
    .chain(([tool, n]) =>
      fuzzer.value(tool.inputSchema).map((args) => ({
        message: { jsonrpc: '2.0', id: n, method: 'tools/call', params: { name: tool.name, arguments: args } },
        toolRefusal: satisfies(tool.inputSchema, args) ? undefined : `the arguments break ${tool.name}'s inputSchema`,
      })),
    );
  const other = fc.oneof(
    fc.constant({ jsonrpc: '2.0', id: 1, method: 'tools/list' }),
    fc.record({
      jsonrpc: fc.constantFrom('2.0', '1.0', 2),
      id: fc.oneof(fc.nat(), fc.string({ maxLength: 8 }), fc.constant(null)),
      method: fc.oneof(fc.constantFrom('initialize', 'ping', 'tools/call', 'tools/list', 'resources/list', 'prompts/get', 'notifications/initialized', 'logging/setLevel'), fc.string()),
      params: fuzzer.anyJson(),
    }),
    fc.array(call.map((c) => c.message), { minLength: 1, maxLength: 3 }),
    fuzzer.anyJson(),
  );
  const message = fc.oneof(
    { weight: 4, arbitrary: call },
    { weight: 1, arbitrary: other.map((m) => ({ message: m as unknown, toolRefusal: undefined as string | undefined })) },
  );
  return fc.tuple(message, accept).map(([{ message: m, toolRefusal }, a]): BodyPart => ({
    payload: JSON.stringify(m) ?? 'null',
    contentType: 'application/json',
    accept: a,
    ...(a === ACCEPT_BOTH ? {} : { refusal: `Accept: ${a}` }),
    ...(toolRefusal && a === ACCEPT_BOTH ? { toolRefusal } : {}),
  }));
}

export interface Target {
  projectId: string;
  apiKey: string;
  readOnlyKey: string;
  otherApiKey: string;
}

export interface BuiltRequest {
  method: Method;
  url: string;
  headers: Record<string, string>;
  payload?: string | Buffer;
  /** Why the service must refuse it, if it must. */
  refusals: string[];
}

/** The request as it goes on the wire, with every reason the service must refuse it. */
export function buildRequest(operation: Operation, request: FuzzRequest, target: Target): BuiltRequest {
  const refusals: string[] = [];
  const projectId = request.credentials === 'unknown-project' ? request.credentialText : target.projectId;
  const headers: Record<string, string> = {};
  switch (request.credentials) {
    case 'key':
    case 'unknown-project':
      headers.authorization = `Bearer ${target.apiKey}`;
      break;
    case 'read-only':
      headers.authorization = `Bearer ${target.readOnlyKey}`;
      break;
    case 'other-project':
      headers.authorization = `Bearer ${target.otherApiKey}`;
      break;
    case 'malformed':
      if (/^[\x20-\x7e]*$/.test(request.credentialText)) headers.authorization = request.credentialText;
      break;
    case 'none':
      break;
  }
  if (request.credentials !== 'key' && request.credentials !== 'read-only') refusals.push(`credentials: ${request.credentials}`);

  const pathPairs = Object.entries(request.path);
  const pathRefusal = textRefusal(operation.pathSchema, pathPairs, 'path');
  if (pathRefusal) refusals.push(pathRefusal);
  const path = operation.path.replace(/\{(\w+)\}/g, (_, name: string) => encodeComponent(request.path[name] ?? ''));

  if (request.queryTail === '') {
    const queryRefusal = textRefusal(operation.querySchema, request.query, 'query string');
    if (queryRefusal) refusals.push(queryRefusal);
  }
  const query = request.query.map(([k, v]) => `${encodeComponent(k)}=${encodeComponent(v)}`).join('&') + request.queryTail;

  const { payload, contentType, accept, refusal } = request.body;
  if (refusal) refusals.push(refusal);
  if (contentType !== undefined) headers['content-type'] = contentType;
  if (accept !== undefined) headers.accept = accept;

  return {
    method: operation.method,
    url: `/api/v1/projects/${encodeComponent(projectId)}${path}${query ? `?${query}` : ''}`,
    headers,
    ...(payload === undefined ? {} : { payload }),
    refusals,
  };
}
