-- Typed attributes and their observations, per-subject running statistics, the event log, alert
-- rules and their fires.

CREATE TABLE typed_attributes (
  id text PRIMARY KEY,
  project_id text NOT NULL REFERENCES projects (id) ON DELETE CASCADE,
  attribute_key text NOT NULL,
  data_type text NOT NULL CHECK (data_type IN ('numeric', 'categorical', 'temporal', 'boolean')),
  unit text,
  min_valid double precision,
  max_valid double precision,
  required boolean NOT NULL DEFAULT false,
  metadata jsonb,
  created_at timestamptz NOT NULL DEFAULT now(),
  updated_at timestamptz NOT NULL DEFAULT now(),
  UNIQUE (project_id, attribute_key)
);

-- Every row a client sent is stored: accepted, or quarantined with its reason. Quarantined rows may
-- lack the fields that failed (an unknown attribute, an unparsable time), so few columns are NOT NULL.
-- The two high-volume tables (observations and events) carry no foreign key to projects: the
-- per-row check cost about a tenth of a 10,000-row ingest. Rows are only written through an
-- authenticated project, and removing a project must delete them explicitly.
CREATE TABLE typed_observations (
  project_id text NOT NULL,
  id text NOT NULL,
  attribute_key text,
  subject_kind text,
  subject_external_id text,
  value_numeric double precision,
  value_text text,
  value_bool boolean,
  value_ts timestamptz,
  observed_at timestamptz,
  source text,
  trust double precision NOT NULL DEFAULT 1,
  status text NOT NULL CHECK (status IN ('accepted', 'quarantined')),
  quarantine_reason text,
  -- The row as sent, kept for quarantined rows so nothing is lost.
  raw jsonb,
  -- Hash of (subject, attribute, observedAt, value, source): an exact repeat is a duplicate.
  dedupe_hash text NOT NULL,
  created_at timestamptz NOT NULL DEFAULT now(),
  PRIMARY KEY (project_id, id),
  UNIQUE (project_id, dedupe_hash),
  CHECK (status = 'accepted' OR quarantine_reason IS NOT NULL)
);
CREATE INDEX typed_observations_subject ON typed_observations (project_id, subject_kind, subject_external_id, attribute_key, observed_at);
CREATE INDEX typed_observations_attribute ON typed_observations (project_id, attribute_key, observed_at);
-- The listing's order (newest observed first, rows without a time last), unfiltered and for the
-- quarantine, so a page never sorts a whole project.
CREATE INDEX typed_observations_time ON typed_observations (project_id, observed_at DESC NULLS LAST, id DESC);
CREATE INDEX typed_observations_quarantined ON typed_observations (project_id, observed_at DESC NULLS LAST, id DESC) WHERE status = 'quarantined';

-- Running statistics per subject and attribute. mean, variance and stddev are derived on read.
-- `last_*` is the observation latest by (observed_at, id); ewma runs in that same order.
CREATE TABLE typed_accumulators (
  project_id text NOT NULL REFERENCES projects (id) ON DELETE CASCADE,
  subject_kind text NOT NULL,
  subject_external_id text NOT NULL,
  attribute_key text NOT NULL,
  count bigint NOT NULL DEFAULT 0,
  sum double precision NOT NULL DEFAULT 0,
  sum_sq double precision NOT NULL DEFAULT 0,
  min_val double precision,
  max_val double precision,
  last_val double precision,
  last_observed_at timestamptz,
  last_id text,
  cumulative double precision NOT NULL DEFAULT 0,
  ewma double precision,
  ewma_var double precision,
  updated_at timestamptz NOT NULL DEFAULT now(),
  PRIMARY KEY (project_id, subject_kind, subject_external_id, attribute_key)
);

-- Rows accepted by POST /memory-typed/observations/enqueue, held until a job ingests them. The job
-- ingests and deletes the batch in one transaction, so a crash loses nothing and ingests nothing twice.
CREATE TABLE typed_ingest_batches (
  id text PRIMARY KEY,
  project_id text NOT NULL REFERENCES projects (id) ON DELETE CASCADE,
  observations jsonb NOT NULL,
  row_count integer NOT NULL,
  created_at timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX typed_ingest_batches_created ON typed_ingest_batches (created_at);

-- The durable event log. occurred_at is assigned by the engine from a per-project clock: unique and
-- strictly increasing per project, so paging by the last occurredAt never repeats or skips.
CREATE TABLE events (
  id text PRIMARY KEY,
  project_id text NOT NULL,
  event_type text NOT NULL,
  subject_kind text,
  subject_external_id text,
  severity text NOT NULL CHECK (severity IN ('info', 'warn', 'critical')),
  payload jsonb NOT NULL DEFAULT '{}'::jsonb,
  source_memory_ids text[] NOT NULL DEFAULT '{}',
  source_pattern_id text,
  emitted_by_pack text,
  dedupe_key text NOT NULL,
  occurred_at timestamptz NOT NULL,
  UNIQUE (project_id, dedupe_key),
  UNIQUE (project_id, occurred_at)
);
CREATE INDEX events_subject ON events (project_id, subject_kind, subject_external_id, occurred_at);

CREATE TABLE event_clocks (
  project_id text PRIMARY KEY REFERENCES projects (id) ON DELETE CASCADE,
  last_at timestamptz NOT NULL
);

CREATE TABLE alert_rules (
  id text PRIMARY KEY,
  project_id text NOT NULL REFERENCES projects (id) ON DELETE CASCADE,
  name text NOT NULL,
  description text,
  enabled boolean NOT NULL DEFAULT true,
  trigger jsonb NOT NULL,
  filter jsonb,
  notify jsonb NOT NULL,
  throttle jsonb,
  created_at timestamptz NOT NULL DEFAULT now(),
  updated_at timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX alert_rules_project ON alert_rules (project_id, enabled);

CREATE TABLE alert_fires (
  id text PRIMARY KEY,
  project_id text NOT NULL REFERENCES projects (id) ON DELETE CASCADE,
  alert_rule_id text NOT NULL REFERENCES alert_rules (id) ON DELETE CASCADE,
  event_id text,
  subject_kind text,
  subject_external_id text,
  dedupe_key text NOT NULL,
  -- One entry per channel of the rule, in the rule's order: { channel, ok, error?, attempts, ... }.
  delivery_results jsonb NOT NULL DEFAULT '[]'::jsonb,
  -- Some channel still awaits an attempt or a retry; the sweep re-enqueues those whose job was lost.
  delivery_pending boolean NOT NULL DEFAULT true,
  fired_at timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX alert_fires_pending ON alert_fires (fired_at) WHERE delivery_pending;
CREATE INDEX alert_fires_rule ON alert_fires (alert_rule_id, fired_at DESC);
CREATE INDEX alert_fires_throttle ON alert_fires (project_id, dedupe_key, fired_at DESC);
CREATE INDEX alert_fires_event ON alert_fires (event_id);
