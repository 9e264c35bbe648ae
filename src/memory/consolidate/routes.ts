// POST /admin/memory/llm-consolidate (SDK-WIRE.md 4.2, the clients' `consolidate`): a subject's
// memories of a window consolidated into observations, by the model or by the heuristic path.
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { Type } from 'typebox';
import { Nullable, SubjectSchema } from '../../platform/common-schemas.js';
import { LLM_CONSOLIDATE, type ObservationConsolidation } from './consolidate.js';

export const consolidateRoutes: FastifyPluginAsyncTypebox<{ consolidation: ObservationConsolidation }> = async (app, { consolidation }) => {
  app.post(
    '/admin/memory/llm-consolidate',
    {
      config: { permission: 'WRITE_MEMORY', audit: 'write.consolidate' },
      schema: {
        tags: ['memory'],
        summary: "Consolidate subjects' recent memories into observations, one per topic",
        description:
          `For the subject given, or every subject with a fact, preference, event, rule, correction, summary or procedure written in the last \`windowDays\` (default ${LLM_CONSOLIDATE.windowDays.default}; at most ${LLM_CONSOLIDATE.maxSubjects} subjects a call, \`subjectsCapped\` says when more had some), ` +
          `its newest ${LLM_CONSOLIDATE.maxSources} such memories of the window are consolidated into observations: memories of type observation (metadata.consolidated true, metadata.topic, metadata.method), one per topic, each one sentence of what holds now, citing the memories it rests on (sourceMemoryIds). ` +
          'A topic without an observation gets one (created); the same sentence with new evidence grows its provenance (updated); a different sentence is saved as a new observation that supersedes the old one (created and superseded), so the history stays. ' +
          'method model: the model gateway proposes the observations (when MODEL_GATEWAY_URL is set and the project has the FEATURE_MEMORY_INTELLIGENCE entitlement); a proposal that cites none of the memories it was given, has no topic, repeats a topic or is too short is skipped with the reason. ' +
          'method heuristic otherwise (methodReason says why): the single-valued facts observe recognised (metadata.slot) with two or more statements in the window give one observation per slot, the newest statement. dryRun counts what would change and changes nothing.',
        body: Type.Object(
          {
            subject: Type.Optional(SubjectSchema),
            windowDays: Type.Optional(Type.Integer({ minimum: LLM_CONSOLIDATE.windowDays.min, maximum: LLM_CONSOLIDATE.windowDays.max, default: LLM_CONSOLIDATE.windowDays.default })),
            dryRun: Type.Optional(Type.Boolean({ default: false })),
          },
          { additionalProperties: false },
        ),
        response: {
          200: Type.Object({
            subjectsConsidered: Type.Integer(),
            observationsCreated: Type.Integer(),
            observationsUpdated: Type.Integer(),
            observationsSuperseded: Type.Integer(),
            method: Type.Union([Type.Literal('model'), Type.Literal('heuristic')]),
            methodReason: Nullable(Type.String()),
            dryRun: Type.Boolean(),
            subjectsCapped: Type.Boolean(),
            skipped: Type.Array(Type.Object({ subject: SubjectSchema, content: Type.String(), reason: Type.String() })),
            durationMs: Type.Number(),
          }),
        },
      },
    },
    async (request) => {
      const started = performance.now();
      const result = await consolidation.consolidate(request.principal.projectId, request.body ?? {});
      return { ...result, durationMs: performance.now() - started };
    },
  );
};
