// OpenAPI generated from the route schemas (never hand-written), served at /openapi.json, with a
// browsable reference at /docs.
import swagger from '@fastify/swagger';
import swaggerUi from '@fastify/swagger-ui';
import type { FastifyInstance } from 'fastify';
import fp from 'fastify-plugin';

const DESCRIPTION = `
Lattice is a behavioral memory service for AI agents.

Every project route lives under \`/api/v1/projects/{projectId}/...\` and is also served at
\`/v1/projects/{projectId}/...\` for deployments behind a gateway that adds \`/api\`.
Authenticate with \`Authorization: Bearer <API key>\`. A key belongs to one project: a key used on
another project's path gets 404, never 403, so that it cannot learn whether that project exists.

Errors have one body: \`{ statusCode, code, message, params? }\`. Codes: VALIDATION_ERROR (400),
AUTHENTICATION_ERROR (401), AUTHORIZATION_ERROR and FEATURE_DISABLED (403, the upgrade prompt in
\`message\`), NOT_FOUND (404), CONFLICT (409), PAYLOAD_TOO_LARGE (413), UNSUPPORTED_MEDIA_TYPE
(415), RATE_LIMIT and QUOTA_EXCEEDED (429, with Retry-After in seconds), INTERNAL_ERROR (500),
SERVICE_UNAVAILABLE, WRITE_CONFLICT (concurrent writes met and this one lost every retry; nothing was written), OVERLOADED, JOB_TIMEOUT and NOT_CONFIGURED (503, Retry-After where a retry can help).
A POST without a body is treated as \`{}\`. Request bodies reject unknown fields.
`.trim();

const PROJECT_PREFIX = '/api/v1/projects/{projectId}';

/**
 * A stable operationId from the method and the path, for client generators' method names:
 * `POST /api/v1/projects/{projectId}/admin/memory/search` is `postAdminMemorySearch`, a path
 * parameter reads `By<Name>` (`getAdminMemoryById`), dashes and dots start a new word.
 */
export function operationIdFor(method: string, url: string): string {
  const path = url.startsWith(PROJECT_PREFIX) ? url.slice(PROJECT_PREFIX.length) : url;
  const words = path
    .split('/')
    .filter(Boolean)
    .flatMap((segment) => {
      const param = /^\{(.+)\}$/.exec(segment) ?? /^:(.+)$/.exec(segment);
      return param ? ['by', ...param[1]!.split(/[^A-Za-z0-9]+/)] : segment.split(/[^A-Za-z0-9]+/);
    })
    .filter(Boolean);
  const capitalised = words.map((w) => w[0]!.toUpperCase() + w.slice(1));
  return method.toLowerCase() + capitalised.join('');
}

async function openapi(app: FastifyInstance): Promise<void> {
  await app.register(swagger, {
    openapi: {
      openapi: '3.1.0',
      info: { title: 'Lattice', version: '1.0.0', description: DESCRIPTION, license: { name: 'Apache-2.0', identifier: 'Apache-2.0' } },
      servers: [{ url: '/', description: 'The server that serves this document' }],
      components: {
        securitySchemes: { bearerAuth: { type: 'http', scheme: 'bearer', description: 'A project API key' } },
      },
    },
    // Every operation gets a stable operationId; one without a security requirement of its own is
    // public (health), which the document says explicitly (`security: []`).
    transform: ({ schema, url, route }) => {
      const method = [route.method].flat().find((m) => m !== 'HEAD') ?? 'GET';
      const own = (schema ?? {}) as Record<string, unknown>;
      return { schema: { ...own, operationId: own.operationId ?? operationIdFor(method, url), security: own.security ?? [] } as typeof schema, url };
    },
    refResolver: {
      buildLocalReference: (json, _baseUri, _fragment, i) => (typeof json.$id === 'string' ? json.$id : `def-${i}`),
    },
  });
  await app.register(swaggerUi, { routePrefix: '/docs' });
  app.get('/openapi.json', { schema: { hide: true } }, async () => app.swagger());
}

export default fp(openapi, { name: 'openapi', dependencies: ['error-handler'] });
