-- The schema of the Python runtime's SqliteDatabase (AbstractRuntime
-- 0.4.28), exact up to whitespace. Every statement is idempotent, so a
-- database created by Python passes through unchanged.

CREATE TABLE IF NOT EXISTS runs (
  run_id TEXT PRIMARY KEY,
  workflow_id TEXT NOT NULL,
  status TEXT NOT NULL,
  wait_reason TEXT,
  wait_until TEXT,
  parent_run_id TEXT,
  actor_id TEXT,
  session_id TEXT,
  created_at TEXT,
  updated_at TEXT,
  run_json TEXT NOT NULL
);
CREATE INDEX IF NOT EXISTS idx_runs_status_updated ON runs(status, updated_at DESC);
CREATE INDEX IF NOT EXISTS idx_runs_workflow_updated ON runs(workflow_id, updated_at DESC);
CREATE INDEX IF NOT EXISTS idx_runs_parent ON runs(parent_run_id);
CREATE INDEX IF NOT EXISTS idx_runs_waiting ON runs(status, wait_reason, wait_until);

CREATE TABLE IF NOT EXISTS wait_index (
  run_id TEXT PRIMARY KEY,
  next_due_iso TEXT NOT NULL,
  updated_at_iso TEXT NOT NULL,
  status TEXT
);
CREATE INDEX IF NOT EXISTS idx_wait_index_next_due ON wait_index(next_due_iso);

CREATE TABLE IF NOT EXISTS ledger (
  run_id TEXT NOT NULL,
  seq INTEGER NOT NULL,
  record_json TEXT NOT NULL,
  PRIMARY KEY (run_id, seq)
);
CREATE INDEX IF NOT EXISTS idx_ledger_run_seq ON ledger(run_id, seq);

CREATE TABLE IF NOT EXISTS ledger_heads (
  run_id TEXT PRIMARY KEY,
  last_seq INTEGER NOT NULL
);

CREATE TABLE IF NOT EXISTS commands (
  seq INTEGER PRIMARY KEY AUTOINCREMENT,
  command_id TEXT NOT NULL UNIQUE,
  run_id TEXT NOT NULL,
  type TEXT NOT NULL,
  payload_json TEXT NOT NULL,
  ts TEXT NOT NULL,
  client_id TEXT
);
CREATE INDEX IF NOT EXISTS idx_commands_run_id ON commands(run_id);

CREATE TABLE IF NOT EXISTS command_cursors (
  consumer_id TEXT PRIMARY KEY,
  cursor INTEGER NOT NULL,
  updated_at TEXT NOT NULL
);
