package scheduler_test

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/abstractframework/abstractgateway/durable"
	"github.com/abstractframework/abstractgateway/runtime"
	"github.com/abstractframework/abstractgateway/scheduler"
	"github.com/abstractframework/abstractgateway/store"
	"github.com/abstractframework/abstractgateway/store/memory"
)

// missingRun answers RunGet of one run id with store.ErrNotFound: a run
// the store no longer holds (pruned, or lost with a data directory).
type missingRun struct {
	store.Wrapper
	id string
}

func (s *missingRun) RunGet(ctx context.Context, runID string) (*durable.RunState, error) {
	if runID == s.id {
		return nil, fmt.Errorf("run %s: %w", runID, store.ErrNotFound)
	}
	return s.Wrapper.RunGet(ctx, runID)
}

// TestRecoverIsDoneWithAParentWhoseChildIsGone: a parent waiting on a
// child the store does not hold has nothing to be resumed with; Recover
// passes over it and succeeds, rather than failing (and being retried
// each poll interval, forever) as for a child it could not read. Would
// break if Recover counted ErrNotFound as a failed read.
func TestRecoverIsDoneWithAParentWhoseChildIsGone(t *testing.T) {
	t.Parallel()
	clk := &lockedClock{t: time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)}
	inner := memory.New()
	reg, _ := runtime.NewRegistry(askChildFlows()...)
	before, _ := runtime.New(runtime.Config{Store: inner, Registry: reg, Clock: clk.Now})
	ctx := context.Background()
	pid, child := parentWaitingOnChild(ctx, t, before)
	rt, _ := runtime.New(runtime.Config{Store: &missingRun{Wrapper: store.Wrapper{Store: inner}, id: child},
		Registry: reg, Clock: clk.Now})
	s, _ := scheduler.New(scheduler.Config{Runtime: rt})
	if err := s.Recover(ctx); err != nil {
		t.Fatalf("Recover = %v; want nil (the child of parent %s is gone, not unreadable)", err, pid)
	}
	if p, _ := inner.RunGet(ctx, pid); p.Status != durable.RunWaiting {
		t.Fatalf("parent %s after Recover; want it left waiting", p.Status)
	}
}
