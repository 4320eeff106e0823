package scheduler_test

import (
	"context"
	"fmt"
	"strconv"
	"testing"
	"time"

	"github.com/abstractframework/abstractgateway/durable"
	"github.com/abstractframework/abstractgateway/runtime"
	"github.com/abstractframework/abstractgateway/runtime/runtimetest"
	"github.com/abstractframework/abstractgateway/scheduler"
	"github.com/abstractframework/abstractgateway/store/memory"
)

// TestPassDrivesOnARunLeftRunningWhileAnotherWaitsOutItsBackoff: Pass goes
// on while the earliest run left running is to be driven now, though
// another run left running (its tick failed past a checkpoint) waits out a
// back-off of an hour. Would break if the time of the next drive were the
// latest of the runs left running rather than the earliest.
func TestPassDrivesOnARunLeftRunningWhileAnotherWaitsOutItsBackoff(t *testing.T) {
	t.Parallel()
	c := runtimetest.NewClock(time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC))
	count := &runtime.Workflow{ID: "count", Entry: "l", Nodes: map[string]runtime.NodeFunc{
		"l": func(ctx context.Context, run *durable.RunState, rc *runtime.RunContext) (runtime.StepPlan, error) {
			n, _ := strconv.Atoi(fmt.Sprint(run.Vars["n"]))
			if n++; n >= 250 { // more than two drives of 100 one-step ticks
				return runtime.Complete(map[string]any{"n": n}), nil
			}
			run.Vars["n"] = n
			return runtime.Next("l"), nil
		},
	}}
	inner := memory.New()
	reg, _ := runtime.NewRegistry(count, twoStepChain("refused"))
	rt, err := runtime.New(runtime.Config{Store: refusing(inner, "refused"), Registry: reg, Clock: c.Now, MaxSteps: 1})
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	id, _ := rt.Start(ctx, runtime.StartParams{WorkflowID: "count", Vars: map[string]any{}}) // left running by a crash
	if _, err := rt.Start(ctx, runtime.StartParams{WorkflowID: "refused"}); err != nil {     // its ticks fail
		t.Fatal(err)
	}
	s, _ := scheduler.New(scheduler.Config{Runtime: rt, Clock: c.Now, PollInterval: time.Hour})
	if err := s.Recover(ctx); err != nil { // "count" left running at its tick bound, "refused" backing off
		t.Fatal(err)
	}
	if _, err := s.Pass(ctx); err != nil {
		t.Fatal(err)
	}
	if st, _ := rt.GetState(ctx, id); st.Status != durable.RunCompleted {
		t.Fatalf("run %s with n=%v after Pass; want completed (driven on at once, whatever the other run's back-off)",
			st.Status, st.Vars["n"])
	}
}
