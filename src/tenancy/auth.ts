// Authentication, permission and entitlement checks for every project-scoped route, in one place.
// Routes declare what they need in their config (`permission`, `feature`) and whether they touch
// a subject's data (`audit`); this plugin enforces it before the body is even validated, so an
// anonymous caller learns nothing about the schema, and records every audited call before its
// answer leaves.
import type { FastifyInstance, FastifyRequest } from 'fastify';
import fp from 'fastify-plugin';
import { errorResponses } from '../platform/error-handler.js';
import { isAuditEventType, type AuditEventType, type Permission } from '../platform/access.js';
import { ProjectParamsSchema } from '../platform/project-id.js';
import type { Audit, AuditCall, AuditDetail, AuditTicket } from './audit.js';
import type { Feature } from './plans.js';
import type { Principal, TenancyService } from './service.js';

declare module 'fastify' {
  interface FastifyContextConfig {
    /** Required permission; every project route must declare one. */
    permission?: Permission;
    /** Required plan entitlement, if any. */
    feature?: Feature;
    /** The pack the route belongs to: refused where the project has turned the pack off (/memory-compliance-packs). */
    pack?: string;
    /** Set on a route that reads or writes a subject's data: the audit event type, e.g. `read.search`. */
    audit?: AuditEventType;
  }
  interface FastifyRequest {
    principal: Principal;
    /** What an audited route says about the call, over what the record reads from its input and answer. */
    auditDetail?: Partial<AuditDetail>;
    /** The answer's object, kept for the audit record. */
    auditResult?: unknown;
    /** The call's audit record, begun before its handler runs. */
    auditTicket?: AuditTicket;
    /** Set once the call's audit record is settled (an error answer after a failed write is not recorded twice). */
    audited?: boolean;
  }
}

export function bearerToken(request: FastifyRequest): string | undefined {
  const header = request.headers.authorization;
  if (typeof header !== 'string') return undefined;
  const match = /^Bearer\s+(\S+)\s*$/i.exec(header);
  return match?.[1];
}

async function projectAuth(app: FastifyInstance, options: { tenancy: TenancyService; audit: Audit }): Promise<void> {
  const { tenancy, audit } = options;
  app.decorateRequest('principal', null as unknown as Principal);
  const documented = new WeakSet<object>();

  app.addHook('onRoute', (route) => {
    const config = route.config;
    if (!config?.permission) throw new Error(`route ${route.method} ${route.url} declares no permission`);
    if (config.audit !== undefined && !isAuditEventType(config.audit)) {
      throw new Error(`route ${route.method} ${route.url} has audit ${JSON.stringify(config.audit)}; expected read.<what>, write.<what> or subject.<what>`);
    }
    const schema = (route.schema ??= {});
    // A GET route's HEAD twin arrives with the same schema object: document it once.
    if (documented.has(schema)) return;
    documented.add(schema);
    schema.params ??= ProjectParamsSchema;
    schema.response = { ...errorResponses, ...(schema.response as object | undefined) };
    (schema as { security?: unknown }).security = [{ bearerAuth: [] }];
    const notes = [`Requires ${config.permission}.`];
    if (config.feature) notes.push(`Requires the ${config.feature} entitlement (FEATURE_DISABLED otherwise).`);
    if (config.pack) notes.push(`Part of the ${config.pack} pack: FEATURE_DISABLED where the project has turned it off (POST /memory-compliance-packs).`);
    if (config.audit) notes.push(`Audited as ${config.audit}.`);
    schema.description = [schema.description, notes.join(' ')].filter(Boolean).join('\n\n');
  });

  app.addHook('onRequest', async (request) => {
    const { projectId } = request.params as { projectId: string };
    const principal = await tenancy.authenticate(bearerToken(request), projectId);
    const config = request.routeOptions.config;
    tenancy.assertPermission(principal, config.permission!);
    if (config.feature) tenancy.assertFeature(principal, config.feature);
    if (config.pack) await tenancy.assertPackEnabled(principal, config.pack);
    request.principal = principal;
  });

  // A POST without a body means "all defaults".
  app.addHook('preValidation', async (request) => {
    if (request.body === undefined && request.routeOptions.schema?.body) request.body = {};
  });

  const auditCall = (request: FastifyRequest, eventType: AuditEventType): AuditCall => ({
    projectId: request.principal.projectId,
    keyId: request.principal.keyId,
    keyName: request.principal.keyName,
    eventType,
    method: request.method,
    route: request.routeOptions.url ?? request.url,
    requestId: request.id,
    at: new Date(),
    input: { body: request.body, query: request.query },
  });

  // An audited call's row is written while its handler works (it knows who, what and about whom
  // once the input is validated), so a route slower than one insert pays nothing for it.
  app.addHook('preHandler', async (request) => {
    const eventType = request.routeOptions.config.audit;
    if (eventType !== undefined && request.principal) request.auditTicket = audit.begin(auditCall(request, eventType), request.log);
  });

  // The answer's object (not yet serialised) is kept for the audit record: what it lists.
  app.addHook('preSerialization', async (request, _reply, payload) => {
    if (request.routeOptions.config.audit !== undefined) request.auditResult = payload;
    return payload;
  });

  // No audited answer leaves before its row is durable; the outcome (status, rows, memories) is
  // written behind it. Only calls that got past authentication: a refused key touched nothing.
  app.addHook('onSend', async (request, reply, payload) => {
    const eventType = request.routeOptions.config.audit;
    if (eventType === undefined || !request.principal || request.audited) return payload;
    request.audited = true;
    // A call refused before its handler (validation) begins its record here.
    const ticket = request.auditTicket ?? audit.begin(auditCall(request, eventType), request.log);
    await ticket.durable;
    ticket.end({ statusCode: reply.statusCode, result: request.auditResult, detail: request.auditDetail });
    return payload;
  });
}

export default fp(projectAuth, { name: 'project-auth' });
