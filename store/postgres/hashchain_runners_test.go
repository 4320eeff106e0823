package postgres_test

import (
	"context"
	"testing"
	"time"

	"github.com/abstractframework/abstractgateway/durable"
	"github.com/abstractframework/abstractgateway/store"
	"github.com/abstractframework/abstractgateway/store/hashchain"
)

// hashchain.Store caches each run's head hash in process. Claims only
// make writers take turns: with several runners on one PostgreSQL
// database a run moves between them (runner A ticks it, waits; runner B
// resumes it; A gets it back). A chained onto the head it had cached
// before B's records, and the stored ledger no longer verified; the
// cached head is now checked against the ledger's length.
func TestHashChainSurvivesARunMovingBetweenRunners(t *testing.T) {
	testURL(t)
	t.Parallel()
	ctx := context.Background()
	stores := openRunners(t, 2)
	a, b := hashchain.Wrap(stores[0]), hashchain.Wrap(stores[1])
	now := durable.NewTime(time.Now())
	run := &durable.RunState{RunID: "run-moving", WorkflowID: "w", Status: durable.RunRunning, Vars: map[string]any{}, CreatedAt: now, UpdatedAt: now}
	if err := a.RunCommit(ctx, &store.CommitParams{Run: run, Create: true}); err != nil {
		t.Fatal(err)
	}
	rec := func(step string) []*durable.StepRecord {
		return []*durable.StepRecord{{RunID: run.RunID, StepID: step, NodeID: "n", Status: durable.StepCompleted, StartedAt: now, EndedAt: now}}
	}
	for i, w := range []*hashchain.Store{a, b, a} { // A, then B (A's claim gone), then A again
		if err := w.LedgerAppend(ctx, run.RunID, rec("s"+string(rune('1'+i)))); err != nil {
			t.Fatal(err)
		}
	}
	recs, err := stores[0].LedgerList(ctx, &store.LedgerListParams{RunID: run.RunID})
	if err != nil {
		t.Fatal(err)
	}
	if rep := hashchain.VerifyLedgerChain(recs); !rep.OK {
		t.Fatalf("ledger of %d records written by two runners in turn does not verify: %+v", len(recs), rep.Errors)
	}
}
