package sqlite_test

import (
	"path/filepath"
	"testing"
	"time"

	"github.com/abstractframework/abstractgateway/store"
	"github.com/abstractframework/abstractgateway/store/sqlite"
)

// pySaveEventRun does what Python's SqliteRunStore.save does for a run it
// saves for the first time already waiting on an event with a timeout
// (the upsert takes its INSERT branch), then its wait_index maintenance:
// DELETE, as the wait is not an `until` one.
func pySaveEventRun(t *testing.T, path string) {
	t.Helper()
	execRaw(t, path, `INSERT INTO runs (run_id, workflow_id, status, wait_reason, wait_until, parent_run_id, actor_id,
			session_id, created_at, updated_at, run_json) VALUES ('`+pyEventRun+`', 'demo_wf', 'waiting', 'event', NULL, NULL, NULL, NULL,
			'2026-11-29T22:41:00+00:00', '2026-11-29T22:41:00+00:00', '`+pythonRuns[2].json+`')
		ON CONFLICT (run_id) DO UPDATE SET workflow_id = excluded.workflow_id, status = excluded.status,
			wait_reason = excluded.wait_reason, wait_until = excluded.wait_until, parent_run_id = excluded.parent_run_id,
			actor_id = excluded.actor_id, session_id = excluded.session_id, updated_at = excluded.updated_at,
			run_json = excluded.run_json`,
		`DELETE FROM wait_index WHERE run_id = '`+pyEventRun+`'`)
}

// TestPythonInsertedEventTimeoutIsDue: a run Python saves for the
// first time waiting on an event with a timeout. Opened before this store
// ever migrated the file, migration 003 indexes the timeout and the run
// falls due at 22:50:00.25 (TestPythonDatabase). Saved the same way into a
// file this store has already migrated, the timeout must be indexed too:
// the triggers of 016 fire on UPDATE of runs or on DELETE of an existing
// wait_index row, neither of which a first save does, so the run was found
// by wait key but never fell due (022 adds the INSERT trigger).
func TestPythonInsertedEventTimeoutIsDue(t *testing.T) {
	now := time.Date(2026, 11, 30, 0, 0, 0, 0, time.UTC)
	for _, shared := range []bool{false, true} {
		name := map[bool]string{false: "owned", true: "shared"}[shared]
		t.Run(name, func(t *testing.T) {
			ctx := t.Context()
			path := filepath.Join(t.TempDir(), "runtime.sqlite3")
			s0, err := sqlite.New(ctx, sqlite.Config{Path: path})
			if err != nil {
				t.Fatal(err)
			}
			if err := s0.Close(); err != nil { // the file is migrated
				t.Fatal(err)
			}
			pySaveEventRun(t, path)
			s := openWith(t, sqlite.Config{Path: path, Shared: shared})
			byKey, err := s.RunList(ctx, &store.RunListParams{WaitKeys: []string{"evt:done"}})
			if err != nil || len(byKey) != 1 {
				t.Fatalf("RunList by wait key = %d runs, %v; want 1", len(byKey), err)
			}
			due, err := s.RunListDue(ctx, &store.RunListDueParams{Now: now})
			if err != nil {
				t.Fatal(err)
			}
			if len(due) != 1 || due[0].RunID != pyEventRun {
				t.Fatalf("RunListDue = %+v; want the event run, due at its timeout 22:50:00.25 (as when the same row is there at the first open)", due)
			}
		})
	}
}
