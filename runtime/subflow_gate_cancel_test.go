package runtime

import (
	"context"
	"testing"

	"github.com/abstractframework/abstractgateway/durable"
	"github.com/abstractframework/abstractgateway/store/memory"
)

// syncSpawner is a workflow id that starts child (sync) and completes
// with what it got back.
func syncSpawner(id, child string) *Workflow {
	return &Workflow{ID: id, Entry: "spawn", Nodes: map[string]NodeFunc{
		"spawn": errNode(func(run *durable.RunState) StepPlan {
			return Request(&durable.Effect{Type: durable.EffectStartSubworkflow,
				Payload: map[string]any{"workflow_id": child}, ResultKey: "child"}, "done")
		}),
		"done": errNode(func(run *durable.RunState) StepPlan { return Complete(map[string]any{"child": run.Vars["child"]}) }),
	}}
}

// A closed step gate at a step of a grandchild (top -> mid -> leaf, all
// sync) stops the leaf's tick; mid's handler stops mid's tick with
// errEffectStopped, but mid's session does not record that it was
// stopped (stoppedBy stays notStopped), so top's handler sees mid
// "running" with no stop cause and fails top for good with
// "Unexpected subworkflow status: running". Two levels deep this works
// (TestStepGateClosedInSyncChildDoesNotFailParent).
func TestStepGateClosedInSyncGrandchildDoesNotFailTop(t *testing.T) {
	ctx := context.Background()
	leaf := &Workflow{ID: "leaf", Entry: "a", Nodes: map[string]NodeFunc{
		"a": errNode(func(run *durable.RunState) StepPlan { return Next("b") }),
		"b": errNode(func(run *durable.RunState) StepPlan { return Complete(map[string]any{"ok": true}) }),
	}}
	rt := errRuntime(t, memory.New(), Config{}, syncSpawner("top", "mid"), syncSpawner("mid", "leaf"), leaf)
	top, _ := rt.Start(ctx, StartParams{WorkflowID: "top"})
	gate := func(ctx context.Context, run *durable.RunState, nodeID string) error {
		if run.WorkflowID == "leaf" && nodeID == "b" {
			return ErrStepGateClosed // a host draining for shutdown
		}
		return nil
	}
	st, err := rt.Tick(ctx, top, TickOptions{StepGate: gate})
	if err != nil {
		t.Fatal(err)
	}
	if st.Status == durable.RunFailed {
		t.Fatalf("a closed step gate in a sync grandchild failed the top run: %q; want it stopped at its checkpoint", st.Error)
	}
	if st, err = rt.Tick(ctx, top, TickOptions{}); err != nil || st.Status != durable.RunCompleted {
		t.Fatalf("next tick: %v %v", st, err)
	}
}

// Cancel "cancels a run and its unfinished descendants" (control.go) "so
// none outlives it" (docs/architecture.md). The tree walk stops at a
// terminal child: an unfinished grandchild whose own parent (a sync child
// that started it async and completed) has ended is never listed, and
// endUnderCancelledParent only looks at its direct parent (completed, not
// cancelled), so it outlives the cancel of the top run and goes on
// working.
func TestCancelReachesGrandchildUnderEndedChild(t *testing.T) {
	ctx := context.Background()
	mid := &Workflow{ID: "mid", Entry: "spawn", Nodes: map[string]NodeFunc{
		"spawn": errNode(func(run *durable.RunState) StepPlan {
			return Request(&durable.Effect{Type: durable.EffectStartSubworkflow,
				Payload: map[string]any{"workflow_id": "leaf", "async": true}, ResultKey: "started"}, "done")
		}),
		"done": errNode(func(run *durable.RunState) StepPlan { return Complete(map[string]any{"started": run.Vars["started"]}) }),
	}}
	leaf := &Workflow{ID: "leaf", Entry: "ask", Nodes: map[string]NodeFunc{
		"ask": errNode(func(run *durable.RunState) StepPlan {
			return Request(&durable.Effect{Type: durable.EffectAskUser, Payload: map[string]any{"prompt": "q?"}, ResultKey: "ans"}, "done")
		}),
		"done": errNode(func(run *durable.RunState) StepPlan { return Complete(map[string]any{"ans": run.Vars["ans"]}) }),
	}}
	top := &Workflow{ID: "top", Entry: "spawn", Nodes: map[string]NodeFunc{
		"spawn": errNode(func(run *durable.RunState) StepPlan {
			return Request(&durable.Effect{Type: durable.EffectStartSubworkflow,
				Payload: map[string]any{"workflow_id": "mid"}, ResultKey: "child"}, "ask")
		}),
		"ask": errNode(func(run *durable.RunState) StepPlan {
			return Request(&durable.Effect{Type: durable.EffectAskUser, Payload: map[string]any{"prompt": "more?"}, ResultKey: "ans"}, "done")
		}),
		"done": errNode(func(run *durable.RunState) StepPlan { return Complete(map[string]any{}) }),
	}}
	rt := errRuntime(t, memory.New(), Config{}, top, mid, leaf)
	id, _ := rt.Start(ctx, StartParams{WorkflowID: "top"})
	st, err := rt.Tick(ctx, id, TickOptions{})
	if err != nil || st.Status != durable.RunWaiting {
		t.Fatalf("top: %v %v", st, err)
	}
	midID, _ := st.Vars["child"].(map[string]any)["sub_run_id"].(string)
	ms, err := rt.GetState(ctx, midID)
	if err != nil || ms.Status != durable.RunCompleted {
		t.Fatalf("mid: %v %v", ms, err)
	}
	leafID, _ := ms.Vars["started"].(map[string]any)["sub_run_id"].(string)
	ls, err := rt.GetState(ctx, leafID)
	if err != nil || ls.Status != durable.RunWaiting {
		t.Fatalf("leaf: %v %v", ls, err)
	}
	if st, err = rt.Cancel(ctx, id, "stop all"); err != nil || st.Status != durable.RunCancelled {
		t.Fatalf("cancel: %v %v", st, err)
	}
	ls, _ = rt.GetState(ctx, leafID)
	if ls.Status != durable.RunCancelled {
		t.Fatalf("after Cancel of the top run, its grandchild %s (under the completed child %s) is %s; "+
			"want cancelled (Cancel ends every unfinished descendant)", leafID, midID, ls.Status)
	}
}
