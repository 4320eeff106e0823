-- Idempotency keys of any length, as 003 for wait keys and session ids:
-- the btree entry (run_id, completed_key, seq) is limited to about 2.7 KB,
-- so a completed record whose key was longer (a host handler's own key)
-- failed every commit that carried it and left its run stuck at its last
-- checkpoint, where the other stores take any length. A hash index serves
-- the equality look-up LedgerFindCompleted makes; the few rows a key
-- lists are filtered by run and sorted by seq after it.
DROP INDEX IF EXISTS idx_ledger_completed;
CREATE INDEX IF NOT EXISTS idx_ledger_completed_key ON ledger USING hash (completed_key)
  WHERE completed_key IS NOT NULL;
