-- The tables of the SQLite store, in PostgreSQL types: times are
-- timestamptz (compared as instants), run_json and record_json are text in
-- Python's json.dumps layout (byte-identical to the other stores), and
-- identifiers use the "C" collation so ORDER BY run_id is byte order, as
-- in SQLite.

CREATE TABLE runs (
  run_id text COLLATE "C" PRIMARY KEY,
  workflow_id text COLLATE "C" NOT NULL,
  status text COLLATE "C" NOT NULL,
  wait_reason text COLLATE "C",
  wait_until timestamptz,
  wait_key text COLLATE "C",
  due_at timestamptz,
  parent_run_id text COLLATE "C",
  actor_id text COLLATE "C",
  session_id text COLLATE "C",
  created_at timestamptz,
  updated_at timestamptz,
  lifecycle_json text,
  run_json text NOT NULL,
  version bigint NOT NULL DEFAULT 0
);

CREATE INDEX idx_runs_updated ON runs (updated_at DESC NULLS LAST, run_id DESC);
CREATE INDEX idx_runs_status_updated ON runs (status, updated_at DESC NULLS LAST, run_id DESC);
CREATE INDEX idx_runs_workflow_updated ON runs (workflow_id, updated_at DESC NULLS LAST, run_id DESC);
CREATE INDEX idx_runs_session_updated ON runs (session_id, updated_at DESC NULLS LAST)
  WHERE session_id IS NOT NULL;
CREATE INDEX idx_runs_parent_child ON runs (parent_run_id, created_at NULLS FIRST, run_id)
  WHERE parent_run_id IS NOT NULL;
CREATE INDEX idx_runs_wait_key ON runs (wait_key) WHERE wait_key IS NOT NULL;
CREATE INDEX idx_runs_due ON runs (due_at, run_id) WHERE due_at IS NOT NULL;

CREATE TABLE ledger (
  run_id text COLLATE "C" NOT NULL,
  seq bigint NOT NULL,
  record_json text NOT NULL,
  completed_key text COLLATE "C",
  PRIMARY KEY (run_id, seq)
);

CREATE INDEX idx_ledger_completed ON ledger (run_id, completed_key, seq)
  WHERE completed_key IS NOT NULL;

CREATE TABLE commands (
  seq bigint PRIMARY KEY,
  command_id text COLLATE "C" NOT NULL UNIQUE,
  run_id text COLLATE "C" NOT NULL,
  type text COLLATE "C" NOT NULL,
  payload_json text NOT NULL,
  ts timestamptz,
  client_id text COLLATE "C"
);

CREATE INDEX idx_commands_run_id ON commands (run_id);

-- The last command seq handed out, like SQLite's AUTOINCREMENT counter: a
-- seq is never reused, even after its command is deleted. Appenders lock
-- the one row, so seqs are gapless and commit in order.
CREATE TABLE command_seq (
  id boolean PRIMARY KEY DEFAULT true CHECK (id),
  last_seq bigint NOT NULL
);

INSERT INTO command_seq (id, last_seq) VALUES (true, 0);

CREATE TABLE command_cursors (
  consumer_id text COLLATE "C" PRIMARY KEY,
  cursor bigint NOT NULL,
  updated_at timestamptz NOT NULL
);

CREATE TABLE run_claims (
  run_id text COLLATE "C" PRIMARY KEY,
  owner text COLLATE "C" NOT NULL,
  expires_at timestamptz NOT NULL
);
