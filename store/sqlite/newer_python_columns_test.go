package sqlite_test

import (
	"database/sql"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/abstractframework/abstractgateway/durable"
	"github.com/abstractframework/abstractgateway/store"
	"github.com/abstractframework/abstractgateway/store/sqlite"
)

// A database the newer Python runtime (lpalbou/AbstractRuntime
// storage/sqlite.py after 0.4.28) has opened has runs columns it fills
// from run_json at each save (paused, run_lifecycle_json and the
// automation attribution) and reads instead of run_json: its
// probe_control ("the external-control probe runs at loop top AND before
// every save") reads only status and paused. Our commits left them as
// they were, so after we lifted a pause runs.paused still said 1 and that
// Python held the run paused. In that module SQL NULL means "not yet
// back-filled": its readers fall back to run_json and its next open fills
// the row again. Promises: doc.go "the Python columns are kept filled the
// way Python fills them"; docs/compatibility.md "A database created by
// Python opens and its runs continue".

// execRaw runs statements on the file as another process (Python) would.
func execRaw(t *testing.T, path string, stmts ...string) {
	t.Helper()
	db := rawDB(t, path)
	defer db.Close()
	for _, q := range stmts {
		if _, err := db.Exec(q); err != nil {
			t.Fatalf("%s: %v", q, err)
		}
	}
}

// newerPythonHotColumnsDDL is what the newer Python module's
// SqliteDatabase._ensure_schema adds first (backlog 0068): the run hot
// columns, with its indexes.
var newerPythonHotColumnsDDL = []string{
	`ALTER TABLE runs ADD COLUMN paused INTEGER`,
	`ALTER TABLE runs ADD COLUMN run_lifecycle_json TEXT`,
	`CREATE INDEX IF NOT EXISTS idx_runs_updated ON runs(updated_at DESC)`,
	`CREATE INDEX IF NOT EXISTS idx_runs_unbackfilled ON runs(run_id) WHERE paused IS NULL`,
}

// newerPythonAttributionDDL is what a later version of that module adds:
// the attribution columns and the ledger idempotency columns (backlog
// 0047), with their indexes.
var newerPythonAttributionDDL = []string{
	`ALTER TABLE runs ADD COLUMN automation_id TEXT`,
	`ALTER TABLE runs ADD COLUMN role TEXT`,
	`ALTER TABLE runs ADD COLUMN occurrence_index INTEGER`,
	`ALTER TABLE runs ADD COLUMN session_kind TEXT`,
	`CREATE INDEX IF NOT EXISTS idx_runs_automation ON runs(automation_id, role, occurrence_index)`,
	`CREATE INDEX IF NOT EXISTS idx_runs_session_role ON runs(session_id, role)`,
	`CREATE INDEX IF NOT EXISTS idx_runs_session_kind_updated ON runs(session_kind, updated_at DESC)`,
	`CREATE INDEX IF NOT EXISTS idx_runs_unattributed ON runs(run_id) WHERE session_kind IS NULL`,
	`ALTER TABLE ledger ADD COLUMN idempotency_key TEXT`,
	`ALTER TABLE ledger ADD COLUMN step_status TEXT`,
	`CREATE INDEX IF NOT EXISTS idx_ledger_unbackfilled ON ledger(run_id) WHERE step_status IS NULL`,
	`CREATE INDEX IF NOT EXISTS idx_ledger_idem ON ledger(run_id, idempotency_key, seq) WHERE idempotency_key IS NOT NULL`,
}

// newerPythonDDL is all the newer module adds to the 0.4.28 schema.
var newerPythonDDL = append(append([]string{}, newerPythonHotColumnsDDL...), newerPythonAttributionDDL...)

// newerPythonSave is the newer module's SqliteRunStore.save upsert
// (_RUN_COLUMNS, every column but run_id and created_at updated).
const newerPythonSave = `INSERT INTO runs (run_id, workflow_id, status, wait_reason, wait_until, parent_run_id, actor_id,
  session_id, created_at, updated_at, run_json, paused, run_lifecycle_json, automation_id, role, occurrence_index, session_kind)
VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)
ON CONFLICT(run_id) DO UPDATE SET workflow_id=excluded.workflow_id, status=excluded.status, wait_reason=excluded.wait_reason,
  wait_until=excluded.wait_until, parent_run_id=excluded.parent_run_id, actor_id=excluded.actor_id,
  session_id=excluded.session_id, updated_at=excluded.updated_at, run_json=excluded.run_json, paused=excluded.paused,
  run_lifecycle_json=excluded.run_lifecycle_json, automation_id=excluded.automation_id, role=excluded.role,
  occurrence_index=excluded.occurrence_index, session_kind=excluded.session_kind`

// newerPythonPausedRun is run_json as the newer module writes it
// (serialize.dumps_compact: separators (",", ":"), non-ASCII kept) for a
// paused run waiting until `until`.
func newerPythonPausedRun(id, until string) string {
	const at = "2026-01-01T00:00:00+00:00"
	return `{"run_id":"` + id + `","workflow_id":"wf","status":"waiting","current_node":"wait",` +
		`"vars":{"_runtime":{"control":{"paused":true}}},"waiting":{"reason":"until","wait_key":null,"until":"` + until +
		`","resume_to_node":"next","result_key":null,"prompt":null,"choices":null,"allow_free_text":true,"details":null},` +
		`"output":null,"error":null,"created_at":"` + at + `","updated_at":"` + at + `","actor_id":null,"session_id":null,"parent_run_id":null}`
}

// newerPythonSavePaused does what the newer module's save does for that
// run: the upsert (paused = 1) and _sync_wait_index, which indexes a
// waiting run with a deadline whether or not it is paused.
func newerPythonSavePaused(t *testing.T, path, id, until string) {
	t.Helper()
	db := rawDB(t, path)
	defer db.Close()
	const at = "2026-01-01T00:00:00+00:00"
	if _, err := db.Exec(newerPythonSave, id, "wf", "waiting", "until", until, nil, nil, nil, at, at,
		newerPythonPausedRun(id, until), 1, "null", nil, nil, nil, "chat"); err != nil {
		t.Fatal(err)
	}
	if _, err := db.Exec(`INSERT INTO wait_index (run_id, next_due_iso, updated_at_iso, status) VALUES (?, ?, ?, ?)
		ON CONFLICT(run_id) DO UPDATE SET next_due_iso=excluded.next_due_iso, updated_at_iso=excluded.updated_at_iso, status=excluded.status`,
		id, until, at, "waiting_until"); err != nil {
		t.Fatal(err)
	}
}

// liftPause commits run id with its pause lifted, as a host's resume does.
func liftPause(t *testing.T, s *sqlite.Store, id string) {
	t.Helper()
	ctx := t.Context()
	r, err := s.RunGet(ctx, id)
	if err != nil {
		t.Fatal(err)
	}
	r.Vars = map[string]any{"_runtime": map[string]any{"control": map[string]any{"paused": false}}}
	r.UpdatedAt = durable.NewTime(time.Date(2026, 1, 1, 0, 1, 0, 0, time.UTC))
	if err := s.RunCommit(ctx, &store.CommitParams{Run: r}); err != nil {
		t.Fatal(err)
	}
}

// derivedColumns reads the newer Python's derived columns of run id as
// text ("NULL" for SQL NULL), in newerPythonColumnNames order.
var newerPythonColumnNames = []string{"paused", "run_lifecycle_json", "automation_id", "role", "occurrence_index", "session_kind"}

func derivedColumns(t *testing.T, db *sql.DB, id string, cols []string) []string {
	t.Helper()
	sel := make([]string, len(cols))
	for i, c := range cols {
		sel[i] = "COALESCE(CAST(" + c + " AS TEXT), 'NULL')"
	}
	out := make([]string, len(cols))
	dst := make([]any, len(cols))
	for i := range out {
		dst[i] = &out[i]
	}
	if err := db.QueryRow(`SELECT `+strings.Join(sel, ", ")+` FROM runs WHERE run_id = ?`, id).Scan(dst...); err != nil {
		t.Fatal(err)
	}
	return out
}

// TestNewerPythonColumnsClearedByOurCommits: after our commit lifts a
// pause of a run the newer Python saved, its derived columns are NULL
// (not back-filled), not the values of the state before the commit.
func TestNewerPythonColumnsClearedByOurCommits(t *testing.T) {
	t.Parallel()
	for name, cfg := range map[string]sqlite.Config{"owned": {}, "owned no redo": {NoRedoLog: true}, "shared": {Shared: true}} {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			path := filepath.Join(t.TempDir(), "runtime.sqlite3")
			execRaw(t, path, append([]string{"PRAGMA journal_mode=WAL", pythonDDL}, newerPythonDDL...)...)
			newerPythonSavePaused(t, path, "py-paused", "2099-01-01T00:00:00+00:00")

			cfg.Path = path
			s := openWith(t, cfg)
			liftPause(t, s, "py-paused")
			if err := s.Close(); err != nil {
				t.Fatal(err)
			}
			db := rawDB(t, path)
			defer db.Close()
			for i, v := range derivedColumns(t, db, "py-paused", newerPythonColumnNames) {
				if v != "NULL" {
					t.Errorf("after our commit lifted the pause, runs.%s = %s; want NULL (not back-filled: the newer "+
						"Python reads run_json instead, and fills it at its next open)", newerPythonColumnNames[i], v)
				}
			}
		})
	}
}

// TestNewerPythonSaveKeepsItsColumns: the trigger leaves the newer
// Python's own saves alone (they set the columns with run_json), so its
// fast reads keep working for the runs it writes.
func TestNewerPythonSaveKeepsItsColumns(t *testing.T) {
	t.Parallel()
	path := filepath.Join(t.TempDir(), "runtime.sqlite3")
	execRaw(t, path, append([]string{"PRAGMA journal_mode=WAL", pythonDDL}, newerPythonDDL...)...)
	newerPythonSavePaused(t, path, "py-paused", "2099-01-01T00:00:00+00:00")
	s := openShared(t, path)
	liftPause(t, s, "py-paused")
	newerPythonSavePaused(t, path, "py-paused", "2099-01-01T00:00:00+00:00") // Python pauses it again
	db := rawDB(t, path)
	defer db.Close()
	got := derivedColumns(t, db, "py-paused", newerPythonColumnNames)
	if want := []string{"1", "null", "NULL", "NULL", "NULL", "chat"}; strings.Join(got, " ") != strings.Join(want, " ") {
		t.Errorf("after a Python save, the derived columns = %v; want what it wrote, %v", got, want)
	}
	r, err := s.RunGet(t.Context(), "py-paused")
	if err != nil || !r.HostPaused() {
		t.Errorf("RunGet after the Python save = paused %v, %v; want the pause", r != nil && r.HostPaused(), err)
	}
}

// newerPythonTriggers returns the SQL of the triggers that mention the
// newer Python's paused column.
func newerPythonTriggers(t *testing.T, path string) []string {
	t.Helper()
	db := rawDB(t, path)
	defer db.Close()
	rows, err := db.Query(`SELECT sql FROM sqlite_master WHERE type = 'trigger' AND sql LIKE '%paused = NULL%'`)
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	var out []string
	for rows.Next() {
		var q string
		if err := rows.Scan(&q); err != nil {
			t.Fatal(err)
		}
		out = append(out, q)
	}
	return out
}

// TestNewerPythonTriggerOnlyWithItsColumns: the trigger is installed only
// in a database that has the newer Python's columns (a 0.4.28 database or
// ours keeps its schema), once, and covers the columns a later Python
// version added since.
func TestNewerPythonTriggerOnlyWithItsColumns(t *testing.T) {
	t.Parallel()
	ctx := t.Context()
	dir := t.TempDir()

	py := filepath.Join(dir, "python-0.4.28.sqlite3")
	writePythonDB(t, py)
	ours := filepath.Join(dir, "ours.sqlite3")
	for _, path := range []string{py, ours} {
		s, err := sqlite.New(ctx, sqlite.Config{Path: path})
		if err != nil {
			t.Fatal(err)
		}
		if err := s.Close(); err != nil {
			t.Fatal(err)
		}
		if got := newerPythonTriggers(t, path); len(got) != 0 {
			t.Errorf("%s: triggers %v in a database without the newer Python's columns", filepath.Base(path), got)
		}
	}

	// The first newer version adds paused and run_lifecycle_json only.
	path := filepath.Join(dir, "newer.sqlite3")
	execRaw(t, path, append([]string{"PRAGMA journal_mode=WAL", pythonDDL}, newerPythonHotColumnsDDL...)...)
	for range 2 {
		s, err := sqlite.New(ctx, sqlite.Config{Path: path})
		if err != nil {
			t.Fatal(err)
		}
		if err := s.Close(); err != nil {
			t.Fatal(err)
		}
	}
	got := newerPythonTriggers(t, path)
	if len(got) != 1 || !strings.Contains(got[0], "run_lifecycle_json = NULL") || strings.Contains(got[0], "session_kind") {
		t.Fatalf("triggers after two opens of a database with paused and run_lifecycle_json: %v; want one clearing those two", got)
	}

	// A later one adds the attribution columns; our next open covers them.
	execRaw(t, path, newerPythonAttributionDDL...)
	s, err := sqlite.New(ctx, sqlite.Config{Path: path})
	if err != nil {
		t.Fatal(err)
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	got = newerPythonTriggers(t, path)
	if len(got) != 1 || !strings.Contains(got[0], "session_kind = NULL") {
		t.Fatalf("triggers after the attribution columns were added: %v; want one that clears session_kind too", got)
	}
}
