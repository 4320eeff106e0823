package sqlite_test

import (
	"path/filepath"
	"slices"
	"testing"
)

// A newer Python runtime adds its derived runs columns (paused,
// run_lifecycle_json, the attribution columns) when it opens the
// database, and fills them at each of its saves; its control probe reads
// only status and paused. syncNewerPythonTrigger's doc promises that when
// the columns exist our commits set them back to NULL (not yet
// back-filled), and doc.go that "the Python columns are kept filled the
// way Python fills them". In a shared store that Python usually opens the
// database after our gateway started, so the columns appear while our
// store is open: the trigger was installed only at our open, and a pause
// we lifted stayed paused = 1 for that Python until our next restart.

// hotColumnsPythonSave is the save upsert of a newer module that has the
// hot columns only (its first schema step, newerPythonHotColumnsDDL).
const hotColumnsPythonSave = `INSERT INTO runs (run_id, workflow_id, status, wait_reason, wait_until,
  created_at, updated_at, run_json, paused, run_lifecycle_json)
VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)
ON CONFLICT(run_id) DO UPDATE SET workflow_id=excluded.workflow_id, status=excluded.status,
  wait_reason=excluded.wait_reason, wait_until=excluded.wait_until, updated_at=excluded.updated_at,
  run_json=excluded.run_json, paused=excluded.paused, run_lifecycle_json=excluded.run_lifecycle_json`

// TestNewerPythonColumnsAddedWhileSharedStoreOpen: columns a newer Python
// adds while our shared store is open, first the hot columns and later
// the attribution ones, are cleared by our next commit of a run it saved.
func TestNewerPythonColumnsAddedWhileSharedStoreOpen(t *testing.T) {
	t.Parallel()
	path := filepath.Join(t.TempDir(), "runtime.sqlite3")
	execRaw(t, path, "PRAGMA journal_mode=WAL", pythonDDL)
	s := openShared(t, path) // our gateway starts first, on a 0.4.28 database
	db := rawDB(t, path)
	defer db.Close()

	// A newer Python host opens the same database and saves a paused run;
	// our host then resumes it.
	execRaw(t, path, newerPythonHotColumnsDDL...)
	const at, until = "2026-01-01T00:00:00+00:00", "2099-01-01T00:00:00+00:00"
	if _, err := db.Exec(hotColumnsPythonSave, "py-paused", "wf", "waiting", "until", until, at, at,
		newerPythonPausedRun("py-paused", until), 1, "null"); err != nil {
		t.Fatal(err)
	}
	liftPause(t, s, "py-paused")
	if got := derivedColumns(t, db, "py-paused", []string{"paused"}); got[0] != "NULL" {
		t.Errorf("after our commit lifted the pause, runs.paused = %s; want NULL (the newer Python's probe "+
			"reads paused = 1 and holds the run paused)", got[0])
	}

	// A later version of that module adds the attribution columns, still
	// while we are open: the trigger must now clear them too.
	execRaw(t, path, newerPythonAttributionDDL...)
	newerPythonSavePaused(t, path, "py-paused", until)
	liftPause(t, s, "py-paused")
	got := derivedColumns(t, db, "py-paused", newerPythonColumnNames)
	if want := slices.Repeat([]string{"NULL"}, len(newerPythonColumnNames)); !slices.Equal(got, want) {
		t.Errorf("after our commit, the newer Python's columns %v = %v; want all NULL (not yet back-filled)",
			newerPythonColumnNames, got)
	}
}
