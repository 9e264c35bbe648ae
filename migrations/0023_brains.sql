-- Brains (POST, GET /brains; GET, PATCH, DELETE /brains/{id}; src/memory/brains/): named,
-- versioned collections of a project's memories, which the project may publish. A memory belongs
-- to a brain by metadata.brainId.
CREATE TABLE brains (
  project_id text NOT NULL REFERENCES projects (id) ON DELETE CASCADE,
  id text NOT NULL,
  -- The slug a client addresses the brain by, unique within the project.
  external_id text NOT NULL,
  name text NOT NULL,
  domain text,
  brain_interface text NOT NULL,
  version text NOT NULL,
  visibility text NOT NULL CHECK (visibility IN ('PUBLIC', 'UNLISTED', 'PRIVATE')),
  status text NOT NULL CHECK (status IN ('DRAFT', 'PUBLISHED', 'ARCHIVED')),
  rights_attested boolean NOT NULL,
  card jsonb,
  created_at timestamptz NOT NULL DEFAULT now(),
  updated_at timestamptz NOT NULL DEFAULT now(),
  PRIMARY KEY (project_id, id),
  UNIQUE (project_id, external_id),
  -- Only a brain whose facts the project has the rights to share is published.
  CHECK (status <> 'PUBLISHED' OR rights_attested)
);
-- Another project reads a published brain by its id alone (src/memory/brains/brains.ts, readable).
CREATE INDEX brains_by_id ON brains (id);
