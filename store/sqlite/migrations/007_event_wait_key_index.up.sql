-- Runs are looked up by wait key only to deliver events (the waiting runs
-- whose wait reason is "event"); other waits are resumed by run id. So the
-- wait key index holds event waits only, and a run waiting for a user, a
-- time or a child writes no entry when it starts waiting and none when it
-- resumes.
DROP INDEX IF EXISTS idx_runs_wait_key;
CREATE INDEX IF NOT EXISTS idx_runs_event_wait_key ON runs(wait_key)
  WHERE wait_reason = 'event' AND wait_key IS NOT NULL;
