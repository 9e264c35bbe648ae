// Decisions, outcomes and the outcome evidence of each cited ref. Idempotency rests on unique
// indexes (INSERT ... ON CONFLICT DO NOTHING, then read the winner), evidence on in-place increments.
import type { Subject } from '../platform/common-schemas.js';
import type { Queryable } from '../platform/db.js';
import { SUBJECT_WHERE, type SubjectTable } from '../platform/subject-data.js';
import { iso } from '../platform/sql.js';
import type { DecisionRecord, GroupBy, OutcomeResponse, OutcomeResult, OutcomeRow, OutcomesQuery, RefType, RefUpdate, StoredRef } from './schemas.js';

interface DecisionRow {
  id: string;
  subject_kind: string;
  subject_external_id: string;
  actor: string | null;
  decision_type: string | null;
  policy: string | null;
  action_type: string | null;
  params: Record<string, unknown>;
  informed_by: StoredRef[];
  status: DecisionRecord['status'];
  occurred_at: Date;
  metadata: Record<string, unknown>;
  idempotency_key: string | null;
  memory_id: string;
  created_at: Date;
}

const DECISION_COLUMNS = `id, subject_kind, subject_external_id, actor, decision_type, policy, action_type, params, informed_by, status, occurred_at, metadata, idempotency_key, memory_id, created_at`;

const toDecision = (r: DecisionRow): DecisionRecord => ({
  decisionId: r.id,
  subject: { kind: r.subject_kind, externalId: r.subject_external_id },
  actor: r.actor,
  decisionType: r.decision_type,
  policy: r.policy,
  actionType: r.action_type,
  params: r.params,
  informedBy: r.informed_by,
  status: r.status,
  occurredAt: iso(r.occurred_at),
  metadata: r.metadata,
  idempotencyKey: r.idempotency_key,
  memoryId: r.memory_id,
  created: iso(r.created_at),
});

export interface NewDecision {
  id: string;
  subject: Subject;
  actor: string | null;
  decisionType: string | null;
  policy: string | null;
  actionType: string | null;
  params: Record<string, unknown>;
  informedBy: StoredRef[];
  /** The kinds of the cited patterns, for the effectiveness report's pattern_kind grouping. */
  patternKinds: string[];
  status: DecisionRecord['status'];
  occurredAt: Date;
  metadata: Record<string, unknown>;
  idempotencyKey: string | null;
  memoryId: string;
}

/** Inserts the decision; undefined when its idempotency key is taken (read the winner then). */
export async function insertDecision(db: Queryable, projectId: string, d: NewDecision): Promise<DecisionRecord | undefined> {
  const { rows } = await db.query<DecisionRow>(
    `INSERT INTO learning_decisions (project_id, id, subject_kind, subject_external_id, actor, decision_type, policy, action_type, params,
       informed_by, pattern_kinds, status, occurred_at, metadata, idempotency_key, memory_id)
     VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14, $15, $16)
     ON CONFLICT (project_id, idempotency_key) WHERE idempotency_key IS NOT NULL DO NOTHING
     RETURNING ${DECISION_COLUMNS}`,
    [
      projectId, d.id, d.subject.kind, d.subject.externalId, d.actor, d.decisionType, d.policy, d.actionType, JSON.stringify(d.params),
      JSON.stringify(d.informedBy), d.patternKinds, d.status, d.occurredAt, JSON.stringify(d.metadata), d.idempotencyKey, d.memoryId,
    ],
  );
  return rows[0] && toDecision(rows[0]);
}

export async function decisionByKey(db: Queryable, projectId: string, key: string): Promise<DecisionRecord | undefined> {
  const { rows } = await db.query<DecisionRow>(`SELECT ${DECISION_COLUMNS} FROM learning_decisions WHERE project_id = $1 AND idempotency_key = $2`, [projectId, key]);
  return rows[0] && toDecision(rows[0]);
}

export async function getDecision(db: Queryable, projectId: string, id: string): Promise<DecisionRecord | undefined> {
  const { rows } = await db.query<DecisionRow>(`SELECT ${DECISION_COLUMNS} FROM learning_decisions WHERE project_id = $1 AND id = $2`, [projectId, id]);
  return rows[0] && toDecision(rows[0]);
}

export interface NewOutcome {
  id: string;
  decisionId: string;
  subject: Subject;
  outcomeType: string | null;
  result: OutcomeResult;
  reward: number | null;
  realizedAt: Date;
  attributionWindowSecs: number | null;
  attributed: boolean;
  attributionNote: string | null;
  metadata: Record<string, unknown>;
  idempotencyKey: string | null;
  memoryId: string;
}

/** Inserts the outcome (its updates filled in later, in the same transaction); false when its key is taken. */
export async function insertOutcome(db: Queryable, projectId: string, o: NewOutcome): Promise<boolean> {
  const { rows } = await db.query(
    `INSERT INTO learning_outcomes (project_id, id, decision_id, subject_kind, subject_external_id, outcome_type, result, reward, realized_at,
       attribution_window_secs, attributed, attribution_note, metadata, idempotency_key, memory_id)
     VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14, $15)
     ON CONFLICT (project_id, idempotency_key) WHERE idempotency_key IS NOT NULL DO NOTHING
     RETURNING id`,
    [
      projectId, o.id, o.decisionId, o.subject.kind, o.subject.externalId, o.outcomeType, o.result, o.reward, o.realizedAt,
      o.attributionWindowSecs, o.attributed, o.attributionNote, JSON.stringify(o.metadata), o.idempotencyKey, o.memoryId,
    ],
  );
  return rows.length > 0;
}

/** A ref update as stored: what the answer shows, and what this outcome credited (for the pattern calibration). */
export type StoredUpdate = RefUpdate & { creditedHits: number; creditedMisses: number };

export async function setOutcomeUpdates(db: Queryable, projectId: string, id: string, updates: readonly StoredUpdate[]): Promise<void> {
  await db.query(`UPDATE learning_outcomes SET updates = $3 WHERE project_id = $1 AND id = $2`, [projectId, id, JSON.stringify(updates)]);
}

/** What recording the outcome answered, for a replay of its idempotency key. */
export async function outcomeResponseByKey(db: Queryable, projectId: string, key: string): Promise<OutcomeResponse | undefined> {
  const { rows } = await db.query<{ id: string; decision_id: string; attributed: boolean; attribution_note: string | null; updates: RefUpdate[]; memory_id: string }>(
    `SELECT id, decision_id, attributed, attribution_note, updates, memory_id
       FROM learning_outcomes WHERE project_id = $1 AND idempotency_key = $2`,
    [projectId, key],
  );
  const r = rows[0];
  if (!r) return undefined;
  const updates = (r.updates as StoredUpdate[]).map(({ creditedHits: _h, creditedMisses: _m, ...update }) => update);
  return { outcomeId: r.id, decisionId: r.decision_id, attributed: r.attributed, attributionNote: r.attribution_note, updates, memoryId: r.memory_id };
}

/**
 * Adds weighted hits and misses to each ref's evidence, rows taken in ref-id order (so two
 * outcomes citing the same refs never deadlock), and answers every ref's totals after the add.
 */
export async function addEvidence(
  db: Queryable,
  projectId: string,
  adds: readonly { refId: string; refType: RefType; hits: number; misses: number }[],
): Promise<Map<string, { hits: number; misses: number }>> {
  if (adds.length === 0) return new Map();
  const sorted = [...adds].sort((a, b) => (a.refId < b.refId ? -1 : a.refId > b.refId ? 1 : 0));
  const { rows } = await db.query<{ ref_id: string; hits: number; misses: number }>(
    `INSERT INTO learning_ref_evidence AS e (project_id, ref_id, ref_type, hits, misses)
     SELECT $1, v.ref_id, v.ref_type, v.hits, v.misses
       FROM unnest($2::text[], $3::text[], $4::float8[], $5::float8[]) WITH ORDINALITY AS v(ref_id, ref_type, hits, misses, n)
      ORDER BY v.n
     ON CONFLICT (project_id, ref_id) DO UPDATE SET hits = e.hits + excluded.hits, misses = e.misses + excluded.misses, updated_at = excluded.updated_at
     RETURNING e.ref_id, e.hits, e.misses`,
    [projectId, sorted.map((a) => a.refId), sorted.map((a) => a.refType), sorted.map((a) => a.hits), sorted.map((a) => a.misses)],
  );
  return new Map(rows.map((r) => [r.ref_id, { hits: Number(r.hits), misses: Number(r.misses) }]));
}

interface OutcomeListRow {
  id: string;
  decision_id: string;
  subject_kind: string;
  subject_external_id: string;
  decision_type: string | null;
  action_type: string | null;
  policy: string | null;
  outcome_type: string | null;
  result: OutcomeResult;
  reward: number | null;
  occurred_at: Date;
  realized_at: Date;
  attribution_window_secs: number | null;
  attributed: boolean;
  metadata: Record<string, unknown>;
  created_at: Date;
}

/** Outcomes, newest recorded first, with their decision's type, action and policy. */
export async function listOutcomes(db: Queryable, projectId: string, q: OutcomesQuery & { limit: number }): Promise<OutcomeRow[]> {
  const { rows } = await db.query<OutcomeListRow>(
    `SELECT o.id, o.decision_id, o.subject_kind, o.subject_external_id, d.decision_type, d.action_type, d.policy, o.outcome_type, o.result, o.reward,
            d.occurred_at, o.realized_at, o.attribution_window_secs, o.attributed, o.metadata, o.created_at
       FROM learning_outcomes o JOIN learning_decisions d ON d.project_id = o.project_id AND d.id = o.decision_id
      WHERE o.project_id = $1
        AND ($2::text IS NULL OR o.subject_kind = $2) AND ($3::text IS NULL OR o.subject_external_id = $3)
        AND ($4::text IS NULL OR d.decision_type = $4) AND ($5::text IS NULL OR d.action_type = $5)
        AND ($6::text IS NULL OR o.decision_id = $6)
      ORDER BY o.created_at DESC, o.id DESC
      LIMIT $7`,
    [projectId, q.subjectKind ?? null, q.subjectExternalId ?? null, q.decisionType ?? null, q.actionType ?? null, q.decisionId ?? null, q.limit],
  );
  return rows.map((r) => ({
    outcomeId: r.id,
    decisionId: r.decision_id,
    subject: { kind: r.subject_kind, externalId: r.subject_external_id },
    decisionType: r.decision_type,
    actionType: r.action_type,
    policy: r.policy,
    outcomeType: r.outcome_type,
    result: r.result,
    reward: r.reward === null ? null : Number(r.reward),
    occurredAt: iso(r.occurred_at),
    realizedAt: iso(r.realized_at),
    attributionWindowSecs: r.attribution_window_secs === null ? null : Number(r.attribution_window_secs),
    attributed: r.attributed,
    metadata: r.metadata,
    created: iso(r.created_at),
  }));
}

export interface GroupCounts {
  groupKey: string;
  n: number;
  successes: number;
  failures: number;
  partials: number;
  rewardSum: number;
  rewardCount: number;
}

const GROUP_COLUMN: Record<Exclude<GroupBy, 'pattern_kind'>, string> = { action_type: 'd.action_type', decision_type: 'd.decision_type', policy: 'd.policy' };

/**
 * Attributed outcomes counted per group. By pattern_kind, a decision citing patterns of two kinds
 * counts in both groups; one citing none falls in "(none)".
 */
export async function effectivenessCounts(db: Queryable, projectId: string, groupBy: GroupBy, minSupport: number): Promise<GroupCounts[]> {
  const key =
    groupBy === 'pattern_kind'
      ? `unnest(CASE WHEN cardinality(d.pattern_kinds) = 0 THEN ARRAY['(none)'] ELSE d.pattern_kinds END)`
      : `coalesce(${GROUP_COLUMN[groupBy]}, '(none)')`;
  const { rows } = await db.query<{ group_key: string; n: string; successes: string; failures: string; partials: string; reward_sum: number | null; reward_count: string }>(
    `SELECT g.group_key, count(*) AS n,
            count(*) FILTER (WHERE g.result = 'success') AS successes, count(*) FILTER (WHERE g.result = 'failure') AS failures,
            count(*) FILTER (WHERE g.result = 'partial') AS partials, sum(g.reward) AS reward_sum, count(g.reward) AS reward_count
       FROM (SELECT ${key} AS group_key, o.result, o.reward
               FROM learning_outcomes o JOIN learning_decisions d ON d.project_id = o.project_id AND d.id = o.decision_id
              WHERE o.project_id = $1 AND o.attributed) g
      GROUP BY g.group_key
     HAVING count(*) >= $2`,
    [projectId, minSupport],
  );
  return rows.map((r) => ({
    groupKey: r.group_key,
    n: Number(r.n),
    successes: Number(r.successes),
    failures: Number(r.failures),
    partials: Number(r.partials),
    rewardSum: Number(r.reward_sum ?? 0),
    rewardCount: Number(r.reward_count),
  }));
}

/**
 * Outcomes on pattern refs, bucketed by the pattern's confidence when each came (the update's
 * priorConfidence): weighted outcomes, successes, and the sum of those confidences.
 */
export async function patternOutcomeBuckets(db: Queryable, projectId: string, bucketCount: number): Promise<Map<number, { outcomes: number; hits: number; sumConfidence: number }>> {
  const { rows } = await db.query<{ b: number; outcomes: number; hits: number; sum_confidence: number }>(
    `SELECT LEAST($2 - 1, FLOOR((u->>'priorConfidence')::float8 * $2))::int AS b,
            sum((u->>'creditedHits')::float8 + (u->>'creditedMisses')::float8) AS outcomes,
            sum((u->>'creditedHits')::float8) AS hits,
            sum(((u->>'creditedHits')::float8 + (u->>'creditedMisses')::float8) * (u->>'priorConfidence')::float8) AS sum_confidence
       FROM learning_outcomes o CROSS JOIN LATERAL jsonb_array_elements(o.updates) AS u
      WHERE o.project_id = $1 AND o.attributed AND u->>'refType' = 'pattern'
      GROUP BY 1`,
    [projectId, bucketCount],
  );
  return new Map(rows.map((r) => [Number(r.b), { outcomes: Number(r.outcomes), hits: Number(r.hits), sumConfidence: Number(r.sum_confidence) }]));
}

const SUBJECT = SUBJECT_WHERE;

/** The subject's decisions and outcomes (data-subject rights). */
export const SUBJECT_DECISIONS: SubjectTable = {
  from: 'learning_decisions',
  where: SUBJECT,
  key: 'id',
  columns: 'id, subject_kind, subject_external_id, actor, decision_type, policy, action_type, params, informed_by, pattern_kinds, status, occurred_at, metadata, idempotency_key, memory_id, created_at',
};
export const SUBJECT_OUTCOMES: SubjectTable = {
  from: 'learning_outcomes',
  where: SUBJECT,
  key: 'id',
  columns: 'id, decision_id, subject_kind, subject_external_id, outcome_type, result, reward, realized_at, attribution_window_secs, attributed, attribution_note, updates, metadata, idempotency_key, memory_id, created_at',
};
/**
 * Evidence kept per cited ref that is the subject's ($2: the ids of its memories, a pattern among
 * them, its predictions and its observations, which their owners hand in with the scope).
 */
export const SUBJECT_REF_EVIDENCE: SubjectTable = {
  from: 'learning_ref_evidence',
  where: 'project_id = $1 AND ref_id = ANY($2::text[])',
  key: 'ref_id',
  columns: 'ref_id, ref_type, hits, misses, updated_at',
};
