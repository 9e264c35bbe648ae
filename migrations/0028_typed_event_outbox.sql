-- typed.observation events are appended behind the ingest (issue 38: typed ingest at least half
-- the rate of a raw insert of the same rows).
--
-- An ingest wrote each accepted numeric observation twice: the observation, and its
-- typed.observation event, each row with five indexes. The event half cost as much as the
-- observation half, so an ingest could never reach half a raw insert's rate. Now the ingest records
-- here, in its own transaction, the ids of the observations whose events are due (one row per
-- ingest), and the typed.events job appends those events (their alert rules evaluated as for any
-- event), deleting the row in the same transaction. A row whose job was lost is enqueued again by
-- the typed sweep. The events are built from the observations as stored when the job runs, so an
-- observation erased in between (a data subject's hard delete) gets none.
CREATE TABLE typed_event_outbox (
  project_id text NOT NULL REFERENCES projects (id) ON DELETE CASCADE,
  id text NOT NULL,
  observation_ids text[] NOT NULL,
  created_at timestamptz NOT NULL DEFAULT now(),
  PRIMARY KEY (project_id, id)
);
-- A batch's ids are some 300 kB: stored out of line uncompressed, which costs the ingest less than
-- compressing them.
ALTER TABLE typed_event_outbox ALTER COLUMN observation_ids SET STORAGE EXTERNAL;
CREATE INDEX typed_event_outbox_created ON typed_event_outbox (created_at);
