// Typed attribute routes: definitions, ingest (synchronous and queued), observations, accumulators.
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { Type } from 'typebox';
import {
  AccumulatorQuerySchema,
  AccumulatorSchema,
  AttributeBodySchema,
  AttributeListQuerySchema,
  AttributeSchema,
  IngestBodySchema,
  IngestReportSchema,
  MAX_OBSERVATIONS_PER_REQUEST,
  ObservationQuerySchema,
  ObservationSchema,
} from './schemas.js';
import type { TypedService } from './service.js';

const READ = { permission: 'READ_MEMORY' } as const;
const WRITE = { permission: 'WRITE_MEMORY' } as const;
const tags = ['typed'];

const rowRules =
  `Up to ${MAX_OBSERVATIONS_PER_REQUEST} rows per call. A row whose JSON types are wrong fails the whole call (400, naming the row); nothing is taken. ` +
  'Otherwise each row is accepted, quarantined or a duplicate: a missing field, an unknown attribute, the wrong value field for the dataType (or more than one), ' +
  'a value outside [minValid, maxValid], an unparsable observedAt or valueTs, or a trust outside [0, 1] quarantines the row, which is stored with its reason and can be read back ' +
  'with status=quarantined. An exact repeat of a stored row (same subject, attribute, observedAt, value and source) is a duplicate, also when two requests race. ' +
  'observedAt is kept at millisecond precision. Every row counts against the events-ingested quota; a call that would pass it is refused whole (429).';

export const typedRoutes: FastifyPluginAsyncTypebox<{ typed: TypedService }> = async (app, { typed }) => {
  app.post(
    '/memory-typed/attributes',
    {
      config: WRITE,
      schema: {
        tags,
        summary: 'Register an attribute definition, or replace the one with this attributeKey',
        description: 'Idempotent on attributeKey: a re-post replaces every field (omitted optional fields are cleared). The dataType of an attribute that has observations cannot change (409).',
        body: AttributeBodySchema,
        response: { 200: AttributeSchema, 201: AttributeSchema },
      },
    },
    async (request, reply) => {
      const { attribute, created } = await typed.defineAttribute(request.principal.projectId, request.body);
      return reply.code(created ? 201 : 200).send(attribute);
    },
  );

  app.get(
    '/memory-typed/attributes',
    { config: READ, schema: { tags, summary: 'List attribute definitions', querystring: AttributeListQuerySchema, response: { 200: Type.Array(AttributeSchema) } } },
    async (request) => {
      const { attributeKey, limit = 100, offset = 0 } = request.query;
      return typed.listAttributes(request.principal.projectId, { ...(attributeKey === undefined ? {} : { attributeKey }), limit, offset });
    },
  );

  app.post(
    '/memory-typed/observations',
    {
      config: { ...WRITE, audit: 'write.observations' },
      schema: {
        tags,
        summary: 'Ingest typed observations synchronously',
        description:
          `${rowRules} Accepted numeric rows fold into their accumulators and each emits a typed.observation event. The events are appended just behind the ingest, by the typed.events job, from a record the ingest commits with the rows (so none is lost): a GET /memory-events right after this answers may not list them yet, and the alert rules they match fire when they are appended. ` +
          'quarantineReasons is keyed by the row id when the row has one, otherwise by its index in the request.',
        body: IngestBodySchema,
        response: { 200: IngestReportSchema },
      },
    },
    async (request) => typed.ingest(request.principal, request.body.observations),
  );

  app.post(
    '/memory-typed/observations/enqueue',
    {
      config: { ...WRITE, audit: 'write.observations' },
      schema: {
        tags,
        summary: 'Queue typed observations for ingest',
        description: `${rowRules} The rows are stored durably before the 202 answer and ingested by a job with the same code as the synchronous route; read the outcome back from GET /memory-typed/observations. While the queue (Redis) is down the rows are still stored and answered 202: a sweep at start and every minute enqueues batches whose job could not be queued, so an accepted batch is never lost and need not be retried.`,
        body: IngestBodySchema,
        response: { 202: Type.Object({ enqueued: Type.Integer() }) },
      },
    },
    async (request, reply) => reply.code(202).send({ enqueued: await typed.enqueue(request.principal, request.body.observations) }),
  );

  app.get(
    '/memory-typed/observations',
    {
      config: { ...READ, audit: 'read.observations' },
      schema: {
        tags,
        summary: 'Raw observations, newest observed first',
        description: 'Filters combine with AND. subject/attribute (SPEC) and subjectKind/subjectExternalId/attributeKey (clients) are both accepted; minValue/maxValue apply to valueNumeric.',
        querystring: ObservationQuerySchema,
        response: { 200: Type.Array(ObservationSchema) },
      },
    },
    async (request) => typed.listObservations(request.principal.projectId, request.query),
  );

  app.get(
    '/memory-typed/accumulator',
    {
      config: { ...READ, audit: 'read.accumulators' },
      schema: {
        tags,
        summary: 'Running statistics of one subject and attribute',
        description:
          'count, sum, sumSq, min, max, last (by observedAt), cumulative (running total) and ewma/ewmaVar (alpha 0.3, in observedAt order; late observations rebuild them) are stored; ' +
          'mean, population variance and stddev are derived on read. A defined attribute with no observation for the subject answers count 0; an undefined attribute is 404.',
        querystring: AccumulatorQuerySchema,
        response: { 200: AccumulatorSchema },
      },
    },
    async (request) => typed.accumulator(request.principal.projectId, request.query),
  );
};
