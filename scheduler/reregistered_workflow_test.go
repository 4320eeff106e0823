package scheduler_test

import (
	"context"
	"testing"

	"github.com/abstractframework/abstractgateway/durable"
	"github.com/abstractframework/abstractgateway/runtime"
	"github.com/abstractframework/abstractgateway/scheduler"
	"github.com/abstractframework/abstractgateway/store/memory"
)

// reregListener waits on the global event "go", then completes.
func reregListener(id string) *runtime.Workflow {
	return &runtime.Workflow{ID: id, Entry: "wait", Nodes: map[string]runtime.NodeFunc{
		"wait": func(ctx context.Context, run *durable.RunState, rc *runtime.RunContext) (runtime.StepPlan, error) {
			return runtime.Request(&durable.Effect{Type: durable.EffectWaitEvent,
				Payload: map[string]any{"name": "go", "scope": "global"}, ResultKey: "evt"}, "done"), nil
		},
		"done": func(ctx context.Context, run *durable.RunState, rc *runtime.RunContext) (runtime.StepPlan, error) {
			return runtime.Complete(map[string]any{"ok": true}), nil
		},
	}}
}

// docs/compatibility.md (EMIT_EVENT / host EmitEvent rows): a listener
// whose workflow this runtime does not serve is resumed without a tick and
// "left running for a runtime that serves the workflow (scheduler.Recover,
// or the scheduler of a runtime that registers the workflow later, which
// drives that workflow's running runs at its next pass)"; driveNewlyServed
// says "A workflow unregistered is gained again when registered again: its
// runs may have been left running meanwhile". When the host unregisters a
// workflow and registers it again between two passes (e.g. to swap its
// version), an event emitted meanwhile leaves the listener running, and the
// next pass must drive it. driveNewlyServed only compares the registry's
// ids (and their count) with those of the last pass, which are the same
// again, so the run is never driven (without claims no Recover comes):
// it stays "running" forever.
func TestRunLeftRunningWhileWorkflowReRegisteredBetweenPassesIsDriven(t *testing.T) {
	ctx := context.Background()
	wf := reregListener("listener")
	reg, _ := runtime.NewRegistry(wf)
	rt, err := runtime.New(runtime.Config{Store: memory.New(), Registry: reg})
	if err != nil {
		t.Fatal(err)
	}
	s, err := scheduler.New(scheduler.Config{Runtime: rt})
	if err != nil {
		t.Fatal(err)
	}
	if err := s.Recover(ctx); err != nil {
		t.Fatal(err)
	}
	id, err := rt.Start(ctx, runtime.StartParams{WorkflowID: wf.ID})
	if err != nil {
		t.Fatal(err)
	}
	if st, err := rt.Tick(ctx, id, runtime.TickOptions{}); err != nil || st.Status != durable.RunWaiting {
		t.Fatalf("tick: %v %v", st, err)
	}
	if _, err := s.Pass(ctx); err != nil {
		t.Fatal(err)
	}
	// Between two passes: the host swaps the workflow; an event arrives
	// while it is not registered.
	if err := reg.Unregister(wf.ID); err != nil {
		t.Fatal(err)
	}
	ids, err := rt.EmitEvent(ctx, runtime.EmitParams{Name: "go", Scope: "global"})
	if err != nil || len(ids) != 1 {
		t.Fatalf("EmitEvent: %v %v", ids, err)
	}
	if got, _ := rt.GetState(ctx, id); got.Status != durable.RunRunning {
		t.Fatalf("listener is %s after the emit; want running (resumed without a tick)", got.Status)
	}
	if err := reg.Register(reregListener("listener")); err != nil {
		t.Fatal(err)
	}
	if _, err := s.Pass(ctx); err != nil {
		t.Fatal(err)
	}
	if _, err := s.Pass(ctx); err != nil {
		t.Fatal(err)
	}
	if got, _ := rt.GetState(ctx, id); got.Status != durable.RunCompleted {
		t.Fatalf("listener is %s at %q after the workflow was registered again and two passes; "+
			"want completed (driven at the next pass, as for a newly registered workflow)", got.Status, got.CurrentNode)
	}
}
