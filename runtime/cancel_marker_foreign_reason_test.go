package runtime

import (
	"context"
	"testing"

	"github.com/abstractframework/abstractgateway/durable"
	"github.com/abstractframework/abstractgateway/store"
	"github.com/abstractframework/abstractgateway/store/memory"
)

// TestCancelMarkerWithAnotherReasonDoesNotCancelTheParent pins the
// reason check of cancelCovering: a cancelled child whose
// vars._runtime.cancelled_with names its parent, but with a reason that is
// not the child's own error, was not ended by that tree cancel. The
// marker came along with copied vars, and the child was cancelled by
// something else (here a Python host's cancel_run, which leaves vars
// alone). Its parent must take the child's cancelled end and go on, as
// for a cancel aimed at the child alone; trusting the marker would cancel
// a parent nobody asked to cancel.
func TestCancelMarkerWithAnotherReasonDoesNotCancelTheParent(t *testing.T) {
	ctx := context.Background()
	base := memory.New()
	counter := &shipCounter{started: make(chan struct{}, 1)}
	rt := errRuntime(t, base, Config{Handlers: counter.handlers()}, shipAfterChild(true)...)
	if _, err := rt.Start(ctx, StartParams{WorkflowID: "top", RunID: topRun}); err != nil {
		t.Fatal(err)
	}
	parked, err := rt.Tick(ctx, topRun, TickOptions{})
	if err != nil {
		t.Fatal(err)
	}
	leaf := WaitedChild(parked)
	if leaf == "" {
		t.Fatalf("top %s; want waiting on its child", parked.Status)
	}
	// A Python host cancels the child; its vars hold a marker naming the
	// top run with another reason.
	child, err := base.RunGet(ctx, leaf)
	if err != nil {
		t.Fatal(err)
	}
	child.Status, child.Error, child.Waiting = durable.RunCancelled, "cancelled by the operator", nil
	namespace(child.Vars, "_runtime")[cancelledWithKey] = map[string]any{"run_id": topRun, "reason": "stop everything"}
	if err := base.RunCommit(ctx, &store.CommitParams{Run: child}); err != nil {
		t.Fatal(err)
	}
	if err := rt.NotifyChildEnded(ctx, leaf); err != nil {
		t.Fatal(err)
	}
	got, err := base.RunGet(ctx, topRun)
	if err != nil {
		t.Fatal(err)
	}
	if got.Status != durable.RunCompleted || counter.count() != 1 {
		t.Errorf("top %s (error %q), shipped %d time(s); want it resumed with the child's end, shipped once and completed",
			got.Status, got.Error, counter.count())
	}
}
