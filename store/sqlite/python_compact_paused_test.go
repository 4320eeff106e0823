package sqlite_test

import (
	"path/filepath"
	"testing"
	"time"

	"github.com/abstractframework/abstractgateway/store"
	"github.com/abstractframework/abstractgateway/store/sqlite"
)

// Migration 014 promises that when "a Python process writing to a
// database this store migrated" puts a paused run's row back into
// wait_index, "these triggers take the row of a paused run out as it is
// written" (docs/compatibility.md: paused runs "leave the due index").
// Its triggers only looked for the text `"paused": true` (json.dumps'
// default separators); the newer Python module writes run_json with
// compact separators (storage/serialize.py dumps_compact:
// `"paused":true`) and indexes paused runs (_sync_wait_index has no pause
// check), so such a run stayed in wait_index and was listed as due at
// every poll. Migration 018 fixes the triggers and removes the rows that
// were indexed before it.

// dueIDs lists the due runs at 2026-06-01.
func dueIDs(t *testing.T, s *sqlite.Store) []string {
	t.Helper()
	due, err := s.RunListDue(t.Context(), &store.RunListDueParams{Now: time.Date(2026, 6, 1, 0, 0, 0, 0, time.UTC)})
	if err != nil {
		t.Fatal(err)
	}
	var ids []string
	for _, d := range due {
		ids = append(ids, d.RunID)
	}
	return ids
}

// TestPythonCompactJSONPausedRunNotDue: a paused run the newer Python
// saves into a database this store migrated leaves the due index at once.
func TestPythonCompactJSONPausedRunNotDue(t *testing.T) {
	t.Parallel()
	for name, cfg := range map[string]sqlite.Config{"owned": {}, "shared": {Shared: true}} {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			path := filepath.Join(t.TempDir(), "runtime.sqlite3")
			cfg.Path = path
			s := openWith(t, cfg)
			if err := s.Close(); err != nil {
				t.Fatal(err)
			}
			// The newer Python opens the database (adding its columns), then
			// saves a paused run whose deadline has passed.
			execRaw(t, path, newerPythonDDL...)
			newerPythonSavePaused(t, path, "py-paused", "2026-01-01T00:00:00+00:00")

			s = openWith(t, cfg)
			if ids := dueIDs(t, s); len(ids) != 0 {
				t.Errorf("RunListDue = %v; the paused run py-paused (run_json with compact separators) must not be due", ids)
			}
		})
	}
}

// TestCompactPausedRowsIndexedBeforeMigration018Leave: the wait_index
// rows such a Python process wrote while only 014's triggers were there
// are removed when 018 is applied, as 009 removed those of its time.
func TestCompactPausedRowsIndexedBeforeMigration018Leave(t *testing.T) {
	t.Parallel()
	path := filepath.Join(t.TempDir(), "runtime.sqlite3")
	s := open(t, path)
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	// Back to schema 017: 014's triggers, as that version left them.
	execRaw(t, path,
		`DROP TRIGGER wait_index_paused_foreign_insert`,
		`DROP TRIGGER wait_index_paused_foreign_update`,
		`CREATE TRIGGER wait_index_paused_foreign_insert AFTER INSERT ON wait_index WHEN (SELECT instr(run_json, '"paused": true') FROM runs WHERE run_id = NEW.run_id) > 0
  BEGIN DELETE FROM wait_index WHERE run_id = NEW.run_id AND (SELECT CASE WHEN json_valid(run_json) THEN json_extract(run_json, '$.vars._runtime.control.paused') END FROM runs WHERE run_id = NEW.run_id) = 1; END`,
		`CREATE TRIGGER wait_index_paused_foreign_update AFTER UPDATE ON wait_index WHEN (SELECT instr(run_json, '"paused": true') FROM runs WHERE run_id = NEW.run_id) > 0
  BEGIN DELETE FROM wait_index WHERE run_id = NEW.run_id AND (SELECT CASE WHEN json_valid(run_json) THEN json_extract(run_json, '$.vars._runtime.control.paused') END FROM runs WHERE run_id = NEW.run_id) = 1; END`,
		`DELETE FROM schema_migrations WHERE version = 18`,
	)
	execRaw(t, path, newerPythonDDL...)
	newerPythonSavePaused(t, path, "py-paused", "2026-01-01T00:00:00+00:00")
	db := rawDB(t, path)
	var n int
	if err := db.QueryRow(`SELECT COUNT(*) FROM wait_index WHERE run_id = 'py-paused'`).Scan(&n); err != nil || n != 1 {
		t.Fatalf("setup: wait_index rows of py-paused under 014's triggers = %d, %v; want 1", n, err)
	}
	_ = db.Close()

	s = open(t, path)
	if ids := dueIDs(t, s); len(ids) != 0 {
		t.Errorf("RunListDue after migration 018 = %v; want the paused run's row gone", ids)
	}
}
