// The financial pack's routes (SDK-WIRE.md 4.11; the clients' financial.ts) and its manifest
// (listed by compliance's GET /memory-compliance/packs).
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { Type } from 'typebox';
import { SubjectSchema } from '../platform/common-schemas.js';
import { NotFoundError } from '../platform/errors.js';
import type { PackManifest } from '../platform/module.js';
import { CalibrationReportSchema, FinancialProfileSchema, PredictResultSchema, ReconcileResultSchema } from './schemas.js';
import { BENCHMARK, CALIBRATION, FINANCIAL_DISCLAIMER, PREDICT, RELIABILITY_PRIOR, type FinancialPack } from './service.js';
import { MIN_BARS, STRATEGY } from './signals.js';

const tags = ['financial'];

export const FINANCIAL_MANIFEST: PackManifest = {
  id: 'financial',
  name: 'Financial',
  version: '1.0.0',
  description:
    'Technical indicators, portfolio risk (VaR, weighted beta, concentration, allocation) and directional calls whose reported confidence is scaled by their realised hit rate, scored against later closes. Informational, not advice.',
  // Memories of category financial (the clients' price, fundamental, holding and news writers).
  ownsClasses: ['financial'],
  // Holdings are a customer's non-public financial information.
  regulatoryTags: ['GLBA', 'GDPR'],
  aliases: ['@thinkfleet/pack-financial'],
  entitlement: 'financial',
  routes: ['POST /lattice/financial/profile', 'POST /lattice/financial/predict', 'POST /lattice/financial/reconcile', 'POST /lattice/financial/calibration'],
  strategy: { id: STRATEGY, minCloses: MIN_BARS, reliabilityPrior: RELIABILITY_PRIOR, benchmark: BENCHMARK },
  disclaimer: FINANCIAL_DISCLAIMER,
};

const ProfileBody = Type.Object({ subject: SubjectSchema }, { additionalProperties: false });
const PredictBody = Type.Object(
  {
    subject: SubjectSchema,
    horizonDays: Type.Optional(Type.Number({ description: `Calendar days; default ${PREDICT.horizonDays.default}, clamped to [${PREDICT.horizonDays.min}, ${PREDICT.horizonDays.max}]` })),
    persist: Type.Optional(Type.Boolean({ description: 'Record each call so reconcile can score it; default true' })),
  },
  { additionalProperties: false },
);
const CalibrationBody = Type.Object(
  {
    bucketCount: Type.Optional(Type.Number({ description: `Confidence bands; default ${CALIBRATION.bucketCount.default}, clamped to [${CALIBRATION.bucketCount.min}, ${CALIBRATION.bucketCount.max}]` })),
    strategy: Type.Optional(Type.String({ minLength: 1, maxLength: 100, description: 'One strategy only; every strategy when absent' })),
  },
  { additionalProperties: false },
);

const DATA =
  'Reads the memories of category financial the clients write (POST /admin/memory): metadata.price {ticker, close, asOf?} one close per ticker and UTC day (the latest written wins), metadata.fundamental (the latest asOf wins), metadata.newsEvent {ticker or tickers, headline, sentiment?} (a finance lexicon scores a headline without one), and metadata.holding {ticker, shares, costBasis?, assetClass?} of the memory\'s subject (metadata.subject), restated not summed: the latest record of a ticker wins, zero shares closes it. ' +
  'Market data is pooled across the project; holdings are their subject\'s. Memories whose metadata does not parse are listed in ignoredMemories (profile). ';
const GATE = 'Needs the financial entitlement and the financial pack (LATTICE_PACKS; a project may turn it off). Informational only: every answer carries the disclaimer.';

export const financialRoutes: FastifyPluginAsyncTypebox<{ financial: FinancialPack; loaded: boolean }> = async (app, { financial, loaded }) => {
  const needPack = () => {
    if (!loaded) throw new NotFoundError('the financial pack is not loaded in this deployment: add financial to LATTICE_PACKS', { pack: 'financial' });
  };
  const read = { permission: 'READ_MEMORY', feature: 'financial', pack: FINANCIAL_MANIFEST.id, audit: 'read.financial' } as const;
  const write = { permission: 'WRITE_MEMORY', feature: 'financial', pack: FINANCIAL_MANIFEST.id, audit: 'write.financial' } as const;

  app.post(
    '/lattice/financial/profile',
    {
      config: read,
      schema: {
        tags,
        summary: 'Technical indicators of a ticker, or of a portfolio\'s holdings with its risk',
        description:
          'subject.kind ticker: that ticker (externalId) alone, no positions. Any other kind: a portfolio over the subject\'s holdings, each valued at its last close (cash without closes at 1 per unit), with portfolioRisk: weighted beta and volatility over the positions that have one (betaCoverage says what share of value that is), the 1-day 95% parametric VaR from the covariance of the positions\' daily returns on shared days (with too few shared days, from their summed deviations: correlation 1, an upper bound; varMethod says which), the Herfindahl concentration and the allocation by asset class. ' +
          `Indicators: SMA20/50/200, EMA12/26 (seeded with an SMA), Wilder's RSI14, MACD 12/26/9, Bollinger 20/2 with %B, volatility and Sharpe from the last 252 daily returns (annualised, risk-free 0; at least 20 returns), the return over the last 252 closes, the largest drawdown; beta computed against ${BENCHMARK} when its closes are recorded (betaSource computed), else the vendor's (reported). An indicator the history is too short for is null. ` +
          DATA +
          GATE,
        body: ProfileBody,
        response: { 200: FinancialProfileSchema },
      },
    },
    async (request) => {
      needPack();
      return financial.profile(request.principal.projectId, request.body.subject);
    },
  );

  app.post(
    '/lattice/financial/predict',
    {
      config: write,
      schema: {
        tags,
        summary: 'Directional buy, sell or hold calls, with confidence calibrated by the strategy\'s record',
        description:
          `One call per ticker (a ticker subject) or per held ticker (a portfolio; cash is left out). Strategy ${STRATEGY}: the last close against its 50-day average (trend), the MACD line in units of the price's deviation over 26 days (momentum), RSI past 70 or under 30 (reversion) and the week's headline sentiment (news), blended into a score in [-1, 1]; buy at 0.2 or more, sell at -0.2 or less, hold between. ` +
          `structuralConfidence (0.5 to 0.75) says how far the sub-signals agree; reportedConfidence is it times strategyReliability: the realised hit rate of the strategy's scored calls, shrunk toward their mean confidence by ${RELIABILITY_PRIOR} pseudo-calls, over that mean (1 when no call has been scored, resolvedSample 0). ` +
          'expectedReturn is the score times one horizon\'s standard deviation of return. A call is due horizonDays after the close it is based on; a hold is a hit when the close moves by no more than holdBand (half a horizon\'s deviation). ' +
          `A ticker with fewer than ${MIN_BARS} closes gets no call: it is listed in abstentions with the reason. With persist (default), each call is recorded for reconcile (predictionId). ` +
          DATA +
          GATE +
          ' Needs WRITE_MEMORY: it records calls.',
        body: PredictBody,
        response: { 200: PredictResultSchema },
      },
    },
    async (request) => {
      needPack();
      const { subject, horizonDays, persist } = request.body;
      return financial.predict(request.principal.projectId, subject, { horizonDays, persist });
    },
  );

  app.post(
    '/lattice/financial/reconcile',
    {
      config: write,
      schema: {
        tags,
        summary: 'Score every recorded call whose horizon has passed against the realised close',
        description:
          'For each unscored call due by now: the first close of its ticker on or after dueAt decides it (a buy hits when the close rose, a sell when it fell, a hold when it moved by no more than holdBand). A due call with no close since its horizon waits (stillPending counts every unscored call). Idempotent: a call is scored once, and a rerun scores nothing new; safe on a schedule. ' +
          'At most 5,000 calls a pass; capped says more are due. The body is empty. ' +
          GATE,
        body: Type.Optional(Type.Object({}, { additionalProperties: false })),
        response: { 200: ReconcileResultSchema },
      },
    },
    async (request) => {
      needPack();
      return financial.reconcile(request.principal.projectId);
    },
  );

  app.post(
    '/lattice/financial/calibration',
    {
      config: read,
      schema: {
        tags,
        summary: 'Scored calls in bands of the confidence they were reported with, and the realised hit rate of each',
        description:
          'bucketCount equal bands over [0, 1] of reportedConfidence (the last includes 1); each with its scored calls, hits, misses and realised hit rate (0 with hasData false when empty). strategy narrows to one strategy ("all" when absent). hitRate, meanReportedConfidence and brierScore (the mean squared gap between reported confidence and outcome) sum the calls up; null when none is scored. ' +
          GATE,
        body: Type.Optional(CalibrationBody),
        response: { 200: CalibrationReportSchema },
      },
    },
    async (request) => {
      needPack();
      return financial.calibration(request.principal.projectId, { bucketCount: request.body?.bucketCount, strategy: request.body?.strategy });
    },
  );
};
