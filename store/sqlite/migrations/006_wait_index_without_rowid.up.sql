-- wait_index as a WITHOUT ROWID table clustered on run_id: a deadline
-- written or cleared changes two b-trees (the table and its next_due
-- index) instead of three (the rowid table, its run_id key and the
-- next_due index). The columns, the key and the index are Python's, so
-- Python's INSERT OR REPLACE and its due query work on it unchanged.
CREATE TABLE wait_index_new (
  run_id TEXT PRIMARY KEY,
  next_due_iso TEXT NOT NULL,
  updated_at_iso TEXT NOT NULL,
  status TEXT
) WITHOUT ROWID;
INSERT INTO wait_index_new (run_id, next_due_iso, updated_at_iso, status)
  SELECT run_id, next_due_iso, updated_at_iso, status FROM wait_index;
DROP TABLE wait_index;
ALTER TABLE wait_index_new RENAME TO wait_index;
CREATE INDEX IF NOT EXISTS idx_wait_index_next_due ON wait_index(next_due_iso);
