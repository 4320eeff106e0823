package postgres_test

import (
	"testing"
	"time"

	"github.com/abstractframework/abstractgateway/durable"
)

// TestLedgerLockIsPerSchema: the per-run ledger lock an append holds to
// its commit is scoped to the store's schema, so a store in another schema
// of the same database appends to its run of the same id without waiting
// for it (postgres.go lockOn), while an append to the same schema does
// wait. Store A's append is held, after it took its lock, by another
// session's uncommitted row at the seq it allocates.
func TestLedgerLockIsPerSchema(t *testing.T) {
	testURL(t)
	ctx := t.Context()
	schemaA, schemaB := testSchema(t), testSchema(t)
	a, a2, b := openSchema(t, schemaA), openSchema(t, schemaA), openSchema(t, schemaB)
	rec := func() []*durable.StepRecord {
		return []*durable.StepRecord{{RunID: "r", StepID: "s", NodeID: "n", Status: durable.StepCompleted, Attempt: 1}}
	}
	if err := a.LedgerAppend(ctx, "r", rec()); err != nil {
		t.Fatal(err)
	}
	conn, tx := lockingTx(t, schemaA)
	if _, err := tx.Exec(ctx, `INSERT INTO ledger (run_id, seq, record_json) VALUES ('r', 2, '{}')`); err != nil {
		t.Fatal(err)
	}
	aDone := make(chan error, 1)
	go func() { aDone <- a.LedgerAppend(ctx, "r", rec()) }()
	waitForBlocked(t, conn, 1) // A holds its ledger lock on r, waiting on seq 2
	a2Done := make(chan error, 1)
	go func() { a2Done <- a2.LedgerAppend(ctx, "r", rec()) }()
	bDone := make(chan error, 1)
	go func() { bDone <- b.LedgerAppend(ctx, "r", rec()) }()
	select {
	case err := <-bDone:
		if err != nil {
			t.Errorf("append in schema B: %v", err)
		}
	case <-time.After(5 * time.Second):
		t.Errorf("an append to run r in schema B waited on the ledger lock of run r in schema A")
	}
	select {
	case err := <-a2Done:
		t.Errorf("a second append to run r in schema A did not wait for the first one's lock: %v", err)
	default:
	}
	if err := tx.Rollback(ctx); err != nil {
		t.Fatal(err)
	}
	for _, c := range []chan error{aDone, a2Done} {
		if err := <-c; err != nil {
			t.Fatalf("append in schema A: %v", err)
		}
	}
}
