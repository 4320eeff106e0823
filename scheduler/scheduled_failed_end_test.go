package scheduler_test

import (
	"context"
	"errors"
	"sync/atomic"
	"testing"
	"time"

	"github.com/abstractframework/abstractgateway/runtime"
	"github.com/abstractframework/abstractgateway/scheduler"
	"github.com/abstractframework/abstractgateway/store"
	"github.com/abstractframework/abstractgateway/store/memory"
)

// failEndOnce fails the first commit that ends a run.
type failEndOnce struct {
	store.Wrapper
	failed atomic.Bool
}

func (s *failEndOnce) RunCommit(ctx context.Context, p *store.CommitParams) error {
	if p.Run != nil && p.Run.Status.Terminal() && s.failed.CompareAndSwap(false, true) {
		return errors.New("injected: commit of the run's end failed")
	}
	return s.Wrapper.RunCommit(ctx, p)
}

// TestScheduledRunHandsOnARunWhoseEndFailedToCommit: Run's tick fails to
// commit the run's end. The state the failed call returns is not what the
// store holds (the run still running), so Run reads it again and hands the
// run to the scheduler, which ends it. Would break if Run trusted the
// state a failed tick returned.
func TestScheduledRunHandsOnARunWhoseEndFailedToCommit(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	st := &failEndOnce{Wrapper: store.Wrapper{Store: memory.New()}}
	reg, _ := runtime.NewRegistry()
	rt, err := runtime.New(runtime.Config{Store: st, Registry: reg})
	if err != nil {
		t.Fatal(err)
	}
	sc, err := scheduler.NewScheduled(ctx, rt, scheduler.Config{PollInterval: time.Hour})
	if err != nil {
		t.Fatal(err)
	}
	defer sc.Close()
	id, _, err := sc.Run(ctx, twoStepChain("chain"), nil)
	if err == nil {
		t.Fatal("setup: Run succeeded; want its end's commit to fail")
	}
	if got, ok := completesWithin(rt, id, 10*time.Second); !ok {
		t.Fatalf("run %s at %q 10 s after Run's failed end; want completed (handed to the scheduler)",
			got.Status, got.CurrentNode)
	}
}
