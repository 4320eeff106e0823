package runtime

import (
	"context"
	"testing"

	"github.com/abstractframework/abstractgateway/durable"
	"github.com/abstractframework/abstractgateway/store"
	"github.com/abstractframework/abstractgateway/store/memory"
)

// A node that leaves a value that is not JSON while another runner pauses
// the run does not fail it: the pause, committed first, wins and the bad
// value (never durable) is dropped with the tick's work, as a concurrent
// cancel does. Checking only for a terminal run would fail the paused run.
func TestUnserialisableVarsDoNotOverwriteAConcurrentPause(t *testing.T) {
	ctx := context.Background()
	mem := memory.New()
	wf := &Workflow{ID: "w", Entry: "a", Nodes: map[string]NodeFunc{
		"a": func(ctx context.Context, run *durable.RunState, rc *RunContext) (StepPlan, error) {
			cur, err := mem.RunGet(ctx, run.RunID)
			if err != nil {
				return StepPlan{}, err
			}
			namespace(namespace(cur.Vars, "_runtime"), "control")["paused"] = true
			if err := mem.RunCommit(ctx, &store.CommitParams{Run: cur}); err != nil {
				return StepPlan{}, err
			}
			run.Vars["bad"] = make(chan int)
			return Next("b"), nil
		},
		"b": errNode(func(run *durable.RunState) StepPlan { return Complete(map[string]any{}) }),
	}}
	rt := errRuntime(t, mem, Config{}, wf)
	id, err := rt.Start(ctx, StartParams{WorkflowID: "w"})
	if err != nil {
		t.Fatal(err)
	}
	_, _ = rt.Tick(ctx, id, TickOptions{})
	st, err := rt.GetState(ctx, id)
	if err != nil {
		t.Fatal(err)
	}
	if st.Status != durable.RunRunning || !IsPaused(st) || st.CurrentNode != "a" {
		t.Fatalf("run paused by another writer is now %s at %s (paused %v, %q), want it left paused at a",
			st.Status, st.CurrentNode, IsPaused(st), st.Error)
	}
}
