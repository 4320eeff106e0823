-- Columns, indexes and tables the Go store adds to the Python schema.
-- Python writers do not know them: a run row Python saves keeps its
-- version and wait_key, a ledger row Python appends has no completed_key.
-- ADD COLUMN is skipped by the migration runner when the column exists.

-- Optimistic-concurrency token of RunCommit; rows written by Python start
-- at 0, like a run the Go store has never committed.
ALTER TABLE runs ADD COLUMN version INTEGER NOT NULL DEFAULT 0;

-- waiting.wait_key of a waiting run (NULL otherwise): event delivery
-- finds the runs waiting for a key without parsing run_json.
ALTER TABLE runs ADD COLUMN wait_key TEXT;
UPDATE runs SET wait_key = json_extract(run_json, '$.waiting.wait_key')
  WHERE status = 'waiting' AND json_valid(run_json);
CREATE INDEX IF NOT EXISTS idx_runs_wait_key ON runs(wait_key) WHERE wait_key IS NOT NULL;

-- idempotency_key of a completed record ('' when it has none), NULL for
-- every other status: LedgerFindCompleted answers from an index.
ALTER TABLE ledger ADD COLUMN completed_key TEXT;
UPDATE ledger SET completed_key = COALESCE(json_extract(record_json, '$.idempotency_key'), '')
  WHERE json_valid(record_json) AND json_extract(record_json, '$.status') = 'completed';
CREATE INDEX IF NOT EXISTS idx_ledger_completed_key ON ledger(run_id, completed_key, seq)
  WHERE completed_key IS NOT NULL;

-- Claims of runners sharing the database (store.RunClaimer). expires_at is
-- a normalised UTC timestamp (see durable.FormatTime), compared as text.
CREATE TABLE IF NOT EXISTS run_claims (
  run_id TEXT PRIMARY KEY,
  owner TEXT NOT NULL,
  expires_at TEXT NOT NULL
);
