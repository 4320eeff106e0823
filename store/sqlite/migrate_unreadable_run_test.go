package sqlite_test

import (
	"bytes"
	"log/slog"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/abstractframework/abstractgateway/store"
	"github.com/abstractframework/abstractgateway/store/sqlite"
)

// A Python database holding a waiting run whose run_json no longer decodes:
// the migrations that rebuild the deadline index pass over it with a
// warning naming it, and still index the runs beside it.
func TestMigrationWarnsOfTheRunItCannotIndex(t *testing.T) {
	path := filepath.Join(t.TempDir(), "db.sqlite3")
	writePythonDB(t, path)
	db := rawDB(t, path)
	if _, err := db.Exec(`INSERT INTO runs (run_id, workflow_id, status, wait_reason, wait_until, run_json)
		VALUES ('torn-run', 'demo_wf', 'waiting', 'until', '2026-11-29T23:00:00+00:00', '{"run_id": "torn-run", "status": "wai')`); err != nil {
		t.Fatal(err)
	}
	if err := db.Close(); err != nil {
		t.Fatal(err)
	}

	var logs bytes.Buffer
	st, err := sqlite.New(t.Context(), sqlite.Config{Path: path, Logger: slog.New(slog.NewTextHandler(&logs, nil))})
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	if !strings.Contains(logs.String(), "skipping unreadable run_json") || !strings.Contains(logs.String(), "run_id=torn-run") {
		t.Errorf("log after migrating:\n%s\nwant a warning naming run torn-run", logs.String())
	}
	due, err := st.RunListDue(t.Context(), &store.RunListDueParams{Now: time.Date(2027, 1, 1, 0, 0, 0, 0, time.UTC)})
	if err != nil {
		t.Fatal(err)
	}
	var ids []string
	for _, d := range due {
		ids = append(ids, d.RunID)
	}
	if strings.Join(ids, ",") != pyEventRun+","+pyUntilRun {
		t.Errorf("due runs = %v, want the event run then the until run (the torn run has no readable deadline)", ids)
	}
}
