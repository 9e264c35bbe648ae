// The closed loop: an agent records what it decided and on what evidence (the refs), then what
// happened; each outcome moves the confidence of every ref the decision cited, by the Beta-Binomial
// update (behavior/patterns/confidence.ts states the priors and why). Reports read the results.
import type { BehaviorApi } from '../behavior/index.js';
import { claimPrior, posteriorConfidence, type BetaPrior } from '../../workers/behavior/confidence.js';
import type { MemoryApi } from '../memory/index.js';
import { clamp } from '../platform/common-schemas.js';
import type { Db } from '../platform/db.js';
import { NotFoundError, ValidationError } from '../platform/errors.js';
import { newId } from '../platform/ids.js';
import type { TypedApi } from '../typed/index.js';
import {
  LIMITS,
  type DecisionBody,
  type DecisionRecord,
  type GroupBy,
  type OutcomeBody,
  type OutcomeResponse,
  type OutcomeResult,
  type OutcomesQuery,
  type RefType,
  type RefUpdate,
  type StoredRef,
} from './schemas.js';
import * as store from './store.js';

export interface LearningDeps {
  memory: Pick<MemoryApi, 'saveInTransaction' | 'confidences' | 'afterKeyedCommit'>;
  behavior: Pick<BehaviorApi, 'patternRefs' | 'predictionRefs' | 'applyOutcomeEvidence' | 'calibration'>;
  typed: Pick<TypedApi, 'observationIds'>;
}

/** What a ref brings to the update: its prior, and for a pattern its kind. */
interface ResolvedRef {
  prior: BetaPrior;
  patternKind?: string;
}

/** A ref's share of an outcome: a success adds its weight to hits, a failure to misses, a partial half to each. */
export function credit(result: OutcomeResult, weight: number): { hits: number; misses: number } {
  if (result === 'success') return { hits: weight, misses: 0 };
  if (result === 'failure') return { hits: 0, misses: weight };
  return { hits: weight / 2, misses: weight / 2 };
}

/** A ref's weight as counted: 0 or unset is 1 (WIRE.md). */
export const countedWeight = (weight: number | undefined): number => (weight === undefined || weight === 0 ? 1 : weight);

const DEFAULT_PRIOR = claimPrior(0.5);

export class LearningService {
  constructor(
    private readonly db: Db,
    private readonly deps: LearningDeps,
  ) {}

  async recordDecision(projectId: string, body: DecisionBody): Promise<{ record: DecisionRecord; created: boolean }> {
    if (body.idempotencyKey !== undefined) {
      const existing = await store.decisionByKey(this.db, projectId, body.idempotencyKey);
      if (existing) return { record: existing, created: false };
    }
    const refs: StoredRef[] = (body.informedBy ?? []).map((r) => ({ memoryId: r.memoryId, refType: r.refType ?? 'pattern', weight: countedWeight(r.weight) }));
    const resolved = await this.resolveRefs(projectId, refs);
    refs.forEach((r, i) => {
      if (!resolved.has(r.memoryId)) throw new NotFoundError(`informedBy[${i}]: ${r.refType} ${r.memoryId} not found in this project`, { ref: r.memoryId, refType: r.refType });
    });
    const occurredAt = body.occurredAt === undefined ? new Date() : parseTime(body.occurredAt, 'occurredAt');
    const id = newId('dec');
    const memoryId = newId('mem');
    const decision: store.NewDecision = {
      id,
      subject: body.subject,
      actor: body.actor ?? null,
      decisionType: body.decisionType ?? null,
      policy: body.policy ?? null,
      actionType: body.actionType ?? null,
      params: body.params ?? {},
      informedBy: refs,
      patternKinds: [...new Set(refs.flatMap((r) => (r.refType === 'pattern' ? (resolved.get(r.memoryId)?.patternKind ?? []) : [])))].sort(),
      status: body.status ?? 'executed',
      occurredAt,
      metadata: body.metadata ?? {},
      idempotencyKey: body.idempotencyKey ?? null,
      memoryId,
    };
    const outcome = await this.db.transaction(async (tx) => {
      const record = await store.insertDecision(tx, projectId, decision);
      // Its key was taken by a concurrent twin, which has committed (the insert waited on it).
      if (!record) return { record: (await store.decisionByKey(tx, projectId, body.idempotencyKey!))!, created: false };
      await this.deps.memory.saveInTransaction(tx, projectId, [
        {
          id: memoryId,
          type: 'decision',
          content:
            `Decision ${id}${decision.decisionType ? ` (${decision.decisionType})` : ''} for ${body.subject.kind} ${body.subject.externalId}: ` +
            `${decision.actionType ?? 'no action named'}, ${decision.status}${decision.actor ? `, by ${decision.actor}` : ''}` +
            `${refs.length > 0 ? `; informed by ${refs.map((r) => `${r.refType} ${r.memoryId}`).join(', ')}` : ''}.`,
          subject: body.subject,
          source: 'learning',
          validFrom: occurredAt,
          sourceMemoryIds: refs.filter((r) => r.memoryId.startsWith('mem_')).map((r) => r.memoryId),
          metadata: { decisionId: id, decisionType: decision.decisionType, actionType: decision.actionType, policy: decision.policy, status: decision.status },
        },
      ]);
      return { record, created: true };
    });
    if (outcome.created) await this.deps.memory.afterKeyedCommit(projectId);
    return outcome;
  }

  async recordOutcome(projectId: string, body: OutcomeBody): Promise<{ response: OutcomeResponse; created: boolean }> {
    if (body.idempotencyKey !== undefined) {
      const existing = await store.outcomeResponseByKey(this.db, projectId, body.idempotencyKey);
      if (existing) return { response: existing, created: false };
    }
    const decision = await store.getDecision(this.db, projectId, body.decisionId);
    if (!decision) throw new NotFoundError(`decision ${body.decisionId} not found`, { decisionId: body.decisionId });
    if (body.reward !== undefined && !Number.isFinite(body.reward)) throw new ValidationError('reward must be a finite number');
    const realizedAt = body.realizedAt === undefined ? new Date() : parseTime(body.realizedAt, 'realizedAt');
    const attribution = attribute(decision.status, Date.parse(decision.occurredAt), realizedAt.getTime(), body.attributionWindowSecs);

    // One update per distinct ref; a ref cited twice counts with its weights summed.
    const weights = new Map<string, { refType: RefType; weight: number }>();
    for (const r of decision.informedBy) {
      const seen = weights.get(r.memoryId);
      weights.set(r.memoryId, { refType: r.refType, weight: (seen?.weight ?? 0) + r.weight });
    }
    const adds = [...weights].map(([refId, { refType, weight }]) => ({ refId, refType, ...credit(body.result, weight) }));
    // Priors as the refs stand now (a pattern's comes from its row, locked in the transaction); a
    // ref deleted since the decision falls back to Beta(1, 1).
    const resolved = attribution.attributed ? await this.resolveRefs(projectId, decision.informedBy.filter((r) => r.refType !== 'pattern')) : new Map<string, ResolvedRef>();

    const id = newId('out');
    const memoryId = newId('mem');
    const subject = body.subject ?? decision.subject;
    const result = await this.db.transaction(async (tx) => {
      const inserted = await store.insertOutcome(tx, projectId, {
        id,
        decisionId: decision.decisionId,
        subject,
        outcomeType: body.outcomeType ?? null,
        result: body.result,
        reward: body.reward ?? null,
        realizedAt,
        attributionWindowSecs: body.attributionWindowSecs ?? null,
        attributed: attribution.attributed,
        attributionNote: attribution.note,
        metadata: body.metadata ?? {},
        idempotencyKey: body.idempotencyKey ?? null,
        memoryId,
      });
      if (!inserted) return { response: (await store.outcomeResponseByKey(tx, projectId, body.idempotencyKey!))!, created: false };
      let updates: RefUpdate[] = [];
      if (attribution.attributed) {
        const totals = await store.addEvidence(tx, projectId, adds);
        // Patterns take their new evidence, and say which prior they hold it against now.
        const patternPriors = await this.deps.behavior.applyOutcomeEvidence(
          tx,
          projectId,
          adds.filter((a) => a.refType === 'pattern').map((a) => ({ patternId: a.refId, ...totals.get(a.refId)! })),
        );
        const stored: store.StoredUpdate[] = adds.map((a) => {
          const after = totals.get(a.refId)!;
          const prior = patternPriors.get(a.refId) ?? resolved.get(a.refId)?.prior ?? DEFAULT_PRIOR;
          return {
            refId: a.refId,
            refType: a.refType,
            priorConfidence: posteriorConfidence(prior, after.hits - a.hits, after.misses - a.misses),
            posteriorConfidence: posteriorConfidence(prior, after.hits, after.misses),
            hits: after.hits,
            misses: after.misses,
            creditedHits: a.hits,
            creditedMisses: a.misses,
          };
        });
        await store.setOutcomeUpdates(tx, projectId, id, stored);
        updates = stored.map(({ creditedHits: _h, creditedMisses: _m, ...update }) => update);
      }
      await this.deps.memory.saveInTransaction(tx, projectId, [
        {
          id: memoryId,
          type: 'outcome',
          content:
            `Outcome ${id} of decision ${decision.decisionId}${body.outcomeType ? ` (${body.outcomeType})` : ''} for ${subject.kind} ${subject.externalId}: ` +
            `${body.result}${body.reward === undefined ? '' : `, reward ${body.reward}`}${attribution.attributed ? '' : ` (not attributed: ${attribution.note})`}.`,
          subject,
          source: 'learning',
          validFrom: realizedAt,
          sourceMemoryIds: [decision.memoryId],
          metadata: { outcomeId: id, decisionId: decision.decisionId, outcomeType: body.outcomeType ?? null, result: body.result, reward: body.reward ?? null },
        },
      ]);
      const response: OutcomeResponse = { outcomeId: id, decisionId: decision.decisionId, attributed: attribution.attributed, attributionNote: attribution.note, updates, memoryId };
      return { response, created: true };
    });
    if (result.created) await this.deps.memory.afterKeyedCommit(projectId);
    return result;
  }

  listOutcomes(projectId: string, query: OutcomesQuery) {
    return store.listOutcomes(this.db, projectId, { ...query, limit: query.limit ?? LIMITS.outcomesDefault });
  }

  async effectiveness(projectId: string, groupBy: GroupBy = 'action_type', minSupport = 1) {
    const groups = await store.effectivenessCounts(this.db, projectId, groupBy, minSupport);
    const rows = groups.map((g) => {
      const successes = g.successes + g.partials / 2;
      return {
        groupKey: g.groupKey,
        n: g.n,
        successRate: successes / g.n,
        avgReward: g.rewardCount > 0 ? g.rewardSum / g.rewardCount : 0,
        // Beta(1, 1) prior: a group with few outcomes is pulled toward one half.
        confidence: (successes + 1) / (g.n + 2),
        successes: g.successes,
        failures: g.failures,
        partials: g.partials,
      };
    });
    rows.sort((a, b) => b.n - a.n || (a.groupKey < b.groupKey ? -1 : a.groupKey > b.groupKey ? 1 : 0));
    return { rows, groupBy };
  }

  /** Behaviour's prediction buckets, with the outcomes of decisions citing patterns read against the pattern's confidence then. */
  async calibration(projectId: string, bucketCount: number | undefined) {
    const count = Math.round(clamp(bucketCount, LIMITS.bucketsDefault, LIMITS.bucketsMin, LIMITS.bucketsMax));
    const [report, patterns] = await Promise.all([this.deps.behavior.calibration(projectId, count), store.patternOutcomeBuckets(this.db, projectId, count)]);
    const buckets = report.buckets.map((b, i) => {
      const p = patterns.get(i);
      return { ...b, patternOutcomes: p?.outcomes ?? 0, patternHits: p?.hits ?? 0, patternMeanConfidence: p && p.outcomes > 0 ? p.sumConfidence / p.outcomes : null };
    });
    return { ...report, buckets, generatedAt: new Date().toISOString() };
  }

  /** The refs that exist in the project, each with its prior. */
  private async resolveRefs(projectId: string, refs: readonly StoredRef[]): Promise<Map<string, ResolvedRef>> {
    const ids = (type: RefType) => refs.filter((r) => r.refType === type).map((r) => r.memoryId);
    const memoryIds = [...ids('observation'), ...ids('collective')].filter((id) => id.startsWith('mem_'));
    const [patterns, predictions, memories, observations] = await Promise.all([
      this.deps.behavior.patternRefs(projectId, ids('pattern')),
      this.deps.behavior.predictionRefs(projectId, ids('prediction')),
      this.deps.memory.confidences(projectId, memoryIds),
      this.deps.typed.observationIds(projectId, ids('observation').filter((id) => !id.startsWith('mem_'))),
    ]);
    const found = new Map<string, ResolvedRef>();
    for (const r of refs) {
      const id = r.memoryId;
      if (r.refType === 'pattern' && patterns.has(id)) found.set(id, patterns.get(id)!);
      else if (r.refType === 'prediction' && predictions.has(id)) found.set(id, { prior: predictions.get(id)! });
      else if ((r.refType === 'observation' || r.refType === 'collective') && memories.has(id)) found.set(id, { prior: claimPrior(memories.get(id)!) });
      else if (r.refType === 'observation' && observations.has(id)) found.set(id, { prior: DEFAULT_PRIOR });
    }
    return found;
  }
}

/**
 * Whether an outcome counts for its decision: the decision was not skipped (nothing was acted on),
 * and the outcome was realized after it, within the window when one is given.
 */
export function attribute(
  status: DecisionRecord['status'],
  decidedAt: number,
  realizedAt: number,
  windowSecs: number | undefined,
): { attributed: boolean; note: string | null } {
  if (status === 'skipped') return { attributed: false, note: 'the decision was skipped: nothing was acted on' };
  if (realizedAt < decidedAt) return { attributed: false, note: 'realized before the decision occurred' };
  if (windowSecs !== undefined && realizedAt - decidedAt > windowSecs * 1000) {
    return { attributed: false, note: `realized ${Math.round((realizedAt - decidedAt) / 1000)} s after the decision, outside its attribution window of ${windowSecs} s` };
  }
  return { attributed: true, note: null };
}

function parseTime(value: string, field: string): Date {
  const at = new Date(value);
  if (Number.isNaN(at.getTime())) throw new ValidationError(`${field} must be an ISO 8601 timestamp`);
  return at;
}
