-- Only the projects that search through it are in the HNSW graph.
--
-- A project of up to SEARCH_EXACT_SCAN_MAX_ROWS embedded memories is searched by exact scan, and
-- most projects stay that small; yet every embedded row of every project was linked into the one
-- shared graph, at ef_construction 800 about 6 ms of database time per row on a quiet machine and
-- 31 ms under sixteen concurrent writers (bench/concurrency.ts): the largest cost a save had. The
-- index is now partial on `vector_indexed`, which a row gets once its project has passed the
-- threshold (memory/search/project-index.ts):
--   1. the project is admitted (a row here, not yet ready): from then on every embedding written
--      for it is marked as it is written (writeEmbeddings);
--   2. its rows are marked in batches, all of them, embedded or not, so a row whose embedding a
--      writer that began before step 1 is writing is marked after that writer commits;
--   3. it is ready: search walks the graph for it. Until then, exact scan, as before.
ALTER TABLE memories ADD COLUMN vector_indexed boolean NOT NULL DEFAULT false;

CREATE TABLE vector_indexed_projects (
  project_id text PRIMARY KEY REFERENCES projects (id) ON DELETE CASCADE,
  ready boolean NOT NULL DEFAULT false,
  admitted_at timestamptz NOT NULL DEFAULT now(),
  ready_at timestamptz
);

-- The graph over every row is replaced by the partial one at the next boot
-- (embeddings/dimension.ts builds it, over no rows yet); the projects past the threshold are
-- admitted and marked by the first run of the memory.project-indexes job.
DROP INDEX IF EXISTS memories_embedding_hnsw;
