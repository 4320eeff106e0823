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

// A run handed to the scheduler (left running by Scheduled.Run) is driven
// once to its end; after that the unfinished queue forgets it: later
// passes do not drive the ended run again (no tick, no callback, no
// counters), and the loop does not keep finding it due.
func TestUnfinishedRunIsDrivenOnceThenForgotten(t *testing.T) {
	t.Parallel()
	c := runtimetest.NewClock(time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC))
	wf := longAfterAsk("count", false) // 11 steps, budget 3 per tick
	reg, _ := runtime.NewRegistry(wf)
	rt, err := runtime.New(runtime.Config{Store: memory.New(), Registry: reg, MaxSteps: 3, Clock: c.Now})
	if err != nil {
		t.Fatal(err)
	}
	resumed := 0
	s, err := scheduler.New(scheduler.Config{Runtime: rt, Clock: c.Now, PollInterval: time.Second,
		OnRunResumed: func(*durable.RunState) { resumed++ }})
	if err != nil {
		t.Fatal(err)
	}
	sch := &scheduler.Scheduled{Runtime: rt, Scheduler: s}
	ctx := context.Background()
	id, st, err := sch.Run(ctx, wf, nil)
	if err != nil || st.Status != durable.RunRunning {
		t.Fatalf("setup: Run = %v, %v; want left running after its budget", st, err)
	}
	if _, err := s.Pass(ctx); err != nil {
		t.Fatal(err)
	}
	if got, _ := rt.GetState(ctx, id); got.Status != durable.RunCompleted {
		t.Fatalf("after a pass the run is %s; want completed", got.Status)
	}
	stats := s.Stats()
	if stats.RunsResumed != 1 || stats.RunsFailed != 0 || resumed != 1 {
		t.Fatalf("after the pass: RunsResumed %d, RunsFailed %d, OnRunResumed %d; want one drive",
			stats.RunsResumed, stats.RunsFailed, resumed)
	}
	for i := 0; i < 3; i++ {
		c.Advance(time.Minute)
		if _, err := s.Pass(ctx); err != nil {
			t.Fatal(err)
		}
	}
	stats = s.Stats()
	if stats.RunsResumed != 1 || stats.RunsFailed != 0 || resumed != 1 {
		t.Errorf("later passes drove the ended run again: RunsResumed %d, RunsFailed %d, OnRunResumed %d; want 1, 0, 1",
			stats.RunsResumed, stats.RunsFailed, resumed)
	}
	if w := scheduler.NextWait(s, ctx); w != time.Second {
		t.Errorf("NextWait = %v with nothing due; want the poll interval", w)
	}
}
