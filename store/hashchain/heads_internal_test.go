package hashchain

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/abstractframework/abstractgateway/durable"
	"github.com/abstractframework/abstractgateway/store"
	"github.com/abstractframework/abstractgateway/store/memory"
)

// TestRunsInTurnChain: appends to runs in turn each chain to their own
// run's head, read from its ledger, and every chain verifies; a deleted
// ledger starts a new chain.
func TestRunsInTurnChain(t *testing.T) {
	t.Parallel()
	s := Wrap(memory.New())
	ctx := context.Background()
	now := durable.NewTime(time.Now())
	runs := []string{"run-a", "run-b", "run-c"}
	for round := range 4 {
		for _, id := range runs {
			rec := &durable.StepRecord{RunID: id, StepID: fmt.Sprintf("s%d", round), NodeID: "n",
				Status: durable.StepCompleted, StartedAt: now, EndedAt: now, Result: map[string]any{"round": fmt.Sprint(round)}}
			if err := s.LedgerAppend(ctx, id, []*durable.StepRecord{rec}); err != nil {
				t.Fatal(err)
			}
		}
	}
	for _, id := range runs {
		recs, err := s.LedgerList(ctx, &store.LedgerListParams{RunID: id})
		if err != nil {
			t.Fatal(err)
		}
		if rep := VerifyLedgerChain(recs); !rep.OK || rep.Count != 4 {
			t.Errorf("%s: chain %+v, want 4 linked records", id, rep)
		}
	}
	if _, err := s.LedgerDelete(ctx, "run-c"); err != nil {
		t.Fatal(err)
	}
	rec := &durable.StepRecord{RunID: "run-c", StepID: "again", NodeID: "n", Status: durable.StepCompleted,
		StartedAt: now, EndedAt: now}
	if err := s.LedgerAppend(ctx, "run-c", []*durable.StepRecord{rec}); err != nil {
		t.Fatal(err)
	}
	if rec.PrevHash != "" {
		t.Errorf("first record after a delete chains onto %q, want a new chain", rec.PrevHash)
	}
}

// blockingStore holds LedgerAppend of one run until released.
type blockingStore struct {
	store.Store
	runID   string
	entered chan struct{}
	release chan struct{}
}

func (b *blockingStore) LedgerAppend(ctx context.Context, runID string, records []*durable.StepRecord) error {
	if runID == b.runID {
		close(b.entered)
		<-b.release
	}
	return b.Store.LedgerAppend(ctx, runID, records)
}

// TestRunsChainIndependently: an append held up in the inner store does
// not hold up another run's append.
func TestRunsChainIndependently(t *testing.T) {
	t.Parallel()
	inner := &blockingStore{Store: memory.New(), runID: "run-slow", entered: make(chan struct{}), release: make(chan struct{})}
	s := Wrap(inner)
	if s.stripe("run-slow") == s.stripe("run-fast") {
		t.Fatal("the two runs share a stripe; pick other ids")
	}
	ctx := context.Background()
	now := durable.NewTime(time.Now())
	rec := func(id string) []*durable.StepRecord {
		return []*durable.StepRecord{{RunID: id, StepID: "s", NodeID: "n", Status: durable.StepCompleted, StartedAt: now, EndedAt: now}}
	}
	slow := make(chan error, 1)
	go func() { slow <- s.LedgerAppend(ctx, "run-slow", rec("run-slow")) }()
	<-inner.entered
	fast := make(chan error, 1)
	go func() { fast <- s.LedgerAppend(ctx, "run-fast", rec("run-fast")) }()
	var fastErr error
	select {
	case fastErr = <-fast:
	case <-time.After(10 * time.Second): // a liveness guard: it returns at once unless blocked
		t.Error("an append to run-fast waited for run-slow's")
		close(inner.release)
		<-fast
		<-slow
		return
	}
	close(inner.release)
	if err := <-slow; err != nil {
		t.Fatal(err)
	}
	if fastErr != nil {
		t.Fatal(fastErr)
	}
}
