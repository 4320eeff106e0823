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

// TestUnfinishedRunOfAnUnservedWorkflowIsNotAFailure: a run a drive left
// running (its step budget used) whose workflow is unregistered before the
// loop drives it again is left for a runtime that serves its workflow, as
// Recover and the due poll leave such runs: not reported as failed at each
// back-off. Once the workflow is registered again, it is driven.
func TestUnfinishedRunOfAnUnservedWorkflowIsNotAFailure(t *testing.T) {
	t.Parallel()
	loop := &runtime.Workflow{ID: "loop", Entry: "l", Nodes: map[string]runtime.NodeFunc{
		"l": func(ctx context.Context, run *durable.RunState, rc *runtime.RunContext) (runtime.StepPlan, error) {
			n, _ := runtime.AsInt(run.Vars["n"])
			run.Vars["n"] = n + 1
			if n >= 150 {
				return runtime.Complete(map[string]any{"n": n}), nil
			}
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
	var failed int
	s, err := scheduler.New(scheduler.Config{Runtime: rt, Clock: c.Now,
		OnRunFailed: func(string, error) { failed++ }})
	if err != nil {
		t.Fatal(err)
	}
	if err := s.Recover(ctx); err != nil { // 100 ticks: left running, queued
		t.Fatal(err)
	}
	if st, _ := rt.GetState(ctx, id); st.Status != durable.RunRunning {
		t.Fatalf("run %s; want it left running", st.Status)
	}
	if err := reg.Unregister("loop"); err != nil {
		t.Fatal(err)
	}
	for range 5 {
		if _, err := s.Pass(ctx); err != nil {
			t.Fatal(err)
		}
		c.Advance(6 * time.Minute) // past any back-off
	}
	if got := s.Stats(); got.RunsFailed != 0 || failed != 0 {
		t.Errorf("run of an unregistered workflow reported failed %d times (callback %d), errors %q; want it left for a runtime serving its workflow",
			got.RunsFailed, failed, got.Errors)
	}
	if err := reg.Register(loop); err != nil {
		t.Fatal(err)
	}
	if _, err := s.Pass(ctx); err != nil {
		t.Fatal(err)
	}
	if st, _ := rt.GetState(ctx, id); st.Status != durable.RunCompleted {
		t.Fatalf("run %s after its workflow was registered again; want it driven to completion", st.Status)
	}
}
