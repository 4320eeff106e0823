package postgres_test

import (
	"context"
	"testing"
	"time"

	"github.com/abstractframework/abstractgateway/durable"
	"github.com/abstractframework/abstractgateway/store"
	"github.com/abstractframework/abstractgateway/store/hashchain"
)

// Runner A appends to a run and cached its head (seq 2). Runner B then
// deletes the run's ledger and the run's ledger grows back to 2 records
// through B. A's cached head had the seq the ledger's length check looked
// for, so A chained its next record to the hash of the deleted record,
// and the stored ledger no longer verified. The decorator now reads the
// head from the ledger at every append.
func TestHashchainHeadAfterAnotherRunnerDeletedTheLedger(t *testing.T) {
	testURL(t)
	ctx := context.Background()
	stores := openRunners(t, 2)
	a, b := hashchain.Wrap(stores[0]), hashchain.Wrap(stores[1])
	now := durable.NewTime(time.Now())
	const id = "run-regrown"
	rec := func(step string) []*durable.StepRecord {
		return []*durable.StepRecord{{RunID: id, StepID: step, NodeID: "n", Status: durable.StepCompleted, StartedAt: now, EndedAt: now}}
	}
	for _, s := range []string{"old-1", "old-2"} {
		if err := a.LedgerAppend(ctx, id, rec(s)); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := b.LedgerDelete(ctx, id); err != nil {
		t.Fatal(err)
	}
	for _, s := range []string{"new-1", "new-2"} {
		if err := b.LedgerAppend(ctx, id, rec(s)); err != nil {
			t.Fatal(err)
		}
	}
	if err := a.LedgerAppend(ctx, id, rec("new-3")); err != nil { // the run comes back to A
		t.Fatal(err)
	}
	recs, err := stores[0].LedgerList(ctx, &store.LedgerListParams{RunID: id})
	if err != nil {
		t.Fatal(err)
	}
	if rep := hashchain.VerifyLedgerChain(recs); !rep.OK {
		t.Fatalf("ledger of %d records does not verify: %+v", len(recs), rep.Errors)
	}
}
