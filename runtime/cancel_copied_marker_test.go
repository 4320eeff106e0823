package runtime_test

import (
	"testing"

	"github.com/abstractframework/abstractgateway/durable"
	"github.com/abstractframework/abstractgateway/runtime"
)

// A run cancelled by a cause aimed at no root (here: ended under a
// cancelled parent) keeps no cancelled_with marker it was started with:
// one copied from another run's vars is not this cancel's, and would make
// its parent take the run's end for a tree cancel rooted elsewhere.
func TestCopiedCancelMarkerIsDroppedByARootlessCancel(t *testing.T) {
	ctx := t.Context()
	rt := applyRuntime(t, runtime.Config{}, askThenDone())
	parent, err := rt.Start(ctx, runtime.StartParams{WorkflowID: "ask"})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := rt.Cancel(ctx, parent, "stop all"); err != nil {
		t.Fatal(err)
	}
	child, err := rt.Start(ctx, runtime.StartParams{WorkflowID: "ask", ParentRunID: parent, Vars: map[string]any{
		"_runtime": map[string]any{"cancelled_with": map[string]any{"run_id": "elsewhere", "reason": "stop all"}},
	}})
	if err != nil {
		t.Fatal(err)
	}
	run, err := rt.Tick(ctx, child, runtime.TickOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if run.Status != durable.RunCancelled {
		t.Fatalf("child %s, want cancelled", run.Status)
	}
	stored, err := rt.GetState(ctx, child)
	if err != nil {
		t.Fatal(err)
	}
	rtv, _ := stored.Vars["_runtime"].(map[string]any)
	if m, ok := rtv["cancelled_with"]; ok {
		t.Fatalf("vars._runtime.cancelled_with = %v after a rootless cancel, want none", m)
	}
}
