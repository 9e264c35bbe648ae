-- The knowledge graph: entities and edges, bi-temporal. Valid time is valid_from / valid_to (when
-- the fact held; reads at an instant see the rows valid then); transaction time is created_at and
-- retired_at (when Lattice learned it and when it stopped believing it). Nothing is deleted:
-- retiring sets valid_to and retired_at, a merge sets superseded_by_id.
--
-- Entity resolution is a constraint, not read-then-write: every live entity's canonical name and
-- aliases, normalised (names.ts), are rows of graph_entity_names, unique per project, so two
-- extractions of the same name at once create one entity. Retiring or merging an entity removes its
-- names from that table (the entity row keeps them).

CREATE TABLE graph_entities (
  project_id text NOT NULL REFERENCES projects (id) ON DELETE CASCADE,
  id text NOT NULL,
  type text NOT NULL,
  scope text NOT NULL DEFAULT 'project',
  canonical_name text NOT NULL,
  aliases text[] NOT NULL DEFAULT '{}',
  description text,
  metadata jsonb,
  -- The subject this entity stands for (the person a memory is about), when it stands for one.
  subject_kind text,
  subject_external_id text,
  agent_id text,
  user_id text,
  valid_from timestamptz NOT NULL DEFAULT now(),
  valid_to timestamptz,
  superseded_by_id text,
  created_at timestamptz NOT NULL DEFAULT now(),
  updated_at timestamptz NOT NULL DEFAULT now(),
  retired_at timestamptz,
  PRIMARY KEY (project_id, id),
  CHECK ((subject_kind IS NULL) = (subject_external_id IS NULL))
);
CREATE INDEX graph_entities_type ON graph_entities (project_id, type, canonical_name);
CREATE UNIQUE INDEX graph_entities_subject ON graph_entities (project_id, subject_kind, subject_external_id)
  WHERE subject_kind IS NOT NULL AND valid_to IS NULL AND superseded_by_id IS NULL;

CREATE TABLE graph_entity_names (
  project_id text NOT NULL,
  name_key text NOT NULL,
  entity_id text NOT NULL,
  PRIMARY KEY (project_id, name_key),
  FOREIGN KEY (project_id, entity_id) REFERENCES graph_entities (project_id, id) ON DELETE CASCADE
);
CREATE INDEX graph_entity_names_entity ON graph_entity_names (project_id, entity_id);

CREATE TABLE graph_edges (
  project_id text NOT NULL,
  id text NOT NULL,
  subject_id text NOT NULL,
  predicate text NOT NULL,
  object_id text,
  object_literal text,
  weight double precision NOT NULL DEFAULT 1 CHECK (weight >= 0 AND weight <= 1),
  source_memory_id text,
  valid_from timestamptz NOT NULL DEFAULT now(),
  valid_to timestamptz,
  created_at timestamptz NOT NULL DEFAULT now(),
  retired_at timestamptz,
  PRIMARY KEY (project_id, id),
  CHECK ((object_id IS NULL) <> (object_literal IS NULL)),
  CHECK (valid_to IS NULL OR valid_to >= valid_from),
  FOREIGN KEY (project_id, subject_id) REFERENCES graph_entities (project_id, id) ON DELETE CASCADE,
  FOREIGN KEY (project_id, object_id) REFERENCES graph_entities (project_id, id) ON DELETE CASCADE
);
-- One current edge per (subject, predicate, object): a repeated fact strengthens it instead.
CREATE UNIQUE INDEX graph_edges_current ON graph_edges (project_id, subject_id, predicate, coalesce(object_id, ''), coalesce(object_literal, ''))
  WHERE valid_to IS NULL;
CREATE INDEX graph_edges_out ON graph_edges (project_id, subject_id, valid_from);
CREATE INDEX graph_edges_in ON graph_edges (project_id, object_id, valid_from) WHERE object_id IS NOT NULL;
CREATE INDEX graph_edges_predicate ON graph_edges (project_id, predicate, valid_from);
CREATE INDEX graph_edges_memory ON graph_edges (project_id, source_memory_id) WHERE source_memory_id IS NOT NULL;

-- Graph rows point at memories by (project_id, id), so that every key between project-owned
-- tables carries the project (a schema ready to shard by project).
CREATE UNIQUE INDEX memories_project_id_id ON memories (project_id, id);

-- Which entities each memory mentions (prefetch and associative recall read this both ways).
CREATE TABLE graph_mentions (
  project_id text NOT NULL,
  memory_id text NOT NULL,
  entity_id text NOT NULL,
  created_at timestamptz NOT NULL DEFAULT now(),
  PRIMARY KEY (project_id, memory_id, entity_id),
  FOREIGN KEY (project_id, memory_id) REFERENCES memories (project_id, id) ON DELETE CASCADE,
  FOREIGN KEY (project_id, entity_id) REFERENCES graph_entities (project_id, id) ON DELETE CASCADE
);
CREATE INDEX graph_mentions_entity ON graph_mentions (project_id, entity_id, memory_id);

-- The memories extraction has processed, by the content hash it read (md5 of the content, as the
-- MCP tools hand it out): a memory whose content changed is pending again.
CREATE TABLE graph_extractions (
  project_id text NOT NULL,
  memory_id text NOT NULL,
  content_hash text NOT NULL,
  method text NOT NULL CHECK (method IN ('heuristic', 'caller')),
  entity_count integer NOT NULL DEFAULT 0,
  edge_count integer NOT NULL DEFAULT 0,
  extracted_at timestamptz NOT NULL DEFAULT now(),
  PRIMARY KEY (project_id, memory_id),
  FOREIGN KEY (project_id, memory_id) REFERENCES memories (project_id, id) ON DELETE CASCADE
);

-- Per-project graph settings: extraction is opt-in.
CREATE TABLE graph_settings (
  project_id text PRIMARY KEY REFERENCES projects (id) ON DELETE CASCADE,
  extraction_enabled boolean NOT NULL DEFAULT false,
  updated_at timestamptz NOT NULL DEFAULT now()
);
