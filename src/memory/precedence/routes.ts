// GET, PUT /admin/memory/precedence (SDK-WIRE.md 4.2).
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { Type } from 'typebox';
import { PRECEDENCE_TIERS, type PrecedencePolicy } from '../search/precedence.js';
import { PRECEDENCE_CACHE_MS, type PrecedencePolicies } from './policies.js';

const Tier = Type.Enum(PRECEDENCE_TIERS);
const PolicySchema = Type.Object(
  {
    defaultOrder: Type.Array(Tier, { minItems: 4, maxItems: 4, description: 'Every tier once, the first winning' }),
    scopeNearestWins: Type.Boolean({ description: 'Between scopes, the nearer one wins (session, user, agent, location, project, platform), before defaultOrder' }),
    overrides: Type.Array(Type.Object({ category: Type.String({ minLength: 1, maxLength: 100 }), winningTier: Tier }, { additionalProperties: false }), {
      maxItems: 100,
      description: 'Per memory category, the tier that wins, before the rest',
    }),
  },
  { additionalProperties: false },
);

const rules =
  'Two live memories of one subject on one slot (observe\'s single-valued facts: residence, employer, plan ...) with different content disagree; search (and what is built on it: /memory/context, /lattice/context with a query, MCP memory_search) shows the one the policy prefers first, the other just under it. ' +
  'A memory\'s tier: human_verified (a person confirmed it through POST /admin/memory/{memoryId}/confirm), base (platform scope), licensed_brain (read from a published brain, metadata.brainId), local (the project\'s own, the rest). ' +
  'The winner: an override for the memories\' category names the winning tier; else, with scopeNearestWins, the nearer scope; else the tier earlier in defaultOrder; two memories of one tier and scope are left to newer first. ' +
  `Default: defaultOrder ${PRECEDENCE_TIERS.join(', ')}, scopeNearestWins true, no override.`;

export const precedenceRoutes: FastifyPluginAsyncTypebox<{ policies: PrecedencePolicies }> = async (app, { policies }) => {
  app.get(
    '/admin/memory/precedence',
    {
      config: { permission: 'READ_MEMORY' },
      schema: { tags: ['memory'], summary: "The project's precedence policy between memories that disagree", description: rules, response: { 200: PolicySchema } },
    },
    async (request) => policies.policyFor(request.principal.projectId),
  );
  app.put(
    '/admin/memory/precedence',
    {
      config: { permission: 'WRITE_MEMORY' },
      schema: {
        tags: ['memory'],
        summary: "Set the project's precedence policy",
        description: `${rules} The whole policy is replaced; 400 naming what is wrong (a tier missing or twice, two overrides of one category). Searches in other processes see it within ${PRECEDENCE_CACHE_MS / 1000} s.`,
        body: PolicySchema,
        response: { 200: PolicySchema },
      },
    },
    async (request) => policies.set(request.principal.projectId, request.body as PrecedencePolicy, request.principal.keyId),
  );
};
