// Discovery routes (SPEC.md "Behavior discovery"; SDK-WIRE.md 4.5): /lattice/discover and
// /memory-intelligence/discover, identical.
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { PermissionError } from '../platform/errors.js';
import { DISCOVERY, DiscoverBodySchema, DiscoverResponseSchema, type DiscoverBody, type DiscoverResponse } from './schemas.js';

const tags = ['discovery'];

export const discoveryRoutes: FastifyPluginAsyncTypebox<{ discover: (projectId: string, body: DiscoverBody) => Promise<DiscoverResponse> }> = async (app, { discover }) => {
  for (const url of ['/lattice/discover', '/memory-intelligence/discover']) {
    app.post(
      url,
      {
        config: { permission: 'READ_MEMORY', audit: 'read.discover' },
        schema: {
          tags,
          summary: 'Discover behaviors: clusters of subjects who behave alike',
          description:
            "Clusters the project's subjects by their stored features (RFM scores, pattern kinds, cadence, most named entities; kept current by a job after mining and nightly) so that every two members of a behavior are at least simThreshold similar (similarity 1 - the weighted Euclidean distance of the features, in [0, 1]). " +
            `Clusters smaller than minClusterSize, or less cohesive than minStability, are dropped. Labels are rule-based (what at least half the members share); no language model is called. An empty list means abstained. ` +
            `A project with more than ${DISCOVERY.sample} subjects is clustered on a fixed sample of ${DISCOVERY.sample} (the same subjects each time); every other subject then joins the first behavior all of whose sampled members it is similar enough to, so size and prevalence count the whole project (sampled: true). ` +
            'The computation is a job the call awaits. promote (needs WRITE_MEMORY) saves each behavior as an insight memory. /lattice/discover and /memory-intelligence/discover are the same.',
          body: DiscoverBodySchema,
          response: { 200: DiscoverResponseSchema },
        },
      },
      async (request) => {
        if (request.body.promote && !request.principal.permissions.has('WRITE_MEMORY')) {
          throw new PermissionError('promote writes memories: this API key lacks the WRITE_MEMORY permission', { required: 'WRITE_MEMORY' });
        }
        return discover(request.principal.projectId, request.body);
      },
    );
  }
};
