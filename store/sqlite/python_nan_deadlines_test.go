package sqlite_test

import (
	"context"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/abstractframework/abstractgateway/durable"
	"github.com/abstractframework/abstractgateway/store"
	"github.com/abstractframework/abstractgateway/store/sqlite"
)

// pyEventDeadlineNaNRun: a run waiting on an event with a deadline
// (store.Deadline indexes it), whose vars hold a NaN (Python's
// float("nan"), kept by our decoder as the literal and written back).
const pyEventDeadlineNaNRun = `{"run_id": "ev-nan", "workflow_id": "wf_evt", "status": "waiting", "current_node": "wait", "vars": {"score": NaN}, "waiting": {"reason": "event", "wait_key": "evt:session:s1:go", "until": "2026-12-01T05:00:00+00:00", "resume_to_node": "done", "result_key": "evt", "prompt": null, "choices": null, "allow_free_text": true, "details": null}, "output": null, "error": null, "created_at": "2026-12-01T04:51:14.025673+00:00", "updated_at": "2026-12-01T04:51:14.026251+00:00", "actor_id": null, "session_id": null, "parent_run_id": null}`

// Migration 016 promises that a Python save of a run this store left
// waiting on an event with a deadline keeps the deadline in wait_index
// (Python's save deletes every wait_index row but a WAIT_UNTIL one). Its
// triggers read run_json with json_valid() in the writer's SQLite, which
// is false for a text holding NaN (Python's json.dumps writes it): the
// row Python's save deletes is not put back. Migration 013 lists the run
// (python_unindexed), but indexPythonRows only restores its wait_key,
// never its deadline, so the WAIT_EVENT timeout never fires, not even
// after the store is reopened.
func TestPythonSaveOfNaNEventRunKeepsDeadline(t *testing.T) {
	t.Parallel()
	ctx := t.Context()
	path := filepath.Join(t.TempDir(), "runtime.sqlite3")
	s := openShared(t, path)
	r, err := durable.UnmarshalRunString(pyEventDeadlineNaNRun)
	if err != nil {
		t.Fatal(err)
	}
	if err := s.RunCommit(ctx, &store.CommitParams{Run: r, Create: true}); err != nil {
		t.Fatal(err)
	}
	now := time.Date(2026, 12, 1, 6, 0, 0, 0, time.UTC)
	due, err := s.RunListDue(ctx, &store.RunListDueParams{Now: now})
	if err != nil || len(due) != 1 {
		t.Fatalf("before Python's save: RunListDue = %v, %v; want the run", due, err)
	}

	// Python (a host pausing then resuming the run, say) loads and saves
	// it: SqliteRunStore.save's upsert, then its DELETE of the wait_index
	// row of a run that is not a WAIT_UNTIL.
	db := rawDB(t, path)
	var runJSON string
	if err := db.QueryRow(`SELECT run_json FROM runs WHERE run_id = 'ev-nan'`).Scan(&runJSON); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(runJSON, "NaN") {
		t.Fatalf("run_json lost the NaN: %s", runJSON)
	}
	if _, err := db.Exec(pythonUpsertRun, "ev-nan", "wf_evt", "waiting", "event", nil, nil, nil, nil,
		"2026-12-01T04:51:14.025673+00:00", "2026-12-01T04:52:00.000001+00:00", runJSON); err != nil {
		t.Fatal(err)
	}
	if _, err := db.Exec(`DELETE FROM wait_index WHERE run_id = ?;`, "ev-nan"); err != nil {
		t.Fatal(err)
	}
	_ = db.Close()

	before, after := dueThenReopened(t, s, path, now)
	if len(before) != 1 {
		t.Errorf("shared store, after Python's save: RunListDue = %v; want ev-nan, whose event deadline passed", before)
	}
	if len(after) != 1 {
		t.Errorf("after reopening: RunListDue = %v; want ev-nan (its WAIT_EVENT deadline is lost for good)", after)
	}
}

// dueThenReopened lists s's due runs at now, closes s, reopens the
// database at path as a shared store and lists them again.
func dueThenReopened(t *testing.T, s *sqlite.Store, path string, now time.Time) (before, after []store.DueRun) {
	t.Helper()
	ctx := context.Background()
	before, err := s.RunListDue(ctx, &store.RunListDueParams{Now: now})
	if err != nil {
		t.Fatal(err)
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	s2, err := sqlite.New(ctx, sqlite.Config{Path: path, Shared: true})
	if err != nil {
		t.Fatal(err)
	}
	defer s2.Close()
	if after, err = s2.RunListDue(ctx, &store.RunListDueParams{Now: now}); err != nil {
		t.Fatal(err)
	}
	return before, after
}

// pyPausedUntilNaNRun: a WAIT_UNTIL run a Python host paused
// (vars._runtime.control.paused), whose vars hold a NaN.
const pyPausedUntilNaNRun = `{"run_id": "pz-nan", "workflow_id": "wf_until", "status": "waiting", "current_node": "wait", "vars": {"score": NaN, "_runtime": {"control": {"paused": true, "paused_at": "2026-12-01T06:58:03.235611+00:00", "pause_reason": "x"}}}, "waiting": {"reason": "until", "wait_key": null, "until": "2026-12-01T07:00:00+00:00", "resume_to_node": "done", "result_key": "woke", "prompt": null, "choices": null, "allow_free_text": true, "details": null}, "output": null, "error": null, "created_at": "2026-12-01T06:58:03.010915+00:00", "updated_at": "2026-12-01T06:58:03.235636+00:00", "actor_id": null, "session_id": null, "parent_run_id": null}`

// Same cause, migration 014: its triggers take out the wait_index row
// Python's save writes for a WAIT_UNTIL run it paused, but only where
// json_valid() reads run_json; with a NaN in it the paused run stays in
// the due index, listed as due at every poll (compatibility.md: paused
// runs leave the due index), and nothing at open removes it.
func TestPythonPausedNaNUntilRunNotDue(t *testing.T) {
	t.Parallel()
	ctx := t.Context()
	path := filepath.Join(t.TempDir(), "runtime.sqlite3")
	s := openShared(t, path)
	db := rawDB(t, path)
	defer db.Close()
	if _, err := db.Exec(pythonUpsertRun, "pz-nan", "wf_until", "waiting", "until", "2026-12-01T07:00:00+00:00",
		nil, nil, nil, "2026-12-01T06:58:03.010915+00:00", "2026-12-01T06:58:03.235636+00:00", pyPausedUntilNaNRun); err != nil {
		t.Fatal(err)
	}
	if _, err := db.Exec(pythonWaitIndexUpsert, "pz-nan", "2026-12-01T07:00:00+00:00", "2026-12-01T06:58:03.235636+00:00", "waiting_until"); err != nil {
		t.Fatal(err)
	}
	if r, err := s.RunGet(ctx, "pz-nan"); err != nil || !r.HostPaused() {
		t.Fatalf("RunGet = %v, %v; want the paused run", r, err)
	}
	before, after := dueThenReopened(t, s, path, time.Date(2026, 12, 1, 8, 0, 0, 0, time.UTC))
	if len(before) != 0 {
		t.Errorf("shared store: RunListDue = %v; want no run (pz-nan is paused)", before)
	}
	if len(after) != 0 {
		t.Errorf("after reopening: RunListDue = %v; want no run (pz-nan is paused)", after)
	}
}
