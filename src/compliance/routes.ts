// Compliance routes (SPEC.md "Compliance"; SDK-WIRE.md 4.10). The packs listing and their setting
// per project are in packs.ts.
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { Readable } from 'node:stream';
import { Type } from 'typebox';
import { ValidationError } from '../platform/errors.js';
import { AuditQuerySchema, AuditRowSchema, ExportBodySchema, ExportBundleSchema, HardDeleteBodySchema, HardDeleteReportSchema } from './schemas.js';
import type { ComplianceService } from './service.js';

const tags = ['compliance'];
const FEATURE = { feature: 'memory.compliance' } as const;

export const complianceRoutes: FastifyPluginAsyncTypebox<{ compliance: ComplianceService }> = async (app, { compliance }) => {
  app.post(
    '/memory-compliance/export',
    {
      config: { permission: 'READ_MEMORY', ...FEATURE, audit: 'read.export' },
      schema: {
        tags,
        summary: 'Export every row that names a subject',
        description:
          "Every module's rows of the subject, as stored (snake_case keys inside `export`): memories (and those derived from them), mined patterns, typed observations (stored and still queued), accumulators, events, alert fires, predictions, decisions, outcomes, discovery features, graph entities, edges and mentions, and the blob references of its files. " +
          'The answer is streamed a page (500 rows) at a time, so a subject of any size is exported without being held in memory; `counts` and `durationMs` come at the end. A failure midway breaks the stream rather than ending it short. ' +
          "The audit row (read.export) is written before the first byte: its resultCount is the number of the subject's memories.",
        body: ExportBodySchema,
        response: { 200: ExportBundleSchema },
      },
    },
    async (request, reply) => {
      const scope = await compliance.exportScope(request.principal.projectId, request.body.subject);
      request.auditDetail = { memoryIds: scope.memoryIds.slice(0, 1000), resultCount: scope.memoryIds.length, metadata: { streamed: true } };
      // A stream is sent as it is: the 200 schema documents the bundle, the service writes it.
      return reply.type('application/json; charset=utf-8').send(Readable.from(compliance.exportJson(scope)) as never);
    },
  );

  app.post(
    '/memory-compliance/hard-delete',
    {
      config: { permission: 'WRITE_MEMORY', ...FEATURE },
      schema: {
        tags,
        summary: 'Erase every row that names a subject, and record the erasure',
        description:
          'One transaction removes what the export lists (graph entities only where they existed for the subject alone; accumulators with the observations they summarise), writes one tombstone audit row (eventType subject.hard_delete, with the reason and the counts), and redacts the query text of the subject\'s earlier audit rows. Files no other memory refers to are deleted from the blob store once it commits. ' +
          'Concurrent writes of the same subject: the erase runs again within the transaction until a pass finds nothing, so every row committed before it answers is gone; a deadlock or serialization failure is retried inside and never reaches the caller. ' +
          'dryRun runs the same erase and rolls it back: the same counts, no row changed, no tombstone (auditEventId null).',
        body: HardDeleteBodySchema,
        response: { 200: HardDeleteReportSchema },
      },
    },
    async (request) => compliance.hardDelete(request.principal, request.body),
  );

  app.get(
    '/memory-compliance/audit',
    {
      config: { permission: 'READ_MEMORY', ...FEATURE },
      schema: {
        tags,
        summary: "The access log of calls that read or wrote subjects' data",
        description:
          'One row per call to an audited route or MCP tool (each route says "Audited as ..." in its description), and one tombstone per hard delete. ' +
          "A row names the key (actor: its id; actorName), the event type, the subject (subjectKind, and subjectRef: a digest, since the log never holds a subject's id in clear), the query text, the memories in the answer (memoryIds, comma-separated), resultCount and metadata (method, route, statusCode, requestId). " +
          "Each row is inserted while its call works and committed before the call answers (a failure to record answers 503); the outcome (statusCode, resultCount, memoryIds) is written behind the answer, and a row whose outcome a crash lost keeps metadata.incomplete: true. Both steps are batched across the calls in flight. Rows are kept COMPLIANCE_AUDIT_RETENTION_DAYS (400 by default); tombstones always.",
        querystring: AuditQuerySchema,
        response: { 200: Type.Array(AuditRowSchema) },
      },
    },
    async (request) => {
      const { subjectKind, subjectExternalId } = request.query;
      if (subjectExternalId !== undefined && subjectKind === undefined) throw new ValidationError('subjectExternalId needs subjectKind: a subject is a kind and an id');
      return compliance.audit(request.principal.projectId, request.query);
    },
  );
};
