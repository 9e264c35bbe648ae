// POST /admin/memory/reflect (SPEC.md "Knowledge graph"): insight synthesis through the gateway.
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { Type } from 'typebox';
import { Nullable } from '../../platform/common-schemas.js';
import { REFLECT_LIMITS, type MemoryReflection } from './reflect.js';

const Insight = Type.Object({
  id: Nullable(Type.String({ description: 'The saved insight memory; null on a dry run' })),
  content: Type.String(),
  sourceMemoryIds: Type.Array(Type.String(), { description: 'Provenance: the memories it rests on' }),
  confidence: Type.Number(),
});

export const reflectRoutes: FastifyPluginAsyncTypebox<{ reflection: MemoryReflection }> = async (app, { reflection }) => {
  app.post(
    '/admin/memory/reflect',
    {
      config: { permission: 'WRITE_MEMORY', feature: 'FEATURE_MEMORY_INTELLIGENCE', audit: 'write.reflect' },
      schema: {
        tags: ['memory'],
        summary: "Synthesise insight memories from a subject's recent confirmed memories (language model)",
        description:
          `Reads the subject's (userId: memories about user:<userId> or written for that end user; without userId, the project's memories as a whole, and the insights are about no one subject) most recent confirmed facts, preferences, events, observations, rules, corrections, summaries and procedures (maxSources, default ${REFLECT_LIMITS.maxSources.default}, clamped to [${REFLECT_LIMITS.maxSources.min}, ${REFLECT_LIMITS.maxSources.max}]) and asks the model gateway for insights, each citing its sources. ` +
          `An insight is saved as a memory of type insight with sourceMemoryIds (its provenance), source reflection; at most maxInsights (default ${REFLECT_LIMITS.maxInsights.default}, clamped to [1, ${REFLECT_LIMITS.maxInsights.max}]). ` +
          'Skipped, with the reason: one that cites none of the given memories, repeats an existing insight of the subject or another of the run (the same words), or passes maxInsights. dryRun answers what would be saved and saves nothing. ' +
          'Needs the FEATURE_MEMORY_INTELLIGENCE entitlement (403 FEATURE_DISABLED without it), MEMORY_REFLECTION_ENABLED and MODEL_GATEWAY_URL (503 NOT_CONFIGURED naming the one missing); a gateway that fails after its retries answers 503 SERVICE_UNAVAILABLE.',
        body: Type.Object(
          {
            userId: Type.Optional(Type.String({ minLength: 1, maxLength: 256 })),
            maxSources: Type.Optional(Type.Number()),
            maxInsights: Type.Optional(Type.Number()),
            dryRun: Type.Optional(Type.Boolean()),
          },
          { additionalProperties: false },
        ),
        response: {
          200: Type.Object({
            userId: Nullable(Type.String()),
            dryRun: Type.Boolean(),
            sourcesConsidered: Type.Integer(),
            existingInsights: Type.Integer(),
            insights: Type.Array(
              Type.Object({ id: Type.String({ description: "'' on a dry run" }), content: Type.String(), sourceIds: Type.Array(Type.String()), confidence: Type.Number() }),
              { description: 'The saved insights as the public clients read them (SDK-WIRE 4.2); `saved` holds the same with sourceMemoryIds' },
            ),
            saved: Type.Array(Insight),
            skipped: Type.Array(Type.Object({ content: Type.String(), reason: Type.String() })),
            model: Nullable(Type.String()),
            usage: Nullable(Type.Object({ promptTokens: Type.Number(), completionTokens: Type.Number(), totalTokens: Type.Number() })),
            note: Nullable(Type.String()),
          }),
        },
      },
    },
    async (request) => reflection.reflect(request.principal.projectId, request.body),
  );
};
