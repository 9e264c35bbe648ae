// Discovery routes (SPEC.md "Behavior discovery"; SDK-WIRE.md 4.5): /lattice/discover and
// /memory-intelligence/discover, identical.
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { PermissionError } from '../platform/errors.js';
import type { Cohorts } from './cohort.js';
import {
  CohortBodySchema,
  CohortPredictBodySchema,
  CohortPredictResponseSchema,
  CohortResponseSchema,
  DISCOVERY,
  DiscoverBodySchema,
  DiscoverResponseSchema,
  type DiscoverBody,
  type DiscoverResponse,
} from './schemas.js';

const tags = ['discovery'];

export const discoveryRoutes: FastifyPluginAsyncTypebox<{ discover: (projectId: string, body: DiscoverBody) => Promise<DiscoverResponse>; cohorts: Cohorts }> = async (
  app,
  { discover, cohorts },
) => {
  app.post(
    '/lattice/cohort',
    {
      config: { permission: 'READ_MEMORY', audit: 'read.cohort' },
      schema: {
        tags,
        summary: 'The subjects most like one subject',
        description:
          'Ranks the project\'s subjects by a blended similarity of their stored features: 0.5 RFM (1 - the distance of the 1-to-5 scores over its largest value; a missing score counts as 3), 0.25 Jaccard of their most named entities, 0.25 Jaccard of their pattern kinds (two empty sets are alike). ' +
          'k defaults to 10, clamped to [1, 50]; members under minSimilarity (default 0) are left out. A subject with no activity gets no members (unknown).',
        body: CohortBodySchema,
        response: { 200: CohortResponseSchema },
      },
    },
    async (request) => cohorts.cohort(request.principal.projectId, request.body),
  );

  app.post(
    '/lattice/cohort/predict',
    {
      config: { permission: 'READ_MEMORY', audit: 'read.cohort' },
      schema: {
        tags,
        summary: "What a subject's cohort's habits predict for it",
        description:
          "The cohort's active patterns pooled by kind and activity type: confidence is the members' confidences weighted by their similarity, times s / (s + 1) for s supporting members (a habit many similar subjects share is reinforced; one a single member has is halved); expectedAt is now plus the weighted mean time until the members' next firing. " +
          'Each names its supportingSubjects and the patterns behind it (sourceMemoryIds). cohortK as k; predictionLimit defaults to 5, clamped to [1, 50].',
        body: CohortPredictBodySchema,
        response: { 200: CohortPredictResponseSchema },
      },
    },
    async (request) => cohorts.predict(request.principal.projectId, request.body),
  );

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
