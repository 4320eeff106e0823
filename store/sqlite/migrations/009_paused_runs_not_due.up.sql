-- Data migration, done in Go (migrate.go, rebuildWaitIndex, as 003): a
-- paused run leaves wait_index (store.Deadline). The scheduler skips
-- paused runs, so a batch of them listed as due held back every other due
-- run, and the scheduler loop polled again at once; the commit that lifts
-- a pause indexes the run again.
SELECT 1;
