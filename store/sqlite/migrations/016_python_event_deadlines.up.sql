-- Python's save keeps a wait_index row only for a WAIT_UNTIL wait and
-- deletes any other: a Python process saving a run this store left
-- waiting on an event with a deadline (a pause then a resume-run, a limits
-- update) took the deadline out of the index, which the due queries read
-- alone, so the timeout never fired. Two triggers keep it. The first
-- indexes the deadline when a Python update (which sets workflow_id; our
-- usual update does not, see 012) leaves the run waiting on an event with
-- a deadline, not paused; the second puts the row back when Python's save
-- then deletes it, the run's row still saying so. Every writer, Python's
-- and ours, writes the run's row before its wait_index row, so a run that
-- left its wait is not indexed again; our own deletes of a waiting event
-- run's row are of a wait without a deadline or of a paused run, which the
-- triggers leave out. (A trigger's body stays on one line: see 008.)
CREATE TRIGGER IF NOT EXISTS runs_event_deadline_foreign_update AFTER UPDATE OF workflow_id ON runs WHEN NEW.status = 'waiting' AND NEW.wait_reason = 'event'
  BEGIN INSERT INTO wait_index (run_id, next_due_iso, updated_at_iso, status) SELECT NEW.run_id, json_extract(NEW.run_json, '$.waiting.until'), COALESCE(NEW.updated_at, ''), 'waiting_event' WHERE json_valid(NEW.run_json) AND COALESCE(json_extract(NEW.run_json, '$.waiting.until'), '') <> '' AND COALESCE(json_extract(NEW.run_json, '$.vars._runtime.control.paused'), 0) <> 1 ON CONFLICT (run_id) DO UPDATE SET next_due_iso = excluded.next_due_iso, updated_at_iso = excluded.updated_at_iso, status = excluded.status; END;
CREATE TRIGGER IF NOT EXISTS wait_index_event_deadline_kept AFTER DELETE ON wait_index WHEN (SELECT status = 'waiting' AND wait_reason = 'event' FROM runs WHERE run_id = OLD.run_id)
  BEGIN INSERT INTO wait_index (run_id, next_due_iso, updated_at_iso, status) SELECT r.run_id, json_extract(r.run_json, '$.waiting.until'), COALESCE(r.updated_at, ''), 'waiting_event' FROM runs r WHERE r.run_id = OLD.run_id AND json_valid(r.run_json) AND COALESCE(json_extract(r.run_json, '$.waiting.until'), '') <> '' AND COALESCE(json_extract(r.run_json, '$.vars._runtime.control.paused'), 0) <> 1; END;
