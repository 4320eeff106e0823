package runtime_test

import (
	"context"
	"testing"

	"github.com/abstractframework/abstractgateway/durable"
	"github.com/abstractframework/abstractgateway/runtime"
	"github.com/abstractframework/abstractgateway/store"
	"github.com/abstractframework/abstractgateway/store/memory"
)

// TestResumeRunGoesToResumeToNode: spec §2.7, resume_run: a run
// in a pause wait "returns to running at resume_to_node". A pause wait
// another writer (Python) left whose resume_to_node is not the run's
// current node continues at resume_to_node.
func TestResumeRunGoesToResumeToNode(t *testing.T) {
	ctx := context.Background()
	wf := &runtime.Workflow{ID: "w", Entry: "a", Nodes: map[string]runtime.NodeFunc{
		"a": wevNode(func(run *durable.RunState) runtime.StepPlan { return runtime.Complete(map[string]any{"at": "a"}) }),
		"b": wevNode(func(run *durable.RunState) runtime.StepPlan { return runtime.Complete(map[string]any{"at": "b"}) }),
	}}
	reg, err := runtime.NewRegistry(wf)
	if err != nil {
		t.Fatal(err)
	}
	st := memory.New()
	rt, err := runtime.New(runtime.Config{Store: st, Registry: reg})
	if err != nil {
		t.Fatal(err)
	}
	id, err := rt.Start(ctx, runtime.StartParams{WorkflowID: "w"})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := rt.Pause(ctx, id, "hold"); err != nil {
		t.Fatal(err)
	}
	run, err := st.RunGet(ctx, id)
	if err != nil {
		t.Fatal(err)
	}
	if run.Waiting == nil || run.CurrentNode != "a" {
		t.Fatalf("paused run %+v, want in its pause wait at a", run)
	}
	run.Waiting.ResumeToNode = "b"
	if err := st.RunCommit(ctx, &store.CommitParams{Run: run}); err != nil {
		t.Fatal(err)
	}
	got, err := rt.ResumeRunWith(ctx, id, runtime.ResumeRunOptions{MaxSteps: -1})
	if err != nil {
		t.Fatal(err)
	}
	if got.Status != durable.RunRunning || got.CurrentNode != "b" {
		t.Fatalf("resumed run %s at %q, want running at resume_to_node b", got.Status, got.CurrentNode)
	}
}
