package sqlite_test

import (
	"path/filepath"
	"testing"
	"time"

	"github.com/abstractframework/abstractgateway/durable"
	"github.com/abstractframework/abstractgateway/store"
	"github.com/abstractframework/abstractgateway/store/sqlite"
)

// A host pause is vars._runtime.control.paused being the boolean true
// (store.Deadline, durable.RunState.HostPaused; Python's
// `control.get("paused") is True`). Migrations 014/018's triggers, which
// take a paused run's row out of wait_index as Python writes it, compared
// json_extract(...) with 1, which the number 1 also equals; migration 019
// tests json_type(...) = 'true' instead and gives the wrongly dropped runs
// their row back.

// numericPausedRun is a WAIT_UNTIL run due at until whose control.paused
// is the number 1 (no pause) while another var holds {"paused": true}, the
// text the triggers look for before they parse run_json.
func numericPausedRun(id string, until time.Time) *durable.RunState {
	return &durable.RunState{RunID: id, WorkflowID: "wf", Status: durable.RunWaiting, CurrentNode: "wait",
		Waiting: &durable.WaitState{Reason: durable.WaitUntil, Until: durable.NewTime(until), ResumeToNode: "next"},
		Vars: map[string]any{
			"_runtime": map[string]any{"control": map[string]any{"paused": 1}},
			"player":   map[string]any{"paused": true},
		},
		CreatedAt: durable.NewTime(until.Add(-time.Hour)), UpdatedAt: durable.NewTime(until.Add(-time.Hour))}
}

// TestNumericPausedRunStaysDue: such a run is due at its deadline, in
// RunListDue and RunNextDue alike, owned or shared.
func TestNumericPausedRunStaysDue(t *testing.T) {
	t.Parallel()
	until := time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)
	r := numericPausedRun("r1", until)
	if r.HostPaused() {
		t.Fatal("test premise: control.paused = 1 is not a host pause")
	}
	if _, ok := store.Deadline(r); !ok {
		t.Fatal("test premise: store.Deadline gives the run a deadline")
	}
	for name, cfg := range map[string]sqlite.Config{"owned": {}, "shared": {Shared: true}} {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			cfg.Path = filepath.Join(t.TempDir(), "p.sqlite3")
			s := openWith(t, cfg)
			if err := s.RunCommit(t.Context(), &store.CommitParams{Run: numericPausedRun("r1", until), Create: true}); err != nil {
				t.Fatal(err)
			}
			// Settled, so that the owned store answers from wait_index
			// (the triggers' work), not from its redo queue.
			if err := s.Settle(t.Context()); err != nil {
				t.Fatal(err)
			}
			due, err := s.RunListDue(t.Context(), &store.RunListDueParams{Now: until})
			if err != nil {
				t.Fatal(err)
			}
			next, err := s.RunNextDue(t.Context())
			if err != nil {
				t.Fatal(err)
			}
			if len(due) != 1 || due[0].RunID != "r1" || !next.Equal(until) {
				t.Errorf("RunListDue = %v, RunNextDue = %v; want [r1] and %v (control.paused = 1 is no pause)", due, next, until)
			}
		})
	}
}

// TestMigration019ReindexesNumericPausedRuns: a database the old triggers
// left without the row of such a run (simulated by deleting it and
// migration 019's record) has it back after the migration, while a run
// really paused stays out of the index.
func TestMigration019ReindexesNumericPausedRuns(t *testing.T) {
	t.Parallel()
	path := filepath.Join(t.TempDir(), "m.sqlite3")
	until := time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)
	s := openWith(t, sqlite.Config{Path: path, NoRedoLog: true})
	paused := numericPausedRun("paused", until)
	paused.Vars["_runtime"] = map[string]any{"control": map[string]any{"paused": true}}
	for _, r := range []*durable.RunState{numericPausedRun("numeric", until), paused} {
		if err := s.RunCommit(t.Context(), &store.CommitParams{Run: r, Create: true}); err != nil {
			t.Fatal(err)
		}
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	execRaw(t, path, `DELETE FROM wait_index`, `DELETE FROM schema_migrations WHERE version >= 19`)

	s = openWith(t, sqlite.Config{Path: path, NoRedoLog: true})
	due, err := s.RunListDue(t.Context(), &store.RunListDueParams{Now: until})
	if err != nil {
		t.Fatal(err)
	}
	if len(due) != 1 || due[0].RunID != "numeric" || !due[0].Until.Equal(until) {
		t.Errorf("RunListDue after migration 019 = %v, want [numeric at %v] (the paused run stays out)", due, until)
	}
}
