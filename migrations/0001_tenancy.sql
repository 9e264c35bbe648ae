-- Projects, API keys and per-project meters. pgvector is enabled here so that every later
-- migration can use the vector type on both backends.
CREATE EXTENSION IF NOT EXISTS vector;

CREATE TABLE projects (
  id text PRIMARY KEY,
  name text NOT NULL,
  plan text NOT NULL DEFAULT 'free',
  -- Per-project exceptions to the plan: { "predictions": true, "events-ingested": 500000, ... }
  entitlement_overrides jsonb NOT NULL DEFAULT '{}'::jsonb,
  created_at timestamptz NOT NULL DEFAULT now()
);

CREATE TABLE api_keys (
  id text PRIMARY KEY,
  project_id text NOT NULL REFERENCES projects (id) ON DELETE CASCADE,
  -- The first characters of the key, shown in listings and used to name it for revocation.
  prefix text NOT NULL,
  -- SHA-256 of the whole key; the key itself is never stored.
  key_hash text NOT NULL UNIQUE,
  name text,
  permissions text[] NOT NULL,
  created_at timestamptz NOT NULL DEFAULT now(),
  revoked_at timestamptz,
  last_used_at timestamptz,
  CONSTRAINT api_keys_permissions_valid CHECK (
    cardinality(permissions) > 0 AND permissions <@ ARRAY['READ_MEMORY', 'WRITE_MEMORY']::text[]
  )
);
CREATE INDEX api_keys_project ON api_keys (project_id);
CREATE INDEX api_keys_prefix ON api_keys (prefix);

CREATE TABLE meters (
  project_id text NOT NULL REFERENCES projects (id) ON DELETE CASCADE,
  meter text NOT NULL,
  period_start date NOT NULL,
  used bigint NOT NULL DEFAULT 0,
  PRIMARY KEY (project_id, meter, period_start)
);
