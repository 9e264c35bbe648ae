// The financial_predictions table (migration 0024): persisted calls, and their scores once due.
import type { Queryable } from '../platform/db.js';
import { SUBJECT_WHERE, type SubjectTable } from '../platform/subject-data.js';
import type { Direction } from './signals.js';

export interface StoredCall {
  projectId: string;
  id: string;
  subjectKind: string;
  subjectExternalId: string;
  ticker: string;
  strategy: string;
  direction: Direction;
  score: number;
  structuralConfidence: number;
  reportedConfidence: number;
  expectedReturn: number;
  holdBand: number;
  horizonDays: number;
  basisClose: number;
  basisAt: Date;
  dueAt: Date;
  rationale: readonly string[];
  sourceMemoryIds: readonly string[];
  madeAt: Date;
}

export interface PendingCall {
  id: string;
  ticker: string;
  direction: Direction;
  basisClose: number;
  holdBand: number;
  dueAt: Date;
}

export async function insertCalls(db: Queryable, calls: readonly StoredCall[]): Promise<void> {
  if (calls.length === 0) return;
  const values: unknown[] = [];
  const rows = calls.map((c, i) => {
    values.push(
      c.projectId, c.id, c.subjectKind, c.subjectExternalId, c.ticker, c.strategy, c.direction, c.score, c.structuralConfidence, c.reportedConfidence,
      c.expectedReturn, c.holdBand, c.horizonDays, c.basisClose, c.basisAt, c.dueAt, JSON.stringify(c.rationale), c.sourceMemoryIds, c.madeAt,
    );
    const at = i * 19;
    return `(${Array.from({ length: 19 }, (_, k) => `$${at + k + 1}${k === 16 ? '::jsonb' : ''}`).join(', ')})`;
  });
  await db.query(
    `INSERT INTO financial_predictions (project_id, id, subject_kind, subject_external_id, ticker, strategy, direction, score, structural_confidence,
       reported_confidence, expected_return, hold_band, horizon_days, basis_close, basis_at, due_at, rationale, source_memory_ids, made_at)
     VALUES ${rows.join(', ')}`,
    values,
  );
}

/** The project's unscored calls due by `now`, oldest first. */
export async function dueCalls(db: Queryable, projectId: string, now: Date, limit: number): Promise<PendingCall[]> {
  const { rows } = await db.query<{ id: string; ticker: string; direction: Direction; basis_close: number; hold_band: number; due_at: Date }>(
    `SELECT id, ticker, direction, basis_close, hold_band, due_at FROM financial_predictions
     WHERE project_id = $1 AND resolved_at IS NULL AND due_at <= $2 ORDER BY due_at, id LIMIT $3`,
    [projectId, now, limit],
  );
  return rows.map((r) => ({ id: r.id, ticker: r.ticker, direction: r.direction, basisClose: Number(r.basis_close), holdBand: Number(r.hold_band), dueAt: new Date(r.due_at) }));
}

/** Scores a call once: false when another pass scored it first. */
export async function resolveCall(db: Queryable, projectId: string, id: string, score: { realizedClose: number; realizedReturn: number; hit: boolean; at: Date }): Promise<boolean> {
  const { rows } = await db.query(
    `UPDATE financial_predictions SET resolved_at = $3, realized_close = $4, realized_return = $5, hit = $6
     WHERE project_id = $1 AND id = $2 AND resolved_at IS NULL RETURNING id`,
    [projectId, id, score.at, score.realizedClose, score.realizedReturn, score.hit],
  );
  return rows.length === 1;
}

export async function pendingCount(db: Queryable, projectId: string): Promise<number> {
  const { rows } = await db.query<{ n: string | number }>('SELECT count(*) AS n FROM financial_predictions WHERE project_id = $1 AND resolved_at IS NULL', [projectId]);
  return Number(rows[0]!.n);
}

/** The scored calls' reported confidence and outcome (of one strategy, or all). */
export async function resolvedCalls(db: Queryable, projectId: string, strategy?: string): Promise<{ strategy: string; structural: number; reported: number; hit: boolean }[]> {
  const { rows } = await db.query<{ strategy: string; structural_confidence: number; reported_confidence: number; hit: boolean }>(
    `SELECT strategy, structural_confidence, reported_confidence, hit FROM financial_predictions
     WHERE project_id = $1 AND resolved_at IS NOT NULL AND ($2::text IS NULL OR strategy = $2)`,
    [projectId, strategy ?? null],
  );
  return rows.map((r) => ({ strategy: r.strategy, structural: Number(r.structural_confidence), reported: Number(r.reported_confidence), hit: r.hit }));
}

export const SUBJECT_CALLS: SubjectTable = {
  from: 'financial_predictions',
  where: SUBJECT_WHERE,
  key: 'id',
  columns: `id, subject_kind, subject_external_id, ticker, strategy, direction, score, structural_confidence, reported_confidence, expected_return, hold_band,
    horizon_days, basis_close, basis_at, due_at, rationale, source_memory_ids, made_at, resolved_at, realized_close, realized_return, hit`,
};
