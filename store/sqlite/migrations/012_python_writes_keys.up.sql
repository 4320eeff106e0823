-- Python writers know neither runs.wait_key nor ledger.completed_key (002):
-- a run Python saves waiting, or a completed record it appends, to a
-- database this store migrated would be invisible to event delivery and
-- to the ledger's idempotency look-up. Triggers fill them in. They fire on
-- Python's writes only: our run inserts set wait_key for a waiting run,
-- our usual update leaves workflow_id out (see 008; the full update that
-- sets it computes the same wait_key), and our ledger inserts set
-- completed_key for a completed record (the instr() test keeps the JSON
-- parse off our other records). They run in the writer's SQLite, so they
-- use only functions Python's (3.40 here) has: json_valid() with one
-- argument refuses a text with NaN, whose keys then stay unset.
-- (A trigger's body stays on one line: see 008.)
CREATE TRIGGER IF NOT EXISTS runs_wait_key_foreign_insert AFTER INSERT ON runs WHEN NEW.status = 'waiting' AND NEW.wait_key IS NULL AND json_valid(NEW.run_json)
  BEGIN UPDATE runs SET wait_key = json_extract(NEW.run_json, '$.waiting.wait_key') WHERE run_id = NEW.run_id; END;
CREATE TRIGGER IF NOT EXISTS runs_wait_key_foreign_update AFTER UPDATE OF workflow_id ON runs
  BEGIN UPDATE runs SET wait_key = CASE WHEN NEW.status = 'waiting' AND json_valid(NEW.run_json) THEN json_extract(NEW.run_json, '$.waiting.wait_key') END WHERE run_id = NEW.run_id; END;
CREATE TRIGGER IF NOT EXISTS ledger_completed_key_foreign_insert AFTER INSERT ON ledger WHEN NEW.completed_key IS NULL AND instr(NEW.record_json, '"completed"') > 0 AND json_valid(NEW.record_json) AND json_extract(NEW.record_json, '$.status') = 'completed'
  BEGIN UPDATE ledger SET completed_key = COALESCE(json_extract(NEW.record_json, '$.idempotency_key'), '') WHERE run_id = NEW.run_id AND seq = NEW.seq; END;

-- 008's trigger recorded Python's updates with INSERT OR IGNORE, but the
-- conflict policy of the statement that fires a trigger overrides the
-- trigger's own: a Python upsert of a run already recorded (its third save
-- between two of our list flushes) failed with a UNIQUE constraint error.
DROP TRIGGER IF EXISTS runs_list_foreign_update;
CREATE TRIGGER IF NOT EXISTS runs_list_foreign_update AFTER UPDATE OF workflow_id ON runs
  BEGIN INSERT INTO runs_list_dirty (run_id) SELECT NEW.run_id WHERE NOT EXISTS (SELECT 1 FROM runs_list_dirty WHERE run_id = NEW.run_id); END;
