package runtime_test

import (
	"context"
	"strings"
	"testing"

	"github.com/abstractframework/abstractgateway/durable"
	"github.com/abstractframework/abstractgateway/runtime"
)

// A sync START_SUBWORKFLOW whose child is still running after its step
// budget: the spec (§3.6, sync mode) says "any other status (still
// running after 100 steps, cancelled) → failed `Unexpected subworkflow
// status: <status>`", with no wrapping (only a failed child, and the
// look-up errors, become an error tool result when wrapping). Python's
// handler returns EffectOutcome.failed there whatever wrap_as_tool_result
// says. Ours completed the effect with an error tool result, so an
// agent node carried on as if the call had been answered; so did the
// branch for a sync child a host cancels.
func TestSyncWrappedChildStillRunningFailsTheEffect(t *testing.T) {
	loop := &runtime.Workflow{ID: "loop", Entry: "l", Nodes: map[string]runtime.NodeFunc{
		"l": func(ctx context.Context, run *durable.RunState, rc *runtime.RunContext) (runtime.StepPlan, error) {
			return runtime.Next("l"), nil
		},
	}}
	f := newPyFix(t, oneEffectWorkflow("x", durable.EffectStartSubworkflow, map[string]any{
		"workflow_id": "loop", "wrap_as_tool_result": true,
	}, loop)...)
	st := pyStartTick(t, f, "x", runtime.StartParams{})
	if st.Status != durable.RunFailed || !strings.Contains(st.Error, "Unexpected subworkflow status: running") {
		t.Fatalf("parent %s (error %q, vars.r %v); spec and Python: the effect fails with "+
			"\"Unexpected subworkflow status: running\" (not wrapped), the run failing", st.Status, st.Error, st.Vars["r"])
	}
}
