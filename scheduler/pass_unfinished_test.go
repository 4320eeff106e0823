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

// TestPassDrivesOnARunItsDriveLeftRunning: Pass goes on while a drive
// leaves a run running, so a run that needs several drives (here 250
// one-step ticks, 100 a drive) ends within one Pass. Would break if Pass
// returned once a poll did not fill a batch and nothing else was due.
func TestPassDrivesOnARunItsDriveLeftRunning(t *testing.T) {
	t.Parallel()
	c, rt, id := waitingLongLoop(t, 250) // more than two drives of 100 ticks
	ctx := context.Background()
	s, _ := scheduler.New(scheduler.Config{Runtime: rt, Clock: c.Now, PollInterval: time.Hour})
	c.Advance(2 * time.Minute)
	if n, err := s.Pass(ctx); n != 1 || err != nil {
		t.Fatalf("Pass = %d, %v; want the one due run", n, err)
	}
	if st, _ := rt.GetState(ctx, id); st.Status != durable.RunCompleted {
		t.Fatalf("run %s with n=%v after Pass; want completed (Pass drives on a run its drive left running)",
			st.Status, st.Vars["n"])
	}
}

// TestLoopDrivesARunLeftRunningWithoutSleepingThePollInterval: a run its
// drive left running (maxTicksPerDrive reached) is driven on by the
// loop's next pass at once, not after a PollInterval (an hour here).
// Would break if the loop's sleep ignored the time the earliest
// unfinished run is due.
func TestLoopDrivesARunLeftRunningWithoutSleepingThePollInterval(t *testing.T) {
	c, rt, id := waitingLongLoop(t, 250) // more than two drives of 100 ticks
	s, _ := scheduler.New(scheduler.Config{Runtime: rt, Clock: c.Now, PollInterval: time.Hour})
	if err := s.Start(context.Background()); err != nil {
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

// waitingLongLoop is a runtime of one-step ticks (MaxSteps 1) on a fake
// clock, with a run of loopFlow(steps) ticked into its first wait.
func waitingLongLoop(t *testing.T, steps int) (*runtimetest.Clock, *runtime.Runtime, string) {
	t.Helper()
	c := runtimetest.NewClock(time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC))
	reg, _ := runtime.NewRegistry(loopFlow(steps))
	rt, err := runtime.New(runtime.Config{Store: memory.New(), Registry: reg, Clock: c.Now, MaxSteps: 1})
	if err != nil {
		t.Fatal(err)
	}
	return c, rt, startWaiting(t, rt, "loop")
}
