-- The pattern monitor (POST /lattice/monitor/tick, GET /lattice/monitor/status;
-- src/behavior/monitor/): each project's last tick.
CREATE TABLE behavior_monitor_ticks (
  project_id text PRIMARY KEY REFERENCES projects (id) ON DELETE CASCADE,
  last_tick_at timestamptz NOT NULL,
  duration_ms double precision NOT NULL,
  patterns_checked integer NOT NULL,
  patterns_broken integer NOT NULL
);

-- pattern.broken (the monitor's event) is the engine's own, not activity: the activity index and the
-- mining queue's trigger leave it out as they leave out the other engine event types
-- (ENGINE_EVENT_TYPES in src/events/schemas.ts, in the same order; test/behavior/monitor.test.ts
-- checks the two lists agree).
DROP INDEX events_activity;
CREATE INDEX events_activity ON events (project_id, occurred_at)
  WHERE subject_kind IS NOT NULL AND event_type NOT IN ('typed.observation', 'prediction.imminent', 'segment.changed', 'pattern.emerged', 'pattern.broken');

CREATE OR REPLACE FUNCTION behavior_enqueue_subjects() RETURNS trigger
LANGUAGE plpgsql AS $$
BEGIN
  IF TG_TABLE_NAME = 'memories' THEN
    INSERT INTO behavior_mining_queue (project_id, subject_kind, subject_external_id, first_at, last_at)
    SELECT DISTINCT project_id, subject_kind, subject_external_id, now(), now() FROM added
     WHERE subject_kind IS NOT NULL AND (type = 'event' OR metadata ? 'eventType') AND type NOT IN ('behavior_pattern', 'decision', 'outcome', 'estimate', 'insight');
  ELSIF TG_TABLE_NAME = 'events' THEN
    INSERT INTO behavior_mining_queue (project_id, subject_kind, subject_external_id, first_at, last_at)
    SELECT DISTINCT project_id, subject_kind, subject_external_id, now(), now() FROM added
     WHERE subject_kind IS NOT NULL AND event_type NOT IN ('typed.observation', 'prediction.imminent', 'segment.changed', 'pattern.emerged', 'pattern.broken');
  ELSE
    INSERT INTO behavior_mining_queue (project_id, subject_kind, subject_external_id, first_at, last_at)
    SELECT DISTINCT project_id, subject_kind, subject_external_id, now(), now() FROM added
     WHERE subject_kind IS NOT NULL AND subject_external_id IS NOT NULL AND status = 'accepted' AND observed_at IS NOT NULL;
  END IF;
  RETURN NULL;
END $$;
