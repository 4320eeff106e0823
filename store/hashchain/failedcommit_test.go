package hashchain_test

import (
	"context"
	"testing"
	"time"

	"github.com/abstractframework/abstractgateway/durable"
	"github.com/abstractframework/abstractgateway/store"
	"github.com/abstractframework/abstractgateway/store/hashchain"
	"github.com/abstractframework/abstractgateway/store/memory"
	"github.com/abstractframework/abstractgateway/store/storetest"
)

// After a commit that failed once its records were appended, the cached
// head named the record before them: the next commit chained onto it and
// the stored ledger no longer verified. The head is now read again.
func TestChainSurvivesAHalfFailedCommit(t *testing.T) {
	ctx := context.Background()
	inner := &storetest.HalfCommit{Store: memory.New()}
	s := hashchain.Wrap(inner)
	now := durable.NewTime(time.Now())
	rec := func(step string) []*durable.StepRecord {
		return []*durable.StepRecord{{RunID: "r", StepID: step, NodeID: "n", Status: durable.StepCompleted, StartedAt: now, EndedAt: now}}
	}
	run := &durable.RunState{RunID: "r", WorkflowID: "w", Status: durable.RunRunning, Vars: map[string]any{}, CreatedAt: now, UpdatedAt: now}
	if err := s.RunCommit(ctx, &store.CommitParams{Run: run, Create: true, Records: rec("s1")}); err != nil {
		t.Fatal(err)
	}
	inner.Arm()
	if err := s.RunCommit(ctx, &store.CommitParams{Run: run, Records: rec("s2")}); err == nil {
		t.Fatal("injected failure not returned")
	}
	// The next tick starts over from the stored state and commits again.
	if err := s.RunCommit(ctx, &store.CommitParams{Run: run, Records: rec("s2-again")}); err != nil {
		t.Fatal(err)
	}
	recs, err := s.LedgerList(ctx, &store.LedgerListParams{RunID: "r"})
	if err != nil {
		t.Fatal(err)
	}
	if rep := hashchain.VerifyLedgerChain(recs); !rep.OK {
		t.Fatalf("ledger of %d records does not verify after a half-failed commit: %+v", len(recs), rep.Errors)
	}
}
