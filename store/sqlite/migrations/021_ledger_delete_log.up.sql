-- Ledger deletes, for ListenLedger (listen.go): a process following the
-- ledgers of a shared database finds other processes' appends by the
-- ledger's rowids, but a delete leaves no row to find. Each ledger that
-- loses its first record (a run's ledger deleted, by us or by Python) is
-- logged here; the log keeps its last 10,000 entries, far more than a
-- follower polling every few milliseconds can fall behind by. Appends
-- write nothing here. (A trigger's body stays on one line: see 008.)
CREATE TABLE IF NOT EXISTS ledger_deletes (run_id TEXT NOT NULL);
CREATE TRIGGER IF NOT EXISTS ledger_delete_logged AFTER DELETE ON ledger WHEN OLD.seq = 1
  BEGIN INSERT INTO ledger_deletes (run_id) VALUES (OLD.run_id); DELETE FROM ledger_deletes WHERE rowid <= (SELECT MAX(rowid) FROM ledger_deletes) - 10000; END;
