package sqlite

import (
	"database/sql"
	"path/filepath"
	"slices"
	"testing"
	"time"

	"github.com/abstractframework/abstractgateway/durable"
	"github.com/abstractframework/abstractgateway/store"
)

// openRawDB opens the database file directly, as Python or a tool would;
// the caller closes it (and any store owning the file first).
func openRawDB(t *testing.T, path string) *sql.DB {
	t.Helper()
	db, err := sql.Open("sqlite", path)
	if err != nil {
		t.Fatal(err)
	}
	return db
}

// openStore opens a store with cfg (no idle checkpoints), closed at the
// test's end unless the test closed it.
func openStore(t *testing.T, cfg Config) *Store {
	t.Helper()
	cfg.IdleCheckpoint = -1
	s, err := New(t.Context(), cfg)
	if err != nil {
		t.Fatalf("New(%s): %v", cfg.Path, err)
	}
	t.Cleanup(func() { _ = s.Close() })
	return s
}

// waitingRun is a new run waiting for reason with deadline until.
func waitingRun(id string, reason durable.WaitReason, key string, until time.Time) *durable.RunState {
	r := redoRun(id)
	r.Status = durable.RunWaiting
	r.Waiting = &durable.WaitState{Reason: reason, WaitKey: key, Until: durable.NewTime(until)}
	return r
}

// pyUpsertRun is Python's SqliteRunStore.save statement (0.4.28).
const pyUpsertRun = `INSERT INTO runs (run_id, workflow_id, status, wait_reason, wait_until,
  parent_run_id, actor_id, session_id, created_at, updated_at, run_json)
VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)
ON CONFLICT(run_id) DO UPDATE SET workflow_id=excluded.workflow_id, status=excluded.status,
  wait_reason=excluded.wait_reason, wait_until=excluded.wait_until, parent_run_id=excluded.parent_run_id,
  actor_id=excluded.actor_id, session_id=excluded.session_id, updated_at=excluded.updated_at,
  run_json=excluded.run_json`

// A shared store's RunList by wait key indexes the rows Python wrote
// since the store opened first (indexPythonWrites): a run Python saved
// waiting on an event, with a NaN in its vars (json.dumps writes NaN,
// which the triggers' json_valid refuses), is found by its key by the
// very first lookup, not only after some other lookup or a reopen.
func TestSharedRunListByWaitKeyFindsPythonNaNRun(t *testing.T) {
	t.Parallel()
	path := filepath.Join(t.TempDir(), "runtime.sqlite3")
	s := openStore(t, Config{Path: path, Shared: true})
	const at = "2026-12-01T04:51:14.026251+00:00"
	runJSON := `{"run_id": "py1", "workflow_id": "wf", "status": "waiting", "current_node": "n", "vars": {"score": NaN}, ` +
		`"waiting": {"reason": "event", "wait_key": "evt:k", "until": null, "resume_to_node": "done", "result_key": "evt"}, ` +
		`"output": null, "error": null, "created_at": "` + at + `", "updated_at": "` + at + `", ` +
		`"actor_id": null, "session_id": null, "parent_run_id": null}`
	db := openRawDB(t, path)
	if _, err := db.Exec(pyUpsertRun, "py1", "wf", "waiting", "event", nil, nil, nil, nil, at, at, runJSON); err != nil {
		t.Fatal(err)
	}
	if err := db.Close(); err != nil {
		t.Fatal(err)
	}
	got, err := s.RunList(t.Context(), &store.RunListParams{WaitKeys: []string{"evt:k"}})
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != 1 || got[0].RunID != "py1" {
		t.Errorf("RunList by wait key = %d runs; want the run py1 Python saved waiting on evt:k", len(got))
	}
}

// The runs.wait_until column is filled as Python fills it: only for
// WAIT_UNTIL waits. A WAIT_EVENT with a timeout keeps NULL there (its
// deadline lives in wait_index alone).
func TestWaitUntilColumnOnlyForUntilWaits(t *testing.T) {
	t.Parallel()
	ctx := t.Context()
	path := filepath.Join(t.TempDir(), "runtime.sqlite3")
	s := openStore(t, Config{Path: path})
	until := time.Date(2030, 1, 2, 3, 4, 5, 0, time.UTC)
	event := waitingRun("event-run", durable.WaitEvent, "evt:k", until)
	timer := waitingRun("until-run", durable.WaitUntil, "", until)
	for _, r := range []*durable.RunState{event, timer} {
		if err := s.RunCommit(ctx, &store.CommitParams{Run: r, Create: true}); err != nil {
			t.Fatal(err)
		}
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	db := openRawDB(t, path)
	defer db.Close()
	for id, want := range map[string]sql.NullString{
		"event-run": {},
		"until-run": {String: durable.NewTime(until).String(), Valid: true},
	} {
		var got sql.NullString
		if err := db.QueryRow(`SELECT wait_until FROM runs WHERE run_id = ?`, id).Scan(&got); err != nil {
			t.Fatal(err)
		}
		if got != want {
			t.Errorf("run %s: wait_until = %+v, want %+v (Python fills it for WAIT_UNTIL only)", id, got, want)
		}
	}
}

// RunIndex's RootOnly reads a run whose parent column is the empty text (a writer that
// stores an empty parent instead of NULL) as a run without a parent.
func TestRunIndexRootOnlyCountsEmptyParentAsRoot(t *testing.T) {
	t.Parallel()
	ctx := t.Context()
	path := filepath.Join(t.TempDir(), "runtime.sqlite3")
	s := openStore(t, Config{Path: path})
	for _, r := range []*durable.RunState{redoRun("root-null"), redoRun("root-empty"), redoRun("child")} {
		if r.RunID == "child" {
			r.ParentRunID = "root-null"
		}
		if err := s.RunCommit(ctx, &store.CommitParams{Run: r, Create: true}); err != nil {
			t.Fatal(err)
		}
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	db := openRawDB(t, path)
	if _, err := db.Exec(`UPDATE runs SET parent_run_id = '' WHERE run_id = 'root-empty'`); err != nil {
		t.Fatal(err)
	}
	_ = db.Close()
	s = openStore(t, Config{Path: path})
	rows, err := s.RunIndex(ctx, &store.RunIndexParams{RootOnly: true})
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, row := range rows {
		got = append(got, row.RunID)
	}
	slices.Sort(got)
	if want := []string{"root-empty", "root-null"}; !slices.Equal(got, want) {
		t.Fatalf("RunIndex RootOnly = %v, want %v", got, want)
	}
}
