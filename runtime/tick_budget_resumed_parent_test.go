package runtime

// The step budget of a Tick or Resume covers the run it was given in
// the whole call, the steps it makes when its async child's end resumes
// it within the call included (as Python's tick(max_steps=N) never
// executes more than N steps of the ticked run).

import (
	"context"
	"testing"

	"github.com/abstractframework/abstractgateway/durable"
	"github.com/abstractframework/abstractgateway/store/memory"
)

// budgetWorkflows returns a parent whose node first (when first is not
// "") precedes spawn, which starts an async child with wait: true, then
// passes "count" 20 times before completing; steps counts every parent
// node execution.
func budgetWorkflows(first string, steps *int) (*Workflow, *Workflow) {
	counted := 0
	nodes := map[string]NodeFunc{
		"spawn": errNode(func(run *durable.RunState) StepPlan {
			*steps++
			return Request(&durable.Effect{Type: durable.EffectStartSubworkflow,
				Payload: map[string]any{"workflow_id": "child", "async": true, "wait": true}, ResultKey: "child"}, "count")
		}),
		"count": errNode(func(run *durable.RunState) StepPlan {
			*steps++
			counted++
			if counted >= 20 {
				return Complete(map[string]any{"n": counted})
			}
			return Next("count")
		}),
	}
	entry := "spawn"
	if first != "" {
		entry = first
		nodes[first] = errNode(func(run *durable.RunState) StepPlan {
			*steps++
			return Request(&durable.Effect{Type: durable.EffectAskUser,
				Payload: map[string]any{"prompt": "go?", "wait_key": "go"}, ResultKey: "answer"}, "spawn")
		})
	}
	parent := &Workflow{ID: "parent", Entry: entry, Nodes: nodes}
	child := &Workflow{ID: "child", Entry: "a", Nodes: map[string]NodeFunc{
		"a": errNode(func(run *durable.RunState) StepPlan { return Complete(map[string]any{"c": 1}) }),
	}}
	return parent, child
}

// startBudgetParent starts the parent of budgetWorkflows(first) and
// returns its runtime, its id and its step counter.
func startBudgetParent(t *testing.T, first string) (*Runtime, string, *int) {
	t.Helper()
	steps := new(int)
	parent, child := budgetWorkflows(first, steps)
	rt := errRuntime(t, memory.New(), Config{}, parent, child)
	pid, err := rt.Start(context.Background(), StartParams{WorkflowID: "parent"})
	if err != nil {
		t.Fatal(err)
	}
	return rt, pid, steps
}

func TestTickMaxStepsCoversParentResumedByChild(t *testing.T) {
	ctx := context.Background()
	rt, pid, steps := startBudgetParent(t, "")
	st, err := rt.Tick(ctx, pid, TickOptions{MaxSteps: 2})
	if err != nil {
		t.Fatal(err)
	}
	if *steps != 2 {
		t.Fatalf("Tick(MaxSteps: 2) executed %d steps of the ticked run; want 2", *steps)
	}
	if st.Status != durable.RunRunning || st.CurrentNode != "count" {
		t.Fatalf("after the tick the parent is %s at %q; want running at \"count\"", st.Status, st.CurrentNode)
	}
	if out, _ := st.Vars["child"].(map[string]any); out == nil || out["output"] == nil {
		t.Errorf("the parent's vars.child = %v; want the child's end it was resumed with", st.Vars["child"])
	}
	if n := rt.PendingFollowUps(); n != 0 {
		t.Errorf("%d follow-ups kept for a retry; want none (a later Tick continues the run)", n)
	}
	// A later Tick continues where the budget ran out.
	if st, err = rt.Tick(ctx, pid, TickOptions{MaxSteps: 2}); err != nil {
		t.Fatal(err)
	}
	if *steps != 4 || st.Status != durable.RunRunning {
		t.Fatalf("after a second Tick(MaxSteps: 2): %d steps, parent %s; want 4 steps, running", *steps, st.Status)
	}
	if st, err = rt.Tick(ctx, pid, TickOptions{}); err != nil {
		t.Fatal(err)
	}
	if st.Status != durable.RunCompleted || *steps != 21 {
		t.Fatalf("after a default Tick: parent %s after %d steps; want completed after 21", st.Status, *steps)
	}
}

// A budget of one step is used by the step that starts the child: the
// child's end is committed into the parent, which makes no step more.
func TestTickMaxStepsOneLeavesResumedParentAtItsResumeNode(t *testing.T) {
	ctx := context.Background()
	rt, pid, steps := startBudgetParent(t, "")
	st, err := rt.Tick(ctx, pid, TickOptions{MaxSteps: 1})
	if err != nil {
		t.Fatal(err)
	}
	if *steps != 1 || st.Status != durable.RunRunning || st.CurrentNode != "count" {
		t.Fatalf("Tick(MaxSteps: 1): %d steps, parent %s at %q; want 1 step, running at \"count\"", *steps, st.Status, st.CurrentNode)
	}
	if out, _ := st.Vars["child"].(map[string]any); out == nil {
		t.Errorf("the parent's vars.child = %v; want the child's end committed", st.Vars["child"])
	}
}

func TestResumeMaxStepsCoversParentResumedByChild(t *testing.T) {
	ctx := context.Background()
	rt, pid, steps := startBudgetParent(t, "ask")
	if _, err := rt.Tick(ctx, pid, TickOptions{}); err != nil {
		t.Fatal(err)
	}
	*steps = 0
	st, err := rt.Resume(ctx, ResumeParams{RunID: pid, WaitKey: "go", Payload: map[string]any{"ok": true}, MaxSteps: 3})
	if err != nil {
		t.Fatal(err)
	}
	if *steps != 3 || st.Status != durable.RunRunning || st.CurrentNode != "count" {
		t.Fatalf("Resume(MaxSteps: 3): %d steps, parent %s at %q; want 3 steps, running at \"count\"", *steps, st.Status, st.CurrentNode)
	}
}

// The same budget covers the run ticked when an event its async child
// emits resumes it within the call.
func TestTickMaxStepsCoversListenerResumedByChildEvent(t *testing.T) {
	ctx := context.Background()
	steps, counted := 0, 0
	parent := &Workflow{ID: "parent", Entry: "spawn", Nodes: map[string]NodeFunc{
		"spawn": errNode(func(run *durable.RunState) StepPlan {
			steps++
			return Request(&durable.Effect{Type: durable.EffectStartSubworkflow,
				Payload: map[string]any{"workflow_id": "child", "async": true}, ResultKey: "child"}, "wait")
		}),
		"wait": errNode(func(run *durable.RunState) StepPlan {
			steps++
			return Request(&durable.Effect{Type: durable.EffectWaitEvent,
				Payload: map[string]any{"name": "ping", "scope": "session"}, ResultKey: "evt"}, "count")
		}),
		"count": errNode(func(run *durable.RunState) StepPlan {
			steps++
			if counted++; counted >= 20 {
				return Complete(map[string]any{"n": counted})
			}
			return Next("count")
		}),
	}}
	child := &Workflow{ID: "child", Entry: "emit", Nodes: map[string]NodeFunc{
		"emit": errNode(func(run *durable.RunState) StepPlan {
			return Request(&durable.Effect{Type: durable.EffectEmitEvent,
				Payload: map[string]any{"name": "ping", "scope": "session"}, ResultKey: "r"}, "done")
		}),
		"done": errNode(func(run *durable.RunState) StepPlan { return Complete(map[string]any{}) }),
	}}
	rt := errRuntime(t, memory.New(), Config{}, parent, child)
	pid, err := rt.Start(ctx, StartParams{WorkflowID: "parent", SessionID: "s1"})
	if err != nil {
		t.Fatal(err)
	}
	st, err := rt.Tick(ctx, pid, TickOptions{MaxSteps: 3})
	if err != nil {
		t.Fatal(err)
	}
	if steps != 3 || st.Status != durable.RunRunning || st.CurrentNode != "count" || st.Vars["evt"] == nil {
		t.Fatalf("Tick(MaxSteps: 3): %d steps, parent %s at %q with evt %v; want 3 steps, running at \"count\" with the event",
			steps, st.Status, st.CurrentNode, st.Vars["evt"])
	}
}
