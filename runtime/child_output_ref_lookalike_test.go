package runtime_test

import (
	"context"
	"testing"

	"github.com/abstractframework/abstractgateway/durable"
	"github.com/abstractframework/abstractgateway/runtime"
)

// restoreChildValues (driver.go) runs artifact.Restore over an ended
// async child's output before resuming its parent. An output value that
// merely looks like a ref ({"$artifact": ""}: user data, not a ref the
// store's offloading made) names no artifact; Restore's doc says such
// refs stay, but Store.Metadata refuses the id with ErrInvalidID and
// Restore returns that error, so the parent is never resumed.
func TestAsyncChildOutputWithRefLookalikeResumesParent(t *testing.T) {
	ctx := context.Background()
	child := &runtime.Workflow{ID: "child", Entry: "a", Nodes: map[string]runtime.NodeFunc{
		"a": func(ctx context.Context, run *durable.RunState, rc *runtime.RunContext) (runtime.StepPlan, error) {
			return runtime.Complete(map[string]any{"doc": map[string]any{"$artifact": ""}}), nil
		},
	}}
	parent := &runtime.Workflow{ID: "parent", Entry: "spawn", Nodes: map[string]runtime.NodeFunc{
		"spawn": func(ctx context.Context, run *durable.RunState, rc *runtime.RunContext) (runtime.StepPlan, error) {
			return runtime.Request(&durable.Effect{Type: durable.EffectStartSubworkflow,
				Payload: map[string]any{"workflow_id": "child", "async": true, "wait": true}, ResultKey: "child"}, "done"), nil
		},
		"done": func(ctx context.Context, run *durable.RunState, rc *runtime.RunContext) (runtime.StepPlan, error) {
			return runtime.Complete(map[string]any{"ok": true}), nil
		},
	}}
	reg, err := runtime.NewRegistry(child, parent)
	if err != nil {
		t.Fatal(err)
	}
	rt, _, _ := offloadingRuntime(t, reg, 100)
	id, err := rt.Start(ctx, runtime.StartParams{WorkflowID: "parent"})
	if err != nil {
		t.Fatal(err)
	}
	_, tickErr := rt.Tick(ctx, id, runtime.TickOptions{})
	ps, err := rt.GetState(ctx, id)
	if err != nil {
		t.Fatal(err)
	}
	if ps.Status != durable.RunCompleted {
		t.Fatalf("parent status %s (tick error: %v), want completed: the child's output only looks like a ref", ps.Status, tickErr)
	}
}
