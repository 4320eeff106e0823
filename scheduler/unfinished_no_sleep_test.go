package scheduler_test

import (
	"context"
	"testing"
	"time"

	"github.com/abstractframework/abstractgateway/durable"
	"github.com/abstractframework/abstractgateway/runtime"
	"github.com/abstractframework/abstractgateway/runtime/runtimetest"
	"github.com/abstractframework/abstractgateway/scheduler"
	"github.com/abstractframework/abstractgateway/store/memory"
)

// TestLoopDrivesARunLeftRunningWithoutSleepingThePollInterval: a run its
// drive left running (maxTicksPerDrive reached) is driven on by the next
// pass at once, not after a PollInterval (an hour here). Would break if
// the loop's sleep ignored the time the earliest unfinished run is due.
func TestLoopDrivesARunLeftRunningWithoutSleepingThePollInterval(t *testing.T) {
	c := runtimetest.NewClock(time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC))
	reg, _ := runtime.NewRegistry(loopFlow(250)) // more than two drives of 100 one-step ticks
	rt, err := runtime.New(runtime.Config{Store: memory.New(), Registry: reg, Clock: c.Now, MaxSteps: 1})
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	id, _ := rt.Start(ctx, runtime.StartParams{WorkflowID: "loop", Vars: map[string]any{}})
	if st, _ := rt.Tick(ctx, id, runtime.TickOptions{}); st.Status != durable.RunWaiting {
		t.Fatalf("not waiting: %s", st.Status)
	}
	s, _ := scheduler.New(scheduler.Config{Runtime: rt, Clock: c.Now, PollInterval: time.Hour})
	if err := s.Start(ctx); err != nil {
		t.Fatal(err)
	}
	defer s.Stop()
	c.Advance(2 * time.Minute)
	s.Wake()
	if st, ok := completesWithin(rt, id, 20*time.Second); !ok {
		t.Fatalf("run still %s with n=%v: the loop slept its poll interval with a run left running to drive on",
			st.Status, st.Vars["n"])
	}
}
