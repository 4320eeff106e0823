package runtime_test

import (
	"context"
	"testing"

	"github.com/abstractframework/abstractgateway/durable"
	"github.com/abstractframework/abstractgateway/runtime"
)

// A node that gives up on its context (a shutdown) after writing vars
// must leave the run at its last checkpoint: the commit that kept the
// tick's earlier steps on the way out used to carry the interrupted
// node's own writes too, with the run still at that node, so the node ran
// again on them when the run continued.
func TestInterruptedNodeWritesAreNotCommitted(t *testing.T) {
	wf := &runtime.Workflow{ID: "w", Entry: "a", Nodes: map[string]runtime.NodeFunc{
		"a": node(func(run *durable.RunState, rc *runtime.RunContext) runtime.StepPlan {
			return runtime.Next("b")
		}),
		"b": func(ctx context.Context, run *durable.RunState, rc *runtime.RunContext) (runtime.StepPlan, error) {
			n, _ := runtime.AsInt(run.Vars["visits"])
			run.Vars["visits"] = n + 1
			if err := ctx.Err(); err != nil {
				return runtime.StepPlan{}, err // interrupted, not failed
			}
			return runtime.Next("c"), nil
		},
		"c": node(func(run *durable.RunState, rc *runtime.RunContext) runtime.StepPlan {
			return runtime.Complete(map[string]any{"visits": run.Vars["visits"]})
		}),
	}}
	f := setup(t, wf)
	id, err := f.rt.Start(context.Background(), runtime.StartParams{WorkflowID: "w"})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	_, _ = f.rt.Tick(ctx, id, runtime.TickOptions{StepGate: func(_ context.Context, _ *durable.RunState, node string) error {
		if node == "b" {
			cancel() // the host shuts down while b runs
		}
		return nil
	}})
	st, err := f.rt.Tick(context.Background(), id, runtime.TickOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if n, _ := runtime.AsInt(st.Output["visits"]); st.Status != durable.RunCompleted || n != 1 {
		t.Fatalf("status %s, output %v: want completed with visits=1 as an uninterrupted run gives (b's interrupted pass must not be durable)", st.Status, st.Output)
	}
}
