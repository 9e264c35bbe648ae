-- A project's precedence policy (GET, PUT /admin/memory/precedence): which of two live memories that
-- disagree on a slot a reader sees first (src/memory/search/precedence.ts). No row: the default.
CREATE TABLE memory_precedence (
  project_id text PRIMARY KEY REFERENCES projects (id) ON DELETE CASCADE,
  policy jsonb NOT NULL,
  -- The API key that last set it.
  updated_by text,
  updated_at timestamptz NOT NULL DEFAULT now()
);
