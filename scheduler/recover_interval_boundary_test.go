package scheduler_test

import (
	"context"
	"testing"
	"time"

	"github.com/abstractframework/abstractgateway/durable"
	"github.com/abstractframework/abstractgateway/runtime"
	"github.com/abstractframework/abstractgateway/runtime/runtimetest"
	"github.com/abstractframework/abstractgateway/scheduler"
)

// TestRecoveryRunsOnceRecoverIntervalHasPassed: the loop runs Recover
// again when RecoverInterval has passed since the last one, not only once
// more than that has: with the clock moved on by exactly the interval, the
// next pass drives a run left running. Would break if the loop compared
// the time since the last recovery with > instead of >=.
func TestRecoveryRunsOnceRecoverIntervalHasPassed(t *testing.T) {
	c := runtimetest.NewClock(time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC))
	st := newLoopPassStore()
	reg, _ := runtime.NewRegistry(oneStepFlow(nil))
	rt, err := runtime.New(runtime.Config{Store: st, Registry: reg, Clock: c.Now})
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	s, err := scheduler.New(scheduler.Config{Runtime: rt, Clock: c.Now, PollInterval: time.Hour, RecoverInterval: time.Hour})
	if err != nil {
		t.Fatal(err)
	}
	if err := s.Start(ctx); err != nil {
		t.Fatal(err)
	}
	defer s.Stop()
	st.awaitPass(t, "after Start")
	id, _ := rt.Start(ctx, runtime.StartParams{WorkflowID: "one"}) // left running (say, by another runner that died)
	c.Advance(time.Hour)
	s.Wake()
	st.awaitPass(t, "after Wake")
	if got, _ := rt.GetState(ctx, id); got.Status != durable.RunCompleted {
		t.Errorf("run left running is %s after a pass exactly RecoverInterval after the last recovery; "+
			"want completed (Recover is due)", got.Status)
	}
}
