package runtime_test

import (
	"context"
	"testing"
	"time"

	"github.com/abstractframework/abstractgateway/durable"
	"github.com/abstractframework/abstractgateway/runtime"
)

// A node of the run reading it through the host API sees the steps the
// run made since its last checkpoint. Python saves the run after every
// step, so runtime.get_node_traces(run.run_id) and get_state(run.run_id)
// called by a node read the run saved after the previous step (spec §1.12,
// §2.3 4.5.h). The Go kernel commits only at durable boundaries, and local
// effects (ANSWER_USER, VARS_QUERY, …) are not one, so the store still
// holds the run as it started: GetNodeTraces and GetState read the tick's
// working copy instead, as GetLimitStatus does, and hand out a copy.
func TestGetNodeTracesFromNodeSeesEarlierSteps(t *testing.T) {
	var traces map[string]any
	var state *durable.RunState
	var tracesErr, stateErr error
	wf := &runtime.Workflow{ID: "traces", Entry: "say", Nodes: map[string]runtime.NodeFunc{
		"say": func(ctx context.Context, run *durable.RunState, rc *runtime.RunContext) (runtime.StepPlan, error) {
			run.Vars["said"] = true
			return runtime.Request(&durable.Effect{Type: durable.EffectAnswerUser,
				Payload: map[string]any{"message": "hello"}}, "look"), nil
		},
		"look": func(ctx context.Context, run *durable.RunState, rc *runtime.RunContext) (runtime.StepPlan, error) {
			traces, tracesErr = rc.Runtime().GetNodeTraces(ctx, run.RunID)
			state, stateErr = rc.Runtime().GetState(ctx, run.RunID)
			if state != nil {
				state.Vars["said"] = "changed by the reader" // its own copy
			}
			return runtime.Complete(map[string]any{"said": run.Vars["said"]}), nil
		},
	}}
	f := setup(t, wf)
	ctx := context.Background()
	id, err := f.rt.Start(ctx, runtime.StartParams{WorkflowID: "traces"})
	if err != nil {
		t.Fatal(err)
	}
	st, err := f.rt.Tick(ctx, id, runtime.TickOptions{})
	if err != nil || st.Status != durable.RunCompleted {
		t.Fatalf("tick: %v %v", err, st)
	}
	if tracesErr != nil || stateErr != nil {
		t.Fatal(tracesErr, stateErr)
	}
	if _, ok := traces["say"].(map[string]any); !ok {
		t.Errorf("GetNodeTraces from node \"look\" = %v; want the trace of node \"say\" (its ANSWER_USER step), "+
			"as Python's get_node_traces reads the run saved after that step", traces)
	}
	if state.CurrentNode != "look" || state.Status != durable.RunRunning {
		t.Errorf("GetState from node \"look\": %s at %q; want running at \"look\"", state.Status, state.CurrentNode)
	}
	if st.Output["said"] != true {
		t.Errorf("output %v: the state GetState returned shares the run's vars", st.Output)
	}
}

// Outside a tick of the run (a host, or a node of another run) GetState
// still reads the last checkpoint.
func TestGetStateOutsideTheTickReadsCheckpoint(t *testing.T) {
	var other *durable.RunState
	var otherErr error
	var firstID string
	wf := &runtime.Workflow{ID: "peek", Entry: "look", Nodes: map[string]runtime.NodeFunc{
		"look": func(ctx context.Context, run *durable.RunState, rc *runtime.RunContext) (runtime.StepPlan, error) {
			if run.RunID != firstID {
				other, otherErr = rc.Runtime().GetState(ctx, firstID)
			}
			return runtime.Complete(map[string]any{}), nil
		},
	}}
	f := setup(t, wf)
	ctx := context.Background()
	var err error
	if firstID, err = f.rt.Start(ctx, runtime.StartParams{WorkflowID: "peek"}); err != nil {
		t.Fatal(err)
	}
	second, err := f.rt.Start(ctx, runtime.StartParams{WorkflowID: "peek"})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := f.rt.Tick(ctx, second, runtime.TickOptions{}); err != nil {
		t.Fatal(err)
	}
	if otherErr != nil || other == nil || other.Status != durable.RunRunning || other.RunID != firstID {
		t.Fatalf("GetState of another run from a node: %v (err %v); want its stored state", other, otherErr)
	}
}

// GetState called with a node's context returns (a copy of) the tick's
// working copy. heldRun admits only the tick's own goroutine: a handler's
// context ends when it returns, so that a goroutine it left running reads
// the store "not a run the tick goes on changing". A node's context is the
// tick's own and does not end with the node: a goroutine a node leaves
// running (a progress reporter polling GetState) copies the working copy
// while the next nodes write it, a concurrent map read and write that
// kills the process. Here node "a" leaves such a goroutine; while node "b"
// has written an uncommitted value, the goroutine's GetState must read the
// stored run, as a handler's left goroutine does, not b's working copy.
func TestGetStateFromAGoroutineANodeLeftReadsTheStoreNotTheWorkingCopy(t *testing.T) {
	ctx := context.Background()
	var rt *runtime.Runtime
	ask := make(chan struct{})
	answer := make(chan map[string]any)
	wf := &runtime.Workflow{ID: "w", Entry: "a", Nodes: map[string]runtime.NodeFunc{
		"a": func(nctx context.Context, run *durable.RunState, _ *runtime.RunContext) (runtime.StepPlan, error) {
			id := run.RunID
			go func() { // left running after the node returns
				<-ask
				st, err := rt.GetState(nctx, id)
				if err != nil {
					// A context ended with the node: the read fails, it
					// does not touch the working copy either.
					answer <- map[string]any{"get_state_error": err.Error()}
					return
				}
				answer <- st.Vars
			}()
			return runtime.Next("b"), nil
		},
		"b": func(_ context.Context, run *durable.RunState, _ *runtime.RunContext) (runtime.StepPlan, error) {
			run.Vars["scratch_b"] = "uncommitted write of node b"
			ask <- struct{}{}
			vars := <-answer
			run.Vars["seen_by_left_goroutine"] = vars["scratch_b"] != nil
			return runtime.Complete(map[string]any{}), nil
		},
	}}
	rt = setup(t, wf).rt
	id, err := rt.Start(ctx, runtime.StartParams{WorkflowID: "w"})
	if err != nil {
		t.Fatal(err)
	}
	done := make(chan struct{})
	go func() { defer close(done); _, _ = rt.Tick(ctx, id, runtime.TickOptions{}) }()
	select {
	case <-done:
	case <-time.After(2 * time.Second):
		t.Fatal("tick did not finish")
	}
	run, err := rt.GetState(ctx, id)
	if err != nil {
		t.Fatal(err)
	}
	if run.Vars["seen_by_left_goroutine"] != false {
		t.Errorf("a goroutine left by node a read node b's working copy through GetState (seen=%v): "+
			"it reads a run the tick goes on changing, from another goroutine", run.Vars["seen_by_left_goroutine"])
	}
}
