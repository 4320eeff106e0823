package runtime_test

import (
	"context"
	"testing"

	"github.com/abstractframework/abstractgateway/durable"
	"github.com/abstractframework/abstractgateway/runtime"
)

// A node that sets _limits in the run it ticks with Go-typed values (a
// map[string]int, an int32 counter) is read by CheckLimits /
// GetLimitStatus from within its tick as the same limits read back from
// the store after the next checkpoint: numbers whatever their Go type. The
// reads took such a map (or value) for "no limits set" and answered with
// the defaults, so a loop governed by them never saw its limit exceeded.
func TestReviewLimitsTypedValuesInWorkingCopy(t *testing.T) {
	for name, limits := range map[string]any{
		"typed map":   map[string]int{"current_iteration": 3, "max_iterations": 3},
		"int32 value": map[string]any{"current_iteration": int32(3), "max_iterations": uint8(3)},
	} {
		t.Run(name, func(t *testing.T) {
			var warns []runtime.LimitWarning
			var status map[string]any
			wf := &runtime.Workflow{ID: "lim", Entry: "set", Nodes: map[string]runtime.NodeFunc{
				"set": func(ctx context.Context, run *durable.RunState, rc *runtime.RunContext) (runtime.StepPlan, error) {
					run.Vars["_limits"] = limits
					var err error
					if warns, err = rc.Runtime().CheckLimits(ctx, run.RunID); err != nil {
						return runtime.StepPlan{}, err
					}
					if status, err = rc.Runtime().GetLimitStatus(ctx, run.RunID); err != nil {
						return runtime.StepPlan{}, err
					}
					return runtime.Complete(map[string]any{}), nil
				},
			}}
			rt := applyRuntime(t, runtime.Config{}, wf)
			id, err := rt.Start(t.Context(), runtime.StartParams{WorkflowID: "lim"})
			if err != nil {
				t.Fatal(err)
			}
			if _, err := rt.Tick(t.Context(), id, runtime.TickOptions{}); err != nil {
				t.Fatal(err)
			}
			// What the same limits give once stored.
			stored, err := rt.CheckLimits(t.Context(), id)
			if err != nil {
				t.Fatal(err)
			}
			if len(stored) != 1 || stored[0].Status != "exceeded" {
				t.Fatalf("stored limits: %+v, want iterations exceeded", stored)
			}
			if len(warns) != 1 || warns[0].Status != "exceeded" || warns[0].Current != 3 || warns[0].Maximum != 3 {
				t.Fatalf("CheckLimits from the node: %+v, want iterations exceeded at 3 of 3 (as read once stored: %+v)", warns, stored)
			}
			it, _ := status["iterations"].(map[string]any)
			if it["current"] != int64(3) || it["max"] != int64(3) {
				t.Fatalf("GetLimitStatus from the node: iterations %v, want current 3, max 3", it)
			}
		})
	}
}
