package sqlite_test

import (
	"database/sql"
	"os"
	"path/filepath"
	"strings"
	"testing"

	_ "modernc.org/sqlite"

	"github.com/abstractframework/abstractgateway/store/sqlite"
)

// TestFailedOpenClosesTheRedoLog: when New failed after opening the redo
// log (here: a stale deadline whose delete a trigger refuses), it stopped
// the log's goroutine but left the log's file open, one descriptor leaked
// per failed open.
func TestFailedOpenClosesTheRedoLog(t *testing.T) {
	ctx := t.Context()
	path := filepath.Join(t.TempDir(), "runtime.sqlite3")
	st, err := sqlite.New(ctx, sqlite.Config{Path: path})
	if err != nil {
		t.Fatal(err)
	}
	if err := st.Close(); err != nil {
		t.Fatal(err)
	}
	db, err := sql.Open("sqlite", path)
	if err != nil {
		t.Fatal(err)
	}
	for _, q := range []string{
		`INSERT INTO wait_index (run_id, next_due_iso, updated_at_iso, status) VALUES ('gone', '2026-01-01T00:00:00.000000+00:00', '', 'waiting')`,
		`CREATE TRIGGER refuse_deletes BEFORE DELETE ON wait_index BEGIN SELECT RAISE(ABORT, 'refused by test'); END`,
	} {
		if _, err := db.Exec(q); err != nil {
			t.Fatalf("%s: %v", q, err)
		}
	}
	db.Close()

	if _, err := sqlite.New(ctx, sqlite.Config{Path: path}); err == nil || !strings.Contains(err.Error(), "refused by test") {
		t.Fatalf("New = %v, want the trigger's refusal", err)
	}
	fds, err := os.ReadDir("/proc/self/fd")
	if err != nil {
		t.Skipf("no /proc/self/fd here: %v", err)
	}
	for _, fd := range fds {
		target, _ := os.Readlink(filepath.Join("/proc/self/fd", fd.Name()))
		if strings.HasPrefix(target, path) {
			t.Errorf("after a failed New, descriptor %s still refers to %s", fd.Name(), target)
		}
	}
}

// TestNewCreatesTheDirectory: New made the database file but not its
// directory, so the README's kernel example failed in a directory without
// data/ (Python's SqliteDatabase creates the parent directories).
func TestNewCreatesTheDirectory(t *testing.T) {
	path := filepath.Join(t.TempDir(), "data", "nested", "runtime.sqlite3")
	st, err := sqlite.New(t.Context(), sqlite.Config{Path: path})
	if err != nil {
		t.Fatalf("New in a missing directory: %v", err)
	}
	if err := st.Close(); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(path); err != nil {
		t.Fatalf("database file: %v", err)
	}
}
