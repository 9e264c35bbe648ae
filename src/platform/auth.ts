// Authentication, permission and entitlement checks for every project-scoped route, in one place.
// Routes declare what they need in their config (`permission`, `feature`); this plugin enforces it
// before the body is even validated, so an anonymous caller learns nothing about the schema.
import type { FastifyInstance, FastifyRequest } from 'fastify';
import fp from 'fastify-plugin';
import { Type } from 'typebox';
import type { Permission } from '../tenancy/keys.js';
import type { Feature } from '../tenancy/plans.js';
import { PROJECT_ID_PATTERN, type Principal, type TenancyService } from '../tenancy/service.js';
import { errorResponses } from './error-handler.js';

declare module 'fastify' {
  interface FastifyContextConfig {
    /** Required permission; every project route must declare one. */
    permission?: Permission;
    /** Required plan entitlement, if any. */
    feature?: Feature;
  }
  interface FastifyRequest {
    principal: Principal;
  }
}

export const ProjectParamsSchema = Type.Object({
  projectId: Type.String({ pattern: PROJECT_ID_PATTERN, description: 'The project the API key belongs to' }),
});

export function bearerToken(request: FastifyRequest): string | undefined {
  const header = request.headers.authorization;
  if (typeof header !== 'string') return undefined;
  const match = /^Bearer\s+(\S+)\s*$/i.exec(header);
  return match?.[1];
}

async function projectAuth(app: FastifyInstance, options: { tenancy: TenancyService }): Promise<void> {
  const { tenancy } = options;
  app.decorateRequest('principal', null as unknown as Principal);

  app.addHook('onRoute', (route) => {
    if (!route.config?.permission) throw new Error(`route ${route.method} ${route.url} declares no permission`);
    const schema = (route.schema ??= {});
    schema.params ??= ProjectParamsSchema;
    schema.response = { ...errorResponses, ...(schema.response as object | undefined) };
    (schema as { security?: unknown }).security = [{ bearerAuth: [] }];
    const notes = [`Requires ${route.config.permission}.`];
    if (route.config.feature) notes.push(`Requires the ${route.config.feature} entitlement (FEATURE_DISABLED otherwise).`);
    schema.description = [schema.description, notes.join(' ')].filter(Boolean).join('\n\n');
  });

  app.addHook('onRequest', async (request) => {
    const { projectId } = request.params as { projectId: string };
    const principal = await tenancy.authenticate(bearerToken(request), projectId);
    const config = request.routeOptions.config;
    tenancy.assertPermission(principal, config.permission!);
    if (config.feature) tenancy.assertFeature(principal, config.feature);
    request.principal = principal;
  });

  // A POST without a body means "all defaults".
  app.addHook('preValidation', async (request) => {
    if (request.body === undefined && request.routeOptions.schema?.body) request.body = {};
  });
}

export default fp(projectAuth, { name: 'project-auth' });
