package runtime_test

import (
	"context"
	"reflect"
	"testing"

	"github.com/abstractframework/abstractgateway/durable"
	"github.com/abstractframework/abstractgateway/runtime"
)

// TestEmitEventEnvelopeNamesTheEmittingNode: the envelope a listener
// receives from EMIT_EVENT names its emitter as the spec's §3.5 envelope
// does: {run_id, workflow_id, node_id}, node_id being the node whose
// effect emitted it (here "send", neither the workflow's id nor its
// entry). An emitter without its node_id, or naming another node, would
// break this.
func TestEmitEventEnvelopeNamesTheEmittingNode(t *testing.T) {
	t.Parallel()
	listener := &runtime.Workflow{ID: "listen", Entry: "wait", Nodes: map[string]runtime.NodeFunc{
		"wait": node(func(run *durable.RunState, rc *runtime.RunContext) runtime.StepPlan {
			return runtime.Request(&durable.Effect{Type: durable.EffectWaitEvent,
				Payload: map[string]any{"name": "ping", "scope": "global"}, ResultKey: "evt"}, "done")
		}),
		"done": node(func(run *durable.RunState, rc *runtime.RunContext) runtime.StepPlan {
			return runtime.Complete(map[string]any{"got": run.Vars["evt"]})
		}),
	}}
	emitter := &runtime.Workflow{ID: "em", Entry: "first", Nodes: map[string]runtime.NodeFunc{
		"first": node(func(run *durable.RunState, rc *runtime.RunContext) runtime.StepPlan {
			return runtime.Next("send")
		}),
		"send": node(func(run *durable.RunState, rc *runtime.RunContext) runtime.StepPlan {
			return runtime.Request(&durable.Effect{Type: durable.EffectEmitEvent,
				Payload: map[string]any{"name": "ping", "scope": "global", "max_steps": 5}, ResultKey: "r"}, "done")
		}),
		"done": node(func(run *durable.RunState, rc *runtime.RunContext) runtime.StepPlan {
			return runtime.Complete(nil)
		}),
	}}
	f := setup(t, listener, emitter)
	ctx := context.Background()
	lid, err := f.rt.Start(ctx, runtime.StartParams{WorkflowID: "listen"})
	if err != nil {
		t.Fatal(err)
	}
	if st, err := f.rt.Tick(ctx, lid, runtime.TickOptions{}); err != nil || st.Status != durable.RunWaiting {
		t.Fatalf("listener: %v, %v; want waiting", st, err)
	}
	eid, err := f.rt.Start(ctx, runtime.StartParams{WorkflowID: "em"})
	if err != nil {
		t.Fatal(err)
	}
	if st, err := f.rt.Tick(ctx, eid, runtime.TickOptions{}); err != nil || st.Status != durable.RunCompleted {
		t.Fatalf("emitter: %v, %v; want completed", st, err)
	}
	ls, err := f.rt.GetState(ctx, lid)
	if err != nil {
		t.Fatal(err)
	}
	env, _ := ls.Output["got"].(map[string]any)
	want := map[string]any{"run_id": eid, "workflow_id": "em", "node_id": "send"}
	if got := env["emitter"]; !reflect.DeepEqual(got, want) {
		t.Errorf("envelope emitter %#v; want %#v", got, want)
	}
}
