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

// TestKeyIndexRereadsPythonRowsNotIndexedYet: in a shared database a
// completed record Python wrote with a NaN gets its completed_key only
// when some Go store runs indexPythonRows (migration 013's
// python_unindexed list, filled in the insert's transaction). The key
// index must not count such a row as read while it is listed: else,
// once another process indexed it, this store's look-ups would pass it
// for good and answer "no completed record" for a key the ledger holds
// (the runtime would run that effect again).
func TestKeyIndexRereadsPythonRowsNotIndexedYet(t *testing.T) {
	ctx := t.Context()
	path := filepath.Join(t.TempDir(), "shared.db")
	a := openWith(t, sqlite.Config{Path: path, Shared: true})
	b := openWith(t, sqlite.Config{Path: path, Shared: true})
	createRunStartedUnderK(t, a)
	if got, err := a.LedgerFindCompleted(ctx, "r", "K"); err != nil || got != nil {
		t.Fatalf("before: %v, %v", got, err)
	}

	py, err := sql.Open("sqlite", path)
	if err != nil {
		t.Fatal(err)
	}
	defer py.Close()
	py.SetMaxOpenConns(1)
	rec := strings.NewReplacer("RUN", "r").Replace(`{"run_id": "RUN", "step_id": "py-1", "node_id": "n", "status": "completed", "effect": null, "result": {"confidence": NaN}, "error": null, "started_at": "2026-12-03T10:00:01+00:00", "ended_at": "2026-12-03T10:00:01+00:00", "actor_id": null, "session_id": null, "attempt": 1, "idempotency_key": "K", "prev_hash": null, "record_hash": null, "signature": null}`)
	for _, q := range []struct {
		sql  string
		args []any
	}{
		{`UPDATE ledger_heads SET last_seq = last_seq + 1 WHERE run_id = ?`, []any{"r"}},
		{`INSERT INTO ledger (run_id, seq, record_json) VALUES (?, 2, ?)`, []any{"r", rec}},
	} {
		if _, err := py.ExecContext(ctx, q.sql, q.args...); err != nil {
			t.Fatal(q.sql, err)
		}
	}
	var ck sql.NullString
	if err := py.QueryRowContext(ctx, `SELECT completed_key FROM ledger WHERE run_id = 'r' AND seq = 2`).Scan(&ck); err != nil || ck.Valid {
		t.Fatalf("setup: completed_key of Python's NaN row = %v, %v; want NULL", ck, err)
	}
	// The run goes on: a record after Python's.
	if err := a.LedgerAppend(ctx, "r", []*durable.StepRecord{{RunID: "r", StepID: "s3", NodeID: "n", Status: durable.StepStarted, IdempotencyKey: "L"}}); err != nil {
		t.Fatal(err)
	}
	// Row 2 is listed as not indexed yet: reading the ledger counts rows up
	// to 1 as read, not 3, so a later look-up reads row 2 again.
	if through, err := sqlite.KeyIndexReadThrough(a, ctx, "r", 0); err != nil || through != 1 {
		t.Fatalf("key index read through %d, %v; want 1 (row 2 still to be indexed)", through, err)
	}
	// B (another process on the file) indexes it.
	if got, err := b.LedgerFindCompleted(ctx, "r", "K"); err != nil || got == nil || got.Seq != 2 {
		t.Fatalf("store B: LedgerFindCompleted(K) = %+v, %v; want seq 2", got, err)
	}
	got, err := a.LedgerFindCompleted(ctx, "r", "K")
	if err != nil || got == nil || got.Seq != 2 {
		t.Fatalf("store A: LedgerFindCompleted(K) = %+v, %v; want the completed record of seq 2 (indexed by store B): ", got, err)
	}
}

// TestKeyIndexRereadsTheFirstOfSeveralPythonRowsNotIndexedYet: with two
// Python rows still to be indexed, what counts as read ends before the
// first of them, not the last; else the first one's key, once indexed,
// would never be read and its completed record never found.
func TestKeyIndexRereadsTheFirstOfSeveralPythonRowsNotIndexedYet(t *testing.T) {
	ctx := t.Context()
	path := filepath.Join(t.TempDir(), "shared.db")
	a := openWith(t, sqlite.Config{Path: path, Shared: true})
	createRunStartedUnderK(t, a)
	py, err := sql.Open("sqlite", path)
	if err != nil {
		t.Fatal(err)
	}
	defer py.Close()
	py.SetMaxOpenConns(1)
	for seq, key := range map[int]string{2: "K", 3: "L"} {
		rec := strings.NewReplacer("KEY", key).Replace(`{"run_id": "r", "step_id": "py", "node_id": "n", "status": "completed", "effect": null, "result": {"confidence": NaN}, "error": null, "started_at": "2026-12-03T10:00:01+00:00", "ended_at": "2026-12-03T10:00:01+00:00", "actor_id": null, "session_id": null, "attempt": 1, "idempotency_key": "KEY", "prev_hash": null, "record_hash": null, "signature": null}`)
		if _, err := py.ExecContext(ctx, `INSERT INTO ledger (run_id, seq, record_json) VALUES ('r', ?, ?)`, seq, rec); err != nil {
			t.Fatal(err)
		}
	}
	if through, err := sqlite.KeyIndexReadThrough(a, ctx, "r", 0); err != nil || through != 1 {
		t.Fatalf("key index read through %d, %v; want 1 (rows 2 and 3 still to be indexed)", through, err)
	}
}

// TestPythonRowNotCompletedGetsNoCompletedKey: indexing a Python row that
// SQLite's JSON could not read gives completed_key only to a completed
// record; a started one with an idempotency key keeps NULL, even when
// "completed" appears in its text, so that migration 013 lists it (the column
// names completed records only), else look-ups by that key would read it.
func TestPythonRowNotCompletedGetsNoCompletedKey(t *testing.T) {
	ctx := t.Context()
	path := filepath.Join(t.TempDir(), "shared.db")
	a := openWith(t, sqlite.Config{Path: path, Shared: true})
	py, err := sql.Open("sqlite", path)
	if err != nil {
		t.Fatal(err)
	}
	defer py.Close()
	py.SetMaxOpenConns(1)
	rec := `{"run_id": "r", "step_id": "completed", "node_id": "n", "status": "started", "effect": null, "result": {"confidence": NaN}, "error": null, "started_at": "2026-12-03T10:00:01+00:00", "ended_at": null, "actor_id": null, "session_id": null, "attempt": 1, "idempotency_key": "K", "prev_hash": null, "record_hash": null, "signature": null}`
	if _, err := py.ExecContext(ctx, `INSERT INTO ledger (run_id, seq, record_json) VALUES ('r', 1, ?)`, rec); err != nil {
		t.Fatal(err)
	}
	if got, err := a.LedgerFindCompleted(ctx, "r", "K"); err != nil || got != nil {
		t.Fatalf("LedgerFindCompleted(K) = %+v, %v; want nil (the record is only started)", got, err)
	}
	var ck sql.NullString
	if err := py.QueryRowContext(ctx, `SELECT completed_key FROM ledger WHERE run_id = 'r' AND seq = 1`).Scan(&ck); err != nil || ck.Valid {
		t.Fatalf("completed_key of Python's started NaN row after indexing = %v, %v; want NULL", ck, err)
	}
}

// createRunStartedUnderK creates run "r" in s with one record, s0, started
// under the idempotency key K: its completion is still to come.
func createRunStartedUnderK(t *testing.T, s store.Store) {
	t.Helper()
	now := durable.NewTime(time.Date(2026, 12, 3, 10, 0, 0, 0, time.UTC))
	run := &durable.RunState{RunID: "r", WorkflowID: "wf", Status: durable.RunRunning, CurrentNode: "n",
		Vars: map[string]any{}, CreatedAt: now, UpdatedAt: now}
	if err := s.RunCommit(t.Context(), &store.CommitParams{Run: run, Create: true, Records: []*durable.StepRecord{
		{RunID: "r", StepID: "s0", NodeID: "n", Status: durable.StepStarted, IdempotencyKey: "K"}}}); err != nil {
		t.Fatal(err)
	}
}
