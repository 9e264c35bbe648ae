-- Packs per project (the public clients' /memory-compliance-packs): a row turns a pack of the
-- deployment on or off for one project, with the pack's own settings; a project without a row for
-- a pack has it as the deployment does (LATTICE_PACKS). Owned by tenancy, which checks it before a
-- pack's routes run.
CREATE TABLE tenancy_packs (
  project_id text NOT NULL REFERENCES projects (id) ON DELETE CASCADE,
  pack_id text NOT NULL,
  id text NOT NULL,
  enabled boolean NOT NULL,
  config jsonb NOT NULL DEFAULT '{}',
  -- The API key that last set it.
  set_by_key text,
  created_at timestamptz NOT NULL DEFAULT now(),
  updated_at timestamptz NOT NULL DEFAULT now(),
  PRIMARY KEY (project_id, pack_id),
  UNIQUE (project_id, id)
);
