// Learning routes (SPEC.md "Decisions, outcomes, learning"; SDK-WIRE.md 4.5 and 4.7).
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { Type } from 'typebox';
import {
  CalibrationQuerySchema,
  CalibrationSchema,
  DecisionBodySchema,
  DecisionResponseSchema,
  EffectivenessQuerySchema,
  EffectivenessRowSchema,
  OutcomeBodySchema,
  OutcomeResponseSchema,
  OutcomeRowSchema,
  OutcomesQuerySchema,
} from './schemas.js';
import type { LearningService } from './service.js';

const tags = ['learning'];
const READ = { permission: 'READ_MEMORY' } as const;
const WRITE = { permission: 'WRITE_MEMORY' } as const;

export const learningRoutes: FastifyPluginAsyncTypebox<{ learning: LearningService }> = async (app, { learning }) => {
  app.post(
    '/lattice/decisions',
    {
      config: { ...WRITE, audit: 'write.decision' },
      schema: {
        tags,
        summary: 'Record a decision and the evidence it rests on',
        description:
          'Every ref of informedBy must exist in this project (404 NOT_FOUND naming the first that does not): pattern, a behavior_pattern memory; prediction, a recorded prediction (prd_); observation, a memory or a typed observation (obs_); collective, a memory. ' +
          'A weight of 0 or none counts as 1. The decision is also stored as a memory of type decision (memoryId), in the same transaction. ' +
          'The same idempotencyKey answers the decision first recorded with it (200; 201 when created), also under concurrent identical requests. The answer is the record, and the same record under `decision` for the clients that read it there.',
        body: DecisionBodySchema,
        response: { 200: DecisionResponseSchema, 201: DecisionResponseSchema },
      },
    },
    async (request, reply) => {
      const { record, created } = await learning.recordDecision(request.principal.projectId, request.body);
      return reply.code(created ? 201 : 200).send({ ...record, decision: record });
    },
  );

  app.post(
    '/lattice/outcomes',
    {
      config: { ...WRITE, audit: 'write.outcome' },
      schema: {
        tags,
        summary: "Record what followed a decision; the confidence of the decision's evidence moves",
        description:
          "In one transaction with the outcome: every distinct ref of the decision's informedBy gets a Beta-Binomial update (success adds the ref's weight to hits, failure to misses, partial half to each), and `updates` lists each ref's confidence before and after. " +
          "Priors: a pattern's mined confidence (hits + 1) / (hits + misses + 2), weighted as its mined evidence up to 10 pseudo-outcomes; a prediction's stated probability (0.5 when it states none), an observation's or collective memory's confidence, each weighted 2 pseudo-outcomes. A pattern's updated confidence is the one projections, profiles and context use from then on (and survives re-mining). " +
          'An outcome of a skipped decision (nothing was acted on), or realized before the decision, or more than attributionWindowSecs after it, is stored (attributed false, with the reason) and updates nothing. Concurrent outcomes citing the same refs lose no update. ' +
          'subject defaults to the decision\'s. The same idempotencyKey answers the first recording (200; 201 when created). Also stored as a memory of type outcome.',
        body: OutcomeBodySchema,
        response: { 200: OutcomeResponseSchema, 201: OutcomeResponseSchema },
      },
    },
    async (request, reply) => {
      const { response, created } = await learning.recordOutcome(request.principal.projectId, request.body);
      return reply.code(created ? 201 : 200).send(response);
    },
  );

  app.get(
    '/lattice/outcomes',
    {
      config: { ...READ, audit: 'read.outcomes' },
      schema: {
        tags,
        summary: 'Outcomes, newest recorded first, with their decision\'s type, action and policy',
        description: 'Without subject filters, the whole project. limit defaults to 100 (at most 1000).',
        querystring: OutcomesQuerySchema,
        response: { 200: Type.Object({ outcomes: Type.Array(OutcomeRowSchema) }) },
      },
    },
    async (request) => ({ outcomes: await learning.listOutcomes(request.principal.projectId, request.query) }),
  );

  app.get(
    '/lattice/effectiveness',
    {
      config: { ...READ, audit: 'read.effectiveness' },
      schema: {
        tags,
        summary: 'Success of decisions, grouped',
        description:
          'Attributed outcomes grouped by the decision\'s action_type (default), decision_type, policy, or the kinds of the patterns it cited (pattern_kind: a decision citing two kinds counts in both; one citing none, and a decision without the grouped field, falls in "(none)"). ' +
          'Groups with fewer than minSupport outcomes are left out. Largest groups first.',
        querystring: EffectivenessQuerySchema,
        response: { 200: Type.Object({ rows: Type.Array(EffectivenessRowSchema), groupBy: Type.String() }) },
      },
    },
    async (request) => learning.effectiveness(request.principal.projectId, request.query.groupBy, request.query.minSupport),
  );

  app.get(
    '/lattice/calibration',
    {
      config: { ...READ, audit: 'read.calibration' },
      schema: {
        tags,
        summary: 'Calibration of stated probabilities against what happened',
        description:
          'Equal-width buckets over [0, 1] (bucketCount, default 5, clamped to [1, 20]; the last includes 1): recorded predictions by their stated probability (event_occurrence states one), and the count of active patterns by their confidence now. ' +
          'hits and misses are the bucket\'s scored predictions that came true or not (a job scores each once its horizon has passed, every 5 minutes); hasData is false until one is scored. ' +
          "Beyond the spec: per bucket the scored predictions' mean probability, and the calibration of patterns: the weighted outcomes of decisions that cited a pattern, bucketed by the pattern's confidence when each outcome came (not the confidence the outcome gave it, which would flatter it), their successes and mean confidence; overall the Brier score and expected calibration error of the scored predictions. Read-only.",
        querystring: CalibrationQuerySchema,
        response: { 200: CalibrationSchema },
      },
    },
    async (request) => learning.calibration(request.principal.projectId, request.query.bucketCount),
  );
};
