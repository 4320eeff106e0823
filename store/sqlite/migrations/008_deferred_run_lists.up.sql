-- Lists of runs, newest first by status or workflow, read two columns that
-- are brought up to date in batches instead of on every commit.
--
-- A commit changes a run's status and updated_at, and with them its entry
-- in both list indexes: a third of the pages a commit wrote. Now the
-- indexes are on list_status and list_updated_at, which a commit leaves
-- as they were, and the store copies status and updated_at over before a
-- list reads the indexes, every so many runs and when it is quiet (see
-- lists.go), for two kinds of runs:
--   - new runs, whose list columns are NULL: they have no entry in the
--     (partial) list indexes, only one in idx_runs_unlisted, which is
--     ordered by rowid so consecutive inserts share its last page;
--   - runs changed since their columns were copied, recorded in
--     runs_list_dirty by the commit that changed them.
--
-- Python writers know neither the list columns nor runs_list_dirty. Their
-- new runs are unlisted like ours; a trigger records the runs their upsert
-- updates (it sets workflow_id, which our usual update leaves out, so the
-- trigger does not run for our commits). Python's CREATE INDEX IF NOT
-- EXISTS finds the two list index names taken and does not add its own.
ALTER TABLE runs ADD COLUMN list_status TEXT;
ALTER TABLE runs ADD COLUMN list_updated_at TEXT;
UPDATE runs SET list_status = status, list_updated_at = COALESCE(updated_at, '');
DROP INDEX IF EXISTS idx_runs_status_updated;
DROP INDEX IF EXISTS idx_runs_workflow_updated;
CREATE INDEX idx_runs_status_updated ON runs(list_status, list_updated_at DESC)
  WHERE list_status IS NOT NULL;
CREATE INDEX idx_runs_workflow_updated ON runs(workflow_id, list_updated_at DESC)
  WHERE list_status IS NOT NULL;
CREATE INDEX idx_runs_unlisted ON runs(list_status) WHERE list_status IS NULL;
CREATE TABLE IF NOT EXISTS runs_list_dirty (run_id TEXT PRIMARY KEY) WITHOUT ROWID;
-- (A trigger's body stays on one line: the migration runner ends a
-- statement at a line that ends with a semicolon.)
CREATE TRIGGER IF NOT EXISTS runs_list_foreign_update AFTER UPDATE OF workflow_id ON runs
  BEGIN INSERT OR IGNORE INTO runs_list_dirty (run_id) VALUES (NEW.run_id); END;
