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
SERVICE_UNAVAILABLE, OVERLOADED, JOB_TIMEOUT and NOT_CONFIGURED (503, Retry-After where a retry can help).
A POST without a body is treated as \`{}\`. Request bodies reject unknown fields.
`.trim();

async function openapi(app: FastifyInstance): Promise<void> {
  await app.register(swagger, {
    openapi: {
      openapi: '3.1.0',
      info: { title: 'Lattice', version: '1.0.0', description: DESCRIPTION },
      components: {
        securitySchemes: { bearerAuth: { type: 'http', scheme: 'bearer', description: 'A project API key' } },
      },
    },
    refResolver: {
      buildLocalReference: (json, _baseUri, _fragment, i) => (typeof json.$id === 'string' ? json.$id : `def-${i}`),
    },
  });
  await app.register(swaggerUi, { routePrefix: '/docs' });
  app.get('/openapi.json', { schema: { hide: true } }, async () => app.swagger());
}

export default fp(openapi, { name: 'openapi', dependencies: ['error-handler'] });
