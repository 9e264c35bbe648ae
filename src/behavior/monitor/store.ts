// The pattern monitor's SQL: active patterns whose next firing is overdue beyond their tolerance
// and not yet marked broken for that firing, and each project's last tick. Patterns
// are behavior_pattern memories (patterns/store.ts reads them the same way); the mark is written
// through memory's patchKeyed (monitor.ts), as pattern confidence is.
import type { Queryable } from '../../platform/db.js';
import type { PatternMeta } from '../patterns/schemas.js';

/**
 * An active pattern whose next firing is past its tolerance at `now` (a parameter holding an ISO
 * instant) and not yet marked for that firing; it begins with the predicate of the index
 * memories_pattern_next (migrations/0007), which finds the candidates.
 */
const overdue = (now: string) => `m.pattern_key IS NOT NULL AND m.metadata->>'active' = 'true' AND m.metadata ? 'nextExpectedAt'
  AND m.metadata->>'nextExpectedAt' <= ${now}
  AND (m.metadata->>'nextExpectedAt')::timestamptz + make_interval(secs => coalesce((m.metadata->>'toleranceMinutes')::float8, 0) * 60) < ${now}::timestamptz
  AND m.metadata->>'brokenFor' IS DISTINCT FROM m.metadata->>'nextExpectedAt'`;

export interface OverduePattern {
  id: string;
  subject: { kind: string; externalId: string };
  summary: string;
  metadata: PatternMeta & { nextExpectedAt: string };
  sourceMemoryIds: string[];
}

/** A project's overdue patterns, the longest overdue first, at most `limit`. */
export async function overduePatterns(db: Queryable, projectId: string, now: Date, limit: number): Promise<OverduePattern[]> {
  const { rows } = await db.query<{ id: string; subject_kind: string; subject_external_id: string; content: string; metadata: OverduePattern['metadata']; source_memory_ids: string[] }>(
    `SELECT m.id, m.subject_kind, m.subject_external_id, m.content, m.metadata, m.source_memory_ids FROM memory_read m
      WHERE m.project_id = $1 AND ${overdue('$2')}
      ORDER BY m.metadata->>'nextExpectedAt', m.id LIMIT $3`,
    [projectId, now.toISOString(), limit],
  );
  return rows.map((r) => ({
    id: r.id,
    subject: { kind: r.subject_kind, externalId: r.subject_external_id },
    summary: r.content,
    metadata: r.metadata,
    sourceMemoryIds: r.source_memory_ids,
  }));
}

/** Projects with at least one overdue pattern (the scheduled tick visits them). */
export async function projectsWithOverduePatterns(db: Queryable, now: Date): Promise<string[]> {
  const { rows } = await db.query<{ project_id: string }>(
    `SELECT DISTINCT m.project_id FROM memory_read m WHERE ${overdue('$1')}`,
    [now.toISOString()],
  );
  return rows.map((r) => r.project_id);
}

export interface MonitorCounts {
  activePatternCount: number;
  patternsDue: number;
}

export async function monitorCounts(db: Queryable, projectId: string, now: Date): Promise<MonitorCounts> {
  const { rows } = await db.query<{ active: number; due: number }>(
    `SELECT (SELECT count(*) FROM memory_read m WHERE m.project_id = $1 AND m.pattern_key IS NOT NULL AND m.metadata->>'active' = 'true')::int AS active,
            (SELECT count(*) FROM memory_read m WHERE m.project_id = $1 AND ${overdue('$2')})::int AS due`,
    [projectId, now.toISOString()],
  );
  return { activePatternCount: rows[0]!.active, patternsDue: rows[0]!.due };
}

export interface Tick {
  at: Date;
  durationMs: number;
  checked: number;
  broken: number;
}

export async function recordTick(db: Queryable, projectId: string, tick: Tick): Promise<void> {
  await db.query(
    `INSERT INTO behavior_monitor_ticks (project_id, last_tick_at, duration_ms, patterns_checked, patterns_broken) VALUES ($1, $2, $3, $4, $5)
     ON CONFLICT (project_id) DO UPDATE SET last_tick_at = excluded.last_tick_at, duration_ms = excluded.duration_ms,
       patterns_checked = excluded.patterns_checked, patterns_broken = excluded.patterns_broken`,
    [projectId, tick.at, tick.durationMs, tick.checked, tick.broken],
  );
}

export async function lastTick(db: Queryable, projectId: string): Promise<Tick | undefined> {
  const { rows } = await db.query<{ last_tick_at: Date; duration_ms: number; patterns_checked: number; patterns_broken: number }>(
    `SELECT last_tick_at, duration_ms, patterns_checked, patterns_broken FROM behavior_monitor_ticks WHERE project_id = $1`,
    [projectId],
  );
  const row = rows[0];
  return row && { at: new Date(row.last_tick_at), durationMs: Number(row.duration_ms), checked: row.patterns_checked, broken: row.patterns_broken };
}
