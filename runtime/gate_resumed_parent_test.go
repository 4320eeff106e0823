package runtime

// A closed step gate and a parent resumed by its child's end: the gate is
// not asked again for the resumed parent.

import (
	"context"
	"testing"

	"github.com/abstractframework/abstractgateway/durable"
	"github.com/abstractframework/abstractgateway/store/memory"
)

// StepGate's doc (tick.go) promises: "A run the call drives in turn (a
// child, a listener, a resumed parent) that the gate stops is left
// running at its checkpoint, not asked again in that call". A parent
// resumed by its async child's end whose resumed steps the gate stops is
// asked again in the same call: resumeParent (driver.go) sees the parent
// still running after the resume and enqueues a follow-up tick of it
// ("The resume's tick used its step budget"), without telling a gate stop
// from a used budget (d.lastStop is not set by a resume), and that tick
// asks the closed gate a second time.
func TestClosedGateNotReaskedForResumedParent(t *testing.T) {
	ctx := context.Background()
	parent := &Workflow{ID: "parent", Entry: "spawn", Nodes: map[string]NodeFunc{
		"spawn": errNode(func(run *durable.RunState) StepPlan {
			return Request(&durable.Effect{Type: durable.EffectStartSubworkflow,
				Payload: map[string]any{"workflow_id": "child", "async": true, "wait": true}, ResultKey: "child"}, "after")
		}),
		"after": errNode(func(run *durable.RunState) StepPlan { return Complete(map[string]any{"ok": true}) }),
	}}
	child := &Workflow{ID: "child", Entry: "a", Nodes: map[string]NodeFunc{
		"a": errNode(func(run *durable.RunState) StepPlan { return Complete(map[string]any{"c": 1}) }),
	}}
	rt := errRuntime(t, memory.New(), Config{}, parent, child)
	pid, err := rt.Start(ctx, StartParams{WorkflowID: "parent"})
	if err != nil {
		t.Fatal(err)
	}
	asked := 0
	gate := func(ctx context.Context, run *durable.RunState, node string) error {
		if run.WorkflowID == "parent" && node == "after" {
			asked++
			return ErrStepGateClosed
		}
		return nil
	}
	if _, err := rt.Tick(ctx, pid, TickOptions{StepGate: gate}); err != nil {
		t.Fatal(err)
	}
	st, _ := rt.GetState(ctx, pid)
	if st.Status != durable.RunRunning || st.CurrentNode != "after" {
		t.Fatalf("parent %s at %q; want running at \"after\" (resumed, then stopped by the gate)", st.Status, st.CurrentNode)
	}
	if asked != 1 {
		t.Errorf("the closed gate was asked %d times for the resumed parent within one Tick; want 1 (it said stop)", asked)
	}
}
