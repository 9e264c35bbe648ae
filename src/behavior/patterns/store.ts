// Reading mined patterns (behavior_pattern memories that carry a pattern key) and the per-subject
// mining queue. Patterns are written through the memory domain (upsertKeyed); this reads them.
import type { MemoryApi } from '../../memory/index.js';
import type { Subject } from '../../platform/common-schemas.js';
import type { Queryable } from '../../platform/db.js';
import { iso } from '../../platform/sql.js';
import type { PatternMeta, PatternRecord } from './schemas.js';

interface PatternRow {
  id: string;
  project_id: string;
  subject_kind: string;
  subject_external_id: string;
  pattern_key: string;
  content: string;
  confidence: number;
  metadata: PatternMeta;
  source_memory_ids: string[];
  valid_from: Date;
  created_at: Date;
  updated_at: Date;
}

const COLUMNS = `id, project_id, subject_kind, subject_external_id, pattern_key, content, confidence, metadata, source_memory_ids, valid_from, created_at, updated_at`;

export interface StoredPattern {
  record: PatternRecord;
  key: string;
  validFrom: Date;
}

function toPattern(r: PatternRow): StoredPattern {
  const active = r.metadata.active === true;
  return {
    key: r.pattern_key,
    validFrom: new Date(r.valid_from),
    record: {
      id: r.id,
      projectId: r.project_id,
      contactId: r.subject_external_id,
      subject: { kind: r.subject_kind, externalId: r.subject_external_id },
      summary: r.content,
      metadata: { ...r.metadata, contactId: r.subject_external_id, subjectKind: r.subject_kind },
      active,
      confidence: Number(r.metadata.confidence ?? r.confidence),
      sourceMemoryIds: r.source_memory_ids,
      created: iso(r.created_at),
      updated: iso(r.updated_at),
    },
  };
}

/** Every pattern (active or not) of these subjects. */
export async function patternsOf(db: Queryable, projectId: string, subjects: readonly Subject[]): Promise<StoredPattern[]> {
  if (subjects.length === 0) return [];
  const { rows } = await db.query<PatternRow>(
    `SELECT ${COLUMNS} FROM memory_read m
      WHERE m.project_id = $1 AND m.pattern_key IS NOT NULL
        AND (m.subject_kind, m.subject_external_id) IN (SELECT * FROM unnest($2::text[], $3::text[]))`,
    [projectId, subjects.map((s) => s.kind), subjects.map((s) => s.externalId)],
  );
  return rows.map(toPattern);
}

export async function activePatterns(db: Queryable, projectId: string, subject: Subject): Promise<PatternRecord[]> {
  const { rows } = await db.query<PatternRow>(
    `SELECT ${COLUMNS} FROM memory_read m
      WHERE m.project_id = $1 AND m.subject_kind = $2 AND m.subject_external_id = $3 AND m.pattern_key IS NOT NULL AND m.metadata->>'active' = 'true'
      ORDER BY m.confidence DESC, m.id`,
    [projectId, subject.kind, subject.externalId],
  );
  return rows.map((r) => toPattern(r).record);
}

/**
 * These subjects' patterns as they stood at `at`: the pattern memories valid then (mining ends a
 * pattern's validity when it deactivates it); without `at`, the active ones. Most confident first.
 */
export async function patternsAt(db: Queryable, projectId: string, subjects: readonly Subject[], at: Date | undefined): Promise<PatternRecord[]> {
  if (subjects.length === 0) return [];
  const { rows } = await db.query<PatternRow>(
    `SELECT ${COLUMNS} FROM memory_read m
      WHERE m.project_id = $1 AND m.pattern_key IS NOT NULL
        AND (m.subject_kind, m.subject_external_id) IN (SELECT * FROM unnest($2::text[], $3::text[]))
        AND CASE WHEN $4::timestamptz IS NULL THEN m.metadata->>'active' = 'true'
                 ELSE m.valid_from <= $4::timestamptz AND (m.valid_to IS NULL OR m.valid_to > $4::timestamptz) AND m.created_at <= $4::timestamptz END
      ORDER BY m.confidence DESC, m.id`,
    [projectId, subjects.map((s) => s.kind), subjects.map((s) => s.externalId), at?.toISOString() ?? null],
  );
  return rows.map((r) => toPattern(r).record);
}

export async function getPattern(db: Queryable, projectId: string, id: string): Promise<PatternRecord | undefined> {
  const { rows } = await db.query<PatternRow>(`SELECT ${COLUMNS} FROM memory_read m WHERE m.project_id = $1 AND m.id = $2 AND m.pattern_key IS NOT NULL`, [projectId, id]);
  return rows[0] && toPattern(rows[0]).record;
}

/** A contact's patterns, newest first, paged by the last row's id. */
export async function contactPatterns(
  db: Queryable,
  projectId: string,
  contactId: string,
  options: { activeOnly: boolean; limit: number; afterId?: string; subjectKind?: string },
): Promise<PatternRecord[]> {
  const { rows } = await db.query<PatternRow>(
    `SELECT ${COLUMNS} FROM memory_read m
      WHERE m.project_id = $1 AND m.subject_external_id = $2 AND m.pattern_key IS NOT NULL
        AND ($3::boolean = false OR m.metadata->>'active' = 'true')
        AND ($4::text IS NULL OR m.subject_kind = $4)
        AND ($5::text IS NULL OR m.id < $5)
      ORDER BY m.id DESC
      LIMIT $6`,
    [projectId, contactId, options.activeOnly, options.subjectKind ?? null, options.afterId ?? null, options.limit],
  );
  return rows.map((r) => toPattern(r).record);
}

/**
 * Active patterns with a next expected firing up to `horizon`, earliest first (so overdue ones
 * lead), on the memories_pattern_next index.
 */
export async function upcomingPatterns(
  db: Queryable,
  projectId: string,
  options: { horizon: Date; patternKind?: string; minConfidence: number; limit: number; offset: number },
): Promise<PatternRecord[]> {
  const { rows } = await db.query<PatternRow>(
    `SELECT ${COLUMNS} FROM memory_read m
      WHERE m.project_id = $1 AND m.pattern_key IS NOT NULL AND m.metadata->>'active' = 'true' AND m.metadata ? 'nextExpectedAt'
        AND m.metadata->>'nextExpectedAt' <= $2 AND ($3::text IS NULL OR m.metadata->>'patternKind' = $3)
        AND (m.metadata->>'confidence')::float8 >= $4
      ORDER BY m.metadata->>'nextExpectedAt', m.id LIMIT $5 OFFSET $6`,
    [projectId, options.horizon.toISOString(), options.patternKind ?? null, options.minConfidence, options.limit, options.offset],
  );
  return rows.map((r) => toPattern(r).record);
}

/** Subjects of this project whose patterns are active: the nightly re-mining ages them. */
export async function subjectsWithActivePatterns(db: Queryable, projectId: string): Promise<Subject[]> {
  const { rows } = await db.query<{ subject_kind: string; subject_external_id: string }>(
    `SELECT DISTINCT subject_kind, subject_external_id FROM memory_read
      WHERE project_id = $1 AND pattern_key IS NOT NULL AND metadata->>'active' = 'true'`,
    [projectId],
  );
  return rows.map((r) => ({ kind: r.subject_kind, externalId: r.subject_external_id }));
}

/**
 * Folds each subject's rows on the mining queue into one (the earliest first_at, the latest
 * last_at). Writes only append to the queue (migration 0015), so that none waits on another; this
 * keeps it to about one row per subject. Rows appended meanwhile are not seen, and stay as they
 * are. Answers how many rows were folded away.
 */
export async function compactMiningQueue(db: Queryable): Promise<number> {
  const { rows } = await db.query<{ folded: number }>(
    `WITH many AS MATERIALIZED (
       SELECT project_id, subject_kind, subject_external_id FROM behavior_mining_queue GROUP BY 1, 2, 3 HAVING count(*) > 1),
     gone AS (
       DELETE FROM behavior_mining_queue q USING many
        WHERE q.project_id = many.project_id AND q.subject_kind = many.subject_kind AND q.subject_external_id = many.subject_external_id
        RETURNING q.*),
     kept AS (
       INSERT INTO behavior_mining_queue (project_id, subject_kind, subject_external_id, first_at, last_at)
       SELECT project_id, subject_kind, subject_external_id, min(first_at), max(last_at) FROM gone GROUP BY 1, 2, 3
       RETURNING 1)
     SELECT ((SELECT count(*) FROM gone) - (SELECT count(*) FROM kept))::int AS folded`,
  );
  return rows[0]!.folded;
}

/**
 * Takes up to `limit` subjects off the mining queue: those quiet since `quietBefore` (the
 * debounce) or waiting since `waitingBefore` (the longest wait). Answers them by project. A row
 * appended while this runs is not taken: its subject stays queued and is mined again.
 */
export async function claimDueSubjects(db: Queryable, quietBefore: Date, waitingBefore: Date, limit: number): Promise<Map<string, Subject[]>> {
  const { rows } = await db.query<{ project_id: string; subject_kind: string; subject_external_id: string }>(
    // Materialised: a LIMIT subquery that the plan may run again would take more than `limit`.
    // Two runs at once may both pick a subject; the second deletes no row of it and so skips it.
    `WITH due AS MATERIALIZED (
       SELECT project_id, subject_kind, subject_external_id FROM behavior_mining_queue
        GROUP BY 1, 2, 3 HAVING max(last_at) <= $1 OR min(first_at) <= $2
        ORDER BY min(first_at) LIMIT $3),
     gone AS (
       DELETE FROM behavior_mining_queue q USING due
        WHERE q.project_id = due.project_id AND q.subject_kind = due.subject_kind AND q.subject_external_id = due.subject_external_id
        RETURNING q.project_id, q.subject_kind, q.subject_external_id)
     SELECT DISTINCT project_id, subject_kind, subject_external_id FROM gone`,
    [quietBefore, waitingBefore, limit],
  );
  const byProject = new Map<string, Subject[]>();
  for (const r of rows) {
    const list = byProject.get(r.project_id) ?? [];
    list.push({ kind: r.subject_kind, externalId: r.subject_external_id });
    byProject.set(r.project_id, list);
  }
  return byProject;
}

/** The project's subjects waiting on the mining queue, and when the longest-waiting one joined it. */
export async function miningBacklog(db: Queryable, projectId: string): Promise<{ pending: number; oldestPendingAt: Date | null }> {
  const { rows } = await db.query<{ pending: number; oldestPendingAt: Date | null }>(
    `SELECT count(DISTINCT (subject_kind, subject_external_id))::int AS pending, min(first_at) AS "oldestPendingAt"
       FROM behavior_mining_queue WHERE project_id = $1`,
    [projectId],
  );
  return rows[0]!;
}

/** The project's queued subjects, each once, with its earliest and latest queued activity. */
export async function queuedSubjects(db: Queryable, projectId: string): Promise<{ subject: Subject; firstAt: Date; lastAt: Date }[]> {
  const { rows } = await db.query<{ subject_kind: string; subject_external_id: string; first_at: Date; last_at: Date }>(
    `SELECT subject_kind, subject_external_id, min(first_at) AS first_at, max(last_at) AS last_at
       FROM behavior_mining_queue WHERE project_id = $1 GROUP BY 1, 2 ORDER BY 1, 2`,
    [projectId],
  );
  return rows.map((r) => ({ subject: { kind: r.subject_kind, externalId: r.subject_external_id }, firstAt: r.first_at, lastAt: r.last_at }));
}

/** Puts subjects back on the queue (their mining failed), due at once. */
export async function requeueSubjects(db: Queryable, projectId: string, subjects: readonly Subject[]): Promise<void> {
  await db.query(
    `INSERT INTO behavior_mining_queue (project_id, subject_kind, subject_external_id, first_at, last_at)
     SELECT $1, k, e, now() - interval '1 day', now() - interval '1 day' FROM unnest($2::text[], $3::text[]) AS s(k, e)`,
    [projectId, subjects.map((s) => s.kind), subjects.map((s) => s.externalId)],
  );
}

/** Projects with patterns, for the nightly re-mining. */
export async function projectsWithPatterns(db: Queryable): Promise<string[]> {
  const { rows } = await db.query<{ project_id: string }>(`SELECT DISTINCT project_id FROM memory_read WHERE pattern_key IS NOT NULL AND metadata->>'active' = 'true'`);
  return rows.map((r) => r.project_id);
}

/** The subjects (of any kind) with this externalId that have memories, events or observations. */
export async function subjectsByExternalId(db: Queryable, projectId: string, externalId: string): Promise<Subject[]> {
  const { rows } = await db.query<{ subject_kind: string }>(
    `SELECT subject_kind FROM memory_read WHERE project_id = $1 AND subject_external_id = $2 AND subject_kind IS NOT NULL
     UNION SELECT subject_kind FROM event_read WHERE project_id = $1 AND subject_external_id = $2 AND subject_kind IS NOT NULL
     UNION SELECT subject_kind FROM typed_observation_read WHERE project_id = $1 AND subject_external_id = $2 AND subject_kind IS NOT NULL
     ORDER BY 1`,
    [projectId, externalId],
  );
  return rows.map((r) => ({ kind: r.subject_kind, externalId }));
}

/** Outcome evidence a pattern has gathered (learning's ref updates), kept in its metadata. */
export interface OutcomeEvidence {
  hits: number;
  misses: number;
}

/**
 * Takes a transaction-scoped lock per subject (advisory, in hash order, so two miners of
 * overlapping subjects never wait on each other in a circle): one mining of a subject at a time
 * reads its stored patterns and writes what it found.
 */
export async function lockSubjects(db: Queryable, projectId: string, subjects: readonly Subject[]): Promise<void> {
  if (subjects.length === 0) return;
  await db.query(
    `SELECT pg_advisory_xact_lock(s.key) FROM (
       SELECT DISTINCT hashtextextended($1 || chr(1) || u.kind || chr(1) || u.external_id, 0) AS key
         FROM unnest($2::text[], $3::text[]) AS u(kind, external_id) ORDER BY 1
     ) s`,
    [projectId, subjects.map((s) => s.kind), subjects.map((s) => s.externalId)],
  );
}

/** What pattern writers need of memory: pattern rows are keyed memories, locked and revised through it. */
export type PatternRows = Pick<MemoryApi, 'lockKeyed' | 'patchKeyed'>;

/**
 * Locks these patterns (in id order, as every writer of pattern rows does, so two writers never
 * wait on each other in a circle) and reads their mined counts and outcome evidence.
 */
export async function lockPatterns(memory: PatternRows, tx: Queryable, projectId: string, ids: readonly string[]): Promise<Map<string, { minedHits: number; minedMisses: number; evidence: OutcomeEvidence }>> {
  const locked = await memory.lockKeyed(tx, projectId, ids);
  return new Map(
    [...locked].map(([id, metadata]) => {
      const meta = metadata as unknown as PatternMeta;
      return [id, { minedHits: meta.hits, minedMisses: meta.misses, evidence: { hits: meta.outcomeHits ?? 0, misses: meta.outcomeMisses ?? 0 } }];
    }),
  );
}

/** Sets patterns' confidence and outcome evidence (the rows are locked by the caller's transaction). */
export async function writeConfidence(memory: PatternRows, tx: Queryable, projectId: string, rows: readonly { id: string; confidence: number; minedConfidence: number; evidence: OutcomeEvidence }[]): Promise<void> {
  await memory.patchKeyed(
    tx,
    projectId,
    rows.map((r) => ({
      id: r.id,
      confidence: r.confidence,
      metadata: { confidence: r.confidence, minedConfidence: r.minedConfidence, outcomeHits: r.evidence.hits, outcomeMisses: r.evidence.misses },
    })),
  );
}

/** Patterns by id with what a decision citing them needs: the prior their mining gives, their kind. */
export async function patternRefs(db: Queryable, projectId: string, ids: readonly string[]): Promise<Map<string, { minedHits: number; minedMisses: number; patternKind: string }>> {
  if (ids.length === 0) return new Map();
  const { rows } = await db.query<{ id: string; metadata: PatternMeta }>(
    `SELECT id, metadata FROM memory_read WHERE project_id = $1 AND id = ANY($2::text[]) AND pattern_key IS NOT NULL AND type = 'behavior_pattern'`,
    [projectId, [...new Set(ids)]],
  );
  return new Map(rows.map((r) => [r.id, { minedHits: r.metadata.hits, minedMisses: r.metadata.misses, patternKind: r.metadata.patternKind }]));
}
