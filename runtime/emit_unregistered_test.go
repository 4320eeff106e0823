package runtime_test

import (
	"context"
	"testing"
	"time"

	"github.com/abstractframework/abstractgateway/durable"
	"github.com/abstractframework/abstractgateway/runtime"
	"github.com/abstractframework/abstractgateway/store/memory"
)

// unregisteredListener waits on the session event "go" of session S.
func unregisteredListener(id string) *runtime.Workflow {
	return &runtime.Workflow{ID: id, Entry: "w", Nodes: map[string]runtime.NodeFunc{
		"w": func(ctx context.Context, run *durable.RunState, rc *runtime.RunContext) (runtime.StepPlan, error) {
			return runtime.Request(&durable.Effect{Type: durable.EffectWaitEvent, ResultKey: "ev",
				Payload: map[string]any{"name": "go", "scope": "session", "session_id": "S"}}, "done"), nil
		},
		"done": func(ctx context.Context, run *durable.RunState, rc *runtime.RunContext) (runtime.StepPlan, error) {
			return runtime.Complete(map[string]any{"ev": run.Vars["ev"]}), nil
		},
	}}
}

// TestEmitEventToUnregisteredListenerIsNotSilent: an external
// event whose listener's workflow is not registered was dropped without
// any error (found by a review; it is now in EmitEvent's error). Python's Scheduler.emit_event (scheduler.py, registry.get_or_raise)
// raises KeyError "Workflow 'y' is not registered. Register it with
// registry.register(workflow) before starting the scheduler." for it
// (checked with the peer: listeners x, y, z of evt:session:S:go, y
// unregistered → emit raises, y stays waiting). EmitEvent's own doc says
// "Listeners it could not resume ... are reported in the error, beside
// the ids of those it did; a listener that moved on or was paused
// meanwhile is not an error" — this one did neither, yet the caller got
// nil and could not tell the event was lost for it.
func TestEmitEventToUnregisteredListenerIsNotSilent(t *testing.T) {
	ctx := context.Background()
	now := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	reg, _ := runtime.NewRegistry(unregisteredListener("x"), unregisteredListener("y"))
	rt, err := runtime.New(runtime.Config{Store: memory.New(), Registry: reg, Clock: func() time.Time { return now }})
	if err != nil {
		t.Fatal(err)
	}
	var ids []string
	for _, wf := range []string{"x", "y"} {
		id, err := rt.Start(ctx, runtime.StartParams{WorkflowID: wf})
		if err != nil {
			t.Fatal(err)
		}
		if st, err := rt.Tick(ctx, id, runtime.TickOptions{}); err != nil || st.Status != durable.RunWaiting {
			t.Fatalf("listener %s: %v %v", wf, st, err)
		}
		ids = append(ids, id)
	}
	if err := reg.Unregister("y"); err != nil {
		t.Fatal(err)
	}
	delivered, err := rt.EmitEvent(ctx, runtime.EmitParams{Name: "go", SessionID: "S", Payload: map[string]any{"a": 1}})
	st, _ := rt.GetState(ctx, ids[1])
	if st.Status != durable.RunWaiting {
		t.Fatalf("the unregistered listener is %s; the test expects it left waiting", st.Status)
	}
	if err == nil {
		t.Fatalf("EmitEvent = %v, nil error: the event was lost for listener %s (workflow y not registered) "+
			"without a word; Python raises KeyError \"Workflow 'y' is not registered. …\"", delivered, ids[1])
	}
}
