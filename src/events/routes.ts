// Event routes: emit (alert rules evaluated inside the call) and poll.
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { Type } from 'typebox';
import { EmitBodySchema, EmitResponseSchema, EventQuerySchema, EventSchema } from './schemas.js';
import type { EventLog } from './service.js';

const tags = ['events'];

export const eventRoutes: FastifyPluginAsyncTypebox<{ events: EventLog }> = async (app, { events }) => {
  app.post(
    '/lattice/events/emit',
    {
      config: { permission: 'WRITE_MEMORY', audit: 'write.event' },
      schema: {
        tags,
        summary: 'Append an event; matching alert rules fire in its transaction',
        description:
          'Appends the event to the durable log, idempotently per (project, dedupeKey): a repeat answers `emitted: false` with the stored event and fires nothing. ' +
          'Without a dedupeKey the key is a hash of eventType, subject, severity, payload and sources, so a replayed request stays one event; send a dedupeKey to emit identical content twice. ' +
          'Enabled alert rules are evaluated synchronously in the same transaction: each fire is recorded with every channel pending, and `alertDispatches` counts them. ' +
          'The fires are handed to the queue before the call returns, and their channels get a first attempt at once, off the call\'s path (the call never waits on a webhook); ' +
          'failures retry through the queue, and the fire\'s `deliveryResults` show each attempt. `occurredAt` is assigned by the engine.',
        body: EmitBodySchema,
        response: { 200: EmitResponseSchema },
      },
    },
    async (request) => {
      const { emitted, event, alertDispatches } = await events.emit(request.principal.projectId, request.body);
      return { emitted, event: { id: event.id, eventType: event.eventType, severity: event.severity, occurredAt: event.occurredAt }, alertDispatches };
    },
  );

  app.get(
    '/memory-events',
    {
      config: { permission: 'READ_MEMORY', audit: 'read.events' },
      schema: {
        tags,
        summary: 'Poll the event log, oldest first',
        description:
          'Events strictly after `since`, oldest first. To page forward pass the last returned event\'s `occurredAt` as `since`: occurredAt values are assigned by the engine, ' +
          'unique and strictly increasing per project at microsecond precision, and an event becomes visible only after every event with an earlier occurredAt, ' +
          'so paging this way never repeats or skips an event.',
        querystring: EventQuerySchema,
        response: { 200: Type.Array(EventSchema) },
      },
    },
    async (request) => {
      const { since, limit = 100, eventTypes, subjectKind, subjectExternalId } = request.query;
      const types = eventTypes
        ?.split(',')
        .map((t) => t.trim())
        .filter((t) => t.length > 0);
      return events.list(request.principal.projectId, {
        ...(since === undefined ? {} : { since }),
        limit,
        ...(types && types.length > 0 ? { eventTypes: types } : {}),
        ...(subjectKind === undefined ? {} : { subjectKind }),
        ...(subjectExternalId === undefined ? {} : { subjectExternalId }),
      });
    },
  );
};
