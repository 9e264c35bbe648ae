-- The memory core: typed, scoped, subject-bound, bi-temporal memories with provenance, full-text
-- search and an idempotency key. `kind` becomes `type` (the API answers both names).
ALTER TABLE memories RENAME COLUMN kind TO type;

ALTER TABLE memories
  ADD COLUMN category text,
  ADD COLUMN source text,
  ADD COLUMN subject_kind text,
  ADD COLUMN subject_external_id text,
  ADD COLUMN agent_id text,
  ADD COLUMN user_id text,
  ADD COLUMN session_key text,
  ADD COLUMN impact text,
  ADD COLUMN content_hash text,
  ADD COLUMN last_accessed_at timestamptz,
  ADD COLUMN superseded_by text,
  ADD COLUMN superseded_at timestamptz,
  ADD COLUMN source_memory_ids text[] NOT NULL DEFAULT '{}',
  ADD COLUMN confirmed_at timestamptz,
  ADD COLUMN confirmed_by text,
  ADD COLUMN review_reason text,
  ADD COLUMN negative_rating_count integer NOT NULL DEFAULT 0,
  ADD COLUMN fts tsvector GENERATED ALWAYS AS (to_tsvector('english', content)) STORED;

UPDATE memories SET content_hash = encode(sha256(convert_to(lower(content), 'UTF8')), 'hex') WHERE content_hash IS NULL;
ALTER TABLE memories ALTER COLUMN content_hash SET NOT NULL;

ALTER TABLE memories
  ADD CONSTRAINT memories_content_length CHECK (char_length(content) BETWEEN 1 AND 20000),
  ADD CONSTRAINT memories_importance_range CHECK (importance >= 0 AND importance <= 10),
  ADD CONSTRAINT memories_confidence_range CHECK (confidence >= 0 AND confidence <= 1),
  ADD CONSTRAINT memories_scope_valid CHECK (scope IN ('platform', 'project', 'location', 'agent', 'user', 'session')),
  ADD CONSTRAINT memories_status_valid CHECK (status IN ('pending', 'confirmed', 'superseded', 'rejected')),
  ADD CONSTRAINT memories_subject_complete CHECK ((subject_kind IS NULL) = (subject_external_id IS NULL)),
  ADD CONSTRAINT memories_valid_interval CHECK (valid_to IS NULL OR valid_to >= valid_from);

DROP INDEX memories_project_created;
CREATE INDEX memories_project_created ON memories (project_id, created_at DESC, id DESC);
CREATE INDEX memories_project_scope ON memories (project_id, scope, created_at DESC);
CREATE INDEX memories_project_subject ON memories (project_id, subject_kind, subject_external_id, created_at DESC);
CREATE INDEX memories_review ON memories (project_id, created_at DESC) WHERE status = 'pending' OR review_reason IS NOT NULL;
CREATE INDEX memories_fts ON memories USING gin (fts);

-- A live memory is unique per project, scope, type, subject and normalised content: replaying a
-- write (a client retry, the same observe twice) finds the existing row instead of adding one.
CREATE UNIQUE INDEX memories_live_unique ON memories (
  project_id, scope, type, coalesce(subject_kind, ''), coalesce(subject_external_id, ''), content_hash
) WHERE status IN ('pending', 'confirmed');
