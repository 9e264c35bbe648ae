// SQL for memories.
import pgvector from 'pgvector';
import type { Queryable } from '../platform/db.js';
import { Conditions, iso } from '../platform/sql.js';
import { contentHash } from './content-hash.js';
import type { Memory, MemoryScope, MemoryStatus, MemoryType } from './schemas.js';

export interface NewMemory {
  id: string;
  projectId: string;
  content: string;
  contentHash?: string;
  type?: MemoryType;
  scope?: MemoryScope;
  status?: 'pending' | 'confirmed';
  importance?: number;
  confidence?: number;
  category?: string | null;
  source?: string | null;
  subjectKind?: string | null;
  subjectExternalId?: string | null;
  agentId?: string | null;
  userId?: string | null;
  sessionKey?: string | null;
  metadata?: Record<string, unknown> | null;
  impact?: string | null;
  validFrom?: Date;
  sourceMemoryIds?: string[];
  reviewReason?: string | null;
}

export interface MemoryRow {
  id: string;
  project_id: string;
  content: string;
  type: MemoryType;
  scope: MemoryScope;
  status: MemoryStatus;
  importance: number;
  confidence: number;
  category: string | null;
  source: string | null;
  subject_kind: string | null;
  subject_external_id: string | null;
  agent_id: string | null;
  user_id: string | null;
  session_key: string | null;
  metadata: Record<string, unknown> | null;
  impact: string | null;
  content_hash: string;
  created_at: Date;
  updated_at: Date;
  valid_from: Date;
  valid_to: Date | null;
  recorded_at: Date;
  last_accessed_at: Date | null;
  superseded_by: string | null;
  superseded_at: Date | null;
  source_memory_ids: string[];
  confirmed_at: Date | null;
  confirmed_by: string | null;
  review_reason: string | null;
  negative_rating_count: number;
  has_embedding: boolean;
}

export const MEMORY_COLUMNS = `m.id, m.project_id, m.content, m.type, m.scope, m.status, m.importance, m.confidence, m.category,
  m.source, m.subject_kind, m.subject_external_id, m.agent_id, m.user_id, m.session_key, m.metadata, m.impact,
  m.content_hash, m.created_at, m.updated_at, m.valid_from, m.valid_to, m.recorded_at, m.last_accessed_at,
  m.superseded_by, m.superseded_at, m.source_memory_ids, m.confirmed_at, m.confirmed_by, m.review_reason,
  m.negative_rating_count, (m.embedding IS NOT NULL) AS has_embedding`;


/**
 * The clients read a memory's provenance from `metadata.sourceMemoryIds` (their `explain` follows
 * it; WIRE.md decision 14): a memory with sources carries the list there too, as it stands at the top level.
 */
function withProvenance(metadata: Record<string, unknown> | null, sources: string[] | null): Record<string, unknown> | null {
  return sources && sources.length > 0 ? { ...metadata, sourceMemoryIds: sources } : metadata;
}

export function toMemory(row: MemoryRow): Memory {
  return {
    id: row.id,
    created: iso(row.created_at)!,
    updated: iso(row.updated_at)!,
    platformId: row.project_id,
    projectId: row.project_id,
    type: row.type,
    kind: row.type,
    content: row.content,
    category: row.category,
    importance: row.importance,
    confidence: row.confidence,
    source: row.source,
    scope: row.scope,
    status: row.status,
    reviewReason: row.review_reason ?? (row.status === 'pending' ? 'pending' : null),
    subject: row.subject_kind === null ? null : { kind: row.subject_kind, externalId: row.subject_external_id! },
    chatbotId: row.agent_id,
    chatIdentityId: row.user_id,
    sessionKey: row.session_key,
    metadata: withProvenance(row.metadata, row.source_memory_ids),
    impact: row.impact,
    contentHash: row.content_hash,
    validFrom: iso(row.valid_from)!,
    validTo: iso(row.valid_to),
    recordedAt: iso(row.recorded_at)!,
    lastAccessedAt: iso(row.last_accessed_at),
    supersededById: row.superseded_by,
    supersededAt: iso(row.superseded_at),
    sourceMemoryIds: row.source_memory_ids ?? [],
    confirmedAt: iso(row.confirmed_at),
    confirmedByUserId: row.confirmed_by,
    negativeRatingCount: row.negative_rating_count,
    hasEmbedding: row.has_embedding,
  };
}

/**
 * Inserts memories in one statement; a row whose live twin already exists (same project, scope,
 * type, subject and content hash) is skipped. Answers the memories actually inserted, in no
 * particular order.
 */
export async function insertMemories(db: Queryable, rows: readonly NewMemory[]): Promise<Memory[]> {
  if (rows.length === 0) return [];
  const col = <T>(f: (r: NewMemory) => T) => rows.map(f);
  const result = await db.query<MemoryRow>(
    `INSERT INTO memories AS m (id, project_id, content, content_hash, type, scope, status, importance, confidence, category,
                           source, subject_kind, subject_external_id, agent_id, user_id, session_key, metadata, impact,
                           valid_from, source_memory_ids, review_reason)
     SELECT v.id, v.project_id, v.content, v.content_hash, v.type, v.scope, v.status, v.importance, v.confidence, v.category,
            v.source, v.subject_kind, v.subject_external_id, v.agent_id, v.user_id, v.session_key, v.metadata, v.impact,
            v.valid_from, ARRAY(SELECT jsonb_array_elements_text(v.source_memory_ids)), v.review_reason
       FROM unnest($1::text[], $2::text[], $3::text[], $4::text[], $5::text[], $6::text[], $7::text[], $8::real[], $9::real[],
                   $10::text[], $11::text[], $12::text[], $13::text[], $14::text[], $15::text[], $16::text[], $17::jsonb[],
                   $18::text[], $19::timestamptz[], $20::jsonb[], $21::text[])
         AS v(id, project_id, content, content_hash, type, scope, status, importance, confidence, category, source,
              subject_kind, subject_external_id, agent_id, user_id, session_key, metadata, impact, valid_from,
              source_memory_ids, review_reason)
     ON CONFLICT DO NOTHING
     RETURNING ${MEMORY_COLUMNS}`,
    [
      col((r) => r.id),
      col((r) => r.projectId),
      col((r) => r.content),
      col((r) => r.contentHash ?? contentHash(r.content)),
      col((r) => r.type ?? 'fact'),
      col((r) => r.scope ?? 'project'),
      col((r) => r.status ?? 'confirmed'),
      col((r) => r.importance ?? 5),
      col((r) => r.confidence ?? 1),
      col((r) => r.category ?? null),
      col((r) => r.source ?? null),
      col((r) => r.subjectKind ?? null),
      col((r) => r.subjectExternalId ?? null),
      col((r) => r.agentId ?? null),
      col((r) => r.userId ?? null),
      col((r) => r.sessionKey ?? null),
      col((r) => (r.metadata == null ? null : JSON.stringify(r.metadata))),
      col((r) => r.impact ?? null),
      col((r) => (r.validFrom ?? new Date()).toISOString()),
      col((r) => JSON.stringify(r.sourceMemoryIds ?? [])),
      col((r) => r.reviewReason ?? null),
    ],
  );
  return result.rows.map(toMemory);
}

/**
 * A memory derived by the engine and identified by a key per subject (a mined pattern): written
 * again, it replaces the row that holds the key instead of adding one.
 */
export interface KeyedMemory {
  key: string;
  subjectKind: string;
  subjectExternalId: string;
  type: MemoryType;
  content: string;
  confidence: number;
  metadata: Record<string, unknown>;
  source: string;
  sourceMemoryIds: readonly string[];
  validFrom: Date;
  /** Set to retire the memory (it stays readable, as of before this time). */
  validTo: Date | null;
}

export interface KeyedWrite {
  id: string;
  key: string;
  subjectKind: string;
  subjectExternalId: string;
  /** False when the key's row existed and was replaced. */
  created: boolean;
}

/**
 * Locks these keyed (mined) memories in id order, as every writer of them does, so that two writers
 * never wait on each other in a circle; answers each one's metadata. Inside the caller's transaction.
 */
export async function lockKeyedMemories(db: Queryable, projectId: string, ids: readonly string[]): Promise<Map<string, Record<string, unknown>>> {
  if (ids.length === 0) return new Map();
  const { rows } = await db.query<{ id: string; metadata: Record<string, unknown> }>(
    `SELECT id, metadata FROM memories WHERE project_id = $1 AND id = ANY($2::text[]) AND pattern_key IS NOT NULL ORDER BY id FOR UPDATE`,
    [projectId, [...new Set(ids)]],
  );
  return new Map(rows.map((r) => [r.id, r.metadata]));
}

export interface KeyedPatch {
  id: string;
  /** The memory's new confidence; unchanged when absent. */
  confidence?: number;
  /** Merged into its metadata (top-level keys replaced). */
  metadata: Record<string, unknown>;
}

/**
 * Revises keyed memories in place: their confidence and metadata keys, nothing else (their text,
 * key and embedding stay). With `onlyIf`, a row changes only while metadata[key] still equals the
 * value. Answers how many rows changed.
 */
export async function patchKeyedMemories(db: Queryable, projectId: string, patches: readonly KeyedPatch[], onlyIf?: { key: string; equals: string }): Promise<number> {
  if (patches.length === 0) return 0;
  const { rowCount } = await db.query(
    `UPDATE memories m
        SET confidence = coalesce(v.confidence, m.confidence), metadata = m.metadata || v.patch::jsonb, updated_at = now()
       FROM unnest($2::text[], $3::float8[], $4::text[]) AS v(id, confidence, patch)
      WHERE m.project_id = $1 AND m.id = v.id AND m.pattern_key IS NOT NULL AND ($5::text IS NULL OR m.metadata->>$5 = $6)`,
    [projectId, patches.map((p) => p.id), patches.map((p) => p.confidence ?? null), patches.map((p) => JSON.stringify(p.metadata)), onlyIf?.key ?? null, onlyIf?.equals ?? null],
  );
  return rowCount ?? 0;
}

/**
 * Inserts or replaces keyed memories in one statement. A changed text drops the stale embedding
 * (the embedding sweep makes a new one); the key's row keeps its id and creation time.
 */
export async function upsertKeyedMemories(db: Queryable, projectId: string, rows: readonly KeyedMemory[], newIds: readonly string[]): Promise<KeyedWrite[]> {
  if (rows.length === 0) return [];
  const col = <T>(f: (r: KeyedMemory) => T) => rows.map(f);
  const result = await db.query<{ id: string; pattern_key: string; subject_kind: string; subject_external_id: string; created: boolean }>(
    `INSERT INTO memories AS m (id, project_id, content, content_hash, type, scope, status, importance, confidence, source,
                                subject_kind, subject_external_id, metadata, valid_from, valid_to, source_memory_ids, pattern_key)
     SELECT v.id, $1, v.content, v.content_hash, v.type, 'project', 'confirmed', 5, v.confidence, v.source,
            v.subject_kind, v.subject_external_id, v.metadata, v.valid_from, v.valid_to,
            ARRAY(SELECT jsonb_array_elements_text(v.source_memory_ids)), v.pattern_key
       FROM unnest($2::text[], $3::text[], $4::text[], $5::text[], $6::real[], $7::text[], $8::text[], $9::text[], $10::jsonb[],
                   $11::timestamptz[], $12::timestamptz[], $13::jsonb[], $14::text[])
         AS v(id, content, content_hash, type, confidence, source, subject_kind, subject_external_id, metadata, valid_from, valid_to, source_memory_ids, pattern_key)
     ON CONFLICT (project_id, subject_kind, subject_external_id, pattern_key) WHERE pattern_key IS NOT NULL DO UPDATE
        SET content = excluded.content, content_hash = excluded.content_hash, confidence = excluded.confidence,
            metadata = excluded.metadata, source_memory_ids = excluded.source_memory_ids,
            valid_from = least(m.valid_from, excluded.valid_from), valid_to = excluded.valid_to, status = 'confirmed', updated_at = excluded.updated_at,
            embedding = CASE WHEN m.content_hash = excluded.content_hash THEN m.embedding END,
            embedding_model = CASE WHEN m.content_hash = excluded.content_hash THEN m.embedding_model END
     RETURNING m.id, m.pattern_key, m.subject_kind, m.subject_external_id, (m.xmax = 0) AS created`,
    [
      projectId,
      newIds,
      col((r) => r.content),
      col((r) => contentHash(r.content)),
      col((r) => r.type),
      col((r) => r.confidence),
      col((r) => r.source),
      col((r) => r.subjectKind),
      col((r) => r.subjectExternalId),
      col((r) => JSON.stringify(r.metadata)),
      col((r) => r.validFrom.toISOString()),
      col((r) => (r.validTo === null ? null : r.validTo.toISOString())),
      col((r) => JSON.stringify(r.sourceMemoryIds)),
      col((r) => r.key),
    ],
  );
  return result.rows.map((r) => ({ id: r.id, key: r.pattern_key, subjectKind: r.subject_kind, subjectExternalId: r.subject_external_id, created: r.created }));
}

/** The live twin of a memory that was not inserted because it already exists. */
export async function findLiveTwin(
  db: Queryable,
  m: { projectId: string; scope: string; type: string; subjectKind: string | null; subjectExternalId: string | null; contentHash: string },
): Promise<Memory | undefined> {
  const result = await db.query<MemoryRow>(
    `SELECT ${MEMORY_COLUMNS} FROM memories m
      WHERE m.project_id = $1 AND m.scope = $2 AND m.type = $3 AND coalesce(m.subject_kind, '') = coalesce($4, '')
        AND coalesce(m.subject_external_id, '') = coalesce($5, '') AND m.content_hash = $6 AND m.status IN ('pending', 'confirmed')`,
    [m.projectId, m.scope, m.type, m.subjectKind, m.subjectExternalId, m.contentHash],
  );
  return result.rows[0] && toMemory(result.rows[0]);
}

export async function getMemory(db: Queryable, projectId: string, id: string): Promise<Memory | undefined> {
  const result = await db.query<MemoryRow>(`SELECT ${MEMORY_COLUMNS} FROM memories m WHERE m.project_id = $1 AND m.id = $2`, [projectId, id]);
  return result.rows[0] && toMemory(result.rows[0]);
}

export async function getMemories(db: Queryable, projectId: string, ids: readonly string[]): Promise<Memory[]> {
  if (ids.length === 0) return [];
  const result = await db.query<MemoryRow>(`SELECT ${MEMORY_COLUMNS} FROM memories m WHERE m.project_id = $1 AND m.id = ANY($2::text[])`, [projectId, ids]);
  const byId = new Map(result.rows.map((r) => [r.id, toMemory(r)]));
  return ids.flatMap((id) => byId.get(id) ?? []);
}

/** Recall: marks the memory accessed and answers it. */
export async function touchMemory(db: Queryable, projectId: string, id: string): Promise<Memory | undefined> {
  const result = await db.query<MemoryRow>(
    `UPDATE memories m SET last_accessed_at = now() WHERE m.project_id = $1 AND m.id = $2 RETURNING ${MEMORY_COLUMNS}`,
    [projectId, id],
  );
  return result.rows[0] && toMemory(result.rows[0]);
}

export interface MemoryFilter {
  type?: string;
  scope?: string;
  scopes?: readonly string[];
  status?: string;
  source?: string;
  category?: string;
  agentId?: string;
  userId?: string;
  subjectKind?: string;
  subjectExternalId?: string;
  /** Only memories about no subject (the project's shared knowledge). */
  noSubject?: boolean;
  /** Only memories of this end user: written for them (user_id) or about them (subject user:<id>). */
  endUser?: string;
  /** Only memories written for no end user. */
  noEndUser?: boolean;
  /** Leave out memories of these categories (case-insensitive). */
  excludeCategories?: readonly string[];
  /** Only memories built on this one (its id among their sourceMemoryIds: insights, summaries, decisions). */
  derivedFrom?: string;
  /** Bi-temporal slice; without it, only live memories unless a status is asked for. */
  asOf?: Date;
  reviewOnly?: boolean;
  /** Only pending and confirmed memories (what is believed now). */
  liveOnly?: boolean;
  /** Only the memories of this brain (metadata.brainId). */
  brainId?: string;
}

/** Adds the filter's conditions for table alias m; `project` is always the first condition. */
export function filterConditions(projectId: string, filter: MemoryFilter, conditions = new Conditions()): Conditions {
  conditions.add('m.project_id = ?', projectId);
  conditions.add('m.type = ?', filter.type);
  conditions.add('m.scope = ?', filter.scope);
  if (filter.scopes) conditions.add('m.scope = ANY(?::text[])', filter.scopes);
  if (filter.status === 'flagged') conditions.add(`m.review_reason = 'flagged'`);
  else conditions.add('m.status = ?', filter.status);
  conditions.add('m.source = ?', filter.source);
  conditions.add('m.category = ?', filter.category);
  conditions.add('m.agent_id = ?', filter.agentId);
  conditions.add("m.metadata->>'brainId' = ?", filter.brainId);
  conditions.add('m.user_id = ?', filter.userId);
  conditions.add('m.subject_kind = ?', filter.subjectKind);
  conditions.add('m.subject_external_id = ?', filter.subjectExternalId);
  if (filter.noSubject) conditions.add('m.subject_kind IS NULL');
  if (filter.endUser !== undefined) {
    const user = conditions.param(filter.endUser);
    conditions.add(`(m.user_id = ${user} OR (m.subject_kind = 'user' AND m.subject_external_id = ${user}))`);
  }
  if (filter.noEndUser) conditions.add('m.user_id IS NULL');
  if (filter.excludeCategories && filter.excludeCategories.length > 0) {
    conditions.add('(m.category IS NULL OR lower(m.category) <> ALL(?::text[]))', filter.excludeCategories.map((c) => c.toLowerCase()));
  }
  // The cardinality test lets the planner use the partial GIN index memories_sources.
  conditions.add('cardinality(m.source_memory_ids) > 0 AND m.source_memory_ids @> ARRAY[?]::text[]', filter.derivedFrom);
  if (filter.asOf) {
    const at = conditions.param(filter.asOf.toISOString());
    conditions.add(`m.valid_from <= ${at}::timestamptz AND (m.valid_to IS NULL OR m.valid_to > ${at}::timestamptz) AND m.status <> 'rejected'`);
  }
  if (filter.reviewOnly) conditions.add(`(m.status = 'pending' OR m.review_reason IS NOT NULL)`);
  if (filter.liveOnly) conditions.add(`m.status IN ('pending', 'confirmed')`);
  return conditions;
}

export async function listMemories(db: Queryable, projectId: string, filter: MemoryFilter, limit: number, offset: number): Promise<Memory[]> {
  const where = filterConditions(projectId, filter);
  const result = await db.query<MemoryRow>(
    `SELECT ${MEMORY_COLUMNS} FROM memories m WHERE ${where.sql}
      ORDER BY m.created_at DESC, m.id DESC LIMIT ${where.param(limit)} OFFSET ${where.param(offset)}`,
    where.params,
  );
  return result.rows.map(toMemory);
}

export interface MemoryChanges {
  content?: string;
  contentHash?: string;
  type?: string;
  category?: string | null;
  importance?: number;
  confidence?: number;
  scope?: string;
  status?: string;
  metadata?: Record<string, unknown> | null;
  impact?: string | null;
  validFrom?: Date;
  validTo?: Date | null;
  reviewReason?: string | null;
  confirmedAt?: Date | null;
  confirmedBy?: string | null;
}

const CHANGE_COLUMNS: Record<keyof MemoryChanges, string> = {
  content: 'content',
  contentHash: 'content_hash',
  type: 'type',
  category: 'category',
  importance: 'importance',
  confidence: 'confidence',
  scope: 'scope',
  status: 'status',
  metadata: 'metadata',
  impact: 'impact',
  validFrom: 'valid_from',
  validTo: 'valid_to',
  reviewReason: 'review_reason',
  confirmedAt: 'confirmed_at',
  confirmedBy: 'confirmed_by',
};

/** Applies the changes; a changed content drops the stale embedding. Answers the updated memory. */
export async function updateMemory(
  db: Queryable,
  projectId: string,
  id: string,
  changes: MemoryChanges,
  onlyIfStatus?: readonly string[],
): Promise<Memory | undefined> {
  const where = new Conditions();
  const sets: string[] = ['updated_at = now()'];
  for (const [key, column] of Object.entries(CHANGE_COLUMNS) as [keyof MemoryChanges, string][]) {
    if (!(key in changes) || changes[key] === undefined) continue;
    let value: unknown = changes[key];
    if (value instanceof Date) value = value.toISOString();
    else if (key === 'metadata' && value !== null) value = JSON.stringify(value);
    sets.push(`${column} = ${where.param(value)}`);
  }
  if (changes.content !== undefined) sets.push('embedding = NULL', 'embedding_model = NULL', 'embed_claimed_at = NULL');
  where.add('m.project_id = ?', projectId).add('m.id = ?', id);
  if (onlyIfStatus) where.add('m.status = ANY(?::text[])', onlyIfStatus);
  const result = await db.query<MemoryRow>(`UPDATE memories m SET ${sets.join(', ')} WHERE ${where.sql} RETURNING ${MEMORY_COLUMNS}`, where.params);
  return result.rows[0] && toMemory(result.rows[0]);
}

/** Marks `ids` superseded by `byId` as of `at` (their validTo, unless already closed earlier). */
export async function supersedeMemories(db: Queryable, projectId: string, ids: readonly string[], byId: string, at: Date): Promise<number> {
  if (ids.length === 0) return 0;
  const result = await db.query(
    `UPDATE memories SET status = 'superseded', superseded_by = $3, superseded_at = now(), updated_at = now(),
            valid_to = CASE WHEN valid_to IS NOT NULL AND valid_to <= $4::timestamptz THEN valid_to
                            ELSE greatest(valid_from, $4::timestamptz) END
      WHERE project_id = $1 AND id = ANY($2::text[]) AND status IN ('pending', 'confirmed')`,
    [projectId, ids, byId, at.toISOString()],
  );
  return result.rowCount;
}

export async function deleteMemory(db: Queryable, projectId: string, id: string): Promise<boolean> {
  const result = await db.query('DELETE FROM memories WHERE project_id = $1 AND id = $2', [projectId, id]);
  return result.rowCount > 0;
}

export async function memoryStats(db: Queryable, projectId: string) {
  const result = await db.query<{ dimension: string; key: string; n: number }>(
    `SELECT 'scope' AS dimension, scope AS key, count(*)::int AS n FROM memories WHERE project_id = $1 GROUP BY scope
     UNION ALL SELECT 'status', status, count(*)::int FROM memories WHERE project_id = $1 GROUP BY status
     UNION ALL SELECT 'type', type, count(*)::int FROM memories WHERE project_id = $1 GROUP BY type
     UNION ALL SELECT 'totals', 'total', count(*)::int FROM memories WHERE project_id = $1
     UNION ALL SELECT 'totals', 'embedded', count(embedding)::int FROM memories WHERE project_id = $1
     UNION ALL SELECT 'totals', 'review', count(*)::int FROM memories WHERE project_id = $1 AND (status = 'pending' OR review_reason IS NOT NULL)
     UNION ALL SELECT 'totals', 'flagged', count(*)::int FROM memories WHERE project_id = $1 AND review_reason = 'flagged'
     UNION ALL SELECT 'totals', 'patterns', count(*)::int FROM memories WHERE project_id = $1 AND type = 'behavior_pattern' AND status = 'confirmed'
     UNION ALL SELECT 'totals', 'graphReady', count(*)::int FROM vector_indexed_projects WHERE project_id = $1 AND ready
     UNION ALL SELECT 'totals', 'projectIndex', count(*)::int FROM project_vector_indexes WHERE project_id = $1`,
    [projectId],
  );
  const by = (dimension: string) => Object.fromEntries(result.rows.filter((r) => r.dimension === dimension).map((r) => [r.key, r.n]));
  return { byScope: by('scope'), byStatus: by('status'), byType: by('type'), totals: by('totals') as Record<string, number> };
}

export interface SubjectInsightRow {
  subjectKind: string;
  subjectExternalId: string;
  memoryCount: number;
  lastMemoryAt: Date;
  firstMemoryAt: Date;
  avgImportance: number;
  maxImportance: number;
}

export async function subjectInsights(db: Queryable, projectId: string, limit: number, offset: number): Promise<SubjectInsightRow[]> {
  const result = await db.query<SubjectInsightRow>(
    `SELECT subject_kind AS "subjectKind", subject_external_id AS "subjectExternalId", count(*)::int AS "memoryCount",
            max(valid_from) AS "lastMemoryAt", min(valid_from) AS "firstMemoryAt",
            avg(importance)::float8 AS "avgImportance", max(importance)::float8 AS "maxImportance"
       FROM memories
      WHERE project_id = $1 AND subject_kind IS NOT NULL AND status IN ('pending', 'confirmed')
      GROUP BY subject_kind, subject_external_id
      ORDER BY max(importance) DESC, max(valid_from) DESC
      LIMIT $2 OFFSET $3`,
    [projectId, limit, offset],
  );
  return result.rows;
}

// ---- embeddings -------------------------------------------------------------------------------

/**
 * How long a drain's claim on the rows it embeds holds before another drain may take them: far
 * longer than one claim's work (drains claim 128 rows at a time, a second or two), short enough
 * that the rows of a drain killed mid-claim are taken again within a minute.
 */
export const EMBED_CLAIM_SECONDS = 60;

/**
 * Claims up to `limit` rows without a vector that no other drain holds (SKIP LOCKED while
 * claiming, then the claim's time), oldest id first: concurrent drains get disjoint batches. With
 * `takeClaimed` (an explicit backfill, whose caller loops until it answers 0), rows that other
 * drains hold are taken too: 0 then means nothing is left.
 */
export async function claimUnembedded(db: Queryable, projectId: string, limit: number, takeClaimed = false): Promise<{ id: string; content: string }[]> {
  const result = await db.query<{ id: string; content: string }>(
    // Materialised: an IN (subquery with LIMIT) may be run again by the plan and claim more rows.
    `WITH picked AS MATERIALIZED (
       SELECT id FROM memories
        WHERE project_id = $1 AND embedding IS NULL AND ($4 OR embed_claimed_at IS NULL OR embed_claimed_at < now() - make_interval(secs => $3))
        ORDER BY id LIMIT $2 FOR UPDATE SKIP LOCKED)
     UPDATE memories m SET embed_claimed_at = now()
       FROM picked WHERE m.project_id = $1 AND m.id = picked.id
     RETURNING m.id, m.content`,
    [projectId, limit, EMBED_CLAIM_SECONDS, takeClaimed],
  );
  return result.rows.sort((a, b) => (a.id < b.id ? -1 : 1));
}

/** Lets go of a failed drain's claim on the rows it did not embed, so that the next drain takes them at once. */
export async function releaseEmbedClaims(db: Queryable, projectId: string, ids: readonly string[]): Promise<void> {
  await db.query(`UPDATE memories SET embed_claimed_at = NULL WHERE project_id = $1 AND id = ANY($2::text[]) AND embedding IS NULL`, [projectId, ids]);
}

/**
 * Writes vectors for rows that still have none; answers how many it wrote. A row embedded
 * meanwhile by a concurrent backfill is left alone and not counted twice. A row of a project
 * admitted to the HNSW graph is marked for it (migration 0016); a mark already set stays.
 */
export async function writeEmbeddings(
  db: Queryable,
  projectId: string,
  model: string,
  rows: readonly { id: string; vector: Float32Array }[],
): Promise<number> {
  if (rows.length === 0) return 0;
  const result = await db.query(
    `UPDATE memories m SET embedding = v.embedding::vector, embedding_model = $3,
            vector_indexed = m.vector_indexed OR EXISTS (SELECT 1 FROM vector_indexed_projects p WHERE p.project_id = $4)
       FROM unnest($1::text[], $2::text[]) AS v(id, embedding)
      WHERE m.id = v.id AND m.project_id = $4 AND m.embedding IS NULL`,
    [rows.map((r) => r.id), rows.map((r) => pgvector.toSql(Array.from(r.vector))), model, projectId],
  );
  return result.rowCount;
}

/** Projects holding memories without a vector, of any status, as the drain embeds them (the partial index on unembedded rows finds them). */
export async function projectsWithUnembedded(db: Queryable): Promise<string[]> {
  const { rows } = await db.query<{ project_id: string }>(`SELECT DISTINCT project_id FROM memories WHERE embedding IS NULL ORDER BY project_id`);
  return rows.map((r) => r.project_id);
}

/** Memories of the project without a vector, of any status (the partial index on unembedded rows counts them). */
export async function countUnembedded(db: Queryable, projectId: string): Promise<number> {
  const { rows } = await db.query<{ n: number }>(`SELECT count(*)::int AS n FROM memories WHERE project_id = $1 AND embedding IS NULL`, [projectId]);
  return rows[0]!.n;
}

/**
 * The project's memories of any status (the drain embeds them all), those with a vector, and the
 * oldest without one by its last change (a changed content drops the vector): search sizes its
 * path by `embedded`; the project overview shows the rest as the embedding backlog.
 */
export async function countEmbedded(db: Queryable, projectId: string): Promise<{ total: number; embedded: number; oldestPendingAt: Date | null }> {
  const result = await db.query<{ total: number; embedded: number; oldestPendingAt: Date | null }>(
    `SELECT count(*)::int AS total, count(embedding)::int AS embedded, min(updated_at) FILTER (WHERE embedding IS NULL) AS "oldestPendingAt"
       FROM memories WHERE project_id = $1`,
    [projectId],
  );
  return result.rows[0]!;
}

export async function readEmbedding(db: Queryable, projectId: string, id: string): Promise<number[] | null> {
  const result = await db.query<{ embedding: string | null }>(
    `SELECT embedding::text AS embedding FROM memories WHERE project_id = $1 AND id = $2`,
    [projectId, id],
  );
  const value = result.rows[0]?.embedding ?? null;
  return value === null ? null : (pgvector.fromSql(value) as number[]);
}

/** Live memories holding the same slot (a single-valued fact) for the same subject and scope. */
export async function findSlotHolders(
  db: Queryable,
  projectId: string,
  q: { slot: string; scope: string; subject?: { kind: string; externalId: string }; excludeId: string },
): Promise<{ id: string; validFrom: Date }[]> {
  const result = await db.query<{ id: string; valid_from: Date }>(
    `SELECT id, valid_from FROM memories
      WHERE project_id = $1 AND scope = $2 AND status IN ('pending', 'confirmed') AND metadata->>'slot' = $3 AND id <> $4
        AND coalesce(subject_kind, '') = coalesce($5, '') AND coalesce(subject_external_id, '') = coalesce($6, '')
      ORDER BY valid_from, id`,
    [projectId, q.scope, q.slot, q.excludeId, q.subject?.kind ?? null, q.subject?.externalId ?? null],
  );
  return result.rows.map((r) => ({ id: r.id, validFrom: new Date(r.valid_from) }));
}

/**
 * Live memories of the same scope and subject sharing a word with `text` (by full text), newest
 * first: where a repeat of `text` in other words would be.
 */
export async function findWordNeighbours(
  db: Queryable,
  projectId: string,
  q: { text: string; scope: string; subject?: { kind: string; externalId: string }; limit: number },
): Promise<{ id: string; content: string }[]> {
  const result = await db.query<{ id: string; content: string }>(
    `SELECT id, content FROM memories
      WHERE project_id = $1 AND scope = $2 AND status IN ('pending', 'confirmed')
        AND coalesce(subject_kind, '') = coalesce($3, '') AND coalesce(subject_external_id, '') = coalesce($4, '')
        AND fts @@ replace(plainto_tsquery('english', $5)::text, '&', '|')::tsquery
      ORDER BY created_at DESC, id DESC
      LIMIT $6`,
    [projectId, q.scope, q.subject?.kind ?? null, q.subject?.externalId ?? null, q.text, q.limit],
  );
  return result.rows;
}

/**
 * The memories a subject's export or erase covers: the subject's own, and those derived from them
 * (a memory citing one in source_memory_ids: an insight, a summary), to three links, since derived
 * text may repeat what the source said.
 */
export async function subjectMemoryIds(db: Queryable, projectId: string, kind: string, externalId: string): Promise<string[]> {
  const { rows } = await db.query<{ id: string }>(
    `WITH RECURSIVE covered(id, depth) AS (
       SELECT id, 0 FROM memories WHERE project_id = $1 AND subject_kind = $2 AND subject_external_id = $3
       UNION
       SELECT d.id, c.depth + 1 FROM covered c
         JOIN memories d ON d.project_id = $1 AND cardinality(d.source_memory_ids) > 0 AND d.source_memory_ids @> ARRAY[c.id]
        WHERE c.depth < 3
     )
     SELECT DISTINCT id FROM covered ORDER BY id`,
    [projectId, kind, externalId],
  );
  return rows.map((r) => r.id);
}

/** A page of memories (or, with `patterns`, of mined patterns) by id, as stored (snake_case), without the search columns. */
export async function memoryRowsByIds(db: Queryable, projectId: string, ids: readonly string[], patterns: boolean): Promise<Record<string, unknown>[]> {
  const { rows } = await db.query(
    `SELECT ${MEMORY_COLUMNS}, m.pattern_key FROM memories m
      WHERE m.project_id = $1 AND m.id = ANY($2::text[]) AND (m.type = 'behavior_pattern') = $3 ORDER BY m.id`,
    [projectId, ids, patterns],
  );
  return rows;
}

/** Deletes memories by id; answers mined patterns and other memories apart. */
export async function eraseMemories(db: Queryable, projectId: string, ids: readonly string[]): Promise<{ memories: number; patterns: number }> {
  const { rows } = await db.query<{ patterns: string; others: string }>(
    `WITH gone AS (DELETE FROM memories WHERE project_id = $1 AND id = ANY($2::text[]) RETURNING type)
     SELECT count(*) FILTER (WHERE type = 'behavior_pattern') AS patterns, count(*) FILTER (WHERE type <> 'behavior_pattern') AS others FROM gone`,
    [projectId, ids],
  );
  return { memories: Number(rows[0]!.others), patterns: Number(rows[0]!.patterns) };
}
