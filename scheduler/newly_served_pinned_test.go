package scheduler_test

import (
	"context"
	"strings"
	"testing"

	"github.com/abstractframework/abstractgateway/durable"
	"github.com/abstractframework/abstractgateway/scheduler"
)

// When listing the running runs of a newly registered workflow fails, the
// failure is recorded and the next pass looks at that workflow again
// (driveNewlyServed: "Looked at again by the next pass"): its run left
// running is driven then, not forgotten until a restart.
func TestNewlyServedListingFailureIsRetriedNextPass(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	st := newLoopPassStore()
	left := leftRunningByCrash(t, st, "chain")
	rt, reg := runtimeWithNoWorkflows(t, st)
	s, err := scheduler.New(scheduler.Config{Runtime: rt})
	if err != nil {
		t.Fatal(err)
	}
	if err := s.Recover(ctx); err != nil {
		t.Fatal(err)
	}
	if err := reg.Register(twoStepChain("chain")); err != nil {
		t.Fatal(err)
	}
	st.fails.Store(1) // the listing of the gained workflow's running runs fails once
	if _, err := s.Pass(ctx); err != nil {
		t.Fatal(err)
	}
	if got, _ := rt.GetState(ctx, left); got.Status != durable.RunRunning {
		t.Fatalf("setup: after the failed listing run %s is %s; want still running", left, got.Status)
	}
	recorded := false
	for _, e := range s.Stats().Errors {
		recorded = recorded || strings.Contains(e, "database is locked")
	}
	if !recorded {
		t.Errorf("the failed listing is not in Stats.Errors: %q", s.Stats().Errors)
	}
	if _, err := s.Pass(ctx); err != nil {
		t.Fatal(err)
	}
	if got, _ := rt.GetState(ctx, left); got.Status != durable.RunCompleted {
		t.Errorf("after a second pass run %s is %s at %q; want completed (the workflow looked at again)",
			left, got.Status, got.CurrentNode)
	}
}

// A run a failed drive left running is queued for its back-off; its
// workflow registered anew meanwhile does not cut that back-off short
// (driveNewlyServed: "A run already queued keeps its time").
func TestNewlyServedKeepsTheFailureBackoffOfAQueuedRun(t *testing.T) {
	t.Parallel()
	f := newFailedRecovery(t, nil)
	if err := f.reg.Put(oneStepFlow(nil)); err != nil { // registered anew
		t.Fatal(err)
	}
	f.wantHeldForItsBackoff(t)
}
