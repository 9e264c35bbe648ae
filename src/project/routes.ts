// The project overview route: the HTTP adapter over ProjectOverviewService.
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { ProjectOverviewSchema, ProjectQuerySchema } from './schemas.js';
import type { ProjectOverviewService } from './service.js';

const DESCRIPTION = [
  'An addition beyond SPEC.md, for the web console\'s Project page (and any read-only key): one read of what the project may do and what it is doing.',
  '`entitlements`: the plan\'s features (with per-project overrides) and its quotas, null where unlimited. ' +
    '`usage.meters`: each metered quota\'s use this calendar month (UTC) against its limit, with the month\'s start and when the meter resets; ' +
    '`usage.ceilings`: counted resources against their ceiling (active-triggers: enabled alert rules).',
  '`work`: the backlogs the modules hold in the database for the project (memories waiting for their embedding; when the project opted in to graph ' +
    'extraction, memories waiting to be extracted; subjects waiting to be mined; queued typed observations; subject features behind their activity), ' +
    'each with what waits, done and total where the pending are a share of a whole, and since when the oldest has waited.',
  '`jobs`: the project\'s jobs in the queue not yet finished (consolidation, dedup, embedding, discovery, ingest, ...), running, waiting or delayed, ' +
    'with their attempt and times; their payloads are not shown. At most 1000 jobs in flight (of every project) are scanned; `truncated` says the scan stopped short.',
].join('\n\n');

export const projectRoutes: FastifyPluginAsyncTypebox<{ overview: ProjectOverviewService }> = async (app, { overview }) => {
  app.get(
    '/project',
    {
      config: { permission: 'READ_MEMORY' },
      schema: {
        tags: ['project'],
        summary: 'The project: plan, entitlements, usage against quotas, backlogs and jobs in flight',
        description: DESCRIPTION,
        querystring: ProjectQuerySchema,
        response: { 200: ProjectOverviewSchema },
      },
    },
    async (request) => overview.overview(request.principal.projectId),
  );
};
