// Builds the Fastify app from a context. Never listens: server.ts does.
import rateLimit from '@fastify/rate-limit';
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import { AjvCompiler, type ValidatorFactory } from '@fastify/ajv-compiler';
import Fastify, { type FastifyInstance, type RouteOptions } from 'fastify';
import { Redis } from 'ioredis';
import type { AppContext } from './context.js';
import { memoryRoutes } from './memory/routes.js';
import { MemorySchema } from './memory/schemas.js';
import { searchRoutes } from './memory/search-routes.js';
import { curationRoutes } from './memory/curation-routes.js';
import { mcpRoutes } from './mcp/routes.js';
import { observeRoutes } from './memory/observe-routes.js';
import { alertRoutes } from './alerts/routes.js';
import { eventRoutes } from './events/routes.js';
import { typedRoutes } from './typed/routes.js';
import projectAuth, { bearerToken } from './platform/auth.js';
import errorHandler from './platform/error-handler.js';
import { RateLimitError } from './platform/errors.js';
import { healthRoutes } from './platform/health.js';
import openapi from './platform/openapi.js';
import { hashKey } from './tenancy/keys.js';

export const API_PREFIX = '/api/v1/projects/:projectId';

export interface BuildOptions {
  /** Log requests (pino). Tests pass false. */
  logger?: boolean;
  /** Observe every route as it is added (the OpenAPI completeness test). */
  onRoute?: (route: RouteOptions) => void;
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
  const build = (coerceTypes: 'array' | false) =>
    ajvPool(externalSchemas as never, { ...ajvOptions, customOptions: { ...AJV_OPTIONS, coerceTypes } }) as unknown as RouteValidatorCompiler;
  const coercing = build('array');
  const exact = build(false);
  return (route) => (route.httpPart === 'body' ? exact(route) : coercing(route));
};

export async function buildApp(ctx: AppContext, options: BuildOptions = {}): Promise<FastifyInstance> {
  const { config } = ctx;
  const app = Fastify({
    loggerInstance: options.logger === false ? undefined : ctx.log,
    bodyLimit: config.bodyLimitBytes,
    requestTimeout: config.requestTimeoutMs,
    // `/v1/projects/...` (behind a gateway that adds `/api`) is the same route as `/api/v1/...`.
    rewriteUrl: (request) => {
      const url = request.url ?? '/';
      return url.startsWith('/v1/projects/') ? `/api${url}` : url;
    },
    schemaController: { compilersFactory: { buildValidator: buildValidators as unknown as ValidatorFactory } },
  }).withTypeProvider<TypeBoxTypeProvider>();
  if (options.onRoute) app.addHook('onRoute', options.onRoute);

  await app.register(errorHandler);
  await app.register(openapi);
  await app.register(healthRoutes, { db: ctx.db, queue: ctx.queue });

  const rateLimitRedis = config.redisUrl === undefined ? undefined : new Redis(config.redisUrl, { maxRetriesPerRequest: 1, connectTimeout: 2000 });
  rateLimitRedis?.on('error', () => {});
  if (rateLimitRedis) app.addHook('onClose', async () => rateLimitRedis.disconnect());

  await app.register(
    async (scope) => {
      await scope.register(rateLimit, {
        max: config.rateLimitPerMinute,
        timeWindow: 60_000,
        redis: rateLimitRedis,
        nameSpace: `${config.queuePrefix}:rate:`,
        skipOnError: true,
        keyGenerator: (request) => {
          const token = bearerToken(request);
          return token === undefined ? `ip:${request.ip}` : `key:${hashKey(token).slice(0, 32)}`;
        },
        errorResponseBuilder: (_request, context) =>
          new RateLimitError(`rate limit of ${context.max} requests per minute exceeded; retry in ${Math.ceil(context.ttl / 1000)} s`, Math.ceil(context.ttl / 1000)),
      });
      await scope.register(projectAuth, { tenancy: ctx.tenancy });
      scope.addSchema(MemorySchema);
      await scope.register(memoryRoutes, { memory: ctx.memory });
      await scope.register(searchRoutes, { search: ctx.search });
      await scope.register(curationRoutes, { curation: ctx.curation });
      await scope.register(observeRoutes, { observer: ctx.observer });
      await scope.register(typedRoutes, { typed: ctx.typed });
      await scope.register(eventRoutes, { events: ctx.events });
      await scope.register(alertRoutes, { alerts: ctx.alerts });
      await scope.register(mcpRoutes, {
        services: { memory: ctx.memory, search: ctx.search, tenancy: ctx.tenancy, observe: (projectId, input) => ctx.observer.observe(projectId, input) },
      });
    },
    { prefix: API_PREFIX },
  );

  return app;
}
