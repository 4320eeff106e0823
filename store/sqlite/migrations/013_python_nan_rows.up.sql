-- Python's SQLite (3.40 here) cannot read a JSON text holding NaN or
-- Infinity, which its json.dumps writes: json_valid() with one argument
-- refuses it, so 012's triggers leave such a waiting run without wait_key
-- and such a completed record without completed_key, and nothing indexes
-- them later. These triggers list them; the store indexes the listed rows
-- with its own SQLite, which reads JSON5, each time it opens the database.
-- (seq 0 names the run row, any other seq a ledger record.)
CREATE TABLE IF NOT EXISTS python_unindexed (
  run_id TEXT NOT NULL,
  seq INTEGER NOT NULL,
  PRIMARY KEY (run_id, seq)
) WITHOUT ROWID;
-- INSERT … WHERE NOT EXISTS rather than INSERT OR IGNORE: the conflict
-- policy of the statement that fires a trigger overrides the trigger's own
-- (see 012). A trigger's body stays on one line (see 008).
CREATE TRIGGER IF NOT EXISTS runs_unindexed_foreign_insert AFTER INSERT ON runs WHEN NEW.status = 'waiting' AND NEW.wait_key IS NULL AND NOT json_valid(NEW.run_json)
  BEGIN INSERT INTO python_unindexed (run_id, seq) SELECT NEW.run_id, 0 WHERE NOT EXISTS (SELECT 1 FROM python_unindexed WHERE run_id = NEW.run_id AND seq = 0); END;
CREATE TRIGGER IF NOT EXISTS runs_unindexed_foreign_update AFTER UPDATE OF workflow_id ON runs WHEN NEW.status = 'waiting' AND NOT json_valid(NEW.run_json)
  BEGIN INSERT INTO python_unindexed (run_id, seq) SELECT NEW.run_id, 0 WHERE NOT EXISTS (SELECT 1 FROM python_unindexed WHERE run_id = NEW.run_id AND seq = 0); END;
CREATE TRIGGER IF NOT EXISTS ledger_unindexed_foreign_insert AFTER INSERT ON ledger WHEN NEW.completed_key IS NULL AND instr(NEW.record_json, '"completed"') > 0 AND NOT json_valid(NEW.record_json)
  BEGIN INSERT INTO python_unindexed (run_id, seq) SELECT NEW.run_id, NEW.seq WHERE NOT EXISTS (SELECT 1 FROM python_unindexed WHERE run_id = NEW.run_id AND seq = NEW.seq); END;
