-- A paused run has no due_at (store.Deadline): the scheduler skips paused
-- runs, so a batch of them listed as due held back every other due run,
-- and the scheduler loop polled again at once. The commit that lifts a
-- pause sets due_at again. Only runs with a due_at are read; a run_json
-- PostgreSQL cannot read as json (its parser refuses the \u0000 a run's
-- strings may hold) keeps its due_at until its next commit. Only the JSON
-- boolean true is a pause (durable.RunState.HostPaused): #>> gives the
-- string "true" as 'true' too, so the value's JSON type is tested. A
-- runner of the previous version may commit a run meanwhile (a rolling
-- upgrade): an UPDATE by run_id alone would wait for its row lock, then
-- change the row it committed. A run is changed only at the version read,
-- so one resumed meanwhile keeps the due_at its commit set.
DO $$
DECLARE
  r record;
  paused json;
BEGIN
  FOR r IN SELECT run_id, run_json, version FROM runs WHERE due_at IS NOT NULL LOOP
    BEGIN
      paused := r.run_json::json #> '{vars,_runtime,control,paused}';
      IF json_typeof(paused) = 'boolean' AND paused::text = 'true' THEN
        UPDATE runs SET due_at = NULL WHERE run_id = r.run_id AND version = r.version;
      END IF;
    EXCEPTION WHEN data_exception THEN
      NULL;
    END;
  END LOOP;
END
$$;
