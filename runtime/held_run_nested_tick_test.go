package runtime

import (
	"context"
	"testing"

	"github.com/abstractframework/abstractgateway/durable"
	"github.com/abstractframework/abstractgateway/store/memory"
)

// A handler of run B reads B through GetState with the context B's tick
// handed it and gets B's working copy (its uncommitted steps), also when
// B is ticked by code a node of another run A left behind, with A's node
// context (a node that drives a run it started in the background, or
// keeps context.WithoutCancel(ctx) for later work): the mark A's node
// context gets when the node returns covers the locks held when A's node
// was called, not a tick started under that context afterwards.
func TestHandlerReadsItsTickWorkingCopyUnderAnEndedNodeContextOfAnotherRun(t *testing.T) {
	const peek durable.EffectType = "peek_working_copy"
	var saved context.Context
	a := &Workflow{ID: "a", Entry: "a", Nodes: map[string]NodeFunc{
		"a": func(ctx context.Context, run *durable.RunState, _ *RunContext) (StepPlan, error) {
			saved = context.WithoutCancel(ctx) // kept for work done later
			return Complete(map[string]any{}), nil
		},
	}}
	b := &Workflow{ID: "b", Entry: "set", Nodes: map[string]NodeFunc{
		"set": func(ctx context.Context, run *durable.RunState, _ *RunContext) (StepPlan, error) {
			run.Vars["said"] = true
			return Request(&durable.Effect{Type: peek, Payload: map[string]any{}}, "end"), nil
		},
		"end": func(ctx context.Context, run *durable.RunState, _ *RunContext) (StepPlan, error) {
			return Complete(map[string]any{"seen": run.Vars["seen"]}), nil
		},
	}}
	rt := errRuntime(t, memory.New(), Config{Handlers: map[durable.EffectType]Handler{
		peek: {Local: true, Func: func(ctx context.Context, req *EffectRequest) (Outcome, error) {
			st, err := req.Runtime.GetState(ctx, req.Run.RunID)
			if err != nil {
				return Outcome{}, err
			}
			req.Run.Vars["seen"] = st.Vars["said"] == true
			return Completed(nil), nil
		}},
	}}, a, b)
	ctx := context.Background()
	run := func(wf string, tctx context.Context) *durable.RunState {
		t.Helper()
		id, err := rt.Start(ctx, StartParams{WorkflowID: wf})
		if err != nil {
			t.Fatal(err)
		}
		st, err := rt.Tick(tctx, id, TickOptions{})
		if err != nil || st.Status != durable.RunCompleted {
			t.Fatalf("tick of %s: %v, %v; want completed", wf, st, err)
		}
		return st
	}
	if st := run("b", ctx); st.Output["seen"] != true {
		t.Fatalf("control: B ticked with a plain context: handler saw said=%v; want true", st.Output["seen"])
	}
	run("a", ctx)
	if saved == nil {
		t.Fatal("node a did not run")
	}
	if st := run("b", saved); st.Output["seen"] != true {
		t.Errorf("B ticked under node a's (ended) context: its handler's GetState saw said=%v; want true "+
			"(the working copy of B's own tick, as with any other context): heldRun takes the ended node "+
			"call of run A for one of B's", st.Output["seen"])
	}
}
