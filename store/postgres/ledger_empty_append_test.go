package postgres_test

import (
	"testing"
	"time"

	"github.com/abstractframework/abstractgateway/durable"
)

// TestEmptyLedgerAppendIsANoOp: an append of no records writes nothing, so
// it neither takes the run's ledger lock nor waits for an append that holds
// it (ledger.go LedgerAppend returns before taking a connection). The
// other append is held, after it took its lock, by another session's
// uncommitted row at the seq it allocates.
func TestEmptyLedgerAppendIsANoOp(t *testing.T) {
	testURL(t)
	ctx := t.Context()
	schema := testSchema(t)
	a, b := openSchema(t, schema), openSchema(t, schema)
	rec := []*durable.StepRecord{{RunID: "r", StepID: "s", NodeID: "n", Status: durable.StepCompleted, Attempt: 1}}
	conn, tx := lockingTx(t, schema)
	if _, err := tx.Exec(ctx, `INSERT INTO ledger (run_id, seq, record_json) VALUES ('r', 1, '{}')`); err != nil {
		t.Fatal(err)
	}
	aDone := make(chan error, 1)
	go func() { aDone <- a.LedgerAppend(ctx, "r", rec) }()
	waitForBlocked(t, conn, 1) // a holds its ledger lock on r, waiting on seq 1
	bDone := make(chan error, 1)
	go func() { bDone <- b.LedgerAppend(ctx, "r", []*durable.StepRecord{}) }()
	select {
	case err := <-bDone:
		if err != nil {
			t.Errorf("empty append: %v", err)
		}
	case <-time.After(5 * time.Second):
		t.Errorf("an empty append to run r waited on the ledger lock of another append to r")
	}
	if err := tx.Rollback(ctx); err != nil {
		t.Fatal(err)
	}
	if err := <-aDone; err != nil {
		t.Fatal(err)
	}
	if n, err := b.LedgerCount(ctx, "r"); err != nil || n != 1 {
		t.Errorf("LedgerCount after one record and an empty append = %d, %v; want 1", n, err)
	}
}
