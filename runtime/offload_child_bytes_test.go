package runtime_test

import (
	"context"
	"testing"

	"github.com/abstractframework/abstractgateway/artifact"
	"github.com/abstractframework/abstractgateway/durable"
	"github.com/abstractframework/abstractgateway/runtime"
	"github.com/abstractframework/abstractgateway/store/memory"
	"github.com/abstractframework/abstractgateway/store/offload"
)

// A parent resumed by an ended async child (async + wait) reads the child
// back from the store; the kernel puts back what the store's offloading
// moved out of the child's output (restoreChildValues, compatibility.md
// "A parent resumed by an ended async child ... gets the child's output
// ... put back"). A []byte in the output, which every store encodes as its
// base64 JSON string, is offloaded as that string, past the threshold
// only: both parents get "aGk=", as without the decorator. It used to be
// offloaded whatever its size as an application/octet-stream artifact,
// which Restore never puts back: the async parent got {"$artifact": id}.
func TestAsyncChildBytesOutputReachesParentAsWithoutOffload(t *testing.T) {
	ctx := context.Background()
	child := &runtime.Workflow{ID: "child", Entry: "a", Nodes: map[string]runtime.NodeFunc{
		"a": func(context.Context, *durable.RunState, *runtime.RunContext) (runtime.StepPlan, error) {
			return runtime.Complete(map[string]any{"blob": []byte("hi")}), nil
		},
	}}
	spawn := func(id string, p map[string]any) *runtime.Workflow {
		return &runtime.Workflow{ID: id, Entry: "spawn", Nodes: map[string]runtime.NodeFunc{
			"spawn": func(context.Context, *durable.RunState, *runtime.RunContext) (runtime.StepPlan, error) {
				return runtime.Request(&durable.Effect{Type: durable.EffectStartSubworkflow, Payload: p, ResultKey: "child"}, "done"), nil
			},
			"done": func(context.Context, *durable.RunState, *runtime.RunContext) (runtime.StepPlan, error) {
				return runtime.Complete(map[string]any{"ok": true}), nil
			},
		}}
	}
	reg, err := runtime.NewRegistry(child,
		spawn("sync", map[string]any{"workflow_id": "child"}),
		spawn("async", map[string]any{"workflow_id": "child", "async": true, "wait": true}))
	if err != nil {
		t.Fatal(err)
	}
	arts := artifact.NewMemory()
	st := offload.Wrap(memory.New(), arts, offload.Config{MaxInlineBytes: 100})
	rt, err := runtime.New(runtime.Config{Store: st, Registry: reg, Artifacts: arts})
	if err != nil {
		t.Fatal(err)
	}
	for _, wf := range []string{"sync", "async"} {
		id, err := rt.Start(ctx, runtime.StartParams{WorkflowID: wf})
		if err != nil {
			t.Fatal(err)
		}
		if _, err := rt.Tick(ctx, id, runtime.TickOptions{}); err != nil {
			t.Fatal(err)
		}
		ps, err := rt.GetState(ctx, id)
		if err != nil || ps.Status != durable.RunCompleted {
			t.Fatalf("%s: parent %v %v", wf, ps, err)
		}
		res, _ := ps.Vars["child"].(map[string]any)
		out, _ := res["output"].(map[string]any)
		if got, _ := out["blob"].(string); got != "aGk=" {
			t.Errorf("%s: parent's vars.child.output.blob = %#v, want %q (the child's []byte as stored without offloading)", wf, out["blob"], "aGk=")
		}
	}
}
