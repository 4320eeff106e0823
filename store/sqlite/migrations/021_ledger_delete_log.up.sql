-- Ledger deletes, for ListenLedger (listen.go): a process following the
-- ledgers of a shared database finds other processes' appends by the
-- ledger's rowids, but a delete leaves no row to find. Each ledger that
-- a delete empties (a run's ledger deleted, by us or by Python) is logged
-- here, once; a partial delete is not. The id is an INTEGER PRIMARY KEY,
-- so that VACUUM keeps it. The log keeps its last 10,000 entries; a
-- follower that falls further behind is told that any ledger may have
-- been deleted. Appends write nothing here. (A trigger's body stays on
-- one line: see 008.)
CREATE TABLE IF NOT EXISTS ledger_deletes (id INTEGER PRIMARY KEY, run_id TEXT NOT NULL);
CREATE TRIGGER IF NOT EXISTS ledger_delete_logged AFTER DELETE ON ledger WHEN NOT EXISTS (SELECT 1 FROM ledger WHERE run_id = OLD.run_id)
  BEGIN INSERT INTO ledger_deletes (run_id) VALUES (OLD.run_id); DELETE FROM ledger_deletes WHERE id <= (SELECT MAX(id) FROM ledger_deletes) - 10000; END;
