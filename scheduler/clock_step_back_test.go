package scheduler_test

// The scheduler holds runs until times it read on Config.Clock (a failure
// back-off, a drive to come). A clock that steps back (a wall clock set
// back; a host's Clock such as time.Now().UTC() has no monotonic reading)
// must not stretch those holds by the size of the step.

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

// A run Scheduled.Run leaves running (its step budget used) is driven on
// by the next pass whatever the clock did meanwhile: a running run waits
// on no deadline (spec runtime-model.md §5.3; the Python gateway runner
// ticks every running run at each poll, gateway-api.md §8.3).
func TestClockStepBackDoesNotHoldRunLeftRunning(t *testing.T) {
	t.Parallel()
	c := runtimetest.NewClock(time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC))
	wf := longAfterAsk("count", false) // 11 steps, budget 3 per tick
	reg, _ := runtime.NewRegistry(wf)
	rt, err := runtime.New(runtime.Config{Store: memory.New(), Registry: reg, MaxSteps: 3, Clock: c.Now})
	if err != nil {
		t.Fatal(err)
	}
	s, err := scheduler.New(scheduler.Config{Runtime: rt, Clock: c.Now, PollInterval: time.Second})
	if err != nil {
		t.Fatal(err)
	}
	sch := &scheduler.Scheduled{Runtime: rt, Scheduler: s}
	ctx := context.Background()
	id, st, err := sch.Run(ctx, wf, nil)
	if err != nil || st.Status != durable.RunRunning {
		t.Fatalf("setup: Run = %v, %v; want left running after its budget", st, err)
	}
	c.Advance(-time.Hour) // the wall clock is stepped back
	c.Advance(2 * time.Second)
	if _, err := s.Pass(ctx); err != nil {
		t.Fatal(err)
	}
	if st, _ := rt.GetState(ctx, id); st.Status != durable.RunCompleted {
		t.Errorf("after a pass the run handed to the scheduler is %s at n=%v; want completed "+
			"(not driven again only once the clock has caught up the hour it stepped back)", st.Status, st.Vars["n"])
	}
}

// A due run whose tick failed is held for PollInterval (doubled per
// failure in a row, docs/compatibility.md), measured on the scheduler's
// readings: a clock stepped back 50 minutes after the failure does not
// hold it for those 50 minutes more.
func TestClockStepBackKeepsFailureBackoff(t *testing.T) {
	t.Parallel()
	t0 := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	c := runtimetest.NewClock(t0)
	st := &switchableCommits{Store: memory.New()}
	reg, _ := runtime.NewRegistry(waitFlow(time.Minute))
	rt, err := runtime.New(runtime.Config{Store: st, Registry: reg, Clock: c.Now})
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	id, _ := rt.Start(ctx, runtime.StartParams{WorkflowID: "wait"})
	if s, err := rt.Tick(ctx, id, runtime.TickOptions{}); err != nil || s.Status != durable.RunWaiting {
		t.Fatalf("setup: %v %v", s, err)
	}
	s, err := scheduler.New(scheduler.Config{Runtime: rt, Clock: c.Now, PollInterval: time.Second})
	if err != nil {
		t.Fatal(err)
	}
	c.Advance(time.Hour) // due since t0+1m
	st.fail.Store(true)
	if n, _ := s.PollOnce(ctx); n != 1 || s.Stats().RunsFailed != 1 {
		t.Fatalf("setup: the failing poll ticked %d, RunsFailed %d", n, s.Stats().RunsFailed)
	}
	st.fail.Store(false)
	c.Advance(-50 * time.Minute) // stepped back: t0+10m, the deadline still passed
	if n, err := s.PollOnce(ctx); n != 0 || err != nil {
		t.Fatalf("poll at once after the step back ticked %d (%v); want the run still held (its 1 s back-off)", n, err)
	}
	c.Advance(time.Second + time.Millisecond)
	if n, err := s.PollOnce(ctx); n != 1 || err != nil {
		t.Errorf("poll past the 1 s back-off after the clock stepped back ticked %d (%v); want the due run retried "+
			"(not held until the clock reaches its old retry time, 50 minutes later)", n, err)
	}
	if got, _ := rt.GetState(ctx, id); got.Status != durable.RunCompleted {
		t.Errorf("the due run is %s; want completed", got.Status)
	}
}
