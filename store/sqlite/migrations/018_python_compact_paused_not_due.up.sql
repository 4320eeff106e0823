-- 014's triggers look for the text '"paused": true' (json.dumps' default
-- separators, also ours) before they parse run_json. The newer Python
-- module writes run_json with compact separators ('"paused":true') and
-- indexes a paused run's deadline like any other, so a paused run it
-- saved stayed in wait_index and was listed as due at every poll. The
-- triggers now look for either spacing; json_extract() still decides, so
-- a string or a key elsewhere that merely contains the text removes
-- nothing. (A trigger's body stays on one line: see 008.)
DROP TRIGGER IF EXISTS wait_index_paused_foreign_insert;
DROP TRIGGER IF EXISTS wait_index_paused_foreign_update;
CREATE TRIGGER wait_index_paused_foreign_insert AFTER INSERT ON wait_index WHEN (SELECT instr(run_json, '"paused": true') > 0 OR instr(run_json, '"paused":true') > 0 FROM runs WHERE run_id = NEW.run_id)
  BEGIN DELETE FROM wait_index WHERE run_id = NEW.run_id AND (SELECT CASE WHEN json_valid(run_json) THEN json_extract(run_json, '$.vars._runtime.control.paused') END FROM runs WHERE run_id = NEW.run_id) = 1; END;
CREATE TRIGGER wait_index_paused_foreign_update AFTER UPDATE ON wait_index WHEN (SELECT instr(run_json, '"paused": true') > 0 OR instr(run_json, '"paused":true') > 0 FROM runs WHERE run_id = NEW.run_id)
  BEGIN DELETE FROM wait_index WHERE run_id = NEW.run_id AND (SELECT CASE WHEN json_valid(run_json) THEN json_extract(run_json, '$.vars._runtime.control.paused') END FROM runs WHERE run_id = NEW.run_id) = 1; END;
-- The rows such a Python process indexed before this migration leave too,
-- as 009 took out those that existed then. (Rows whose run_json has NaN,
-- which json_valid() refuses here, are 013's: the open re-indexes them
-- from the decoded state, which leaves paused runs out.)
DELETE FROM wait_index WHERE run_id IN (SELECT run_id FROM runs WHERE (instr(run_json, '"paused": true') > 0 OR instr(run_json, '"paused":true') > 0) AND json_valid(run_json) AND json_extract(run_json, '$.vars._runtime.control.paused') = 1);
