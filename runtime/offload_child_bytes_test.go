package runtime_test

import (
	"context"
	"testing"

	"github.com/abstractframework/abstractgateway/durable"
	"github.com/abstractframework/abstractgateway/runtime"
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
	rt, _, _ := offloadingRuntime(t, childParentsRegistry(t, child), 100)
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
