-- The IVFFlat indexes built over the largest projects' embeddings, one partial index each
-- (memory/search/project-index.ts). At a million memories in one project the shared HNSW graph
-- misses whole topic clusters; an IVFFlat index over that project alone holds 0.98 of the exact
-- top 10 (README, "One project of a million memories"). The row says which index serves the
-- project and how many embedded memories it was built over, so that it is rebuilt once the
-- project has doubled.
CREATE TABLE project_vector_indexes (
  project_id text PRIMARY KEY REFERENCES projects (id) ON DELETE CASCADE,
  index_name text NOT NULL,
  dimensions integer NOT NULL,
  lists integer NOT NULL,
  rows_at_build bigint NOT NULL,
  built_at timestamptz NOT NULL DEFAULT now()
);
