package visualflow

import (
	"context"
	"testing"

	"github.com/abstractframework/abstractgateway/runtime"
	"github.com/abstractframework/abstractgateway/store/memory"
)

// TestListenerCopiesRootLimits pins gateway-api §8.5 step 8: a started
// listener's vars carry a copy of the root run's _limits (as well as its
// _runtime).
func TestListenerCopiesRootLimits(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	cb, fi := compileEventFlow(t, eventsFlow, 1)
	rt := newTestRuntime(t, memory.New(), nil, cb.Workflows...)
	limits := map[string]any{"max_iterations": int64(7), "marker": "root-limits"}
	root, err := rt.Start(ctx, runtime.StartParams{WorkflowID: fi.WorkflowID,
		Vars: map[string]any{"_runtime": map[string]any{"x": "y"}, "_limits": limits}})
	if err != nil {
		t.Fatal(err)
	}
	ids, err := fi.StartListeners(ctx, rt, root, 0)
	if err != nil || len(ids) != 1 {
		t.Fatalf("StartListeners = %v, %v", ids, err)
	}
	l, err := rt.GetState(ctx, ids[0])
	if err != nil {
		t.Fatal(err)
	}
	got, _ := l.Vars["_limits"].(map[string]any)
	if got["marker"] != "root-limits" || jsonText(t, got["max_iterations"]) != "7" {
		t.Fatalf("listener _limits = %s, want the root's %s", jsonText(t, l.Vars["_limits"]), jsonText(t, limits))
	}
}

// TestListenerIDTakenByAnotherRunIsAnError pins that StartListeners
// does not adopt a run that holds the listener's id but is not a child of
// the root: it reports the conflict.
func TestListenerIDTakenByAnotherRunIsAnError(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	cb, fi := compileEventFlow(t, eventsFlow, 1)
	rt := newTestRuntime(t, memory.New(), nil, cb.Workflows...)
	root, err := rt.Start(ctx, runtime.StartParams{WorkflowID: fi.WorkflowID})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := rt.Start(ctx, runtime.StartParams{WorkflowID: fi.Listeners[0], RunID: ListenerRunID(root, 0)}); err != nil {
		t.Fatal(err)
	}
	ids, err := fi.StartListeners(ctx, rt, root, 0)
	if err == nil || len(ids) != 0 {
		t.Fatalf("StartListeners = %v, %v; want an error and no listener", ids, err)
	}
}
