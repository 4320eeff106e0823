package sqlite

import (
	"path/filepath"
	"testing"

	"github.com/abstractframework/abstractgateway/durable"
	"github.com/abstractframework/abstractgateway/store"
)

// New and Close back-fill ledger_heads: they raise every head to the
// highest seq of its run (backfillLedgerHeads), as newer Pythons do when
// they open a database and 0.4.28 never does.
// A store owning its file appends without keeping the heads, so a head a
// shared store (or Python) left behind must be raised at the next open,
// or a Python process allocating from it would reuse a seq the ledger
// holds.
func TestOpenRaisesLedgerHeadsLeftBehind(t *testing.T) {
	t.Parallel()
	ctx := t.Context()
	path := filepath.Join(t.TempDir(), "runtime.sqlite3")
	rec := func(step string) *durable.StepRecord {
		return &durable.StepRecord{RunID: "r1", StepID: step, Status: durable.StepCompleted}
	}
	shared := openStore(t, Config{Path: path, Shared: true})
	if err := shared.RunCommit(ctx, &store.CommitParams{Run: redoRun("r1"), Create: true,
		Records: []*durable.StepRecord{rec("s1"), rec("s2")}}); err != nil {
		t.Fatal(err)
	}
	if err := shared.Close(); err != nil {
		t.Fatal(err)
	}
	owned := openStore(t, Config{Path: path})
	if err := owned.LedgerAppend(ctx, "r1", []*durable.StepRecord{rec("s3"), rec("s4")}); err != nil {
		t.Fatal(err)
	}
	if err := owned.Close(); err != nil {
		t.Fatal(err)
	}
	head := func() int64 {
		t.Helper()
		db := openRawDB(t, path)
		defer db.Close()
		var n int64
		if err := db.QueryRow(`SELECT COALESCE((SELECT last_seq FROM ledger_heads WHERE run_id = 'r1'), 0)`).Scan(&n); err != nil {
			t.Fatal(err)
		}
		return n
	}
	// Python 0.4.28 numbers its appends from the heads and never rebuilds
	// them, so the owning store's Close raises them.
	if n := head(); n != 4 {
		t.Errorf("ledger_heads.last_seq after the owning store closed = %d, want 4: Python 0.4.28 would reuse seq 3", n)
	}
	reopened := openStore(t, Config{Path: path})
	if err := reopened.Close(); err != nil {
		t.Fatal(err)
	}
	if n := head(); n != 4 {
		t.Errorf("ledger_heads.last_seq after a reopen = %d, want 4 (the highest seq of the run)", n)
	}
}

// LedgerDelete removes the run's ledger_heads row with its records (its
// doc: "the records and the head go"), so a Python process open on a
// shared database does not keep allocating after the deleted records.
func TestLedgerDeleteRemovesLedgerHead(t *testing.T) {
	t.Parallel()
	ctx := t.Context()
	path := filepath.Join(t.TempDir(), "runtime.sqlite3")
	s := openStore(t, Config{Path: path, Shared: true})
	recs := []*durable.StepRecord{{RunID: "r", StepID: "a"}, {RunID: "r", StepID: "b"}, {RunID: "r", StepID: "c"}}
	if err := s.LedgerAppend(ctx, "r", recs); err != nil {
		t.Fatal(err)
	}
	db := openRawDB(t, path)
	defer db.Close()
	heads := func() int {
		var n int
		if err := db.QueryRow(`SELECT COUNT(*) FROM ledger_heads WHERE run_id = 'r'`).Scan(&n); err != nil {
			t.Fatal(err)
		}
		return n
	}
	if n := heads(); n != 1 {
		t.Fatalf("ledger_heads rows after an append = %d, want 1", n)
	}
	if n, err := s.LedgerDelete(ctx, "r"); err != nil || n != 3 {
		t.Fatalf("LedgerDelete = %d, %v; want 3", n, err)
	}
	if n := heads(); n != 0 {
		t.Fatalf("ledger_heads rows after LedgerDelete = %d, want 0", n)
	}
}
