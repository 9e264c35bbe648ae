-- Data-subject rights: the audit log of calls that read or write a subject's data, and the
-- tombstone of each hard delete. A subject is kept here only as a digest (subject_ref, SHA-256 of
-- project, kind and id), never in clear, so that the log survives the subject's erasure without
-- naming it; a query by subject digests the filter the same way. (A digest is a pseudonym: whoever
-- already knows an id can test it against the log, which is what the subject filter does.)
CREATE TABLE compliance_audit (
  project_id text NOT NULL REFERENCES projects (id) ON DELETE CASCADE,
  id text NOT NULL,
  created_at timestamptz NOT NULL DEFAULT now(),
  key_id text,
  key_name text,
  event_type text NOT NULL,
  subject_kind text,
  subject_ref text,
  query text,
  memory_ids text[] NOT NULL DEFAULT '{}',
  result_count integer NOT NULL DEFAULT 0,
  metadata jsonb NOT NULL DEFAULT '{}'::jsonb,
  PRIMARY KEY (project_id, id)
);
CREATE INDEX compliance_audit_recent ON compliance_audit (project_id, created_at DESC, id DESC);
CREATE INDEX compliance_audit_subject ON compliance_audit (project_id, subject_ref, created_at DESC) WHERE subject_ref IS NOT NULL;

-- Memories derived from others (an insight, a summary) are found from their sources when a
-- subject is erased: only memories that cite any are indexed.
CREATE INDEX memories_sources ON memories USING gin (source_memory_ids) WHERE cardinality(source_memory_ids) > 0;
