package runtime_test

import (
	"testing"

	"github.com/abstractframework/abstractgateway/durable"
	"github.com/abstractframework/abstractgateway/runtime"
)

// A run whose ancestor three levels up was cancelled (after the run was
// listed, so no Cancel reached it) ends cancelled at its next tick: the
// ancestor walk reaches every level, not only the parent and grandparent.
func TestRunUnderCancelledGreatGrandparentEndsCancelled(t *testing.T) {
	ctx := t.Context()
	rt := applyRuntime(t, runtime.Config{}, askThenDone())
	root, err := rt.Start(ctx, runtime.StartParams{WorkflowID: "ask"})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := rt.Cancel(ctx, root, "stop all"); err != nil {
		t.Fatal(err)
	}
	parent := root
	for i := 0; i < 3; i++ {
		id, err := rt.Start(ctx, runtime.StartParams{WorkflowID: "ask", ParentRunID: parent})
		if err != nil {
			t.Fatal(err)
		}
		parent = id
	}
	run, err := rt.Tick(ctx, parent, runtime.TickOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if run.Status != durable.RunCancelled {
		t.Fatalf("run three levels under a cancelled run: %s, want cancelled", run.Status)
	}
}
