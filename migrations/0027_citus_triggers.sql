-- Triggers that run the same on plain Postgres, PGlite and Citus (issue 37). On Citus a trigger on
-- a distributed table fires on each shard, where:
-- - a statement that names a transition table and a distributed table cannot be planned (the
--   shard's executor has no such tuplestore): each function first copies the transition rows it
--   needs into arrays, by a statement over the transition table alone, and then writes from the
--   arrays, one project at a time (a constant project_id routes each write to one shard group);
-- - TG_TABLE_NAME is the shard's name (memories_102008): the mining queue's trigger gets the
--   source as its argument instead;
-- - a stable function (now()) beside a column in an UPDATE is refused: the time is read once into
--   a variable, which the statement gets as a parameter.
-- Each project's rows are colocated, so every write stays on the shard group of the row that fired.

CREATE OR REPLACE FUNCTION memory_terms_after_insert() RETURNS trigger
LANGUAGE plpgsql AS $$
DECLARE
  p text;
  lexemes text[];
  slots smallint[];
  doc_slots smallint[];
  doc_bytes bigint[];
BEGIN
  FOR p IN SELECT DISTINCT project_id FROM new_memories LOOP
    SELECT array_agg(l.lexeme), array_agg(memory_stat_slot(n.id)) INTO lexemes, slots
      FROM new_memories n, unnest(tsvector_to_array(n.fts)) l(lexeme) WHERE n.project_id = p;
    SELECT array_agg(memory_stat_slot(n.id)), array_agg(octet_length(n.content)::bigint) INTO doc_slots, doc_bytes
      FROM new_memories n WHERE n.project_id = p;
    INSERT INTO memory_terms AS s (project_id, lexeme, slot, df)
    SELECT p, x.lexeme, x.slot, count(*)::integer FROM unnest(lexemes, slots) AS x(lexeme, slot)
     GROUP BY 2, 3
     ORDER BY 2, 3
    ON CONFLICT (project_id, lexeme, slot) DO UPDATE SET df = s.df + EXCLUDED.df;
    INSERT INTO memory_corpus AS c (project_id, slot, documents, bytes)
    SELECT p, x.slot, count(*), sum(x.bytes) FROM unnest(doc_slots, doc_bytes) AS x(slot, bytes)
     GROUP BY 2
     ORDER BY 2
    ON CONFLICT (project_id, slot) DO UPDATE SET documents = c.documents + EXCLUDED.documents, bytes = c.bytes + EXCLUDED.bytes;
  END LOOP;
  RETURN NULL;
END $$;

CREATE OR REPLACE FUNCTION memory_terms_after_delete() RETURNS trigger
LANGUAGE plpgsql AS $$
DECLARE
  p text;
  lexemes text[];
  slots smallint[];
  doc_slots smallint[];
  doc_bytes bigint[];
BEGIN
  FOR p IN SELECT DISTINCT project_id FROM old_memories LOOP
    SELECT array_agg(l.lexeme), array_agg(memory_stat_slot(o.id)) INTO lexemes, slots
      FROM old_memories o, unnest(tsvector_to_array(o.fts)) l(lexeme) WHERE o.project_id = p;
    SELECT array_agg(memory_stat_slot(o.id)), array_agg(octet_length(o.content)::bigint) INTO doc_slots, doc_bytes
      FROM old_memories o WHERE o.project_id = p;
    INSERT INTO memory_terms AS s (project_id, lexeme, slot, df)
    SELECT p, x.lexeme, x.slot, -count(*)::integer FROM unnest(lexemes, slots) AS x(lexeme, slot)
     GROUP BY 2, 3
     ORDER BY 2, 3
    ON CONFLICT (project_id, lexeme, slot) DO UPDATE SET df = s.df + EXCLUDED.df;
    DELETE FROM memory_terms s
     WHERE s.project_id = p AND s.df <= 0
       AND (s.lexeme, s.slot) IN (SELECT DISTINCT x.lexeme, x.slot FROM unnest(lexemes, slots) AS x(lexeme, slot));
    INSERT INTO memory_corpus AS c (project_id, slot, documents, bytes)
    SELECT p, x.slot, -count(*), -sum(x.bytes) FROM unnest(doc_slots, doc_bytes) AS x(slot, bytes)
     GROUP BY 2
     ORDER BY 2
    ON CONFLICT (project_id, slot) DO UPDATE SET documents = c.documents + EXCLUDED.documents, bytes = c.bytes + EXCLUDED.bytes;
    DELETE FROM memory_corpus c WHERE c.project_id = p AND c.documents <= 0 AND c.slot = ANY (doc_slots);
  END LOOP;
  RETURN NULL;
END $$;

-- A deleted source deactivates the patterns mined from it (migration 0007).
CREATE OR REPLACE FUNCTION behavior_patterns_after_source_delete() RETURNS trigger
LANGUAGE plpgsql AS $$
DECLARE
  p text;
  kinds text[];
  externals text[];
  ids text[];
  at timestamptz := now();
BEGIN
  FOR p IN SELECT DISTINCT project_id FROM gone WHERE subject_kind IS NOT NULL AND pattern_key IS NULL LOOP
    SELECT array_agg(g.subject_kind), array_agg(g.subject_external_id), array_agg(g.id) INTO kinds, externals, ids
      FROM gone g WHERE g.project_id = p AND g.subject_kind IS NOT NULL AND g.pattern_key IS NULL;
    UPDATE memories m
       SET metadata = coalesce(m.metadata, '{}'::jsonb) || '{"active": false}'::jsonb,
           valid_to = greatest(m.valid_from, at),
           updated_at = at
      FROM unnest(kinds, externals, ids) AS g(subject_kind, subject_external_id, id)
     WHERE m.project_id = p AND m.subject_kind = g.subject_kind AND m.subject_external_id = g.subject_external_id
       AND m.pattern_key IS NOT NULL AND g.id = ANY (m.source_memory_ids)
       AND m.metadata->>'active' = 'true';
  END LOOP;
  RETURN NULL;
END $$;

-- Subjects with new activity join the mining queue (migrations 0007, 0015, 0022); TG_ARGV[0] names
-- the source. The predicates are those of the activity indexes, repeated verbatim (ENGINE_EVENT_TYPES
-- in src/events/schemas.ts; test/behavior/monitor.test.ts checks they agree).
CREATE OR REPLACE FUNCTION behavior_enqueue_subjects() RETURNS trigger
LANGUAGE plpgsql AS $$
DECLARE
  p text;
  kinds text[];
  externals text[];
  at timestamptz := now();
BEGIN
  FOR p IN SELECT DISTINCT project_id FROM added LOOP
    IF TG_ARGV[0] = 'memories' THEN
      SELECT array_agg(a.subject_kind), array_agg(a.subject_external_id) INTO kinds, externals
        FROM (SELECT DISTINCT subject_kind, subject_external_id FROM added
               WHERE project_id = p
                 AND subject_kind IS NOT NULL AND (type = 'event' OR metadata ? 'eventType') AND type NOT IN ('behavior_pattern', 'decision', 'outcome', 'estimate', 'insight')) a;
    ELSIF TG_ARGV[0] = 'events' THEN
      SELECT array_agg(a.subject_kind), array_agg(a.subject_external_id) INTO kinds, externals
        FROM (SELECT DISTINCT subject_kind, subject_external_id FROM added
               WHERE project_id = p AND subject_kind IS NOT NULL
                 AND event_type NOT IN ('typed.observation', 'prediction.imminent', 'segment.changed', 'pattern.emerged', 'pattern.broken')) a;
    ELSE
      SELECT array_agg(a.subject_kind), array_agg(a.subject_external_id) INTO kinds, externals
        FROM (SELECT DISTINCT subject_kind, subject_external_id FROM added
               WHERE project_id = p AND subject_kind IS NOT NULL AND subject_external_id IS NOT NULL AND status = 'accepted' AND observed_at IS NOT NULL) a;
    END IF;
    IF kinds IS NOT NULL THEN
      INSERT INTO behavior_mining_queue (project_id, subject_kind, subject_external_id, first_at, last_at)
      SELECT p, s.kind, s.ext, at, at FROM unnest(kinds, externals) AS s(kind, ext);
    END IF;
  END LOOP;
  RETURN NULL;
END $$;

DROP TRIGGER behavior_enqueue_memories ON memories;
CREATE TRIGGER behavior_enqueue_memories AFTER INSERT ON memories
  REFERENCING NEW TABLE AS added FOR EACH STATEMENT EXECUTE FUNCTION behavior_enqueue_subjects('memories');
DROP TRIGGER behavior_enqueue_events ON events;
CREATE TRIGGER behavior_enqueue_events AFTER INSERT ON events
  REFERENCING NEW TABLE AS added FOR EACH STATEMENT EXECUTE FUNCTION behavior_enqueue_subjects('events');
DROP TRIGGER behavior_enqueue_observations ON typed_observations;
CREATE TRIGGER behavior_enqueue_observations AFTER INSERT ON typed_observations
  REFERENCING NEW TABLE AS added FOR EACH STATEMENT EXECUTE FUNCTION behavior_enqueue_subjects('typed_observations');
