-- Subject features: what discovery and cohorts compare subjects by, kept current by a job (after a
-- subject is mined, and nightly for every subject, as the project's RFM cut points move), so that
-- no request recomputes a whole project.
CREATE TABLE discovery_features (
  project_id text NOT NULL REFERENCES projects (id) ON DELETE CASCADE,
  subject_kind text NOT NULL,
  subject_external_id text NOT NULL,
  recency_score smallint,
  frequency_score smallint,
  monetary_score smallint,
  rfm_segment text,
  -- The period of the subject's most confident recurring pattern, in days.
  cadence_days double precision,
  pattern_kinds text[] NOT NULL DEFAULT '{}',
  pattern_ids text[] NOT NULL DEFAULT '{}',
  top_entities text[] NOT NULL DEFAULT '{}',
  -- Per typed attribute with numeric readings: {count, mean, last}.
  attributes jsonb NOT NULL DEFAULT '{}',
  activity_count integer NOT NULL,
  last_activity_at timestamptz,
  -- The fixed part of the feature vector (src/discovery/features.ts says what each element is).
  vector double precision[] NOT NULL,
  computed_at timestamptz NOT NULL,
  PRIMARY KEY (project_id, subject_kind, subject_external_id)
);
