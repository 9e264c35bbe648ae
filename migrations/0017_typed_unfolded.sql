-- Typed ingest no longer waits on other ingests of the same subjects.
--
-- Each accepted numeric observation was folded into its subject's accumulator row in the ingest's
-- own transaction, so concurrent ingests of the same subjects queued on those rows (and held pool
-- connections while they queued): with 64 clients on one project, typed_fold's lock waits were
-- half of all waits in the database. Now an ingest appends its observations here, a row each,
-- which no other transaction touches, and the typed.fold job (every 2 s) folds them into the
-- accumulators in batches, taking the rows it folds in the same transaction. A read of an
-- accumulator folds what is still here for its key on top of the stored row, so every answer is
-- exact whether or not the job has run.
CREATE TABLE typed_unfolded (
  project_id text NOT NULL,
  subject_kind text NOT NULL,
  subject_external_id text NOT NULL,
  attribute_key text NOT NULL,
  observation_id text NOT NULL,
  value double precision NOT NULL,
  observed_at timestamptz NOT NULL,
  PRIMARY KEY (project_id, subject_kind, subject_external_id, attribute_key, observation_id)
);
