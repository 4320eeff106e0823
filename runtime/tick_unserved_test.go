package runtime_test

import (
	"context"
	"errors"
	"testing"

	"github.com/abstractframework/abstractgateway/durable"
	"github.com/abstractframework/abstractgateway/runtime"
	"github.com/abstractframework/abstractgateway/store/memory"
)

// A Tick of a live run whose workflow the registry lacks leaves the run
// as it was and says so with a RunNotServedError naming the run and the
// workflow, which still reads (and unwraps) as the registry's
// WorkflowNotFoundError.
func TestTickOfUnservedRunIsRunNotServedError(t *testing.T) {
	ctx := context.Background()
	st := memory.New()
	served, _ := runtime.NewRegistry(&runtime.Workflow{ID: "wf", Entry: "n", Nodes: map[string]runtime.NodeFunc{
		"n": func(ctx context.Context, run *durable.RunState, rc *runtime.RunContext) (runtime.StepPlan, error) {
			return runtime.Complete(map[string]any{}), nil
		},
	}})
	writer, _ := runtime.New(runtime.Config{Store: st, Registry: served})
	id, err := writer.Start(ctx, runtime.StartParams{WorkflowID: "wf"})
	if err != nil {
		t.Fatal(err)
	}
	before, _ := st.RunGet(ctx, id)
	rt, _ := runtime.New(runtime.Config{Store: st, Registry: &runtime.Registry{}})
	_, err = rt.Tick(ctx, id, runtime.TickOptions{})
	notServed, ok := errors.AsType[*runtime.RunNotServedError](err)
	if !ok || notServed.RunID != id || notServed.WorkflowID != "wf" {
		t.Fatalf("Tick: %v; want a RunNotServedError for run %s of wf", err, id)
	}
	if nf, ok := errors.AsType[*runtime.WorkflowNotFoundError](err); !ok || nf.WorkflowID != "wf" {
		t.Fatalf("Tick: %v does not unwrap to the WorkflowNotFoundError of wf", err)
	}
	if want := "run " + id + `: workflow "wf" is not registered`; err.Error() != want {
		t.Fatalf("error text %q, want %q", err, want)
	}
	if after, _ := st.RunGet(ctx, id); after.Version != before.Version || after.Status != durable.RunRunning {
		t.Fatalf("run moved from version %d to %d (%s)", before.Version, after.Version, after.Status)
	}
}
