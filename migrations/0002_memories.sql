-- The memory table in its first, minimal form: enough for the embedding path. The memory core
-- extends it. The embedding column gets its dimension (and its HNSW index) at boot, from
-- EMBEDDING_DIMENSIONS, the first time a deployment starts (see src/embeddings/dimension.ts).
CREATE TABLE memories (
  id text PRIMARY KEY,
  project_id text NOT NULL REFERENCES projects (id) ON DELETE CASCADE,
  content text NOT NULL,
  kind text NOT NULL DEFAULT 'fact',
  scope text NOT NULL DEFAULT 'project',
  status text NOT NULL DEFAULT 'confirmed',
  importance real NOT NULL DEFAULT 5,
  confidence real NOT NULL DEFAULT 1,
  metadata jsonb,
  embedding vector,
  embedding_model text,
  created_at timestamptz NOT NULL DEFAULT now(),
  updated_at timestamptz NOT NULL DEFAULT now(),
  valid_from timestamptz NOT NULL DEFAULT now(),
  valid_to timestamptz,
  recorded_at timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX memories_project_created ON memories (project_id, created_at DESC);
-- The backfill's work list: rows still waiting for a vector.
CREATE INDEX memories_unembedded ON memories (project_id, id) WHERE embedding IS NULL;
