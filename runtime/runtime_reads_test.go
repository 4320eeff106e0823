package runtime_test

import (
	"context"
	"testing"

	"github.com/abstractframework/abstractgateway/durable"
	"github.com/abstractframework/abstractgateway/runtime"
)

// GetNodeTraces of a run without any trace yet gives an empty map, not
// nil, as its doc comment promises (a host encoding it would send null
// instead of {}).
func TestGetNodeTracesOfARunWithoutTracesIsAnEmptyMap(t *testing.T) {
	wf := &runtime.Workflow{ID: "untraced", Entry: "a", Nodes: map[string]runtime.NodeFunc{
		"a": node(func(run *durable.RunState, rc *runtime.RunContext) runtime.StepPlan {
			return runtime.Complete(map[string]any{})
		}),
	}}
	f := setup(t, wf)
	ctx := context.Background()
	id, err := f.rt.Start(ctx, runtime.StartParams{WorkflowID: "untraced"})
	if err != nil {
		t.Fatal(err)
	}
	traces, err := f.rt.GetNodeTraces(ctx, id)
	if err != nil || traces == nil || len(traces) != 0 {
		t.Fatalf("GetNodeTraces of a run not ticked yet = %#v, %v; want an empty, non-nil map", traces, err)
	}
}
