-- Closed-loop learning: decisions an agent took and on what evidence, the outcomes that followed,
-- and the outcome evidence each cited ref (pattern, prediction, observation, collective memory)
-- has gathered. Idempotency keys are unique per project (a constraint, not read-then-write).

CREATE TABLE learning_decisions (
  project_id text NOT NULL REFERENCES projects (id) ON DELETE CASCADE,
  id text NOT NULL,
  subject_kind text NOT NULL,
  subject_external_id text NOT NULL,
  actor text,
  decision_type text,
  policy text,
  action_type text,
  params jsonb NOT NULL DEFAULT '{}',
  -- [{memoryId, refType, weight}] as sent, weight normalised (0 or unset is 1).
  informed_by jsonb NOT NULL DEFAULT '[]',
  -- The kinds of the cited patterns when the decision was taken (the effectiveness report groups by them).
  pattern_kinds text[] NOT NULL DEFAULT '{}',
  status text NOT NULL,
  occurred_at timestamptz NOT NULL,
  metadata jsonb NOT NULL DEFAULT '{}',
  idempotency_key text,
  -- The decision memory (type decision) written in the same transaction.
  memory_id text NOT NULL,
  created_at timestamptz NOT NULL DEFAULT now(),
  PRIMARY KEY (project_id, id)
);
CREATE UNIQUE INDEX learning_decisions_idempotency ON learning_decisions (project_id, idempotency_key) WHERE idempotency_key IS NOT NULL;
CREATE INDEX learning_decisions_subject ON learning_decisions (project_id, subject_kind, subject_external_id, created_at DESC);

CREATE TABLE learning_outcomes (
  project_id text NOT NULL,
  id text NOT NULL,
  decision_id text NOT NULL,
  subject_kind text NOT NULL,
  subject_external_id text NOT NULL,
  outcome_type text,
  result text NOT NULL CHECK (result IN ('success', 'failure', 'partial')),
  reward double precision,
  realized_at timestamptz NOT NULL,
  attribution_window_secs double precision,
  -- False when realized outside the decision's attribution window: stored, but no ref was updated.
  attributed boolean NOT NULL,
  attribution_note text,
  -- The ref updates this outcome made, as answered (a replay answers the same).
  updates jsonb NOT NULL DEFAULT '[]',
  metadata jsonb NOT NULL DEFAULT '{}',
  idempotency_key text,
  memory_id text NOT NULL,
  created_at timestamptz NOT NULL DEFAULT now(),
  PRIMARY KEY (project_id, id),
  FOREIGN KEY (project_id, decision_id) REFERENCES learning_decisions (project_id, id) ON DELETE CASCADE
);
CREATE UNIQUE INDEX learning_outcomes_idempotency ON learning_outcomes (project_id, idempotency_key) WHERE idempotency_key IS NOT NULL;
CREATE INDEX learning_outcomes_recent ON learning_outcomes (project_id, created_at DESC, id DESC);
CREATE INDEX learning_outcomes_decision ON learning_outcomes (project_id, decision_id);
CREATE INDEX learning_outcomes_subject ON learning_outcomes (project_id, subject_kind, subject_external_id, created_at DESC);

-- Outcome evidence per cited ref: weighted hits and misses (a partial outcome is half of each).
-- One row per ref, incremented in place (INSERT ... ON CONFLICT DO UPDATE), so concurrent outcomes
-- on one ref serialise on its row and lose no update.
CREATE TABLE learning_ref_evidence (
  project_id text NOT NULL REFERENCES projects (id) ON DELETE CASCADE,
  ref_id text NOT NULL,
  ref_type text NOT NULL,
  hits double precision NOT NULL DEFAULT 0,
  misses double precision NOT NULL DEFAULT 0,
  updated_at timestamptz NOT NULL DEFAULT now(),
  PRIMARY KEY (project_id, ref_id)
);
