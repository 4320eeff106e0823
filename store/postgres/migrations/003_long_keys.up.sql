-- Keys of any length. A btree index entry is limited to about 2.7 KB, so a
-- run waiting on a long event key (a wait key is free text) or created in
-- a session with a long id could never be committed, where the other
-- stores take any length. Hash indexes have no such limit and serve the
-- equality lookups these two columns get (a session's runs are few enough
-- to sort after the lookup). Run, workflow and command ids keep their
-- btree keys: ids that long are refused with PostgreSQL's error.
DROP INDEX IF EXISTS idx_runs_wait_key;
CREATE INDEX idx_runs_wait_key ON runs USING hash (wait_key) WHERE wait_key IS NOT NULL;
DROP INDEX IF EXISTS idx_runs_session_updated;
CREATE INDEX IF NOT EXISTS idx_runs_session ON runs USING hash (session_id) WHERE session_id IS NOT NULL;
