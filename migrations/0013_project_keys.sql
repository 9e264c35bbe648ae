-- Every project-owned table keyed by project: the six tables from before the rule get primary keys
-- of (project_id, id), and alert fires reference their rule by (project_id, alert_rule_id). So
-- Postgres can be sharded by project (Citus distributes a table by a column that every primary
-- key, unique constraint and foreign key between distributed tables must include), and an id a
-- client chose (a memory's) is unique within its project rather than across all of them. Rows are
-- kept as they are; only keys and indexes change.

-- memories: the unique (project_id, id) index graph mentions and extractions reference becomes the
-- primary key (the foreign keys stay on it).
ALTER TABLE memories DROP CONSTRAINT memories_pkey;
ALTER TABLE memories ADD CONSTRAINT memories_pkey PRIMARY KEY USING INDEX memories_project_id_id;

ALTER TABLE events DROP CONSTRAINT events_pkey;
ALTER TABLE events ADD PRIMARY KEY (project_id, id);

ALTER TABLE typed_attributes DROP CONSTRAINT typed_attributes_pkey;
ALTER TABLE typed_attributes ADD PRIMARY KEY (project_id, id);

ALTER TABLE typed_ingest_batches DROP CONSTRAINT typed_ingest_batches_pkey;
ALTER TABLE typed_ingest_batches ADD PRIMARY KEY (project_id, id);

-- Fires reference their rule within the project.
ALTER TABLE alert_fires DROP CONSTRAINT alert_fires_alert_rule_id_fkey;
ALTER TABLE alert_rules DROP CONSTRAINT alert_rules_pkey;
ALTER TABLE alert_rules ADD PRIMARY KEY (project_id, id);
ALTER TABLE alert_fires DROP CONSTRAINT alert_fires_pkey;
ALTER TABLE alert_fires ADD PRIMARY KEY (project_id, id);
ALTER TABLE alert_fires ADD CONSTRAINT alert_fires_rule_fkey FOREIGN KEY (project_id, alert_rule_id) REFERENCES alert_rules (project_id, id) ON DELETE CASCADE;
DROP INDEX alert_fires_rule;
CREATE INDEX alert_fires_rule ON alert_fires (project_id, alert_rule_id, fired_at DESC);
DROP INDEX alert_fires_event;
CREATE INDEX alert_fires_event ON alert_fires (project_id, event_id);
