-- Python's save re-inserts the wait_index row of a WAIT_UNTIL run it has
-- paused (its scheduler then lists and skips it); 009 cleaned the rows
-- that existed, but a Python process writing to a database this store
-- migrated would bring such rows back, and our due queries read
-- wait_index alone. These triggers take the row of a paused run out as
-- it is written. Our own writes never index a paused run: the instr()
-- test keeps the JSON parse off them. json_valid() guards json_extract()
-- in the writer's SQLite (Python's 3.40 refuses NaN). (A trigger's body
-- stays on one line: see 008.)
CREATE TRIGGER IF NOT EXISTS wait_index_paused_foreign_insert AFTER INSERT ON wait_index WHEN (SELECT instr(run_json, '"paused": true') FROM runs WHERE run_id = NEW.run_id) > 0
  BEGIN DELETE FROM wait_index WHERE run_id = NEW.run_id AND (SELECT CASE WHEN json_valid(run_json) THEN json_extract(run_json, '$.vars._runtime.control.paused') END FROM runs WHERE run_id = NEW.run_id) = 1; END;
CREATE TRIGGER IF NOT EXISTS wait_index_paused_foreign_update AFTER UPDATE ON wait_index WHEN (SELECT instr(run_json, '"paused": true') FROM runs WHERE run_id = NEW.run_id) > 0
  BEGIN DELETE FROM wait_index WHERE run_id = NEW.run_id AND (SELECT CASE WHEN json_valid(run_json) THEN json_extract(run_json, '$.vars._runtime.control.paused') END FROM runs WHERE run_id = NEW.run_id) = 1; END;
