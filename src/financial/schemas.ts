// The financial pack's answers, field for field the public clients' types/financial.ts, with a few
// fields of our own (abstentions, holdBand, basisAt, ignoredMemories, betaCoverage, the calibration
// summary) that a client which does not know them ignores.
import { Type, type Static } from 'typebox';
import { Nullable, StringEnum, SubjectSchema, Timestamp } from '../platform/common-schemas.js';

const Num = Nullable(Type.Number());
const Direction = StringEnum(['buy', 'sell', 'hold']);

const IndicatorsSchema = Type.Object({
  ticker: Type.String(),
  lastClose: Type.Number(),
  asOf: Timestamp('The last close\'s instant'),
  sma20: Num,
  sma50: Num,
  sma200: Num,
  ema12: Num,
  ema26: Num,
  rsi14: Num,
  macd: Num,
  macdSignal: Num,
  macdHistogram: Num,
  bollingerUpper: Num,
  bollingerMid: Num,
  bollingerLower: Num,
  bollingerPctB: Num,
  annualizedVolatility: Num,
  trailingReturn: Num,
  maxDrawdown: Nullable(Type.Number({ description: 'A negative fraction: -0.25 is a 25% fall from a peak' })),
  sharpe: Num,
  beta: Num,
  betaSource: StringEnum(['none', 'computed', 'reported']),
  sampleSize: Type.Integer({ description: 'Daily closes recorded' }),
  sourceMemoryIds: Type.Array(Type.String(), { description: 'The memories of the last 200 closes' }),
});
export type Indicators = Static<typeof IndicatorsSchema>;

export const FinancialProfileSchema = Type.Object({
  subject: SubjectSchema,
  indicators: Type.Array(IndicatorsSchema),
  fundamentals: Type.Array(
    Type.Object({
      ticker: Type.String(),
      peRatio: Num,
      marketCap: Num,
      dividendYield: Num,
      eps: Num,
      debtToEquity: Num,
      beta: Num,
      asOf: Timestamp(),
      sourceMemoryId: Type.String(),
    }),
  ),
  positions: Type.Array(
    Type.Object({
      ticker: Type.String(),
      shares: Type.Number(),
      costBasis: Num,
      lastClose: Type.Number(),
      marketValue: Type.Number(),
      weight: Type.Number({ description: 'Share of the portfolio\'s value' }),
      unrealizedPnl: Num,
      assetClass: Type.String(),
      sourceMemoryId: Type.String(),
    }),
  ),
  portfolioRisk: Nullable(
    Type.Object({
      totalValue: Type.Number(),
      weightedBeta: Num,
      betaCoverage: Num,
      weightedAnnualizedVolatility: Num,
      valueAtRisk95_1d: Num,
      concentrationHhi: Type.Number({ description: 'Sum of squared weights: 1 is a single name' }),
      allocations: Type.Array(Type.Object({ assetClass: Type.String(), value: Type.Number(), weight: Type.Number() })),
      varMethod: Type.String(),
    }),
  ),
  unpricedHoldings: Type.Array(Type.String(), { description: 'Held tickers with no close recorded' }),
  abstentionReason: Type.Optional(Type.String()),
  ignoredMemories: Type.Array(Type.Object({ memoryId: Type.String(), reason: Type.String() }), { description: 'Financial memories whose metadata did not parse (the first 20)' }),
  disclaimer: Type.String(),
  generatedAt: Timestamp(),
});

export const PredictResultSchema = Type.Object({
  signals: Type.Array(
    Type.Object({
      ticker: Type.String(),
      strategy: Type.String(),
      direction: Direction,
      score: Type.Number({ description: 'Blended sub-signals in [-1, 1], bullish positive' }),
      structuralConfidence: Type.Number(),
      reportedConfidence: Type.Number({ description: 'structuralConfidence x strategyReliability, in [0, 1]' }),
      expectedReturn: Type.Number(),
      horizonDays: Type.Integer(),
      basisClose: Type.Number(),
      basisAt: Timestamp('The close the call is based on'),
      dueAt: Timestamp('When the call can be scored'),
      holdBand: Type.Number({ description: 'A hold hits when the return at the horizon is within this (either way)' }),
      rationale: Type.Array(Type.String()),
      newsUsed: Type.Boolean(),
      predictionId: Nullable(Type.String({ description: 'fpr_ id, when persisted' })),
      sourceMemoryIds: Type.Array(Type.String()),
    }),
  ),
  abstentions: Type.Array(Type.Object({ ticker: Type.String(), reason: Type.String() }), { description: 'Tickers given no call, and why' }),
  strategy: Type.String(),
  strategyReliability: Type.Number(),
  resolvedSample: Type.Integer(),
  disclaimer: Type.String(),
  generatedAt: Timestamp(),
});

export const ReconcileResultSchema = Type.Object({
  scored: Type.Integer({ description: 'Calls scored by this pass' }),
  hits: Type.Integer(),
  misses: Type.Integer(),
  stillPending: Type.Integer({ description: 'Calls not scored yet, due or not' }),
  capped: Type.Boolean({ description: 'More due calls than one pass takes' }),
  generatedAt: Timestamp(),
});

export const CalibrationReportSchema = Type.Object({
  buckets: Type.Array(
    Type.Object({
      lower: Type.Number(),
      upper: Type.Number(),
      predictions: Type.Integer(),
      hits: Type.Integer(),
      misses: Type.Integer(),
      realizedHitRate: Type.Number(),
      hasData: Type.Boolean(),
    }),
  ),
  strategy: Type.String(),
  strategyReliability: Type.Number(),
  totalResolved: Type.Integer(),
  hitRate: Num,
  meanReportedConfidence: Num,
  brierScore: Num,
  generatedAt: Timestamp(),
});
