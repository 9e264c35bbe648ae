-- Term statistics for BM25 lexical scoring: per project, how many memories hold each lexeme (df),
-- and the corpus size (memories, and the sum of their lengths) for IDF and length normalisation.
-- A memory's length is its number of distinct lexemes (length(fts)): O(1) to read, and for short
-- memories nearly their token count. Postgres's ts_rank has no IDF and neither Postgres here nor
-- PGlite has a BM25 extension, so Lattice keeps these itself. Triggers keep them exact in the writing transaction, whatever the write path: inserts
-- (bulk ones aggregated per statement), content edits, deletes (one, many, or a project's cascade).
-- Every stored memory counts, whatever its status: superseding a memory changes no statistic.
-- No foreign keys: the triggers are the only writers, and these rows sit on the ingest hot path.

CREATE TABLE memory_terms (
  project_id text NOT NULL,
  lexeme text NOT NULL,
  df integer NOT NULL,
  PRIMARY KEY (project_id, lexeme)
) WITH (fillfactor = 80);

CREATE TABLE memory_corpus (
  project_id text PRIMARY KEY,
  documents bigint NOT NULL,
  characters bigint NOT NULL
);

-- Rows are always touched in (project, lexeme) order, so concurrent writers of one project queue
-- up on the lexemes they share instead of deadlocking.
CREATE FUNCTION memory_terms_after_insert() RETURNS trigger
LANGUAGE plpgsql AS $$
BEGIN
  INSERT INTO memory_terms AS s (project_id, lexeme, df)
  SELECT n.project_id, l.lexeme, count(*)::integer
    FROM new_memories n, unnest(tsvector_to_array(n.fts)) l(lexeme)
   GROUP BY n.project_id, l.lexeme
   ORDER BY n.project_id, l.lexeme
  ON CONFLICT (project_id, lexeme) DO UPDATE SET df = s.df + EXCLUDED.df;

  INSERT INTO memory_corpus AS c (project_id, documents, characters)
  SELECT n.project_id, count(*), sum(char_length(n.content))
    FROM new_memories n
   GROUP BY n.project_id
   ORDER BY n.project_id
  ON CONFLICT (project_id) DO UPDATE SET documents = c.documents + EXCLUDED.documents, characters = c.characters + EXCLUDED.characters;
  RETURN NULL;
END $$;

CREATE FUNCTION memory_terms_after_delete() RETURNS trigger
LANGUAGE plpgsql AS $$
BEGIN
  INSERT INTO memory_terms AS s (project_id, lexeme, df)
  SELECT o.project_id, l.lexeme, -count(*)::integer
    FROM old_memories o, unnest(tsvector_to_array(o.fts)) l(lexeme)
   GROUP BY o.project_id, l.lexeme
   ORDER BY o.project_id, l.lexeme
  ON CONFLICT (project_id, lexeme) DO UPDATE SET df = s.df + EXCLUDED.df;
  DELETE FROM memory_terms s
   USING (SELECT DISTINCT o.project_id, l.lexeme FROM old_memories o, unnest(tsvector_to_array(o.fts)) l(lexeme)) g
   WHERE s.project_id = g.project_id AND s.lexeme = g.lexeme AND s.df <= 0;

  INSERT INTO memory_corpus AS c (project_id, documents, characters)
  SELECT o.project_id, -count(*), -sum(char_length(o.content))
    FROM old_memories o
   GROUP BY o.project_id
   ORDER BY o.project_id
  ON CONFLICT (project_id) DO UPDATE SET documents = c.documents + EXCLUDED.documents, characters = c.characters + EXCLUDED.characters;
  DELETE FROM memory_corpus c
   WHERE c.documents <= 0 AND c.project_id IN (SELECT DISTINCT o.project_id FROM old_memories o);
  RETURN NULL;
END $$;

-- A content edit: the old text's lexemes out, the new one's in (one row at a time: edits are single).
CREATE FUNCTION memory_terms_after_update() RETURNS trigger
LANGUAGE plpgsql AS $$
BEGIN
  INSERT INTO memory_terms AS s (project_id, lexeme, df)
  SELECT NEW.project_id, lexeme, sum(n)::integer FROM (
    SELECT l.lexeme, -1 AS n FROM unnest(tsvector_to_array(OLD.fts)) l(lexeme)
    UNION ALL
    SELECT l.lexeme, 1 AS n FROM unnest(tsvector_to_array(NEW.fts)) l(lexeme)
  ) d
  GROUP BY lexeme HAVING sum(n) <> 0
  ORDER BY lexeme
  ON CONFLICT (project_id, lexeme) DO UPDATE SET df = s.df + EXCLUDED.df;
  DELETE FROM memory_terms s
   WHERE s.project_id = NEW.project_id AND s.df <= 0 AND s.lexeme = ANY(tsvector_to_array(OLD.fts));
  UPDATE memory_corpus SET characters = characters - char_length(OLD.content) + char_length(NEW.content) WHERE project_id = NEW.project_id;
  RETURN NULL;
END $$;

CREATE TRIGGER memory_terms_insert AFTER INSERT ON memories
  REFERENCING NEW TABLE AS new_memories FOR EACH STATEMENT EXECUTE FUNCTION memory_terms_after_insert();
CREATE TRIGGER memory_terms_delete AFTER DELETE ON memories
  REFERENCING OLD TABLE AS old_memories FOR EACH STATEMENT EXECUTE FUNCTION memory_terms_after_delete();
CREATE TRIGGER memory_terms_update AFTER UPDATE OF content ON memories
  FOR EACH ROW WHEN (OLD.content IS DISTINCT FROM NEW.content) EXECUTE FUNCTION memory_terms_after_update();

-- Memories stored before this migration.
INSERT INTO memory_terms (project_id, lexeme, df)
SELECT m.project_id, l.lexeme, count(*)::integer FROM memories m, unnest(tsvector_to_array(m.fts)) l(lexeme) GROUP BY 1, 2;
INSERT INTO memory_corpus (project_id, documents, characters)
SELECT project_id, count(*), sum(char_length(content)) FROM memories GROUP BY project_id;
