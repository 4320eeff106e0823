package sqlite_test

import (
	"path/filepath"
	"testing"
	"time"

	"github.com/abstractframework/abstractgateway/store"
	"github.com/abstractframework/abstractgateway/store/sqlite"
)

// TestPythonZeroFractionDeadlineDueAtNow: a WAIT_UNTIL deadline a Python
// node spelled with an all-zero fraction ("…T12:00:00.000000+00:00",
// strftime's %f), which Python's SqliteRunStore.save copies verbatim into
// wait_index.next_due_iso, is due at exactly that instant: RunListDue
// lists runs whose deadline is at or before Now. Compared as text with
// Now in the canonical form ("…T12:00:00+00:00") it sorted after it, so
// migration 020 and stmts.go's canonicalDue treat it as a foreign form,
// compared by its parsed time.
func TestPythonZeroFractionDeadlineDueAtNow(t *testing.T) {
	t.Parallel()
	path := filepath.Join(t.TempDir(), "py.sqlite3")
	if err := openWith(t, sqlite.Config{Path: path}).Close(); err != nil {
		t.Fatal(err)
	}
	const id, until, created = "py-until", "2026-03-01T12:00:00.000000+00:00", "2026-03-01T11:00:00+00:00"
	runJSON := `{"run_id": "py-until", "workflow_id": "wf", "status": "waiting", "current_node": "wait", "vars": {}, ` +
		`"waiting": {"reason": "until", "wait_key": null, "until": "` + until + `", "resume_to_node": "next", "result_key": null, ` +
		`"prompt": null, "choices": null, "allow_free_text": false, "details": null}, "output": null, "error": null, ` +
		`"created_at": "` + created + `", "updated_at": "` + created + `", "actor_id": null, "session_id": null, "parent_run_id": null}`
	// What SqliteRunStore.save (abstractruntime 0.4.28) executes for a
	// WAITING/UNTIL run.
	db := rawDB(t, path)
	if _, err := db.Exec(pythonUpsertRun, id, "wf", "waiting", "until", until, nil, nil, nil, created, created, runJSON); err != nil {
		t.Fatal(err)
	}
	if _, err := db.Exec(`INSERT INTO wait_index (run_id, next_due_iso, updated_at_iso, status) VALUES (?, ?, ?, ?)
		ON CONFLICT(run_id) DO UPDATE SET next_due_iso=excluded.next_due_iso, updated_at_iso=excluded.updated_at_iso, status=excluded.status;`,
		id, until, created, "waiting_until"); err != nil {
		t.Fatal(err)
	}
	_ = db.Close()

	now := time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)
	for _, shared := range []bool{false, true} {
		s := openWith(t, sqlite.Config{Path: path, Shared: shared})
		due, err := s.RunListDue(t.Context(), &store.RunListDueParams{Now: now})
		if err != nil {
			t.Fatal(err)
		}
		next, err := s.RunNextDue(t.Context())
		if err != nil {
			t.Fatal(err)
		}
		if len(due) != 1 || due[0].RunID != id || !due[0].Until.Equal(now) || !next.Equal(now) {
			t.Errorf("shared=%v: RunListDue(Now=%s) = %v, RunNextDue = %v; want [%s] due at its deadline %s",
				shared, now.Format(time.RFC3339), due, next, id, until)
		}
		if err := s.Close(); err != nil {
			t.Fatal(err)
		}
	}
}
