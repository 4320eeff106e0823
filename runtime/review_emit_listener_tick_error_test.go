package runtime_test

import (
	"context"
	"testing"

	"github.com/abstractframework/abstractgateway/durable"
	"github.com/abstractframework/abstractgateway/runtime"
)

// TestEmitCountsAListenerWhoseTickFailedAfterItsResume: EMIT_EVENT with
// max_steps resumes each listener and ticks it. When the listener's tick
// fails after its resume committed (here: the listener calls, as a sync
// subworkflow, the very run whose emit is delivering, whose lock this
// goroutine holds; in general any interruption or store error of the
// listener's steps), the listener has consumed the event (it left its
// wait, its result key holds the envelope) yet the emit reports it as an
// undelivered error: delivered 0, delivered_to [], status "error". A
// workflow that re-emits when nobody received the event delivers it
// twice. resumeClaiming returned the steps' error the same way as a
// resume that did not land; it now marks a resume whose commit landed
// (resumeLandedError), which the delivery counts.
func TestEmitCountsAListenerWhoseTickFailedAfterItsResume(t *testing.T) {
	p := &runtime.Workflow{ID: "p", Entry: "a", Nodes: map[string]runtime.NodeFunc{
		"a": node(func(run *durable.RunState, rc *runtime.RunContext) runtime.StepPlan {
			return runtime.Request(&durable.Effect{Type: durable.EffectStartSubworkflow, ResultKey: "s1",
				Payload: map[string]any{"workflow_id": "c", "async": true, "run_id": "c1"}}, "w")
		}),
		"w": node(func(run *durable.RunState, rc *runtime.RunContext) runtime.StepPlan {
			return runtime.Request(&durable.Effect{Type: durable.EffectWaitEvent, ResultKey: "ev",
				Payload: map[string]any{"name": "ping", "scope": "global"}}, "b")
		}),
		"b": node(func(run *durable.RunState, rc *runtime.RunContext) runtime.StepPlan {
			return runtime.Request(&durable.Effect{Type: durable.EffectStartSubworkflow, ResultKey: "s2",
				Payload: map[string]any{"workflow_id": "c", "run_id": "c1"}}, "done")
		}),
		"done": node(func(run *durable.RunState, rc *runtime.RunContext) runtime.StepPlan {
			return runtime.Complete(map[string]any{"s2": run.Vars["s2"]})
		}),
	}}
	c := &runtime.Workflow{ID: "c", Entry: "e", Nodes: map[string]runtime.NodeFunc{
		"e": node(func(run *durable.RunState, rc *runtime.RunContext) runtime.StepPlan {
			return runtime.Request(&durable.Effect{Type: durable.EffectEmitEvent, ResultKey: "r",
				Payload: map[string]any{"name": "ping", "scope": "global", "max_steps": 5}}, "done")
		}),
		"done": node(func(run *durable.RunState, rc *runtime.RunContext) runtime.StepPlan {
			return runtime.Complete(map[string]any{"r": run.Vars["r"]})
		}),
	}}
	f := setup(t, p, c)
	ctx := context.Background()
	id, err := f.rt.Start(ctx, runtime.StartParams{WorkflowID: "p"})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := f.rt.Tick(ctx, id, runtime.TickOptions{}); err != nil {
		t.Fatal(err)
	}
	ps, err := f.st.RunGet(ctx, id)
	if err != nil {
		t.Fatal(err)
	}
	if ev, _ := ps.Vars["ev"].(map[string]any); ev["name"] != "ping" {
		t.Fatalf("the listener did not receive the event (vars.ev %v); the scenario needs it received", ps.Vars["ev"])
	}
	// The listener whose steps failed after its resume is driven again
	// (queued by the delivery) within the same drive: it ends completed,
	// not left running at "b" until a scheduler's recovery finds it.
	if ps.Status != durable.RunCompleted {
		t.Errorf("the listener is %s at %q after the drive; want it driven again to completion", ps.Status, ps.CurrentNode)
	}
	cs, err := f.st.RunGet(ctx, "c1")
	if err != nil {
		t.Fatal(err)
	}
	r, _ := cs.Vars["r"].(map[string]any)
	to, _ := r["delivered_to"].([]any)
	if len(to) != 1 || to[0] != id {
		t.Errorf("emit result %v: the listener %s received the event but is not in delivered_to", r, id)
	}
}
