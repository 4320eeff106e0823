-- Python's save is an upsert that never sets runs.version (002), so our
-- versioned commits could not see it: a cancel or pause a Python host
-- saved while our tick ran an effect was overwritten by that tick's
-- commit, which still matched the version it had read. Python's upsert
-- sets workflow_id, which our usual update leaves out (see 012) and our
-- full update sets together with a new version; so a write that sets
-- workflow_id and keeps the version is a foreign one, and it now moves
-- the version on, making our next commit of that run a conflict (the
-- host's write wins, as with a write by another process of ours). (A
-- trigger's body stays on one line: see 008.)
CREATE TRIGGER IF NOT EXISTS runs_version_foreign_update AFTER UPDATE OF workflow_id ON runs WHEN NEW.version = OLD.version
  BEGIN UPDATE runs SET version = OLD.version + 1 WHERE run_id = NEW.run_id; END;
