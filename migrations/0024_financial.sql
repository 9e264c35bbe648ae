-- The financial pack's calls (POST /lattice/financial/predict with persist; src/financial/): each
-- directional call with what it was based on, scored once at its horizon by
-- POST /lattice/financial/reconcile against the first close on or after due_at.
CREATE TABLE financial_predictions (
  project_id text NOT NULL REFERENCES projects (id) ON DELETE CASCADE,
  id text NOT NULL,
  -- The subject the call was asked for: a ticker, or a portfolio over its holdings.
  subject_kind text NOT NULL,
  subject_external_id text NOT NULL,
  ticker text NOT NULL,
  strategy text NOT NULL,
  direction text NOT NULL CHECK (direction IN ('buy', 'sell', 'hold')),
  score double precision NOT NULL,
  structural_confidence double precision NOT NULL,
  reported_confidence double precision NOT NULL,
  expected_return double precision NOT NULL,
  hold_band double precision NOT NULL,
  horizon_days integer NOT NULL,
  basis_close double precision NOT NULL,
  basis_at timestamptz NOT NULL,
  due_at timestamptz NOT NULL,
  rationale jsonb NOT NULL,
  source_memory_ids text[] NOT NULL,
  made_at timestamptz NOT NULL,
  -- Set together when the call is scored.
  resolved_at timestamptz,
  realized_close double precision,
  realized_return double precision,
  hit boolean,
  PRIMARY KEY (project_id, id),
  CHECK ((resolved_at IS NULL) = (hit IS NULL))
);
-- Reconcile reads the unscored calls that are due; reliability and calibration read the scored ones.
CREATE INDEX financial_predictions_pending ON financial_predictions (project_id, due_at) WHERE resolved_at IS NULL;
CREATE INDEX financial_predictions_resolved ON financial_predictions (project_id, strategy) WHERE resolved_at IS NOT NULL;
CREATE INDEX financial_predictions_subject ON financial_predictions (project_id, subject_kind, subject_external_id);
