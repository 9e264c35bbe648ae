-- Read views (issue 36): what an owner publishes for other domains to read, so that SQL outside a
-- domain never names its tables (test/architecture.test.ts, "table ownership"). Plain views: the
-- planner inlines them, so a query through one plans as the query on the table did, indexes and
-- partial indexes included. Internal columns stay out (a memory's embedding, its full-text vector
-- and its embedding claim).

-- memory's
CREATE VIEW memory_read AS
  SELECT id, project_id, content, type, scope, status, importance, confidence, metadata, created_at, updated_at, valid_from, valid_to, recorded_at,
         category, source, subject_kind, subject_external_id, agent_id, user_id, session_key, impact, content_hash, last_accessed_at, superseded_by,
         superseded_at, source_memory_ids, confirmed_at, confirmed_by, review_reason, negative_rating_count, pattern_key
    FROM memories;

-- events'
CREATE VIEW event_read AS
  SELECT id, project_id, event_type, subject_kind, subject_external_id, severity, payload, source_memory_ids, source_pattern_id, emitted_by_pack, dedupe_key, occurred_at
    FROM events;

-- typed's
CREATE VIEW typed_observation_read AS
  SELECT project_id, id, attribute_key, subject_kind, subject_external_id, value_numeric, value_text, value_bool, value_ts, observed_at, source, trust,
         status, quarantine_reason, raw, dedupe_hash, created_at
    FROM typed_observations;
CREATE VIEW typed_attribute_read AS
  SELECT id, project_id, attribute_key, data_type, unit, min_valid, max_valid, required, metadata, created_at, updated_at
    FROM typed_attributes;

-- behavior's
CREATE VIEW behavior_prediction_read AS
  SELECT project_id, id, subject_kind, subject_external_id, target_kind, event_type, attribute_key, horizon_days, lookback_days, model, probability,
         probability_lower, probability_upper, value, value_lower, value_upper, expected_at, expected_at_lower, expected_at_upper, explanation,
         evidence_memory_ids, made_at, due_at, scored_at, hit, realized_value
    FROM behavior_predictions;
CREATE VIEW behavior_mining_read AS
  SELECT project_id, subject_kind, subject_external_id, first_at, last_at
    FROM behavior_mining_queue;

-- tenancy's
CREATE VIEW tenancy_project_read AS
  SELECT id FROM projects;
