package runtime_test

import (
	"context"
	"math"
	"strings"
	"testing"

	"github.com/abstractframework/abstractgateway/durable"
	"github.com/abstractframework/abstractgateway/runtime"
)

// A node that leaves a _flow_warnings that is not JSON (a NaN in a
// []float64, a typed list holding a channel) and requests TOOL_CALLS with
// a call without a call_id: the runtime's warning (addFlowWarning, before
// the run's commit check) wrote a new list in its place, erasing it and
// its valid siblings, and the run went on. It must be left in place to
// fail the run naming its path, as elsewhere in vars.
func TestNonJSONFlowWarningsFailRunNamingPath(t *testing.T) {
	ctx := context.Background()
	for name, v := range map[string]any{
		"NaN":     []float64{1, math.NaN()},
		"channel": []chan int{make(chan int)},
	} {
		wf := &runtime.Workflow{ID: "w", Entry: "a", Nodes: map[string]runtime.NodeFunc{
			"a": node(func(run *durable.RunState, rc *runtime.RunContext) runtime.StepPlan {
				run.Vars["_flow_warnings"] = v
				return runtime.Request(&durable.Effect{Type: durable.EffectToolCalls, ResultKey: "r", Payload: map[string]any{
					"tool_calls": []any{map[string]any{"name": "ls", "arguments": map[string]any{}}}}}, "b")
			}),
			"b": node(func(run *durable.RunState, rc *runtime.RunContext) runtime.StepPlan {
				return runtime.Complete(map[string]any{"ok": true})
			}),
		}}
		f := setup(t, wf)
		f.rt.SetHandler(durable.EffectToolCalls, runtime.Handler{Func: func(ctx context.Context, req *runtime.EffectRequest) (runtime.Outcome, error) {
			return runtime.Completed(map[string]any{"mode": "executed", "results": []any{}}), nil
		}})
		id, err := f.rt.Start(ctx, runtime.StartParams{WorkflowID: "w"})
		if err != nil {
			t.Fatal(err)
		}
		st, err := f.rt.Tick(ctx, id, runtime.TickOptions{})
		if err != nil {
			t.Fatal(err)
		}
		if st.Status != durable.RunFailed || !strings.Contains(st.Error, "vars._flow_warnings[") {
			t.Errorf("%s: run %s, error %q, _flow_warnings %v; want the run failed naming vars._flow_warnings[i]",
				name, st.Status, st.Error, st.Vars["_flow_warnings"])
		}
	}
}
