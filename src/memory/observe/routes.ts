// POST /memory/observe: the REST twin of the MCP memory_observe tool.
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { ValidationError } from '../../platform/errors.js';
import type { MemoryObserver } from './observe.js';
import { ObserveBodySchema, ObserveResultSchema } from './schemas.js';

export const observeRoutes: FastifyPluginAsyncTypebox<{ observer: MemoryObserver }> = async (app, { observer }) => {
  app.post(
    '/memory/observe',
    {
      config: { permission: 'WRITE_MEMORY', audit: 'write.observe' },
      schema: {
        tags: ['memory'],
        summary: 'Extract and save what is worth remembering from a conversation turn',
        description:
          'Heuristic extraction (no model tokens): the text is split into statements; filler ("ok thanks", greetings) saves nothing; durable facts, preferences, plans, events, rules, consent and corrections are saved with a type and importance. ' +
          'Idempotent: observing the same text again saves nothing new, nor does a statement already known in other words (the same words, case, punctuation, articles, contractions, inflection and phrase order aside; a different word, number or negation is a new statement). A new value of a single-valued fact (where the user lives, works, their preferred milk, their plan, status, a count ...) supersedes the old memory (validTo and supersededById set) instead of deleting it. ' +
          'Notes in the third person count as the subject\'s own words: a statement opening with the subject\'s role ("the customer moved to Denver") always, one opening with a name or he, she, they ("Acme downgraded to the Pro plan") when the subject is of another kind than user. ' +
          'With AP_MEMORY_OBSERVE_ASYNC_ENABLED and Redis, the call answers once the turn is durably enqueued (`queued`), and extraction runs in a job.',
        body: ObserveBodySchema,
        response: { 200: ObserveResultSchema },
      },
    },
    async (request) => {
      const b = request.body;
      const text = b.text ?? b.content;
      if (text === undefined) throw new ValidationError('body.text is required', { errors: [{ path: 'body.text', message: 'is required' }] });
      return observer.observe(request.principal.projectId, {
        text,
        role: b.role,
        subject: b.subject,
        userId: b.userId,
        agentId: b.agentId,
        sessionId: b.sessionId,
        occurredAt: b.occurredAt === undefined ? undefined : new Date(b.occurredAt),
        activityType: b.activityType,
        type: b.type,
        scope: b.scope,
        importance: b.importance,
        category: b.category,
        metadata: b.metadata,
      });
    },
  );
};
