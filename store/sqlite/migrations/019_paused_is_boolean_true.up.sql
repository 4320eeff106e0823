-- A host pause is vars._runtime.control.paused being the boolean true
-- (store.Deadline; Python's `control.get("paused") is True`). The
-- triggers of 014/018 and 016 compared json_extract(...) with 1, which
-- the number 1 (1.0...) also equals: a waiting run whose control.paused
-- was such a number, and whose run_json held '"paused": true' elsewhere
-- (another var), left the due index and was never woken. They now ask
-- json_type() for 'true', which only the JSON literal true answers. (A
-- trigger's body stays on one line: see 008.)
DROP TRIGGER IF EXISTS wait_index_paused_foreign_insert;
DROP TRIGGER IF EXISTS wait_index_paused_foreign_update;
DROP TRIGGER IF EXISTS runs_event_deadline_foreign_update;
DROP TRIGGER IF EXISTS wait_index_event_deadline_kept;
CREATE TRIGGER wait_index_paused_foreign_insert AFTER INSERT ON wait_index WHEN (SELECT instr(run_json, '"paused": true') > 0 OR instr(run_json, '"paused":true') > 0 FROM runs WHERE run_id = NEW.run_id)
  BEGIN DELETE FROM wait_index WHERE run_id = NEW.run_id AND (SELECT CASE WHEN json_valid(run_json) THEN json_type(run_json, '$.vars._runtime.control.paused') END FROM runs WHERE run_id = NEW.run_id) = 'true'; END;
CREATE TRIGGER wait_index_paused_foreign_update AFTER UPDATE ON wait_index WHEN (SELECT instr(run_json, '"paused": true') > 0 OR instr(run_json, '"paused":true') > 0 FROM runs WHERE run_id = NEW.run_id)
  BEGIN DELETE FROM wait_index WHERE run_id = NEW.run_id AND (SELECT CASE WHEN json_valid(run_json) THEN json_type(run_json, '$.vars._runtime.control.paused') END FROM runs WHERE run_id = NEW.run_id) = 'true'; END;
CREATE TRIGGER runs_event_deadline_foreign_update AFTER UPDATE OF workflow_id ON runs WHEN NEW.status = 'waiting' AND NEW.wait_reason = 'event'
  BEGIN INSERT INTO wait_index (run_id, next_due_iso, updated_at_iso, status) SELECT NEW.run_id, json_extract(NEW.run_json, '$.waiting.until'), COALESCE(NEW.updated_at, ''), 'waiting_event' WHERE json_valid(NEW.run_json) AND COALESCE(json_extract(NEW.run_json, '$.waiting.until'), '') <> '' AND json_type(NEW.run_json, '$.vars._runtime.control.paused') IS NOT 'true' ON CONFLICT (run_id) DO UPDATE SET next_due_iso = excluded.next_due_iso, updated_at_iso = excluded.updated_at_iso, status = excluded.status; END;
CREATE TRIGGER wait_index_event_deadline_kept AFTER DELETE ON wait_index WHEN (SELECT status = 'waiting' AND wait_reason = 'event' FROM runs WHERE run_id = OLD.run_id)
  BEGIN INSERT INTO wait_index (run_id, next_due_iso, updated_at_iso, status) SELECT r.run_id, json_extract(r.run_json, '$.waiting.until'), COALESCE(r.updated_at, ''), 'waiting_event' FROM runs r WHERE r.run_id = OLD.run_id AND json_valid(r.run_json) AND COALESCE(json_extract(r.run_json, '$.waiting.until'), '') <> '' AND json_type(r.run_json, '$.vars._runtime.control.paused') IS NOT 'true'; END;
-- Data migration, done in Go (migrate.go, reindexWronglyPaused): the
-- waiting runs the old triggers (and 014/018's clean-ups) took out of
-- wait_index although they were not paused get their deadline back.
SELECT 1;
