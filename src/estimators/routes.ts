// Estimator routes (SPEC.md "Estimators"; SDK-WIRE.md 4.5).
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { PermissionError } from '../platform/errors.js';
import { EstimateBodySchema } from './schemas.js';
import type { Estimators } from './service.js';
import { Type } from 'typebox';

export const estimatorRoutes: FastifyPluginAsyncTypebox<{ estimators: Estimators }> = async (app, { estimators }) => {
  app.post(
    '/lattice/estimate',
    {
      config: { permission: 'READ_MEMORY', feature: 'health', audit: 'read.estimate' },
      schema: {
        tags: ['estimators'],
        summary: 'A deterministic estimate from a subject\'s readings (phenoage)',
        description:
          'phenoage: Levine et al. 2018 PhenoAge from albumin, creatinine, glucose_fasting, crp, lymphocyte_pct, mcv, rdw, alkaline_phosphatase and wbc, plus chronological age. Each is the latest reading of the last 365 days (age: the latest `age` reading, aged since, or `date_of_birth`), ' +
          'from fact memories with category health and metadata.health {biomarker, value, unit, observedAt}, or typed observations whose attribute key is the biomarker (the unit from the attribute). Common units are converted (albumin g/dL, creatinine mg/dL, glucose mg/dL, CRP mg/L, WBC 10^9/L); a reading in a unit it does not know is not used. ' +
          'ok false with missingSignals when a signal has no usable reading. persist (needs WRITE_MEMORY) saves the estimate as a memory of type estimate. Needs the health entitlement.',
        body: EstimateBodySchema,
        response: { 200: Type.Ref('Estimate') },
      },
    },
    async (request) => {
      if (request.body.persist && !request.principal.permissions.has('WRITE_MEMORY')) {
        throw new PermissionError('persist writes a memory: this API key lacks the WRITE_MEMORY permission', { required: 'WRITE_MEMORY' });
      }
      return estimators.estimate(request.principal.projectId, request.body);
    },
  );
};
