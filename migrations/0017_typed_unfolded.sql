-- Typed ingest no longer waits on other ingests of the same subjects.
--
-- Each accepted numeric observation was folded into its subject's accumulator row in the ingest's
-- own transaction, so concurrent ingests of the same subjects queued on those rows (and held pool
-- connections while they queued): with 64 clients on one project, those lock waits were half of
-- all waits in the database. Now an ingest appends its points here, in rows no other transaction
-- touches, and the typed.fold job (every 2 s) folds them into the
-- accumulators in batches, taking the rows it folds in the same transaction. A read of an
-- accumulator folds what is still here for its key on top of the stored row, so every answer is
-- exact whether or not the job has run.
-- One row per accumulator key and ingest: its points as three parallel arrays, so a batch of
-- 10,000 observations over 1,000 subjects appends 1,000 rows, not 10,000.
CREATE TABLE typed_unfolded (
  project_id text NOT NULL REFERENCES projects (id) ON DELETE CASCADE,
  subject_kind text NOT NULL,
  subject_external_id text NOT NULL,
  attribute_key text NOT NULL,
  batch_id text NOT NULL,
  observation_ids text[] NOT NULL,
  observed_ats timestamptz[] NOT NULL,
  vals double precision[] NOT NULL,
  PRIMARY KEY (project_id, subject_kind, subject_external_id, attribute_key, batch_id)
);
