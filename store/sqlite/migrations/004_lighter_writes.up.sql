-- Fewer pages written per commit.
--
-- idx_ledger_run_seq duplicates the primary key (run_id, seq); Python's
-- CREATE INDEX IF NOT EXISTS recreates it when a Python process opens the
-- database, which is harmless.
DROP INDEX IF EXISTS idx_ledger_run_seq;

-- Completed records are looked up by key within one run's ledger, which
-- the primary key (run_id, seq) already narrows to a handful of rows; a
-- separate key index cost a page per commit.
DROP INDEX IF EXISTS idx_ledger_completed_key;

-- Runs: idx_runs_waiting (status, wait_reason, wait_until) serves no query
-- of this store (deadlines live in wait_index, event listeners are found
-- by wait_key) yet changes on every status change; the parent index only
-- needs child runs. Python recreates its indexes when it opens the
-- database, which is harmless.
DROP INDEX IF EXISTS idx_runs_waiting;
DROP INDEX IF EXISTS idx_runs_parent;
CREATE INDEX IF NOT EXISTS idx_runs_parent_child ON runs(parent_run_id, created_at)
  WHERE parent_run_id IS NOT NULL;
