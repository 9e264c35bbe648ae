-- Many writers at once: no row that every write of a project updates, so concurrent writes never
-- queue behind one another's commits and can never wait on each other in a circle.
--
-- 1. The event clock. A per-project row locked until commit made occurredAt strictly increasing in
--    commit order, but serialised every appending transaction of a project and, taken after other
--    locks, deadlocked with them. Instead: one sequence of microseconds since the epoch hands out
--    occurredAt values (unique over all projects, never behind the wall clock) inside a critical
--    section of a few microseconds that no transaction holds past the call; and readers page only
--    below a watermark under which every event has committed (event_horizon below). Together they
--    keep WIRE.md decision 10: paging by the last occurredAt never repeats or skips an event.

-- Every occurredAt ever handed out, as microseconds since 1970-01-01 UTC: the last one taken.
CREATE SEQUENCE event_clock_us AS bigint;
SELECT setval('event_clock_us', greatest(
  1,
  (SELECT (extract(epoch FROM max(last_at)) * 1000000)::bigint FROM event_clocks),
  (SELECT (extract(epoch FROM max(occurred_at)) * 1000000)::bigint FROM events)
));
DROP TABLE event_clocks;

-- Takes `n` consecutive occurredAt values for events of `project` and answers the first. Before it
-- does, the transaction joins the project's event writers (a shared advisory lock, held to its end
-- and shared with every other writer, so nobody waits on it): event_horizon sees it there.
-- Lock keys: (1280590165, hashtext(project)) marks event writers; (1280590166, 0) guards the clock.
CREATE FUNCTION event_clock_take(project text, n integer) RETURNS timestamptz
LANGUAGE plpgsql VOLATILE AS $$
DECLARE
  first_us bigint;
BEGIN
  PERFORM pg_advisory_xact_lock_shared(1280590165, hashtext(project));
  -- A session-level lock released before this returns (and on any error): the values taken are
  -- never those of another caller, and no transaction holds the clock while it goes on.
  PERFORM pg_advisory_lock(1280590166, 0);
  BEGIN
    first_us := greatest(nextval('event_clock_us'), (extract(epoch FROM clock_timestamp()) * 1000000)::bigint);
    PERFORM setval('event_clock_us', first_us + n - 1);
  EXCEPTION WHEN OTHERS THEN
    PERFORM pg_advisory_unlock(1280590166, 0);
    RAISE;
  END;
  PERFORM pg_advisory_unlock(1280590166, 0);
  RETURN timestamptz 'epoch' + first_us * interval '1 microsecond';
END $$;

-- The instant below which the project's event log is complete: every event with an earlier
-- occurredAt has committed (or never will). A writer still open took its values after its
-- transaction began, so none of its events lies before that start; a writer yet to come takes
-- values above the last one handed out. Call it in a statement of its own and read the page in a
-- later one, whose snapshot then holds every writer that was gone from the lock table here (a
-- transaction's locks are released only after its commit is visible). pg_stat_activity shows
-- xact_start for the database user's own sessions: an unknown start counts as the earliest.
CREATE FUNCTION event_horizon(project text) RETURNS timestamptz
LANGUAGE plpgsql VOLATILE AS $$
DECLARE
  handed_out bigint;
  oldest_writer timestamptz;
BEGIN
  -- First the clock, then the writers: one that takes values after this line takes larger ones.
  SELECT last_value INTO handed_out FROM event_clock_us;
  SELECT min(coalesce(a.xact_start, timestamptz '-infinity')) INTO oldest_writer
    FROM pg_locks l
    LEFT JOIN pg_stat_activity a ON a.pid = l.pid
   WHERE l.locktype = 'advisory' AND l.classid = 1280590165 AND l.objid = hashtext(project)::oid AND l.objsubid = 2
     AND l.database = (SELECT oid FROM pg_database WHERE datname = current_database())
     AND l.pid <> pg_backend_pid();
  RETURN least(timestamptz 'epoch' + (handed_out + 1) * interval '1 microsecond', oldest_writer);
END $$;

-- 2. The mining queue. Upserting one row per subject made every write of a subject wait for the
--    commit of the previous one, and a write naming several subjects could wait in a circle with
--    another. Now a write only appends (no unique key, so an insert never waits on another
--    transaction); the mining job folds a subject's rows into one and claims them (src/behavior/patterns/store.ts).
ALTER TABLE behavior_mining_queue DROP CONSTRAINT behavior_mining_queue_pkey;
DROP INDEX behavior_mining_queue_last;
CREATE INDEX behavior_mining_queue_subject ON behavior_mining_queue (project_id, subject_kind, subject_external_id);

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
     WHERE subject_kind IS NOT NULL AND event_type NOT IN ('typed.observation', 'prediction.imminent', 'segment.changed', 'pattern.emerged');
  ELSE
    INSERT INTO behavior_mining_queue (project_id, subject_kind, subject_external_id, first_at, last_at)
    SELECT DISTINCT project_id, subject_kind, subject_external_id, now(), now() FROM added
     WHERE subject_kind IS NOT NULL AND subject_external_id IS NOT NULL AND status = 'accepted' AND observed_at IS NOT NULL;
  END IF;
  RETURN NULL;
END $$;

-- 3. The monthly meters. One row per project, meter and month, updated by every metered call,
--    made those calls commit one after another. A meter is now the sum of up to 16 shard rows; a
--    call adds to one shard picked at random (src/tenancy/store.ts says how quotas stay exact).
ALTER TABLE meters ADD COLUMN shard smallint NOT NULL DEFAULT 0;
ALTER TABLE meters DROP CONSTRAINT meters_pkey;
ALTER TABLE meters ADD PRIMARY KEY (project_id, meter, period_start, shard);

-- 4. Typed accumulators. A batch holding a point older than a subject's last one (late data)
--    rebuilt the EWMA from the subject's whole series while it held the accumulator's row, so every
--    ingest of the subject waited behind a read that grew with the series. Now such a batch folds
--    the moments and last at once and marks the row; the EWMA is rebuilt by the typed.rebuild-series
--    job, or by a read that finds it marked.
ALTER TABLE typed_accumulators ADD COLUMN series_stale boolean NOT NULL DEFAULT false;
CREATE INDEX typed_accumulators_stale ON typed_accumulators (project_id) WHERE series_stale;
