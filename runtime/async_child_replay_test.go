package runtime_test

import (
	"context"
	"testing"

	"github.com/abstractframework/abstractgateway/durable"
	"github.com/abstractframework/abstractgateway/runtime"
	"github.com/abstractframework/abstractgateway/store"
)

// On the JSON-file store a kill can leave the completed record of an
// async START_SUBWORKFLOW (fire and forget) without the parent's state.
// The replay reuses the record instead of calling the handler again, and
// the child's first tick, a follow-up of the commit the kill cut, was
// never made: the replay drives the child itself.
func TestReplayedAsyncStartDrivesTheChild(t *testing.T) {
	parent := &runtime.Workflow{ID: "w", Entry: "spawn", Nodes: map[string]runtime.NodeFunc{
		"spawn": func(ctx context.Context, run *durable.RunState, rc *runtime.RunContext) (runtime.StepPlan, error) {
			return runtime.Request(&durable.Effect{Type: durable.EffectStartSubworkflow, ResultKey: "sub",
				Payload: map[string]any{"workflow_id": "kid", "async": true}}, "done"), nil
		},
		"done": func(ctx context.Context, run *durable.RunState, rc *runtime.RunContext) (runtime.StepPlan, error) {
			return runtime.Complete(map[string]any{"sub": run.Vars["sub"]}), nil
		},
	}}
	kid := &runtime.Workflow{ID: "kid", Entry: "k", Nodes: map[string]runtime.NodeFunc{
		"k": func(ctx context.Context, run *durable.RunState, rc *runtime.RunContext) (runtime.StepPlan, error) {
			return runtime.Complete(map[string]any{"v": 1}), nil
		},
	}}
	newRuntime := func(st store.Store) *runtime.Runtime { return applyRuntime(t, runtime.Config{Store: st}, parent, kid) }
	run, id, js := replayAfterKill(t, newRuntime, func(r *durable.StepRecord) bool {
		return r.Status == durable.StepCompleted && r.Effect != nil && r.Effect.Type == durable.EffectStartSubworkflow
	})
	if run.Status != durable.RunCompleted {
		t.Fatalf("parent after the replay: %s", run.Status)
	}
	kids, err := js.RunListChildren(context.Background(), id, "")
	if err != nil || len(kids) != 1 {
		t.Fatalf("children %v, %v; want the one child", kids, err)
	}
	if kids[0].Status != durable.RunCompleted {
		t.Fatalf("the async child is %s at %q after the parent's replay; want it driven to its end", kids[0].Status, kids[0].CurrentNode)
	}
}
