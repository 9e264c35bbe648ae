// Recorded declared-target predictions (each with a prd_ id a decision can cite, scored once its
// horizon has passed) and the cache of project-wide fitted models.
import type { Subject } from '../../platform/common-schemas.js';
import type { Queryable } from '../../platform/db.js';
import { SUBJECT_WHERE, type SubjectTable } from '../../platform/subject-data.js';

export interface RecordedPrediction {
  id: string;
  projectId: string;
  subject: Subject;
  targetKind: string;
  eventType: string | null;
  attributeKey: string | null;
  horizonDays: number;
  lookbackDays: number;
  model: string;
  probability: number | null;
  probabilityLower: number | null;
  probabilityUpper: number | null;
  value: number | null;
  valueLower: number | null;
  valueUpper: number | null;
  expectedAt: Date | null;
  expectedAtLower: Date | null;
  expectedAtUpper: Date | null;
  explanation: string;
  evidenceMemoryIds: readonly string[];
  madeAt: Date;
  dueAt: Date;
}

export async function recordPrediction(db: Queryable, p: RecordedPrediction): Promise<void> {
  await db.query(
    `INSERT INTO behavior_predictions (project_id, id, subject_kind, subject_external_id, target_kind, event_type, attribute_key, horizon_days,
       lookback_days, model, probability, probability_lower, probability_upper, value, value_lower, value_upper, expected_at, expected_at_lower,
       expected_at_upper, explanation, evidence_memory_ids, made_at, due_at)
     VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14, $15, $16, $17, $18, $19, $20, $21, $22, $23)`,
    [
      p.projectId, p.id, p.subject.kind, p.subject.externalId, p.targetKind, p.eventType, p.attributeKey, p.horizonDays, p.lookbackDays, p.model,
      p.probability, p.probabilityLower, p.probabilityUpper, p.value, p.valueLower, p.valueUpper, p.expectedAt, p.expectedAtLower, p.expectedAtUpper,
      p.explanation, p.evidenceMemoryIds, p.madeAt, p.dueAt,
    ],
  );
}

export interface DuePrediction {
  projectId: string;
  id: string;
  subject: Subject;
  targetKind: string;
  eventType: string | null;
  attributeKey: string | null;
  valueLower: number | null;
  valueUpper: number | null;
  expectedAtLower: Date | null;
  expectedAtUpper: Date | null;
  madeAt: Date;
  dueAt: Date;
}

/** Unscored predictions whose horizon has passed, oldest first. */
export async function duePredictions(db: Queryable, now: Date, limit: number): Promise<DuePrediction[]> {
  const { rows } = await db.query<{
    project_id: string; id: string; subject_kind: string; subject_external_id: string; target_kind: string; event_type: string | null;
    attribute_key: string | null; value_lower: number | null; value_upper: number | null; expected_at_lower: Date | null; expected_at_upper: Date | null;
    made_at: Date; due_at: Date;
  }>(
    `SELECT project_id, id, subject_kind, subject_external_id, target_kind, event_type, attribute_key, value_lower, value_upper,
            expected_at_lower, expected_at_upper, made_at, due_at
       FROM behavior_predictions WHERE scored_at IS NULL AND due_at <= $1 ORDER BY due_at LIMIT $2`,
    [now, limit],
  );
  return rows.map((r) => ({
    projectId: r.project_id,
    id: r.id,
    subject: { kind: r.subject_kind, externalId: r.subject_external_id },
    targetKind: r.target_kind,
    eventType: r.event_type,
    attributeKey: r.attribute_key,
    valueLower: r.value_lower === null ? null : Number(r.value_lower),
    valueUpper: r.value_upper === null ? null : Number(r.value_upper),
    expectedAtLower: r.expected_at_lower && new Date(r.expected_at_lower),
    expectedAtUpper: r.expected_at_upper && new Date(r.expected_at_upper),
    madeAt: new Date(r.made_at),
    dueAt: new Date(r.due_at),
  }));
}

/** Marks a prediction scored: hit null means it cannot be scored (say, an anomaly call). */
export async function scorePrediction(db: Queryable, projectId: string, id: string, hit: boolean | null, realizedValue: number | null, now: Date): Promise<void> {
  await db.query(`UPDATE behavior_predictions SET scored_at = $3, hit = $4, realized_value = $5 WHERE project_id = $1 AND id = $2`, [projectId, id, now, hit, realizedValue]);
}

export async function predictionExists(db: Queryable, projectId: string, id: string): Promise<boolean> {
  const { rows } = await db.query(`SELECT 1 FROM behavior_predictions WHERE project_id = $1 AND id = $2`, [projectId, id]);
  return rows.length > 0;
}

export interface CachedModel<P> {
  params: P;
  subjects: number;
  fittedAt: Date;
}

export async function readModel<P>(db: Queryable, projectId: string, model: string, key: string): Promise<CachedModel<P> | undefined> {
  const { rows } = await db.query<{ params: P; subjects: number; fitted_at: Date }>(
    `SELECT params, subjects, fitted_at FROM behavior_models WHERE project_id = $1 AND model = $2 AND model_key = $3`,
    [projectId, model, key],
  );
  const r = rows[0];
  return r && { params: r.params, subjects: Number(r.subjects), fittedAt: new Date(r.fitted_at) };
}

export async function writeModel(db: Queryable, projectId: string, model: string, key: string, params: unknown, subjects: number, fittedAt: Date): Promise<void> {
  await db.query(
    `INSERT INTO behavior_models (project_id, model, model_key, params, subjects, fitted_at) VALUES ($1, $2, $3, $4, $5, $6)
     ON CONFLICT (project_id, model, model_key) DO UPDATE SET params = excluded.params, subjects = excluded.subjects, fitted_at = excluded.fitted_at`,
    [projectId, model, key, JSON.stringify(params), subjects, fittedAt],
  );
}

/** Projects with recorded models, and their keys: the refit schedule walks them. */
export async function staleModels(db: Queryable, model: string, fittedBefore: Date, limit: number): Promise<{ projectId: string; key: string }[]> {
  const { rows } = await db.query<{ project_id: string; model_key: string }>(
    `SELECT project_id, model_key FROM behavior_models WHERE model = $1 AND fitted_at < $2 ORDER BY fitted_at LIMIT $3`,
    [model, fittedBefore, limit],
  );
  return rows.map((r) => ({ projectId: r.project_id, key: r.model_key }));
}

const SUBJECT = SUBJECT_WHERE;

/** The subject's recorded predictions (data-subject rights). */
export const SUBJECT_PREDICTIONS: SubjectTable = {
  from: 'behavior_predictions',
  where: SUBJECT,
  key: 'id',
  columns: `id, subject_kind, subject_external_id, target_kind, event_type, attribute_key, horizon_days, lookback_days, model, probability, probability_lower, probability_upper,
    value, value_lower, value_upper, expected_at, expected_at_lower, expected_at_upper, explanation, evidence_memory_ids, made_at, due_at, scored_at, hit, realized_value`,
};

/** A subject waiting to be mined names it too. */
export const SUBJECT_MINING_QUEUE = { from: 'behavior_mining_queue', where: SUBJECT } as const;
