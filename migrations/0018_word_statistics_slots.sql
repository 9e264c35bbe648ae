-- The word statistics without a row that every save of a project updates.
--
-- memory_corpus held one row per project, which every save, delete and content edit updated, so
-- concurrent saves of a project queued on it until commit; memory_terms held one row per word,
-- which every save of a common word updated. Now each is split into 16 slots, and a memory's
-- counts go to the slot its id hashes to (hashtext(id) & 15): two saves wait on each other only
-- when their memories share a slot and a word (1 in 16 for the corpus row).
--
-- A memory is counted and uncounted in the same slot, since its id never changes, so every slot's
-- counts are exact and never negative, a slot's row goes when its count reaches zero, and a
-- project whose memories are all deleted leaves no row. A reader sums the slots: the project's
-- corpus is at most 16 rows, a word's df at most 16 adjacent rows of the key.
-- Rows are touched in (project, lexeme, slot) and (project, slot) order, so the writers of one
-- statement queue rather than deadlock; a transaction of several statements that loses a
-- deadlock anyway is retried whole (platform/db.ts).

ALTER TABLE memory_terms ADD COLUMN slot smallint NOT NULL DEFAULT 0;
ALTER TABLE memory_terms DROP CONSTRAINT memory_terms_pkey;
ALTER TABLE memory_terms ADD PRIMARY KEY (project_id, lexeme, slot);
ALTER TABLE memory_corpus ADD COLUMN slot smallint NOT NULL DEFAULT 0;
-- A memory's length for BM25 is its size in bytes (octet_length), which Postgres reads from a
-- stored long text's header without decompressing it; the characters (char_length) made reading
-- a conversation's lengths four times as slow. BM25 needs only the ratio to the mean, which bytes
-- give as characters do.
ALTER TABLE memory_corpus RENAME COLUMN characters TO bytes;
ALTER TABLE memory_corpus DROP CONSTRAINT memory_corpus_pkey;
ALTER TABLE memory_corpus ADD PRIMARY KEY (project_id, slot);

-- The slot of a memory's counts.
CREATE FUNCTION memory_stat_slot(id text) RETURNS smallint
LANGUAGE sql IMMUTABLE PARALLEL SAFE AS $$ SELECT (hashtext(id) & 15)::smallint $$;

-- Rows counted before this migration are all in slot 0: spread them as new writes would.
TRUNCATE memory_terms, memory_corpus;
INSERT INTO memory_terms (project_id, lexeme, slot, df)
SELECT m.project_id, l.lexeme, memory_stat_slot(m.id), count(*)::integer
  FROM memories m, unnest(tsvector_to_array(m.fts)) l(lexeme) GROUP BY 1, 2, 3;
INSERT INTO memory_corpus (project_id, slot, documents, bytes)
SELECT project_id, memory_stat_slot(id), count(*), sum(octet_length(content)) FROM memories GROUP BY 1, 2;

CREATE OR REPLACE FUNCTION memory_terms_after_insert() RETURNS trigger
LANGUAGE plpgsql AS $$
BEGIN
  INSERT INTO memory_terms AS s (project_id, lexeme, slot, df)
  SELECT n.project_id, l.lexeme, memory_stat_slot(n.id), count(*)::integer
    FROM new_memories n, unnest(tsvector_to_array(n.fts)) l(lexeme)
   GROUP BY 1, 2, 3
   ORDER BY 1, 2, 3
  ON CONFLICT (project_id, lexeme, slot) DO UPDATE SET df = s.df + EXCLUDED.df;

  INSERT INTO memory_corpus AS c (project_id, slot, documents, bytes)
  SELECT n.project_id, memory_stat_slot(n.id), count(*), sum(octet_length(n.content))
    FROM new_memories n
   GROUP BY 1, 2
   ORDER BY 1, 2
  ON CONFLICT (project_id, slot) DO UPDATE SET documents = c.documents + EXCLUDED.documents, bytes = c.bytes + EXCLUDED.bytes;
  RETURN NULL;
END $$;

CREATE OR REPLACE FUNCTION memory_terms_after_delete() RETURNS trigger
LANGUAGE plpgsql AS $$
BEGIN
  INSERT INTO memory_terms AS s (project_id, lexeme, slot, df)
  SELECT o.project_id, l.lexeme, memory_stat_slot(o.id), -count(*)::integer
    FROM old_memories o, unnest(tsvector_to_array(o.fts)) l(lexeme)
   GROUP BY 1, 2, 3
   ORDER BY 1, 2, 3
  ON CONFLICT (project_id, lexeme, slot) DO UPDATE SET df = s.df + EXCLUDED.df;
  DELETE FROM memory_terms s
   USING (SELECT DISTINCT o.project_id, l.lexeme, memory_stat_slot(o.id) AS slot FROM old_memories o, unnest(tsvector_to_array(o.fts)) l(lexeme)) g
   WHERE s.project_id = g.project_id AND s.lexeme = g.lexeme AND s.slot = g.slot AND s.df <= 0;

  INSERT INTO memory_corpus AS c (project_id, slot, documents, bytes)
  SELECT o.project_id, memory_stat_slot(o.id), -count(*), -sum(octet_length(o.content))
    FROM old_memories o
   GROUP BY 1, 2
   ORDER BY 1, 2
  ON CONFLICT (project_id, slot) DO UPDATE SET documents = c.documents + EXCLUDED.documents, bytes = c.bytes + EXCLUDED.bytes;
  DELETE FROM memory_corpus c
   USING (SELECT DISTINCT o.project_id, memory_stat_slot(o.id) AS slot FROM old_memories o) g
   WHERE c.project_id = g.project_id AND c.slot = g.slot AND c.documents <= 0;
  RETURN NULL;
END $$;

-- A content edit: the old text's lexemes out, the new one's in, in the memory's slot.
CREATE OR REPLACE FUNCTION memory_terms_after_update() RETURNS trigger
LANGUAGE plpgsql AS $$
BEGIN
  INSERT INTO memory_terms AS s (project_id, lexeme, slot, df)
  SELECT NEW.project_id, lexeme, memory_stat_slot(NEW.id), sum(n)::integer FROM (
    SELECT l.lexeme, -1 AS n FROM unnest(tsvector_to_array(OLD.fts)) l(lexeme)
    UNION ALL
    SELECT l.lexeme, 1 AS n FROM unnest(tsvector_to_array(NEW.fts)) l(lexeme)
  ) d
  GROUP BY lexeme HAVING sum(n) <> 0
  ORDER BY lexeme
  ON CONFLICT (project_id, lexeme, slot) DO UPDATE SET df = s.df + EXCLUDED.df;
  DELETE FROM memory_terms s
   WHERE s.project_id = NEW.project_id AND s.slot = memory_stat_slot(NEW.id) AND s.df <= 0 AND s.lexeme = ANY(tsvector_to_array(OLD.fts));
  UPDATE memory_corpus SET bytes = bytes - octet_length(OLD.content) + octet_length(NEW.content)
   WHERE project_id = NEW.project_id AND slot = memory_stat_slot(NEW.id);
  RETURN NULL;
END $$;
