package runtime_test

import (
	"context"
	"testing"

	"github.com/abstractframework/abstractgateway/durable"
	"github.com/abstractframework/abstractgateway/runtime"
	"github.com/abstractframework/abstractgateway/store"
	"github.com/abstractframework/abstractgateway/store/memory"
)

// A run created under an explicit id keeps a caller's vars._meta that is
// not an object, as Python's start keeps the vars it is given: the
// creation digest, kept under _meta, is then left out (a repeated start
// still matches), and a START_SUBWORKFLOW child, whose id is derived,
// keeps its payload's _meta.
func TestExplicitIDStartKeepsNonObjectMeta(t *testing.T) {
	ctx := context.Background()
	child := &runtime.Workflow{ID: "child", Entry: "c", Nodes: map[string]runtime.NodeFunc{
		"c": func(ctx context.Context, run *durable.RunState, rc *runtime.RunContext) (runtime.StepPlan, error) {
			return runtime.Complete(map[string]any{"ok": true}), nil
		},
	}}
	parent := &runtime.Workflow{ID: "parent", Entry: "p", Nodes: map[string]runtime.NodeFunc{
		"p": func(ctx context.Context, run *durable.RunState, rc *runtime.RunContext) (runtime.StepPlan, error) {
			return runtime.Request(&durable.Effect{Type: durable.EffectStartSubworkflow, ResultKey: "sub",
				Payload: map[string]any{"workflow_id": "child", "vars": map[string]any{"_meta": "tenant-7"}}}, "q"), nil
		},
		"q": func(ctx context.Context, run *durable.RunState, rc *runtime.RunContext) (runtime.StepPlan, error) {
			return runtime.Complete(nil), nil
		},
	}}
	reg, err := runtime.NewRegistry(parent, child)
	if err != nil {
		t.Fatal(err)
	}
	st := memory.New()
	rt, err := runtime.New(runtime.Config{Store: st, Registry: reg})
	if err != nil {
		t.Fatal(err)
	}

	start := runtime.StartParams{WorkflowID: "child", RunID: "explicit", Vars: map[string]any{"_meta": "tenant-7"}}
	for range 2 { // the second start is the same request: it returns the run
		if id, err := rt.Start(ctx, start); err != nil || id != "explicit" {
			t.Fatalf("Start = %q, %v", id, err)
		}
	}
	if run, err := st.RunGet(ctx, "explicit"); err != nil || run.Vars["_meta"] != "tenant-7" {
		t.Fatalf("explicit-id run vars._meta = %#v (%v), want \"tenant-7\"", run.Vars["_meta"], err)
	}

	id, err := rt.Start(ctx, runtime.StartParams{WorkflowID: "parent"})
	if err != nil {
		t.Fatal(err)
	}
	if got, err := rt.Tick(ctx, id, runtime.TickOptions{}); err != nil || got.Status != durable.RunCompleted {
		t.Fatalf("parent: %v, %v", got, err)
	}
	kids, err := st.RunList(ctx, &store.RunListParams{ParentID: id})
	if err != nil || len(kids) != 1 {
		t.Fatalf("children %d, err %v", len(kids), err)
	}
	if m := kids[0].Vars["_meta"]; m != "tenant-7" {
		t.Fatalf("child vars._meta = %#v, want \"tenant-7\" as the payload gave it", m)
	}
}
