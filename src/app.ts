// Builds the Fastify app from the assembled modules: the platform's plugins, then, under the
// project prefix, the tenancy access plugin and every module's schemas and routes, and the MCP
// endpoint with every module's tools. Never listens: server.ts does.
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import { AjvCompiler, type ValidatorFactory } from '@fastify/ajv-compiler';
import { SerializerSelector, type SerializerFactory } from '@fastify/fast-json-stringify-compiler';
import Fastify, { type FastifyInstance, type RouteOptions } from 'fastify';
import { mcpRoutes } from './mcp/routes.js';
import type { Lattice } from './modules.js';
import errorHandler, { clientErrorHandler, sendError } from './platform/error-handler.js';
import { healthRoutes } from './platform/health.js';
import { assertStorableInput, isStorableTimestamp } from './platform/input-guard.js';
import consolePlugin from './platform/console.js';
import openapi from './platform/openapi.js';

export const API_PREFIX = '/api/v1/projects/:projectId';

export interface BuildOptions {
  /** Log requests (pino). Tests pass false. */
  logger?: boolean;
  /** Observe every route as it is added (the OpenAPI completeness test). */
  onRoute?: (route: RouteOptions) => void;
  /** Whether the encoder loaded at start has loaded: /readyz answers 503 until it has (lattice serve). */
  encoderLoaded?: () => boolean;
}

// Unknown fields are refused, not silently dropped: a typo must not lose data.
const AJV_OPTIONS = { removeAdditional: false, useDefaults: true, allErrors: true } as const;
const ajvPool = AjvCompiler();

/**
 * Query strings and path parameters arrive as text, so their validator coerces ("5" -> 5); JSON
 * bodies are typed already, and coercing them would turn a null into "" or 100 into "100" inside
 * unions, so their validator does not.
 */
type RouteValidatorCompiler = (route: { schema: unknown; httpPart?: string }) => unknown;
const buildValidators = (externalSchemas: Record<string, unknown>, ajvOptions: Record<string, unknown>): RouteValidatorCompiler => {
  // `date-time` is narrowed to what Postgres and JS both hold (no leap second, years 0001 to 9999).
  const onCreate = (ajv: { addFormat(name: string, format: { type: 'string'; validate: (s: string) => boolean }): unknown }) =>
    ajv.addFormat('date-time', { type: 'string', validate: isStorableTimestamp });
  const build = (coerceTypes: 'array' | false) =>
    ajvPool(externalSchemas as never, { ...ajvOptions, onCreate, customOptions: { ...AJV_OPTIONS, coerceTypes } }) as unknown as RouteValidatorCompiler;
  const coercing = build('array');
  const exact = build(false);
  return (route) => (route.httpPart === 'body' ? exact(route) : coercing(route));
};

/**
 * Fastify's own response serializers (fast-json-stringify), each compiled on its route's first
 * answer with that status rather than as the app is built: compiling every route's at once took 3
 * of the 3.6 s the app took to build, at every start and in every test file. The serializer is the
 * same, so is what it writes; test/platform/openapi-lint.test.ts compiles every route's, so a
 * schema it cannot compile fails the suite rather than a first answer.
 */
const compileSerializers = SerializerSelector();
export const buildSerializers: SerializerFactory = (externalSchemas, options) => {
  const compile = compileSerializers(externalSchemas, options);
  return (route) => {
    let serialize: ((doc: unknown) => string) | undefined;
    return (doc) => (serialize ??= compile(route))(doc);
  };
};

export async function buildApp(lattice: Lattice, options: BuildOptions = {}): Promise<FastifyInstance> {
  const { runtime, apis, modules } = lattice;
  const { config } = runtime;
  const app = Fastify({
    loggerInstance: options.logger === false ? undefined : runtime.log,
    bodyLimit: config.bodyLimitBytes,
    requestTimeout: config.requestTimeoutMs,
    // Node measures the request timeout against the larger of it and headersTimeout (60 s by
    // default) and checks only every connectionsCheckingInterval (30 s by default), so without
    // these a body trickled in could hold a socket for up to 90 s whatever REQUEST_TIMEOUT_MS says.
    http: {
      requestTimeout: config.requestTimeoutMs,
      headersTimeout: Math.min(60_000, config.requestTimeoutMs),
      connectionsCheckingInterval: Math.min(1000, Math.ceil(config.requestTimeoutMs / 4)),
    },
    clientErrorHandler,
    // The router refuses a URL whose percent-escapes do not decode, or a path parameter past its
    // length limit, before any hook runs; without this it answers in its own body and codes.
    frameworkErrors: (error, request, reply) => {
      sendError(error, request, reply);
    },
    // close() ends idle keep-alive sockets at once and lets in-flight requests finish (each closes
    // its socket after answering); new connections are refused.
    forceCloseConnections: 'idle',
    // `/v1/projects/...` (behind a gateway that adds `/api`) is the same route as `/api/v1/...`.
    rewriteUrl: (request) => {
      const url = request.url ?? '/';
      return url.startsWith('/v1/projects/') ? `/api${url}` : url;
    },
    schemaController: { compilersFactory: { buildValidator: buildValidators as unknown as ValidatorFactory, buildSerializer: buildSerializers } },
  }).withTypeProvider<TypeBoxTypeProvider>();
  if (options.onRoute) app.addHook('onRoute', options.onRoute);

  await app.register(errorHandler);
  // A JSON content type with no body is no body, on every route: clients send the header on every
  // request (the public Python client does, DELETE included). A route that needs a body then says
  // so through its schema; a body that is there is parsed as Fastify does (prototype poisoning refused).
  const parseJson = app.getDefaultJsonParser('error', 'error');
  app.removeContentTypeParser('application/json');
  app.addContentTypeParser('application/json', { parseAs: 'string' }, (request, body, done) => {
    if ((body as string).trim() === '') done(null, undefined);
    else parseJson(request, body as string, done);
  });
  // Before any schema or handler sees the input (and before anything walks it), for every route.
  app.addHook('preValidation', async (request) => {
    assertStorableInput(request.body, 'body');
    assertStorableInput(request.query, 'querystring');
  });
  await app.register(openapi);
  await app.register(consolePlugin);
  await app.register(healthRoutes, { db: runtime.db, queue: runtime.queue, dbTimeoutMs: runtime.config.dbConnectTimeoutMs, encoderLoaded: options.encoderLoaded });

  await app.register(
    async (scope) => {
      await scope.register(apis.tenancy.access);
      for (const module of modules) for (const schema of module.schemas ?? []) scope.addSchema(schema);
      for (const module of modules) if (module.routes) await scope.register(module.routes);
      await scope.register(mcpRoutes, { tools: modules.flatMap((module) => module.tools ?? []), endpoints: modules.flatMap((module) => module.mcpEndpoints ?? []), access: apis.tenancy });
    },
    { prefix: API_PREFIX },
  );

  return app;
}
