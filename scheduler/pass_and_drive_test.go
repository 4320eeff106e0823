package scheduler_test

import (
	"context"
	"sync/atomic"
	"testing"
	"time"

	"github.com/abstractframework/abstractgateway/durable"
	"github.com/abstractframework/abstractgateway/runtime"
	"github.com/abstractframework/abstractgateway/runtime/runtimetest"
	"github.com/abstractframework/abstractgateway/scheduler"
	"github.com/abstractframework/abstractgateway/store/memory"
)

// chainFlow waits on an event until 1m, then until 2m, then until 3m
// after t0 (each times out), and then completes: each tick releases one
// wait into the next, already due once the clock is past 3m.
func chainFlow(t0 time.Time) *runtime.Workflow {
	wait := func(at time.Duration, next string) runtime.NodeFunc {
		return func(ctx context.Context, run *durable.RunState, rc *runtime.RunContext) (runtime.StepPlan, error) {
			return runtime.Request(&durable.Effect{Type: durable.EffectWaitEvent,
				Payload: map[string]any{"wait_key": "k", "until": durable.FormatTime(t0.Add(at))}}, next), nil
		}
	}
	return &runtime.Workflow{ID: "chain", Entry: "w1", Nodes: map[string]runtime.NodeFunc{
		"w1": wait(time.Minute, "w2"),
		"w2": wait(2*time.Minute, "w3"),
		"w3": wait(3*time.Minute, "done"),
		"done": func(ctx context.Context, run *durable.RunState, rc *runtime.RunContext) (runtime.StepPlan, error) {
			return runtime.Complete(map[string]any{"ok": true}), nil
		},
	}}
}

// Pass polls again while a poll leaves a run due that is not held back (a
// run released into a wait whose deadline has passed), as its doc says:
// one Pass carries a run through a chain of waits all already due.
func TestPassPollsAgainWhileARunIsReleasedIntoADueWait(t *testing.T) {
	t.Parallel()
	t0 := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	c := runtimetest.NewClock(t0)
	rt, _ := setup(t, c, chainFlow(t0))
	ctx := context.Background()
	id, _ := rt.Start(ctx, runtime.StartParams{WorkflowID: "chain"})
	if st, _ := rt.Tick(ctx, id, runtime.TickOptions{}); st.Status != durable.RunWaiting {
		t.Fatalf("setup: %s", st.Status)
	}
	s, err := scheduler.New(scheduler.Config{Runtime: rt, Clock: c.Now, PollInterval: time.Hour})
	if err != nil {
		t.Fatal(err)
	}
	c.Advance(10 * time.Minute)
	n, err := s.Pass(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if st, _ := rt.GetState(ctx, id); st.Status != durable.RunCompleted || n != 3 {
		t.Fatalf("after one Pass: run %s at %q, %d polled; want completed through its three due waits (3)",
			st.Status, st.CurrentNode, n)
	}
}

// One drive gives a run that never waits at most maxTicksPerDrive (100)
// ticks, then leaves it running for a later pass, so that due runs are
// not held up behind it.
func TestDriveGivesALoopingRunAHundredTicks(t *testing.T) {
	t.Parallel()
	var steps atomic.Int64
	loop := &runtime.Workflow{ID: "loop", Entry: "l", Nodes: map[string]runtime.NodeFunc{
		"l": func(ctx context.Context, run *durable.RunState, rc *runtime.RunContext) (runtime.StepPlan, error) {
			steps.Add(1)
			return runtime.Next("l"), nil
		},
	}}
	c := runtimetest.NewClock(time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC))
	reg, _ := runtime.NewRegistry(loop)
	rt, err := runtime.New(runtime.Config{Store: memory.New(), Registry: reg, Clock: c.Now, MaxSteps: 1})
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	id, err := rt.Start(ctx, runtime.StartParams{WorkflowID: "loop"})
	if err != nil {
		t.Fatal(err)
	}
	s, err := scheduler.New(scheduler.Config{Runtime: rt, Clock: c.Now})
	if err != nil {
		t.Fatal(err)
	}
	if err := s.Recover(ctx); err != nil { // drives the running run once
		t.Fatal(err)
	}
	if n := steps.Load(); n != 100 {
		t.Fatalf("one drive ran %d one-step ticks; want 100", n)
	}
	if st, _ := rt.GetState(ctx, id); st.Status != durable.RunRunning {
		t.Fatalf("run %s after the drive; want it left running", st.Status)
	}
}
