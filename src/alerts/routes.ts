// Alert rule routes: CRUD and the fire history.
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { Type } from 'typebox';
import { CreateRuleBodySchema, FireSchema, PatchRuleBodySchema, RuleParamsSchema, RuleSchema } from './schemas.js';
import { FIRES_LISTED, type AlertService } from './service.js';

const READ = { permission: 'READ_MEMORY' } as const;
const WRITE = { permission: 'WRITE_MEMORY' } as const;
const tags = ['alerts'];

const ruleNotes =
  'Enabled rules count against the plan\'s active-triggers ceiling (403 QUOTA_EXCEEDED past it). Webhook URLs must be http(s) and resolve to public addresses, or to the networks and hosts ' +
  'the deployment names (WEBHOOK_ALLOWED_TARGETS, or WEBHOOK_ALLOW_PRIVATE_TARGETS for every private one); link-local and cloud metadata addresses are refused whatever the settings; a webhook without a secret gets a generated `whsec_` secret. Secrets appear only in the answers to create and PATCH, never on reads; ' +
  'a PATCH of notify that resends a webhook URL without a secret keeps its secret. ' +
  'Deliveries are signed per Standard Webhooks (webhook-id, webhook-timestamp, webhook-signature) and also carry x-thinkfleet-signature (hex HMAC-SHA256 of the body).';

export const alertRoutes: FastifyPluginAsyncTypebox<{ alerts: AlertService }> = async (app, { alerts }) => {
  app.get(
    '/memory-alerts',
    { config: READ, schema: { tags, summary: 'List alert rules', response: { 200: Type.Array(RuleSchema) } } },
    async (request) => alerts.list(request.principal.projectId),
  );

  app.get(
    '/memory-alerts/:alertId',
    { config: READ, schema: { tags, summary: 'Fetch one alert rule', params: RuleParamsSchema, response: { 200: RuleSchema } } },
    async (request) => alerts.get(request.principal.projectId, request.params.alertId),
  );

  app.post(
    '/memory-alerts',
    {
      config: WRITE,
      schema: { tags, summary: 'Create an alert rule', description: ruleNotes, body: CreateRuleBodySchema, response: { 201: RuleSchema } },
    },
    async (request, reply) => {
      const rule = await alerts.create(request.principal.projectId, request.body, request.principal.entitlements['active-triggers']);
      return reply.code(201).send(rule);
    },
  );

  app.patch(
    '/memory-alerts/:alertId',
    {
      config: WRITE,
      schema: {
        tags,
        summary: 'Change any subset of a rule\'s fields',
        description: `description, filter and throttle may be null to clear them. ${ruleNotes}`,
        params: RuleParamsSchema,
        body: PatchRuleBodySchema,
        response: { 200: RuleSchema },
      },
    },
    async (request) => alerts.patch(request.principal.projectId, request.params.alertId, request.body, request.principal.entitlements['active-triggers']),
  );

  app.delete(
    '/memory-alerts/:alertId',
    {
      config: WRITE,
      schema: { tags, summary: 'Delete a rule and its fire history', params: RuleParamsSchema, response: { 204: Type.Null() } },
    },
    async (request, reply) => {
      await alerts.delete(request.principal.projectId, request.params.alertId);
      return reply.code(204).send(null);
    },
  );

  app.get(
    '/memory-alerts/:alertId/fires',
    {
      config: { ...READ, audit: 'read.alert_fires' },
      schema: {
        tags,
        summary: `The rule's last ${FIRES_LISTED} fires, newest first`,
        description: 'Each fire carries its dedupe key and one delivery result per channel of the rule, in the rule\'s order, with attempts so far and, while retrying, nextAttemptAt.',
        params: RuleParamsSchema,
        response: { 200: Type.Array(FireSchema) },
      },
    },
    async (request) => alerts.fires(request.principal.projectId, request.params.alertId),
  );
};
