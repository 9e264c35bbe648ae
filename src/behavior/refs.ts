// What the learning loop needs of behaviour: the patterns and predictions a decision may cite (and
// the prior each brings), the outcome evidence written back onto patterns, and the calibration of
// scored predictions and patterns. Learning sits above behaviour and reaches it only through here.
import type { Db, Queryable } from '../platform/db.js';
import { claimPrior, patternPrior, posteriorConfidence, type BetaPrior } from '../../workers/behavior/confidence.js';
import * as patterns from './patterns/store.js';

export interface PatternRef {
  prior: BetaPrior;
  patternKind: string;
}

export interface CalibrationBucket {
  lower: number;
  upper: number;
  patterns: number;
  predictions: number;
  hits: number;
  misses: number;
  /** 0 when the bucket has no data (hasData false): not to be read then. */
  realizedHitRate: number;
  hasData: boolean;
  meanPredicted: number | null;
}

export interface Calibration {
  buckets: CalibrationBucket[];
  totalPatterns: number;
  totalPredictions: number;
  scoredPredictions: number;
  brierScore: number | null;
  expectedCalibrationError: number | null;
}

export class BehaviorRefs {
  constructor(
    private readonly db: Db,
    private readonly memory: patterns.PatternRows,
  ) {}

  /** Patterns of the project among `ids`, each with the Beta prior its mining gives. */
  async patternRefs(projectId: string, ids: readonly string[]): Promise<Map<string, PatternRef>> {
    const found = await patterns.patternRefs(this.db, projectId, ids);
    return new Map([...found].map(([id, p]) => [id, { prior: patternPrior(p.minedHits, p.minedMisses), patternKind: p.patternKind }]));
  }

  /** Recorded predictions of the project among `ids`, each with the prior its probability gives (0.5 where it states none). */
  async predictionRefs(projectId: string, ids: readonly string[]): Promise<Map<string, BetaPrior>> {
    if (ids.length === 0) return new Map();
    const { rows } = await this.db.query<{ id: string; probability: number | null }>(
      `SELECT id, probability FROM behavior_predictions WHERE project_id = $1 AND id = ANY($2::text[])`,
      [projectId, [...new Set(ids)]],
    );
    return new Map(rows.map((r) => [r.id, claimPrior(r.probability === null ? 0.5 : Number(r.probability))]));
  }

  /**
   * Inside the outcome's transaction: patterns take their new outcome evidence (absolute weighted
   * hits and misses, as the learning ledger now holds them), and their confidence becomes the mined
   * prior updated by it. Rows are locked in id order, as mining locks them.
   */
  async applyOutcomeEvidence(tx: Queryable, projectId: string, evidence: readonly { patternId: string; hits: number; misses: number }[]): Promise<Map<string, BetaPrior>> {
    const locked = await patterns.lockPatterns(this.memory, tx, projectId, evidence.map((e) => e.patternId));
    const priors = new Map<string, BetaPrior>();
    const rows = evidence.flatMap((e) => {
      const p = locked.get(e.patternId);
      if (!p) return [];
      const prior = patternPrior(p.minedHits, p.minedMisses);
      priors.set(e.patternId, prior);
      return [{ id: e.patternId, confidence: posteriorConfidence(prior, e.hits, e.misses), minedConfidence: prior.confidence, evidence: { hits: e.hits, misses: e.misses } }];
    });
    await patterns.writeConfidence(this.memory, tx, projectId, rows);
    // The priors of the locked rows: what the caller reports the update against (mining may have
    // moved a pattern's mined counts since the caller looked).
    return priors;
  }

  /**
   * Equal-width buckets of stated probability: recorded predictions by their probability (those of
   * kinds that state one), active patterns counted by their confidence. A bucket's hits and misses
   * are its scored predictions that came true or not; the Brier score and the ECE (over these
   * buckets) are theirs. (A pattern's calibration is read from the outcomes of the decisions that
   * cited it, against its confidence when each came: the learning domain adds that.)
   */
  async calibration(projectId: string, bucketCount: number): Promise<Calibration> {
    const [predicted, mined] = await Promise.all([
      this.db.query<{ b: number; predictions: string; scored: string; hits: string; sum_p: number | null; brier: number | null }>(
        `SELECT LEAST($2 - 1, FLOOR(probability * $2))::int AS b, count(*) AS predictions,
                count(*) FILTER (WHERE hit IS NOT NULL) AS scored, count(*) FILTER (WHERE hit) AS hits,
                sum(probability) FILTER (WHERE hit IS NOT NULL) AS sum_p,
                sum((probability - CASE WHEN hit THEN 1 ELSE 0 END) ^ 2) FILTER (WHERE hit IS NOT NULL) AS brier
           FROM behavior_predictions WHERE project_id = $1 AND probability IS NOT NULL GROUP BY 1`,
        [projectId, bucketCount],
      ),
      this.db.query<{ b: number; patterns: string }>(
        `SELECT LEAST($2 - 1, FLOOR((metadata->>'confidence')::float8 * $2))::int AS b, count(*) AS patterns
           FROM memory_read WHERE project_id = $1 AND pattern_key IS NOT NULL AND type = 'behavior_pattern' AND metadata->>'active' = 'true' GROUP BY 1`,
        [projectId, bucketCount],
      ),
    ]);
    const byBucket = <R extends { b: number }>(rows: R[]) => new Map(rows.map((r) => [Number(r.b), r]));
    const p = byBucket(predicted.rows);
    const m = byBucket(mined.rows);
    const scoredTotal = predicted.rows.reduce((s, r) => s + Number(r.scored), 0);
    let brier = 0;
    let ece = 0;
    const buckets = Array.from({ length: bucketCount }, (_, b): CalibrationBucket => {
      const pr = p.get(b);
      const pa = m.get(b);
      const scored = Number(pr?.scored ?? 0);
      const hits = Number(pr?.hits ?? 0);
      const misses = scored - hits;
      const meanPredicted = scored > 0 ? Number(pr!.sum_p) / scored : null;
      if (scored > 0) {
        brier += Number(pr!.brier);
        ece += (scored / scoredTotal) * Math.abs(meanPredicted! - hits / scored);
      }
      return {
        lower: b / bucketCount,
        upper: (b + 1) / bucketCount,
        patterns: Number(pa?.patterns ?? 0),
        predictions: Number(pr?.predictions ?? 0),
        hits,
        misses,
        realizedHitRate: scored > 0 ? hits / scored : 0,
        hasData: scored > 0,
        meanPredicted,
      };
    });
    return {
      buckets,
      totalPatterns: buckets.reduce((s, b) => s + b.patterns, 0),
      totalPredictions: buckets.reduce((s, b) => s + b.predictions, 0),
      scoredPredictions: scoredTotal,
      brierScore: scoredTotal > 0 ? brier / scoredTotal : null,
      expectedCalibrationError: scoredTotal > 0 ? ece : null,
    };
  }
}
