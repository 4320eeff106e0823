package scheduler_test

import (
	"context"
	"testing"
	"time"

	"github.com/abstractframework/abstractgateway/durable"
	"github.com/abstractframework/abstractgateway/runtime"
	"github.com/abstractframework/abstractgateway/runtime/runtimetest"
	"github.com/abstractframework/abstractgateway/scheduler"
	"github.com/abstractframework/abstractgateway/store"
	"github.com/abstractframework/abstractgateway/store/memory"
)

// Scheduled.Run whose tick and the read after it fail (an outage right
// after the run was created) hands the run to the scheduler although it
// cannot tell its state: the next pass drives it. The workflow is
// registered beforehand, so no newly-registered drive covers for it.
func TestScheduledRunHandsOnARunOfAKnownWorkflowItsOutageLeftRunning(t *testing.T) {
	t.Parallel()
	c := runtimetest.NewClock(time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC))
	wf := twoStepChain("chain")
	reg, _ := runtime.NewRegistry(wf)
	rt, err := runtime.New(runtime.Config{Store: &outageAfterCreate{Wrapper: store.Wrapper{Store: memory.New()}},
		Registry: reg, Clock: c.Now})
	if err != nil {
		t.Fatal(err)
	}
	s, err := scheduler.New(scheduler.Config{Runtime: rt, Clock: c.Now})
	if err != nil {
		t.Fatal(err)
	}
	sch := &scheduler.Scheduled{Runtime: rt, Scheduler: s}
	ctx := context.Background()
	id, _, err := sch.Run(ctx, wf, nil)
	if err == nil || id == "" {
		t.Fatalf("setup: Run = %q, %v; want the run started and its tick failed by the outage", id, err)
	}
	if _, err := s.Pass(ctx); err != nil {
		t.Fatal(err)
	}
	if got, _ := rt.GetState(ctx, id); got.Status != durable.RunCompleted {
		t.Errorf("run %s is %s at %q after a pass; want driven on to completed", id, got.Status, got.CurrentNode)
	}
}
