-- Behavior intelligence: a subject's activity read cheaply, mined patterns kept as memories (one
-- row per subject and pattern key, refreshed in place), the per-subject mining queue fed by the
-- writes themselves, recorded predictions, and fitted project-wide models.

-- Activity memories (type event, or any memory carrying metadata.eventType, save the engine's own
-- derived kinds), read per subject and time. Queries repeat this predicate verbatim (see
-- src/behavior/activity/store.ts) so the planner can use the index.
CREATE INDEX memories_activity ON memories (project_id, subject_kind, subject_external_id, valid_from)
  WHERE subject_kind IS NOT NULL AND (type = 'event' OR metadata ? 'eventType') AND type NOT IN ('behavior_pattern', 'decision', 'outcome', 'estimate', 'insight');

-- Events that are activity (not the engine's own), read project-wide by time (the BG/NBD and RFM
-- summaries): a project's typed observations append as many typed.observation events, which this
-- leaves out.
CREATE INDEX events_activity ON events (project_id, occurred_at)
  WHERE subject_kind IS NOT NULL AND event_type NOT IN ('typed.observation', 'prediction.imminent', 'segment.changed', 'pattern.emerged');

-- A mined pattern's identity (kind and activity type): re-mining refreshes the row that holds it.
ALTER TABLE memories ADD COLUMN pattern_key text;
CREATE UNIQUE INDEX memories_pattern_key ON memories (project_id, subject_kind, subject_external_id, pattern_key) WHERE pattern_key IS NOT NULL;
-- Project-wide upcoming and overdue predictions read active patterns by their next expected time.
CREATE INDEX memories_pattern_next ON memories (project_id, (metadata->>'nextExpectedAt'))
  WHERE pattern_key IS NOT NULL AND metadata->>'active' = 'true' AND metadata ? 'nextExpectedAt';

-- Deleting a memory deactivates the patterns built on it (WIRE.md): in the database, so every path
-- that deletes (the API, a hard delete, a project's removal) keeps patterns honest.
CREATE FUNCTION behavior_patterns_after_source_delete() RETURNS trigger
LANGUAGE plpgsql AS $$
BEGIN
  UPDATE memories p
     SET metadata = coalesce(p.metadata, '{}'::jsonb) || '{"active": false}'::jsonb,
         valid_to = greatest(p.valid_from, now()),
         updated_at = now()
    FROM (SELECT DISTINCT project_id, subject_kind, subject_external_id, id FROM gone
           WHERE subject_kind IS NOT NULL AND pattern_key IS NULL) g
   WHERE p.project_id = g.project_id AND p.subject_kind = g.subject_kind AND p.subject_external_id = g.subject_external_id
     AND p.pattern_key IS NOT NULL AND g.id = ANY (p.source_memory_ids)
     AND p.metadata->>'active' = 'true';
  RETURN NULL;
END $$;
CREATE TRIGGER behavior_patterns_source_delete AFTER DELETE ON memories
  REFERENCING OLD TABLE AS gone FOR EACH STATEMENT EXECUTE FUNCTION behavior_patterns_after_source_delete();

-- Subjects with activity not yet mined. The writes enqueue them in their own transaction (so no
-- activity is ever missed, even across a crash); a scheduled job mines a subject once it has been
-- quiet for the debounce time, or has waited the longest allowed.
CREATE TABLE behavior_mining_queue (
  project_id text NOT NULL,
  subject_kind text NOT NULL,
  subject_external_id text NOT NULL,
  first_at timestamptz NOT NULL,
  last_at timestamptz NOT NULL,
  PRIMARY KEY (project_id, subject_kind, subject_external_id)
);
CREATE INDEX behavior_mining_queue_last ON behavior_mining_queue (last_at);
CREATE INDEX behavior_mining_queue_first ON behavior_mining_queue (first_at);

CREATE FUNCTION behavior_enqueue_subjects() RETURNS trigger
LANGUAGE plpgsql AS $$
BEGIN
  IF TG_TABLE_NAME = 'memories' THEN
    INSERT INTO behavior_mining_queue AS q (project_id, subject_kind, subject_external_id, first_at, last_at)
    SELECT DISTINCT project_id, subject_kind, subject_external_id, now(), now() FROM added
     WHERE subject_kind IS NOT NULL AND (type = 'event' OR metadata ? 'eventType') AND type NOT IN ('behavior_pattern', 'decision', 'outcome', 'estimate', 'insight')
    ON CONFLICT (project_id, subject_kind, subject_external_id) DO UPDATE SET last_at = excluded.last_at;
  ELSIF TG_TABLE_NAME = 'events' THEN
    INSERT INTO behavior_mining_queue AS q (project_id, subject_kind, subject_external_id, first_at, last_at)
    SELECT DISTINCT project_id, subject_kind, subject_external_id, now(), now() FROM added
     WHERE subject_kind IS NOT NULL AND event_type NOT IN ('typed.observation', 'prediction.imminent', 'segment.changed', 'pattern.emerged')
    ON CONFLICT (project_id, subject_kind, subject_external_id) DO UPDATE SET last_at = excluded.last_at;
  ELSE
    INSERT INTO behavior_mining_queue AS q (project_id, subject_kind, subject_external_id, first_at, last_at)
    SELECT DISTINCT project_id, subject_kind, subject_external_id, now(), now() FROM added
     WHERE subject_kind IS NOT NULL AND subject_external_id IS NOT NULL AND status = 'accepted' AND observed_at IS NOT NULL
    ON CONFLICT (project_id, subject_kind, subject_external_id) DO UPDATE SET last_at = excluded.last_at;
  END IF;
  RETURN NULL;
END $$;
CREATE TRIGGER behavior_enqueue_memories AFTER INSERT ON memories
  REFERENCING NEW TABLE AS added FOR EACH STATEMENT EXECUTE FUNCTION behavior_enqueue_subjects();
CREATE TRIGGER behavior_enqueue_events AFTER INSERT ON events
  REFERENCING NEW TABLE AS added FOR EACH STATEMENT EXECUTE FUNCTION behavior_enqueue_subjects();
CREATE TRIGGER behavior_enqueue_observations AFTER INSERT ON typed_observations
  REFERENCING NEW TABLE AS added FOR EACH STATEMENT EXECUTE FUNCTION behavior_enqueue_subjects();

-- Declared-target predictions that answered (abstentions are not recorded), each with an id that a
-- decision can cite and, once its horizon has passed, what happened.
CREATE TABLE behavior_predictions (
  project_id text NOT NULL REFERENCES projects (id) ON DELETE CASCADE,
  id text NOT NULL,
  subject_kind text NOT NULL,
  subject_external_id text NOT NULL,
  target_kind text NOT NULL,
  event_type text,
  attribute_key text,
  horizon_days double precision NOT NULL,
  lookback_days double precision NOT NULL,
  model text NOT NULL,
  probability double precision,
  probability_lower double precision,
  probability_upper double precision,
  value double precision,
  value_lower double precision,
  value_upper double precision,
  expected_at timestamptz,
  expected_at_lower timestamptz,
  expected_at_upper timestamptz,
  explanation text NOT NULL,
  evidence_memory_ids text[] NOT NULL DEFAULT '{}',
  made_at timestamptz NOT NULL,
  due_at timestamptz NOT NULL,
  scored_at timestamptz,
  -- Whether what was predicted happened (event_occurrence: an event in the horizon; event_time: the
  -- next event inside the interval; numeric: the next reading inside the interval).
  hit boolean,
  realized_value double precision,
  PRIMARY KEY (project_id, id)
);
CREATE INDEX behavior_predictions_due ON behavior_predictions (due_at) WHERE scored_at IS NULL;
CREATE INDEX behavior_predictions_subject ON behavior_predictions (project_id, subject_kind, subject_external_id, made_at DESC);

-- Fitted project-wide models: BG/NBD per activity type and lookback, RFM quintile cut points.
CREATE TABLE behavior_models (
  project_id text NOT NULL REFERENCES projects (id) ON DELETE CASCADE,
  model text NOT NULL,
  model_key text NOT NULL,
  params jsonb NOT NULL,
  subjects integer NOT NULL,
  fitted_at timestamptz NOT NULL,
  PRIMARY KEY (project_id, model, model_key)
);
