package runtime_test

import (
	"context"
	"testing"

	"github.com/abstractframework/abstractgateway/durable"
	"github.com/abstractframework/abstractgateway/runtime"
)

// A tick whose caller goes away between two steps keeps what is done (the
// steps made since its last commit are committed) and starts nothing more:
// the node that ran is not run again by the next tick.
func TestTickInterruptedBetweenStepsKeepsWhatIsDone(t *testing.T) {
	var stop context.CancelFunc
	calls := map[string]int{}
	wf := &runtime.Workflow{ID: "w", Entry: "a", Nodes: map[string]runtime.NodeFunc{
		"a": func(ctx context.Context, run *durable.RunState, rc *runtime.RunContext) (runtime.StepPlan, error) {
			calls["a"]++
			run.Vars["a_done"] = true
			stop() // the caller goes away after this step
			return runtime.Next("b"), nil
		},
		"b": func(ctx context.Context, run *durable.RunState, rc *runtime.RunContext) (runtime.StepPlan, error) {
			calls["b"]++
			return runtime.Complete(map[string]any{"ok": true}), nil
		},
	}}
	rt := applyRuntime(t, runtime.Config{}, wf)
	id, err := rt.Start(t.Context(), runtime.StartParams{WorkflowID: "w"})
	if err != nil {
		t.Fatal(err)
	}
	tickInterrupted(t, rt, id, &stop)
	stored, err := rt.GetState(t.Context(), id)
	if err != nil {
		t.Fatal(err)
	}
	if stored.CurrentNode != "b" || stored.Vars["a_done"] != true || calls["b"] != 0 {
		t.Fatalf("after the interrupted tick: node %q, vars.a_done %v, b called %d times; want at b with a's write kept, b not run",
			stored.CurrentNode, stored.Vars["a_done"], calls["b"])
	}
	run, err := rt.Tick(t.Context(), id, runtime.TickOptions{})
	if err != nil || run.Status != durable.RunCompleted || calls["a"] != 1 {
		t.Fatalf("next tick: %v, %v; node a called %d times, want completed with a called once", run, err, calls["a"])
	}
}
