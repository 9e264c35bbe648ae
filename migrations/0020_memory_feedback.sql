-- Feedback on a memory (the public clients' POST /memory/feedback): one row per rating, kept with the
-- memory it rates (gone with it). A negative rating also counts in memories.negative_rating_count;
-- the third flags the memory for review. A rating that names a response is taken once per memory and
-- response, so a client's retry after a dropped connection counts once.
CREATE TABLE memory_feedback (
  project_id text NOT NULL REFERENCES projects (id) ON DELETE CASCADE,
  id text NOT NULL,
  memory_id text NOT NULL,
  rating text NOT NULL CONSTRAINT memory_feedback_rating_valid CHECK (rating IN ('positive', 'negative')),
  response_id text,
  comment text CONSTRAINT memory_feedback_comment_length CHECK (char_length(comment) <= 2000),
  -- The API key that gave it.
  created_by text,
  created_at timestamptz NOT NULL DEFAULT now(),
  PRIMARY KEY (project_id, id),
  FOREIGN KEY (project_id, memory_id) REFERENCES memories (project_id, id) ON DELETE CASCADE
);
CREATE INDEX memory_feedback_memory ON memory_feedback (project_id, memory_id, created_at DESC);
CREATE UNIQUE INDEX memory_feedback_response ON memory_feedback (project_id, memory_id, response_id) WHERE response_id IS NOT NULL;
