-- 016's triggers index an event wait's deadline when a Python process
-- updates a run (its save sets workflow_id) or deletes the run's
-- wait_index row. A run Python saves for the first time already waiting
-- on an event with a deadline takes the save's INSERT branch, which
-- neither trigger sees (its DELETE of the wait_index row finds none), so
-- the timeout never fired: only a row there before the store's first
-- open was indexed (003). This trigger indexes it at the insert. Our own
-- inserts write the wait_key column (an event wait's key); Python's leave
-- it NULL. The runs a store opened since the first such insert missed
-- are indexed here. (A trigger's body stays on one line: see 008.)
CREATE TRIGGER IF NOT EXISTS runs_event_deadline_foreign_insert AFTER INSERT ON runs WHEN NEW.status = 'waiting' AND NEW.wait_reason = 'event' AND NEW.wait_key IS NULL
  BEGIN INSERT INTO wait_index (run_id, next_due_iso, updated_at_iso, status) SELECT NEW.run_id, json_extract(NEW.run_json, '$.waiting.until'), COALESCE(NEW.updated_at, ''), 'waiting_event' WHERE json_valid(NEW.run_json) AND COALESCE(json_extract(NEW.run_json, '$.waiting.until'), '') <> '' AND json_type(NEW.run_json, '$.vars._runtime.control.paused') IS NOT 'true' ON CONFLICT (run_id) DO UPDATE SET next_due_iso = excluded.next_due_iso, updated_at_iso = excluded.updated_at_iso, status = excluded.status; END;
INSERT INTO wait_index (run_id, next_due_iso, updated_at_iso, status)
  SELECT r.run_id, json_extract(r.run_json, '$.waiting.until'), COALESCE(r.updated_at, ''), 'waiting_event' FROM runs r
  WHERE r.status = 'waiting' AND r.wait_reason = 'event' AND json_valid(r.run_json)
    AND COALESCE(json_extract(r.run_json, '$.waiting.until'), '') <> ''
    AND json_type(r.run_json, '$.vars._runtime.control.paused') IS NOT 'true'
    AND NOT EXISTS (SELECT 1 FROM wait_index w WHERE w.run_id = r.run_id);
